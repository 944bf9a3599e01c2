/* Fuzz harness: the throttle's counter readers (src/throttle/sources.c):
 * InfiniBand sysfs (port_xmit_wait, the port's rate file), Slingshot cxi
 * telemetry (hni_tx_paused_<class>, VALUE@SEC.NSEC) and file:PATH, over
 * successive control windows, as the PMPI library's sampler reads them.
 * Input: byte 0 picks the source (mod 3: file, ib, cxi) and byte 1 the
 * cxi classes (1 + mod 8); the rest, split at '\x1e', are the files'
 * successive contents (ib: the rate file first; cxi: one chunk per class
 * per window).  The files live in a scratch sysfs tree.  Findings: a
 * crash, a sanitizer report, a failure without a one-line message, or a
 * signal outside [0, 1]. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/throttle/sources.h"
#include "fuzz_util.h"

#define MAX_CHUNKS 40

static char ib_dir[4096], cxi_dir[4096], file_path[4096];

static void mkdirs(const char *path) {
  char p[4096];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      mkdir(p, 0755);
      *s = '/';
    }
  mkdir(p, 0755);
}

static void put(const char *path, const char *text, size_t n) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, text, n) != (ssize_t)n) {
    perror(path);
    abort();
  }
  close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *root = fuzz_scratch();
  snprintf(ib_dir, sizeof ib_dir, "%s/sys/class/infiniband/hca0/ports/1", root);
  snprintf(cxi_dir, sizeof cxi_dir, "%s/sys/class/cxi/cxi0/device/telemetry", root);
  snprintf(file_path, sizeof file_path, "%s/stall_ns", root);
  char p[4200];
  snprintf(p, sizeof p, "%s/counters", ib_dir);
  mkdirs(p);
  mkdirs(cxi_dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > 4096)
    return -1;
  if (!file_path[0])
    LLVMFuzzerInitialize(NULL, NULL);
  const int kind = data[0] % 3, classes = 1 + data[1] % CT_CXI_CLASSES;
  char *text = malloc(size - 2 + 1);
  memcpy(text, data + 2, size - 2);
  text[size - 2] = 0;
  const char *chunk[MAX_CHUNKS];
  size_t len[MAX_CHUNKS];
  int nc = 0;
  for (size_t at = 0; nc < MAX_CHUNKS;) {
    const char *sep = memchr(text + at, '\x1e', size - 2 - at);
    const size_t end = sep ? (size_t)(sep - text) : size - 2;
    chunk[nc] = text + at;
    len[nc++] = end - at;
    if (!sep)
      break;
    at = end + 1;
  }
  char spec[4200], path[4300], root[4200], err[1024];
  snprintf(root, sizeof root, "%s/sys", fuzz_scratch());
  int next = 0, per_window = 1;
  if (kind == 0) {
    snprintf(spec, sizeof spec, "file:%s", file_path);
  } else if (kind == 1) {
    snprintf(spec, sizeof spec, "ib:hca0:1");
    snprintf(path, sizeof path, "%s/rate", ib_dir);
    put(path, chunk[0], len[0]);
    next = 1;
  } else {
    snprintf(spec, sizeof spec, "cxi:cxi0");
    per_window = classes;
    for (int c = 0; c < CT_CXI_CLASSES; c++) {
      snprintf(path, sizeof path, "%s/hni_tx_paused_%d", cxi_dir, c);
      unlink(path);
    }
  }
  ct_source s;
  int opened = 0;
  for (int w = 0; next + per_window <= nc; w++) {
    for (int c = 0; c < per_window; c++, next++) {
      if (kind == 0)
        snprintf(path, sizeof path, "%s", file_path);
      else if (kind == 1)
        snprintf(path, sizeof path, "%s/counters/port_xmit_wait", ib_dir);
      else
        snprintf(path, sizeof path, "%s/hni_tx_paused_%d", cxi_dir, c);
      put(path, chunk[next], len[next]);
    }
    err[0] = 0;
    if (w == 0) {
      if (ct_source_open(&s, spec, root, 4, err, sizeof err)) {
        fuzz_check_message("ct_source_open", err);
        break;
      }
      opened = 1;
      continue;
    }
    double signal = -1;
    const double now = s.last_t + 1e-3 * (1 + w % 7); /* windows of 1-7 ms */
    const int r = ct_source_window(&s, now, &signal, err, sizeof err);
    if (r == 1 && !(signal >= 0 && signal <= 1))
      abort();
    if (r != 1)
      fuzz_check_message("ct_source_window", err);
  }
  if (opened)
    ct_source_close(&s);
  free(text);
  return 0;
}
