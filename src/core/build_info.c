/* The build's git commit, compiled in by CMake (CONTEND_GIT_COMMIT, this
 * file only, so a new commit recompiles one file), and the results' tool
 * object that names it: `contend version` and every results document
 * report the same build. */
#include "contend/json.h"
#include "contend/version.h"

#ifndef CONTEND_GIT_COMMIT
#define CONTEND_GIT_COMMIT ""
#endif

const char *contend_git_commit(void) { return CONTEND_GIT_COMMIT; }

void contend_json_tool(contend_json *j) {
  contend_json_obj_begin(j, "tool");
  contend_json_str(j, "name", "contend");
  contend_json_str(j, "version", CONTEND_VERSION);
  if (*contend_git_commit())
    contend_json_str(j, "git_commit", contend_git_commit());
  else
    contend_json_null(j, "git_commit");
  contend_json_obj_end(j);
}
