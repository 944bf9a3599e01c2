/* contend: the version, one place; the build's git commit. */
#ifndef CONTEND_VERSION_H
#define CONTEND_VERSION_H
#define CONTEND_VERSION "0.1.0"

/* The git commit (12 hex digits) HEAD was at when the build was configured
 * (CMake configures again when HEAD moves); "" when not built from a git
 * checkout.  Static storage. */
const char *contend_git_commit(void);

struct contend_json;
/* Writes "tool": {"name": "contend", "version", "git_commit" (null when
 * unknown)} into the open object of j: the results' provenance. */
void contend_json_tool(struct contend_json *j);
#endif
