/* The throttle's counter sources: the congestion signal of one node (the
 * fraction of a control window its NIC's injection stalled, Netscope's
 * nic2hsn), read by one process per node in the library's sampler thread.
 *
 * Specs (library parameter throttle_source):
 *   ib:HCA:PORT  InfiniBand sysfs port_xmit_wait (ticks x tick_ns), line
 *                rate from the port's `rate` file
 *   cxi:DEV      Slingshot cxi telemetry: the largest hni_tx_paused_<tc>
 *                (cycles of the 1 GHz Cassini clock = ns) over the classes
 *   cluster[:IF] the emulated cluster: the egress qdisc of IF (default
 *                eth0) in the caller's network namespace, polled several
 *                times a window; signal = share of polls with a backlog
 *   file:PATH    a text file holding a cumulative stall time in ns
 *   auto         the first readable of ib (first HCA, first port), cxi
 *                (first device)
 * Sysfs paths start at `root` (default /sys), so tests can use fixture
 * trees.  Not thread safe: one thread owns a source. */
#ifndef CONTEND_THROTTLE_SOURCES_H
#define CONTEND_THROTTLE_SOURCES_H

#include <stddef.h>
#include <stdint.h>

enum { CT_SRC_FILE, CT_SRC_IB, CT_SRC_CXI, CT_SRC_CLUSTER };

#define CT_SRC_PATH 512
#define CT_CXI_CLASSES 8

typedef struct ct_source {
  int kind;
  char path[CT_SRC_PATH]; /* file: the file; ib: port_xmit_wait; cxi: telemetry dir */
  char desc[96];          /* what it reads, for messages ("ib:mlx5_0:1") */
  double tick_ns;         /* ib: one tick of port_xmit_wait */
  double line_gbps;       /* the port's line rate, 0 when unknown */
  int have_last;
  double last_t;               /* s, monotonic: time of the last read */
  double last[CT_CXI_CLASSES]; /* cumulative values at the last read */
  int nclasses;                /* cxi: pause classes found */
  int nl_fd, ifindex;          /* cluster: netlink socket, interface */
  uint32_t nl_seq;
  int polls, busy; /* cluster: polls this window, with a backlog */
} ct_source;

/* Checks a spec's syntax only (no file access): 0, or -1 with one line in
 * err.  For `contend throttle`. */
int ct_source_spec_check(const char *spec, char *err, size_t errlen);

/* Opens a source: finds and reads its files once (the baseline).  Returns
 * 0, or -1 with one line in err (missing, unreadable, malformed). */
int ct_source_open(ct_source *s, const char *spec, const char *root, double tick_ns, char *err,
                   size_t errlen);

/* Polls per window the source wants (cluster: several; others 1), and one
 * poll (only cluster samples anything; a failed poll counts as idle). */
int ct_source_polls_per_window(const ct_source *s);
void ct_source_poll(ct_source *s);

/* The signal of the window that ends at now_s (monotonic seconds): the
 * stall time since the previous call over the time elapsed, in [0, 1]
 * (above 1 is clamped: tick lengths are uncertain).  Returns
 *   1  *signal set;
 *   0  this window is garbage (non-numeric, NaN, counter decreased or
 *      saturated): ignored, why in err; the next window starts afresh;
 *  -1  the source is gone (file missing or unreadable), why in err. */
int ct_source_window(ct_source *s, double now_s, double *signal, char *err, size_t errlen);

void ct_source_close(ct_source *s);

#endif
