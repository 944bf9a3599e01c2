/* The unit tests' check macro: counts checks and failures, reports each
 * failure with file and line, never stops the test (main returns
 * failures != 0). */
#ifndef CONTEND_TEST_CHECK_H
#define CONTEND_TEST_CHECK_H

#include <stdio.h>

static int failures, checks;
#define CHECK(cond)                                                                                \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                              \
    }                                                                                              \
  } while (0)

#endif
