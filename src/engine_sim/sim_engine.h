/* The simulated engine's internal interface between its control plane and
 * clock (engine_sim.c) and its MPI semantics (sim_mpi.c). */
#ifndef CONTEND_SIM_ENGINE_H
#define CONTEND_SIM_ENGINE_H

#include "contend/inproc.h"
#include "net.h"

typedef struct sim_ctx sim_ctx;

/* Timer kinds of the engine (sim_net_timer): the kind in the bits from
 * SIM_T_RANK_BITS up, a world rank below them.  Timers at equal times run
 * in (kind, id) order, so a message's timers (SIM_T_LOCAL, SIM_T_POST)
 * carry the rank that set them and that rank's count of them (the id):
 * an order that does not depend on which process runs the rank, as the
 * index of the message in this process's pool would (sim_mpi.c). */
#define SIM_T_RANK_BITS 24
#define SIM_T_RANK_MASK ((1u << SIM_T_RANK_BITS) - 1)
enum {
  SIM_T_WAKE = 0u << SIM_T_RANK_BITS,
  SIM_T_LOCAL = 1u << SIM_T_RANK_BITS,
  SIM_T_WATCHDOG = 2u << SIM_T_RANK_BITS,
  SIM_T_THROTTLE = 3u << SIM_T_RANK_BITS,
  SIM_T_POST = 4u << SIM_T_RANK_BITS,
  SIM_T_FIGURES = 5u << SIM_T_RANK_BITS /* id: the process asking (engine_par.c) */
};

/* The run's figures summed over the parts (engine_par.c): packet hops,
 * packets, payload bytes, ECN marks, cc notifications, rank resumes, events. */
enum {
  SIM_FIG_HOPS,
  SIM_FIG_PACKETS,
  SIM_FIG_BYTES,
  SIM_FIG_ECN,
  SIM_FIG_CC,
  SIM_FIG_RESUMES,
  SIM_FIG_EVENTS, /* summed, and each part's (the events differ with the partition) */
  SIM_FIGURES
};

sim_net *sim_engine_net(void);
/* A context of job (NULL outside jobs runs) opened on node: the throttle
 * takes the job's delay sensitivity there. */
void sim_engine_bind_node(int node, const char *job);
/* The throttle's delay before node posts a message of `bytes` (ps). */
sim_time sim_engine_throttle_delay(int node, uint64_t bytes);
int sim_engine_verify(void);           /* --verify: move payloads */
uint64_t sim_engine_eager(void);       /* rendezvous threshold */
uint64_t sim_engine_rndv_window(void); /* receiver-paced rendezvous window (0: off) */
int sim_engine_rndv_max_active(void);  /* rendezvous received at once per rank (0: any) */
sim_time sim_engine_overhead(void);    /* host time per message sent or received (ps) */
/* Parks the calling rank for `seconds` of simulated time. */
void sim_engine_sleep(double seconds, const char *why);
/* Parks the calling rank until simulated time t (> now). */
void sim_engine_sleep_until(sim_time t, const char *why);
/* Wakes parked rank wrank at time t (>= now). */
void sim_engine_wake_at(int wrank, sim_time t);

/* sim_mpi.c */
int sim_mpi_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p, int rank,
                     contend_inproc_comm *comm, uint64_t seed, const contend_ctx *job);
void sim_mpi_ctx_close(contend_ctx *c);
void sim_mpi_arrived(uint32_t msg);    /* an MPI-layer message arrived (now) */
void sim_mpi_post_later(uint32_t msg); /* a message held for host overhead goes now */
/* A message's timer (SIM_T_LOCAL or SIM_T_POST | rank, count) fired: its
 * message, which it no longer holds. */
uint32_t sim_mpi_timer_msg(uint32_t kind, uint32_t count);
void sim_mpi_injected(uint32_t msg, sim_time t); /* its last packet is out of the NIC at t */
void sim_mpi_reset(void);                        /* frees the pools after a run */
/* Over processes (sim_mpi.c, "over processes"): this is process me of
 * procs, running the ranks of the nodes n with proc_of_node[n] == me (kept,
 * not copied); set before the run.  procs 1: one process (what a run
 * leaves behind is freed). */
void sim_mpi_procs(int procs, int me, const int *proc_of_node);
/* The fabric's hooks: a fabric message (its cookie) landed / left the NIC. */
void sim_mpi_delivered(uint64_t cookie);
void sim_mpi_injected_cookie(uint64_t cookie, sim_time t);
/* The window's swap: the records for process q since the last clear, their
 * clearing, and one process's records for this one (in process order). */
const void *sim_mpi_outbox(int q, size_t *len);
void sim_mpi_outbox_clear(void);
void sim_mpi_inbox(const void *buf, size_t len);

#endif
