/* Port counters of the simulated fabric (counters.c), read the way one
 * reads InfiniBand port counters: cumulative per output port (and VC)
 * since the start, sampled into a time-series CSV and summarised
 * (most stalled ports, a per-tier picture) in results JSON.
 *
 * CSV columns: time_s,component,port,vc,counter,value
 *   component  router label (leaf3, spine0, g2.r1, s14) or nicN
 *   port       local output port of the component (a NIC: 0)
 *   vc         VC number, or empty for the port as a whole
 *   counter    xmit_data_bytes   bytes sent (headers included); cf. port_xmit_data x 4
 *              xmit_packets      packets sent; cf. port_xmit_pkts
 *              xmit_wait_ns      time a packet waited with no credit; cf. port_xmit_wait
 *                                (ticks) -- per VC and per port; at a NIC this is the
 *                                injection stall
 *              busy_ns           time spent serializing
 *              occupancy_bytes   mean bytes held in the downstream buffer (credits in
 *                                use) over the interval since the last sample
 * Values are cumulative (except occupancy_bytes); a row is written only when
 * the port sent or stalled since the previous sample. */
#ifndef CONTEND_SIM_COUNTERS_H
#define CONTEND_SIM_COUNTERS_H

#include <stddef.h>

#include "contend/json.h"
#include "contend/world.h"
#include "net.h"

typedef struct sim_counters sim_counters;

/* Starts sampling net every `interval` ps (0: once, at close) into the
 * CSV at path (NULL: summary only), while the fabric has work: events
 * pending or credits on their way back.  The CSV stays within max_bytes:
 * a sample that takes it past that is cut off again (the file keeps whole
 * samples) and no later one is written; the summary then records
 * "csv_stopped_at_us" and one line on stderr says so.  The file is
 * written under a temporary name (contend/files.h) and renamed at close;
 * a run that fails abandons it.
 *
 * world: the processes net's parts run on (sim_net_partition; NULL: net
 * is the whole fabric).  Then open, every sample, the summary and close
 * are collective over world: each part counts the ports whose source it
 * holds, the sample timer runs in every part at the same times, and rank
 * 0 writes the CSV and the summary, the same bytes as one process (its
 * port order), receiving the parts' rows a run of ports at a time.  Other
 * processes create no file.  Returns 0, or -1 with err (in every
 * process). */
int sim_counters_open(sim_counters **out, sim_net *n, contend_group *world, const char *path,
                      sim_time interval, uint64_t max_bytes, char *err, size_t errlen);
/* "counters": {"sim_time_us", ["csv_stopped_at_us",] "top_stalled": [...],
 * "by_tier": [...]}
 * (over processes: whole at rank 0 only). */
void sim_counters_summary_json(sim_counters *c, contend_json *j, int top);
/* The summary's figures of this part's ports now (the fabric's time),
 * into out (sim_counters_totals_len bytes; other parts' ports 0): the
 * parts' totals add up to the whole fabric's.  And the summary of given
 * totals (the parts' sum) taken at t: the simulated engine over processes
 * takes them in every part at one time (engine_par.c). */
size_t sim_counters_totals_len(const sim_counters *c);
void sim_counters_totals(sim_counters *c, void *out);
void sim_counters_totals_add(const sim_counters *c, void *acc, const void *part); /* acc += part */
void sim_counters_summary_json_of(sim_counters *c, contend_json *j, int top, sim_time t,
                                  const void *totals);
/* Last sample, file renamed into place; frees c.  Returns 0 or -1 (err;
 * over processes, in every process). */
int sim_counters_close(sim_counters *c, char *err, size_t errlen);
/* Removes the temporary file and frees c (a run that failed or was
 * refused: no header-only file).  NULL: nothing.  Not collective. */
void sim_counters_abandon(sim_counters *c);

#endif
