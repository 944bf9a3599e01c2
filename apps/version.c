/* `contend version` / `contend --version`: the version on the first line
 * ("contend X.Y.Z", what scripts parse), then the git commit the build was
 * configured at, the MPI library (running and compiled against) and the
 * optional parts, each "yes" or "no" with where or why. */
#include "version.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../src/core/libpath.h"
#include "../src/engine_mpi/library.h"
#include "../src/throttle/cmd.h"
#include "../src/trace_otf2/trace.h"
#include "contend/engine.h"
#include "contend/version.h"

int contend_part_built(const char *part) {
  const char *why = "";
  if (!strcmp(part, "hdf5"))
    return contend_io_hdf5_available(&why);
  if (!strcmp(part, "otf2"))
    return contend_trace_available(&why);
#ifdef CONTEND_NO_SIM
  if (!strcmp(part, "sim"))
    return 0;
#endif
#ifdef CONTEND_NO_THROTTLE
  if (!strcmp(part, "throttle"))
    return 0;
#endif
  return 1;
}

int contend_version_main(int argc, char **argv, int print) {
  for (int a = 1; a < argc; a++)
    if (a > 1 || (strcmp(argv[a], "--help") && strcmp(argv[a], "-h"))) {
      if (print)
        fprintf(stderr,
                "contend version: error: unexpected argument '%.100s' (it takes none but --help)\n",
                argv[a]);
      return 2;
    }
  if (!print)
    return 0;
  if (argc > 1) {
    printf("usage: contend version\n       contend --version\n\n"
           "Prints the version (first line: contend X.Y.Z), the git commit the build was\n"
           "configured at, the MPI library this binary runs with and the one it was\n"
           "compiled against, and whether each optional part is built: the HDF5 I/O back\n"
           "end, the simulator (--engine sim, contend sim, contend topology) and the PMPI\n"
           "throttle (libcontend-throttle.so, contend throttle), OTF2 traces (the replay\n"
           "motif; libcontend-record.so, contend record).\n");
    return 0;
  }
  printf("contend %s\n", CONTEND_VERSION);
  const char *commit = contend_git_commit();
  printf("git commit:   %s\n", *commit ? commit : "unknown (not built from a git checkout)");
  char running[512], compiled[128];
  contend_mpi_library_running(running, sizeof running);
  contend_mpi_library_compiled(compiled, sizeof compiled);
  printf("MPI library:  %s (compiled against %s)\n", running, compiled);
  printf("optional parts:\n");
  const char *why = "";
  if (contend_io_hdf5_available(&why)) {
#ifdef CONTEND_HDF5_VERSION
    printf("  hdf5        yes: parallel HDF5 %s (I/O motifs, api=hdf5)\n", CONTEND_HDF5_VERSION);
#else
    printf("  hdf5        yes: parallel HDF5 (I/O motifs, api=hdf5)\n");
#endif
  } else
    printf("  hdf5        no: %s\n", why);
#ifdef CONTEND_NO_SIM
  printf("  simulator   no: configured with -DCONTEND_WITH_SIM=OFF\n");
#else
  printf("  simulator   yes: --engine sim, contend sim, contend topology\n");
#endif
  char lib[PATH_MAX + 64];
#ifdef CONTEND_NO_THROTTLE
  printf("  throttle    no: configured with -DCONTEND_WITH_THROTTLE=OFF\n");
#else
  if (contend_throttle_library(lib, sizeof lib) == 0)
    printf("  throttle    yes: %s\n", lib);
  else
    printf("  throttle    yes, but its library is missing: %s\n", lib);
#endif
  if (!contend_trace_available(&why))
    printf("  otf2        no: %s\n", why);
  else if (contend_library_path("libcontend-record.so", lib, sizeof lib) == 0)
    printf("  otf2        yes: replay motif, contend record (%s)\n", lib);
  else
    printf("  otf2        yes, but the recorder library is missing: %s\n", lib);
  (void)lib;
  return 0;
}
