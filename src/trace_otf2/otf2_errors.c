/* OTF2's error reports captured as one line (see otf2_errors.h). */
#include "otf2_errors.h"

#include <stdarg.h>
#include <stdio.h>

static char last[256];

static OTF2_ErrorCode on_error(void *ud, const char *file, uint64_t line, const char *fn,
                               OTF2_ErrorCode code, const char *fmt, va_list ap) {
  (void)ud, (void)file, (void)line, (void)fn;
  char msg[200] = "";
  if (fmt)
    vsnprintf(msg, sizeof msg, fmt, ap);
  for (char *p = msg; *p; p++)
    if (*p == '\n')
      *p = ' ';
  snprintf(last, sizeof last, "%s%s%s", OTF2_Error_GetDescription(code), *msg ? ": " : "", msg);
  return code;
}

OTF2_ErrorCallback contend_otf2_errors_capture(void) {
  last[0] = 0;
  return OTF2_Error_RegisterCallback(on_error, NULL);
}

void contend_otf2_errors_restore(OTF2_ErrorCallback prev) {
  OTF2_Error_RegisterCallback(prev, NULL);
}

const char *contend_otf2_last_error(void) { return last; }
