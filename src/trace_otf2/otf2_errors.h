/* OTF2's error reports as one line for contend's own message, instead of
 * the library's lines on stderr (the reader and the recorder use it). */
#ifndef CONTEND_TRACE_OTF2_ERRORS_H
#define CONTEND_TRACE_OTF2_ERRORS_H

#include <otf2/otf2.h>

/* Routes OTF2's errors into a buffer (the last one kept, one line) until
 * contend_otf2_errors_restore; returns the previous callback.  Not
 * thread-safe (one buffer per process). */
OTF2_ErrorCallback contend_otf2_errors_capture(void);
void contend_otf2_errors_restore(OTF2_ErrorCallback prev);
/* The last error reported since the capture began ("" if none). */
const char *contend_otf2_last_error(void);

#endif
