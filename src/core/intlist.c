/* Lists of non-negative integers written as ranges ("0-7+12", "0-7,12"):
 * the node lists of `contend sim` traffic specs and `contend topology`. */
#include "contend/intlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int contend_parse_int_list(const char *s, const char *seps, int max, int **out, int *n, char *err,
                           size_t errlen) {
  int cap = 16, k = 0;
  int *v = malloc(sizeof *v * (size_t)cap);
  if (!v)
    contend_fail("out of memory");
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long a = strtol(p, &end, 10), b = a;
    if (end == p || errno)
      goto bad;
    p = end;
    if (*p == '-') {
      b = strtol(p + 1, &end, 10);
      if (end == p + 1)
        goto bad;
      p = end;
    }
    if (a < 0 || b < a || b >= max) {
      snprintf(err, errlen, "node list '%s': nodes must be 0..%d, ranges ascending", s, max - 1);
      free(v);
      return -1;
    }
    for (long x = a; x <= b; x++) {
      if (k == cap) {
        cap *= 2;
        v = realloc(v, sizeof *v * (size_t)cap);
        if (!v)
          contend_fail("out of memory");
      }
      v[k++] = (int)x;
    }
    if (*p && strchr(seps, *p))
      p++;
    else if (*p)
      goto bad;
  }
  *out = v;
  *n = k;
  return 0;
bad:
  snprintf(err, errlen, "bad node list '%s' (expected ranges like 0-7%c12)", s, seps[0]);
  free(v);
  return -1;
}
