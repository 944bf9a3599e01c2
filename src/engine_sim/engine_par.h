/* The simulated engine over processes (engine_par.c): the partition, the
 * window loop of the scheduler's idle hook, the finish of a process whose
 * ranks have returned, and the run's figures taken at one simulated time
 * in every part.  Internal to the simulated engine (engine_sim.c). */
#ifndef CONTEND_ENGINE_PAR_H
#define CONTEND_ENGINE_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "contend/json.h"
#include "contend/strbuf.h"
#include "contend/world.h"
#include "netparams.h"

/* Opens the run (take: this part's figures now, SIM_FIGURES of them, and
 * more appended to extra (a multiple of 8 bytes), which add() sums at the
 * process that asked, one part's at a time); over
 * world's processes (world NULL or of size 1: one process) partitions the fabric by `partition`
 * (seed: the graph partitioner's), makes net simulate this process's part and tells the MPI layer
 * which process runs each of the run's `nodes`. Returns 0, or -1 with one line in err (exit status
 * 2: more processes than routers, a part without a router, a cut without latency). */
int sim_engine_par_open(contend_group *world, const sim_setup *su, sim_net *net,
                        void (*take)(uint64_t *fig, contend_strbuf *extra),
                        void (*add)(const void *extra, size_t len), const char *partition,
                        uint64_t seed, int nodes, char *err, size_t errlen);
const int *sim_engine_par_proc_of_node(void); /* nodes entries; NULL in one process */
int sim_engine_par_count(void);               /* processes (1: one) */
int sim_engine_par_me(void);
/* The run's seed is known here (a rank's seed hook): the parts without
 * ranks get it in the next swap, before any packet reaches them. */
void sim_engine_par_seed(uint64_t seed);
/* The idle hook over processes (coop_set_idle), and the finish
 * (contend_inproc_procs.finish): both collective over the processes. */
int sim_engine_par_idle(void);
int sim_engine_par_finish(int status);
/* The run's figures (SIM_FIGURES sums over the parts of what take()
 * gives for one), taken `control` (the control latency) after now in
 * every part; the calling rank parks until they are in (2 x control).
 * Returns the simulated time they were taken at. */
sim_time sim_engine_figures(sim_time control, uint64_t *fig);
/* A SIM_T_FIGURES timer fired (the asking process). */
void sim_engine_figures_timer(uint32_t asker);
/* The "processes" object: count, and over processes the partition, its
 * cut links and lookahead, the windows and rank 0's process's waits. */
void sim_engine_par_json(contend_json *j);
void sim_engine_par_close(void);

#endif
