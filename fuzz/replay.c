/* Replays inputs through a fuzz harness without libFuzzer: `fuzz_replay_X
 * PATH...` runs LLVMFuzzerTestOneInput once per file (a directory: each
 * file in it, not recursively).  Built with the ordinary compiler, so
 * that ctest replays the stored corpora and the regression inputs on
 * every build; a finding aborts as under the fuzzer.  Prints how many
 * inputs ran; exits 2 when a path cannot be read or nothing ran. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 1 << 16, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf)
    abort();
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  long ran = 0;
  for (int a = 1; a < argc; a++) {
    struct stat st;
    if (stat(argv[a], &st)) {
      perror(argv[a]);
      return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[a]))
        return 2;
      ran++;
      continue;
    }
    struct dirent **names;
    const int n = scandir(argv[a], &names, NULL, alphasort);
    if (n < 0) {
      perror(argv[a]);
      return 2;
    }
    for (int i = 0; i < n; i++) {
      char p[8192];
      snprintf(p, sizeof p, "%s/%s", argv[a], names[i]->d_name);
      if (names[i]->d_name[0] != '.' && !stat(p, &st) && S_ISREG(st.st_mode)) {
        if (run_file(p))
          return 2;
        ran++;
      }
      free(names[i]);
    }
    free(names);
  }
  printf("%s: %ld inputs replayed, no finding\n", argv[0], ran);
  return ran ? 0 : 2;
}
