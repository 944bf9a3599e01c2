/* The build's git commit, compiled in by CMake (CONTEND_GIT_COMMIT, this
 * file only, so a new commit recompiles one file): `contend version` and
 * the results' tool object report it. */
#include "contend/version.h"

#ifndef CONTEND_GIT_COMMIT
#define CONTEND_GIT_COMMIT ""
#endif

const char *contend_git_commit(void) { return CONTEND_GIT_COMMIT; }
