/* contend: the version, one place. */
#ifndef CONTEND_VERSION_H
#define CONTEND_VERSION_H
#define CONTEND_VERSION "0.1.0"
#endif
