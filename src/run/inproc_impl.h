/* The in-process control plane's internals, shared by its two files:
 * world_inproc.c (groups, collectives, signals, contexts, the launch) and
 * inproc_procs.c (the same over processes: groups named alike in every
 * process, the records of members' calls, the swap).  Internal to src/run. */
#ifndef CONTEND_RUN_INPROC_IMPL_H
#define CONTEND_RUN_INPROC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "contend/inproc.h"
#include "contend/world.h"

typedef enum {
  C_BARRIER,
  C_ALLREDUCE,
  C_REDUCE,
  C_BCAST,
  C_GATHER,
  C_ALLGATHER,
  C_GATHERV,
  C_SPLIT,
  C_NODE_OF, /* ctx_open: every member's node, one shared array */
  C_N
} coll_kind;

extern const char *const inproc_coll_names[C_N]; /* world_inproc.c */

/* One member's part in a collective; on the member's stack. */
typedef struct member {
  const void *in;
  void *out;
  size_t bytes;
  int count; /* allreduce/reduce: elements; ctx_open: the member's node */
  contend_dtype dt;
  contend_op op;
  int color, key; /* split */
  size_t *counts; /* gatherv at rank 0 */
  void *result;   /* gatherv: the buffer; split: the handle; ctx_open: node_of */
  int done;
  unsigned long long until; /* done: the member returns at this time (control latency) */
  int remote;               /* a copy of another process's member (heap; in: its data or NULL) */
} member;

typedef struct round {
  coll_kind kind;
  unsigned long gen;
  int arrived;
  unsigned long long tlast; /* the latest arrival's time */
  char why[64];             /* what the parked members wait on (deadlock report) */
  member *m[];              /* by group rank */
} round;

/* A set of ranks; shared by the members' handles. */
typedef struct tshared {
  int size;
  int local;                   /* members in this process (all of them in one process) */
  int handles;                 /* members here that have not freed their handle */
  uint64_t gid;                /* over processes: the group's name (group_id) */
  int *procs, nprocs;          /* over processes: the processes with members, ascending */
  int *wrank;                  /* world rank (scheduler rank) of each member */
  unsigned long ncoll;         /* collectives started on the group */
  round *open;                 /* the collective being gathered, or NULL */
  struct contend_signal *sigs; /* signals not yet complete, oldest first */
} tshared;

struct contend_signal {
  unsigned long seq; /* the k-th post of every member on the group */
  int size, posted;
  unsigned long long visible; /* complete: seen from this time on (control latency) */
  unsigned long long tlast;   /* the latest post's time */
  int refs;                   /* members here that have not freed it */
  int *waiters, nwait, capwait;
  struct contend_signal *next;
  char why[64];
};

/* world_inproc.c: a group's next collective (of kind k), opened; member
 * grank's arrival at time t (the last one completes it); a group's signal
 * seq (made by its first post here); a post of it at time t. */
round *inproc_round_new(tshared *s, coll_kind k);
void inproc_arrive(tshared *s, round *r, int grank, member *a, unsigned long long t);
struct contend_signal **inproc_signal_at(tshared *s, unsigned long seq);
void inproc_signal_posted(struct contend_signal **p, unsigned long long t);
void *inproc_xmalloc(size_t n);

/* inproc_procs.c: the processes of a launch (procs NULL: this one alone;
 * *mine: which world ranks run here, n entries, NULL in one process; the
 * caller frees it), and what it needs of them. */
void inproc_procs_open(const contend_inproc_procs *procs, int n, int ppn, unsigned char **mine);
void inproc_procs_close(void);
int inproc_procs_count(void);
int inproc_here(int wrank);
/* A split's group, named by its parent, the split's number on it and its
 * color (a context's close group: color -2). */
uint64_t inproc_group_id(uint64_t parent, unsigned long gen, int color);
/* Its members placed (wrank filled): counts those here, lists the
 * processes with members and registers the replica when some member is
 * here; returns the members here (all of them in one process).  And its
 * registration undone (before it is freed). */
int inproc_placed(tshared *s, uint64_t gid);
void inproc_unplaced(tshared *s);
/* A member's call, to the other processes with members. */
void inproc_send_arrival(const tshared *s, const round *r, int grank, const member *a,
                         unsigned long long t);
void inproc_send_post(const tshared *s, unsigned long seq, int grank, unsigned long long t);
/* A context group with members here (findable by id), and released. */
void inproc_comm_placed(contend_inproc_comm *v);
void inproc_comm_released(contend_inproc_comm *v);

#endif
