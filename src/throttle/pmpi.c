/* libcontend-throttle.so: the PMPI throttle (seeds/netscope-ics21.md
 * section 5).  Loaded into any MPI application (LD_PRELOAD, or linked), it
 * delays the application's sends so that each process injects at most the
 * rate R of the controller (src/throttle/controller.h, eq. 13-15), and
 * updates R every control window from the node's injection stall read by
 * one process per node (src/throttle/sources.h).  Configuration: the
 * CONTEND_THROTTLE* environment variables (params.c, libparams.c), set by
 * `contend throttle`.  docs/throttle.md describes it for users.
 *
 * Threads and sharing:
 *   - MPI_Init(_thread) (collective over MPI_COMM_WORLD when the mode is not
 *     off) dups the world, splits it per node (MPI_COMM_TYPE_SHARED),
 *     lets the node leader open the counter source, shares the outcome
 *     with the node, allocates one node-shared word (MPI_Win_allocate_shared)
 *     and starts a sampler pthread.  The thread makes no MPI calls: it
 *     wakes every window (on multiples of the window on CLOCK_MONOTONIC,
 *     shared by the node's processes; non-leaders a little later), the
 *     leader reads the source and publishes (sequence, signal) in the shared
 *     word; every process's thread runs ct_window on it and publishes the
 *     new rate with an atomic.
 *   - The wrappers (any application thread) read one relaxed atomic
 *     (g_flags) and branch; only when pacing is on (a rate below the line
 *     rate, or static) or a log is written do they read the clock, size the
 *     send and take the pacing lock (the pacing state next_s and its random
 *     stream belong to the senders, not to the sampler).
 *   - Calls on communicators named "contend-control" (contend's control
 *     plane) and on windows created over them or named so are never
 *     paced or counted.
 *   - MPI_Finalize (collective over MPI_COMM_WORLD when active) stops the
 *     thread, frees the shared window and merges the per-process log parts
 *     (rank 0) into the log file.
 * Faults never stop the application: a bad environment or a missing source
 * turns the throttle off with one warning; a source that is not a regular
 * file (a FIFO, a device) is refused the same way, and read without ever
 * blocking should one be swapped in later; a source that disappears later
 * turns it off on that node with one warning (the neutral rate, the line
 * rate) while the log keeps one row per window and process to the end; a
 * garbage window (not a number, NaN, a counter that decreased) is ignored
 * with one warning per node; a log that cannot be written (checked by
 * rank 0 at MPI_Init: path, directory, same file as the source) is
 * dropped with one warning naming the path and the reason. */
#define _GNU_SOURCE
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "contend/files.h"
#include "controller.h"
#include "libparams.h"
#include "params.h"
#include "sources.h"

#define CONTROL_NAME "contend-control"
#define WARN "contend-throttle: warning: "
#define MIN_WINDOW_S 1e-3 /* the sampler thread wakes at most every ms */

enum { F_PACE = 1, F_COUNT = 2 };
enum { MAXCOMM = 8, MAXWIN = 8, MAXPERSIST = 16 };

/* The only thing the wrappers read when the throttle is idle. */
static _Atomic unsigned g_flags;

/* One word in node-shared memory, written by the node leader's sampler:
 * sequence number (high 32 bits) and the window's signal as a float (low
 * 32 bits); `gone` set when the source disappeared. */
typedef struct {
  _Atomic uint64_t word;
  _Atomic int gone;
} shared_signal;

static struct {
  ct_config cfg;
  ct_state pace;              /* senders' (under `lock`): next_s, random stream */
  ct_state ctl;               /* sampler thread's: alpha, rate */
  _Atomic uint64_t rate_bits; /* R as a double, sampler -> senders */
  _Atomic uint64_t ca_bits;   /* c_a as a double, contend_throttle_bind_job -> sampler */
  char *ca_spec;              /* CONTEND_THROTTLE_CA (heap) */
  _Atomic uint64_t sends;     /* paced or counted sends */
  _Atomic uint64_t delay_us;  /* injected delay */
  atomic_flag lock;           /* pacing state */
  int active;                 /* initialised (Finalize undoes it) */
  int rank, size, leader, logging;
  MPI_Comm world, node; /* private dups: never wrapped, never paced */
  MPI_Win shm_win;
  shared_signal *shm;
  ct_source *src; /* node leader only (heap: ~1 KiB of paths) */
  pthread_t thread;
  int thread_started, stop;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  FILE *log;
  char *log_path; /* heap */
  double t0_real; /* for the log's time_s */
  int warned_garbage;
  MPI_Comm ctl_comms[MAXCOMM];
  MPI_Win ctl_wins[MAXWIN];
  int ncomms, nwins;
  struct {
    MPI_Request req;
    double bytes; /* < 0: on a control communicator */
  } persist[MAXPERSIST];
  char host[32];
} g = {.lock = ATOMIC_FLAG_INIT, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

_Static_assert(sizeof g <= 1024, "the throttle's state per process must stay within 1 KiB");

static double now_mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_real(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, WARN "%s\n", line);
  fflush(stderr);
}

static double bits_to_double(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

static uint64_t double_to_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* ---- control communicators and windows ----------------------------------------------- */

static int control_comm(MPI_Comm c) {
  for (int i = 0; i < g.ncomms; i++)
    if (g.ctl_comms[i] == c)
      return 1;
  return 0;
}

static int control_win(MPI_Win w) {
  for (int i = 0; i < g.nwins; i++)
    if (g.ctl_wins[i] == w)
      return 1;
  return 0;
}

static void mark_comm(MPI_Comm c, int on) {
  for (int i = 0; i < g.ncomms; i++)
    if (g.ctl_comms[i] == c) {
      if (!on)
        g.ctl_comms[i] = g.ctl_comms[--g.ncomms];
      return;
    }
  if (on && g.ncomms < MAXCOMM)
    g.ctl_comms[g.ncomms++] = c;
}

static void mark_win(MPI_Win w, int on) {
  for (int i = 0; i < g.nwins; i++)
    if (g.ctl_wins[i] == w) {
      if (!on)
        g.ctl_wins[i] = g.ctl_wins[--g.nwins];
      return;
    }
  if (on && g.nwins < MAXWIN)
    g.ctl_wins[g.nwins++] = w;
}

/* ---- pacing ------------------------------------------------------------------------- */

static double tbytes(int count, MPI_Datatype t) {
  int sz = 0;
  if (count <= 0 || t == MPI_DATATYPE_NULL)
    return 0;
  PMPI_Type_size(t, &sz);
  return (double)count * (double)sz;
}

static int comm_size(MPI_Comm c) {
  int n = 1;
  PMPI_Comm_size(c, &n);
  return n;
}

static int comm_rank(MPI_Comm c) {
  int r = 0;
  PMPI_Comm_rank(c, &r);
  return r;
}

/* Waits before a send of `bytes` (any thread). */
static void pace_slow(unsigned f, double bytes) {
  if (f & F_COUNT)
    atomic_store_explicit(&g.sends, atomic_load_explicit(&g.sends, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  if (!(f & F_PACE) || !(bytes > 0))
    return;
  while (atomic_flag_test_and_set_explicit(&g.lock, memory_order_acquire))
    ;
  g.pace.rate_gbps = bits_to_double(atomic_load_explicit(&g.rate_bits, memory_order_relaxed));
  const long us = ct_quantize_us(&g.pace, ct_pace(&g.pace, &g.cfg, now_mono(), bytes));
  atomic_flag_clear_explicit(&g.lock, memory_order_release);
  if (us > 0) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts))
      ;
    atomic_fetch_add_explicit(&g.delay_us, (uint64_t)us, memory_order_relaxed);
  }
}

/* The hot path: one relaxed load and a branch when idle. */
#define PACE_COMM(comm, bytes_expr)                                                                \
  do {                                                                                             \
    const unsigned f_ = atomic_load_explicit(&g_flags, memory_order_relaxed);                      \
    if (__builtin_expect(f_ != 0, 0) && !control_comm(comm))                                       \
      pace_slow(f_, (bytes_expr));                                                                 \
  } while (0)
#define PACE_WIN(win, bytes_expr)                                                                  \
  do {                                                                                             \
    const unsigned f_ = atomic_load_explicit(&g_flags, memory_order_relaxed);                      \
    if (__builtin_expect(f_ != 0, 0) && !control_win(win))                                         \
      pace_slow(f_, (bytes_expr));                                                                 \
  } while (0)

static void set_rate(double r) {
  atomic_store_explicit(&g.rate_bits, double_to_bits(r), memory_order_relaxed);
  unsigned f = g.logging ? F_COUNT : 0;
  if (g.cfg.mode == CT_STATIC || (g.cfg.mode != CT_OFF && r < g.cfg.line_gbps * (1 - 1e-9)))
    f |= F_PACE;
  atomic_store_explicit(&g_flags, f, memory_order_relaxed);
}

/* ---- the sampler thread -------------------------------------------------------------- */

/* Sleeps until monotonic time t; 1 when asked to stop. */
static int wait_until(double t) {
  struct timespec ts;
  ts.tv_sec = (time_t)floor(t);
  ts.tv_nsec = (long)((t - floor(t)) * 1e9);
  pthread_mutex_lock(&g.mu);
  while (!g.stop && pthread_cond_timedwait(&g.cv, &g.mu, &ts) == 0)
    ;
  const int stop = g.stop;
  pthread_mutex_unlock(&g.mu);
  return stop;
}

static void log_row(double signal, uint64_t *sends0, uint64_t *delay0) {
  if (!g.log)
    return;
  const uint64_t s = atomic_load_explicit(&g.sends, memory_order_relaxed);
  const uint64_t d = atomic_load_explicit(&g.delay_us, memory_order_relaxed);
  char sig[32] = "";
  if (!isnan(signal))
    snprintf(sig, sizeof sig, "%.9g", signal);
  const double rate = bits_to_double(atomic_load_explicit(&g.rate_bits, memory_order_relaxed));
  fprintf(g.log, "%.6f,%d,%s,%s,%.9g,%.9g,%llu,%llu\n", now_real() - g.t0_real, g.rank, g.host, sig,
          g.ctl.alpha, rate, (unsigned long long)(d - *delay0), (unsigned long long)(s - *sends0));
  *sends0 = s;
  *delay0 = d;
}

static void *sampler(void *arg) {
  (void)arg;
  const double w = g.cfg.window_s;
  const int adaptive = g.cfg.mode == CT_DCQCN || g.cfg.mode == CT_NETSCOPE;
  const int polls = g.src ? ct_source_polls_per_window(g.src) : 1;
  /* non-leaders read the leader's word a little after it wrote it */
  const double lag = g.leader ? 0 : fmin(w / 4, 0.02);
  const double epoch = floor(now_mono() / w) * w;
  uint32_t seen = g.shm ? (uint32_t)(atomic_load(&g.shm->word) >> 32) : 0;
  uint64_t sends0 = 0, delay0 = 0;
  int neutral = 0; /* the source is gone: line rate, rows without a signal */
  for (uint64_t k = 1;; k++) {
    for (int p = 1; p <= polls; p++) {
      if (wait_until(epoch + (double)(k - 1) * w + p * w / polls + lag)) {
        log_row(NAN, &sends0, &delay0); /* the sends since the last window */
        return NULL;
      }
      if (g.src && !neutral)
        ct_source_poll(g.src);
    }
    if (!adaptive) { /* static: rows only */
      log_row(NAN, &sends0, &delay0);
      continue;
    }
    if (g.src && !atomic_load(&g.shm->gone)) {
      double sig;
      char err[600];
      const int r = ct_source_window(g.src, now_mono(), &sig, err, sizeof err);
      if (r == 1) {
        const uint64_t old = atomic_load(&g.shm->word);
        const float f = (float)sig;
        uint32_t fb;
        memcpy(&fb, &f, sizeof fb);
        atomic_store(&g.shm->word, ((uint64_t)((uint32_t)(old >> 32) + 1) << 32) | fb);
      } else if (r == 0 && !g.warned_garbage) {
        g.warned_garbage = 1;
        warn("counter source %s gave a garbage window (%s): such windows are ignored (no "
             "rate update)",
             g.src->desc, err);
      } else if (r < 0) {
        warn("counter source %s disappeared (%s): throttling off on node %s for the rest of the "
             "run (the log goes on)",
             g.src->desc, err, g.host);
        atomic_store(&g.shm->gone, 1);
      }
    }
    if (atomic_load(&g.shm->gone)) {
      if (!neutral) { /* no signal any more: the neutral rate, no pacing */
        neutral = 1;
        set_rate(g.cfg.line_gbps);
      }
      log_row(NAN, &sends0, &delay0); /* one row per window to the end */
      continue;
    }
    const uint64_t word = atomic_load(&g.shm->word);
    double signal = NAN;
    if ((uint32_t)(word >> 32) != seen) {
      seen = (uint32_t)(word >> 32);
      const uint32_t fb = (uint32_t)word;
      float f;
      memcpy(&f, &fb, sizeof f);
      signal = f;
      g.cfg.ca = bits_to_double(atomic_load(&g.ca_bits)); /* the job's, once bound */
      if (ct_window(&g.ctl, &g.cfg, signal) == 0)
        set_rate(g.ctl.rate_gbps);
      else
        signal = NAN;
    }
    log_row(signal, &sends0, &delay0);
  }
}

/* ---- init and finalize --------------------------------------------------------------- */

static void log_part_name(char *out, size_t len, int rank) {
  snprintf(out, len, "%s.part%d", g.log_path, rank);
}

/* Turns a failed start off (everything collective already done). */
static void throttle_init(void) {
  contend_param_def *defs = ct_all_param_defs();
  contend_params p;
  char err[1024] = "";
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.size);
  int bad = !defs || contend_params_init(&p, defs, "", err, sizeof err);
  if (!bad)
    bad = ct_params_from_env(&p, err, sizeof err);
  ct_config cfg;
  if (!bad)
    bad = ct_config_from_params(&p, 100, &cfg, err, sizeof err);
  double ca = 0;
  if (!bad)
    bad = ct_ca_for(contend_param_str(&p, "throttle_ca"), contend_param_str(&p, "throttle_job"),
                    &ca, err, sizeof err);
  if (!bad && cfg.mode != CT_OFF && cfg.window_s < MIN_WINDOW_S) {
    snprintf(err, sizeof err, "CONTEND_THROTTLE_WINDOW_US: the library's window must be >= %g us",
             MIN_WINDOW_S * 1e6);
    bad = 1;
  }
  if (bad) {
    if (g.rank == 0)
      warn("%s: throttling off", err);
    if (defs) {
      contend_params_free(&p);
      free(defs);
    }
    return;
  }
  cfg.ca = ca;
  if (cfg.mode == CT_OFF) {
    contend_params_free(&p);
    free(defs);
    return;
  }
  /* collective from here on, over MPI_COMM_WORLD */
  g.active = 1;
  g.cfg = cfg;
  atomic_store(&g.ca_bits, double_to_bits(ca));
  g.ca_spec = strdup(contend_param_str(&p, "throttle_ca"));
  gethostname(g.host, sizeof g.host - 1);
  PMPI_Comm_dup(MPI_COMM_WORLD, &g.world);
  PMPI_Comm_split_type(g.world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &g.node);
  g.leader = comm_rank(g.node) == 0;
  const char *logp = contend_param_str(&p, "throttle_log");
  g.logging = *logp != 0;
  if (g.logging) { /* rank 0 checks where the log goes, for every rank */
    char ferr[1024] = "";
    int bad = g.rank == 0 && ct_files_check(&p, 1, CONTEND_FILES_CREATE, ferr, sizeof ferr);
    PMPI_Bcast(&bad, 1, MPI_INT, 0, g.world);
    if (bad && g.rank == 0)
      warn("%s: no log", ferr);
    g.logging = !bad;
  }
  if (g.logging)
    g.log_path = strdup(logp);
  uint64_t seed = (uint64_t)contend_param_int(&p, "throttle_seed");
  const int is_time = p.v[contend_params_find(&p, "throttle_seed")].is_time;
  if (is_time && g.rank == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
  }
  unsigned long long seed_all = seed;
  PMPI_Bcast(&seed_all, 1, MPI_UNSIGNED_LONG_LONG, 0, g.world);
  seed = seed_all;

  /* the node leader opens the source (adaptive modes only) and tells the node */
  double info[2] = {1, 0}; /* ok, line rate of the source */
  const int adaptive = cfg.mode == CT_DCQCN || cfg.mode == CT_NETSCOPE;
  if (adaptive && g.leader) {
    g.src = calloc(1, sizeof *g.src);
    if (!g.src || ct_source_open(g.src, contend_param_str(&p, "throttle_source"),
                                 contend_param_str(&p, "throttle_sysfs_root"),
                                 contend_param_double(&p, "throttle_tick_ns"), err, sizeof err)) {
      warn("%s: throttling off on node %s", g.src ? err : "out of memory", g.host);
      free(g.src);
      g.src = NULL;
      info[0] = 0;
    } else {
      info[1] = g.src->line_gbps;
    }
  }
  PMPI_Bcast(info, 2, MPI_DOUBLE, 0, g.node);
  if (!contend_param_double(&p, "throttle_line_gbps") && info[1] > 0)
    ct_config_set_line(&g.cfg, info[1]);
  if (g.cfg.mode == CT_STATIC && ct_config_check(&g.cfg, err, sizeof err)) {
    if (g.rank == 0)
      warn("%s: throttling off", err);
    info[0] = 0;
  }
  if (!info[0])
    g.cfg.mode = CT_OFF;
  ct_init(&g.pace, &g.cfg, seed, (uint64_t)g.rank);
  ct_init(&g.ctl, &g.cfg, seed, (uint64_t)g.rank);
  set_rate(g.ctl.rate_gbps);
  if (g.rank == 0 && g.logging) {
    char mode[96];
    ct_mode_format(&g.cfg, mode, sizeof mode);
    fprintf(stderr,
            "contend-throttle: %s, source %s, window %g s, line %g Gbit/s, seed %llu, log %s\n",
            mode, contend_param_str(&p, "throttle_source"), g.cfg.window_s, g.cfg.line_gbps,
            (unsigned long long)seed, g.log_path);
  }
  if (g.logging) {
    char part[4200];
    log_part_name(part, sizeof part, g.rank);
    g.log = fopen(part, "w");
    if (!g.log)
      warn("cannot write the log part %s: no log from rank %d", part, g.rank);
    if (g.log && g.rank == 0) {
      char mode[96];
      ct_mode_format(&g.cfg, mode, sizeof mode);
      fprintf(g.log, "# contend-throttle mode=%s source=%s window_s=%g line_gbps=%g seed=%llu\n",
              mode, contend_param_str(&p, "throttle_source"), g.cfg.window_s, g.cfg.line_gbps,
              (unsigned long long)seed);
      fprintf(g.log, "time_s,rank,node,signal,alpha,rate_gbps,injected_delay_us,sends\n");
    }
  }
  contend_params_free(&p);
  free(defs);
  if (g.cfg.mode == CT_OFF) {
    atomic_store(&g_flags, g.logging ? F_COUNT : 0);
    return;
  }
  if (adaptive) {
    shared_signal *base = NULL;
    PMPI_Win_allocate_shared(g.leader ? (MPI_Aint)sizeof(shared_signal) : 0, 1, MPI_INFO_NULL,
                             g.node, &base, &g.shm_win);
    MPI_Aint sz;
    int disp;
    PMPI_Win_shared_query(g.shm_win, 0, &sz, &disp, &g.shm);
    if (g.leader) {
      atomic_init(&g.shm->word, 0);
      atomic_init(&g.shm->gone, 0);
    }
    PMPI_Barrier(g.node);
  }
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* 1 us sleeps: keep the overshoot small */
  g.t0_real = now_real();
  if (adaptive || g.logging) {
    pthread_condattr_t ca_;
    pthread_condattr_init(&ca_);
    pthread_condattr_setclock(&ca_, CLOCK_MONOTONIC);
    pthread_cond_destroy(&g.cv);
    pthread_cond_init(&g.cv, &ca_);
    pthread_condattr_destroy(&ca_);
    if (adaptive && !g.shm) {
      warn("no node-shared memory: throttling off");
      g.cfg.mode = CT_OFF;
      set_rate(g.cfg.line_gbps);
    } else if (pthread_create(&g.thread, NULL, sampler, NULL) == 0) {
      g.thread_started = 1;
    } else {
      warn("cannot start the sampler thread: throttling off");
      g.cfg.mode = CT_OFF;
      set_rate(g.cfg.line_gbps);
    }
  }
}

/* Collective over MPI_COMM_WORLD when the throttle started. */
static void throttle_finalize(void) {
  if (!g.active)
    return;
  g.active = 0;
  if (g.thread_started) {
    pthread_mutex_lock(&g.mu);
    g.stop = 1;
    pthread_cond_signal(&g.cv);
    pthread_mutex_unlock(&g.mu);
    pthread_join(g.thread, NULL);
    g.thread_started = 0;
  }
  atomic_store(&g_flags, 0);
  if (g.shm_win != MPI_WIN_NULL && g.shm) {
    PMPI_Win_free(&g.shm_win);
    g.shm = NULL;
  }
  if (g.src) {
    ct_source_close(g.src);
    free(g.src);
    g.src = NULL;
  }
  if (g.logging) {
    if (g.log)
      fclose(g.log);
    g.log = NULL;
    PMPI_Barrier(g.world); /* every part is complete */
    if (g.rank == 0) {
      char part[4200], err[1024] = "";
      contend_out out;
      int ok = contend_out_open(&out, "CONTEND_THROTTLE_LOG", g.log_path, err, sizeof err) == 0;
      for (int r = 0; r < g.size && ok; r++) {
        log_part_name(part, sizeof part, r);
        FILE *in = fopen(part, "r");
        if (!in)
          continue;
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
          ok &= fwrite(buf, 1, n, out.f) == n;
        fclose(in);
      }
      if (ok)
        ok = contend_out_commit(&out, err, sizeof err) == 0;
      else
        contend_out_abandon(&out);
      if (ok) {
        for (int r = 0; r < g.size; r++) {
          log_part_name(part, sizeof part, r);
          unlink(part);
        }
      } else {
        warn("%s (parts kept as %s.partN)", *err ? err : "cannot write the log", g.log_path);
      }
    }
    free(g.log_path);
    g.log_path = NULL;
  }
  free(g.ca_spec);
  g.ca_spec = NULL;
  PMPI_Comm_free(&g.node);
  PMPI_Comm_free(&g.world);
}

/* Called by contend's MPI engine (found with dlsym, so only when this
 * library is loaded) when the calling process starts running a rank of
 * `job` under `contend jobs`: the process takes that job's c_a from
 * CONTEND_THROTTLE_CA (JOB=C_A,...; jobs not named: 0), from the next
 * window on.  A single number in CONTEND_THROTTLE_CA, or
 * CONTEND_THROTTLE_JOB given, keeps what init chose.  Any thread; returns
 * 0, or -1 when the throttle is not running. */
__attribute__((visibility("default"))) int contend_throttle_bind_job(const char *job) {
  if (!g.active || !job || !g.ca_spec || !strchr(g.ca_spec, '='))
    return -1;
  const char *fixed = getenv("CONTEND_THROTTLE_JOB");
  if (fixed && *fixed)
    return 0;
  double ca = 0;
  char err[256];
  if (ct_ca_for(g.ca_spec, job, &ca, err, sizeof err))
    return -1;
  atomic_store(&g.ca_bits, double_to_bits(ca));
  return 0;
}

int MPI_Init(int *argc, char ***argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS)
    throttle_init();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS)
    throttle_init();
  return rc;
}

int MPI_Finalize(void) {
  throttle_finalize();
  return PMPI_Finalize();
}

/* ---- naming: which communicators and windows are control ----------------------------- */

int MPI_Comm_set_name(MPI_Comm c, const char *name) {
  const int rc = PMPI_Comm_set_name(c, name);
  if (rc == MPI_SUCCESS)
    mark_comm(c, !strcmp(name, CONTROL_NAME));
  return rc;
}

int MPI_Comm_free(MPI_Comm *c) {
  mark_comm(*c, 0);
  return PMPI_Comm_free(c);
}

int MPI_Win_set_name(MPI_Win w, const char *name) {
  const int rc = PMPI_Win_set_name(w, name);
  if (rc == MPI_SUCCESS)
    mark_win(w, !strcmp(name, CONTROL_NAME));
  return rc;
}

int MPI_Win_create(void *b, MPI_Aint n, int u, MPI_Info i, MPI_Comm c, MPI_Win *w) {
  const int rc = PMPI_Win_create(b, n, u, i, c, w);
  if (rc == MPI_SUCCESS)
    mark_win(*w, control_comm(c));
  return rc;
}

int MPI_Win_allocate(MPI_Aint n, int u, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w) {
  const int rc = PMPI_Win_allocate(n, u, i, c, b, w);
  if (rc == MPI_SUCCESS)
    mark_win(*w, control_comm(c));
  return rc;
}

int MPI_Win_allocate_shared(MPI_Aint n, int u, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w) {
  const int rc = PMPI_Win_allocate_shared(n, u, i, c, b, w);
  if (rc == MPI_SUCCESS)
    mark_win(*w, control_comm(c));
  return rc;
}

int MPI_Win_create_dynamic(MPI_Info i, MPI_Comm c, MPI_Win *w) {
  const int rc = PMPI_Win_create_dynamic(i, c, w);
  if (rc == MPI_SUCCESS)
    mark_win(*w, control_comm(c));
  return rc;
}

int MPI_Win_free(MPI_Win *w) {
  mark_win(*w, 0);
  return PMPI_Win_free(w);
}

/* ---- point to point ------------------------------------------------------------------ */

#define SEND_LIKE(NAME)                                                                            \
  int MPI_##NAME(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {               \
    PACE_COMM(c, tbytes(n, t));                                                                    \
    return PMPI_##NAME(b, n, t, d, tag, c);                                                        \
  }
#define ISEND_LIKE(NAME)                                                                           \
  int MPI_##NAME(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c,                 \
                 MPI_Request *r) {                                                                 \
    PACE_COMM(c, tbytes(n, t));                                                                    \
    return PMPI_##NAME(b, n, t, d, tag, c, r);                                                     \
  }
SEND_LIKE(Send)
SEND_LIKE(Ssend)
SEND_LIKE(Bsend)
SEND_LIKE(Rsend)
ISEND_LIKE(Isend)
ISEND_LIKE(Issend)
ISEND_LIKE(Ibsend)
ISEND_LIKE(Irsend)

int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int d, int stag, void *rb, int rn,
                 MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *status) {
  PACE_COMM(c, tbytes(sn, st));
  return PMPI_Sendrecv(sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, status);
}

int MPI_Sendrecv_replace(void *b, int n, MPI_Datatype t, int d, int stag, int s, int rtag,
                         MPI_Comm c, MPI_Status *status) {
  PACE_COMM(c, tbytes(n, t));
  return PMPI_Sendrecv_replace(b, n, t, d, stag, s, rtag, c, status);
}

/* Persistent sends: the bytes of each request are remembered (up to
 * MAXPERSIST at a time; more are not paced) and paced at MPI_Start. */
static void persist_add(MPI_Request r, double bytes) {
  for (int i = 0; i < MAXPERSIST; i++)
    if (g.persist[i].req == MPI_REQUEST_NULL || g.persist[i].req == 0) {
      g.persist[i].req = r;
      g.persist[i].bytes = bytes;
      return;
    }
}

static void persist_start(MPI_Request r) {
  if (r == MPI_REQUEST_NULL)
    return;
  for (int i = 0; i < MAXPERSIST; i++)
    if (g.persist[i].req == r) {
      const unsigned f = atomic_load_explicit(&g_flags, memory_order_relaxed);
      if (g.persist[i].bytes >= 0)
        pace_slow(f, g.persist[i].bytes);
      return;
    }
}

#define SEND_INIT_LIKE(NAME)                                                                       \
  int MPI_##NAME(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c,                 \
                 MPI_Request *r) {                                                                 \
    const int rc = PMPI_##NAME(b, n, t, d, tag, c, r);                                             \
    if (rc == MPI_SUCCESS)                                                                         \
      persist_add(*r, control_comm(c) ? -1 : tbytes(n, t));                                        \
    return rc;                                                                                     \
  }
SEND_INIT_LIKE(Send_init)
SEND_INIT_LIKE(Ssend_init)
SEND_INIT_LIKE(Bsend_init)
SEND_INIT_LIKE(Rsend_init)

int MPI_Start(MPI_Request *r) {
  if (__builtin_expect(atomic_load_explicit(&g_flags, memory_order_relaxed) != 0, 0))
    persist_start(*r);
  return PMPI_Start(r);
}

int MPI_Startall(int n, MPI_Request r[]) {
  if (__builtin_expect(atomic_load_explicit(&g_flags, memory_order_relaxed) != 0, 0))
    for (int i = 0; i < n; i++)
      persist_start(r[i]);
  return PMPI_Startall(n, r);
}

int MPI_Request_free(MPI_Request *r) {
  for (int i = 0; i < MAXPERSIST; i++)
    if (*r != MPI_REQUEST_NULL && g.persist[i].req == *r)
      g.persist[i].req = MPI_REQUEST_NULL;
  return PMPI_Request_free(r);
}

/* ---- one-sided: the bytes moved by the call (a Get's data is counted
 * against the process that asks for it) ---------------------------------------------- */

int MPI_Put(const void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn, MPI_Datatype tt,
            MPI_Win w) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Put(o, on, ot, r, d, tn, tt, w);
}

int MPI_Rput(const void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn, MPI_Datatype tt,
             MPI_Win w, MPI_Request *q) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Rput(o, on, ot, r, d, tn, tt, w, q);
}

int MPI_Get(void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn, MPI_Datatype tt,
            MPI_Win w) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Get(o, on, ot, r, d, tn, tt, w);
}

int MPI_Rget(void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn, MPI_Datatype tt,
             MPI_Win w, MPI_Request *q) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Rget(o, on, ot, r, d, tn, tt, w, q);
}

int MPI_Accumulate(const void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Accumulate(o, on, ot, r, d, tn, tt, op, w);
}

int MPI_Raccumulate(const void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn,
                    MPI_Datatype tt, MPI_Op op, MPI_Win w, MPI_Request *q) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Raccumulate(o, on, ot, r, d, tn, tt, op, w, q);
}

int MPI_Get_accumulate(const void *o, int on, MPI_Datatype ot, void *res, int rn, MPI_Datatype rt,
                       int r, MPI_Aint d, int tn, MPI_Datatype tt, MPI_Op op, MPI_Win w) {
  PACE_WIN(w, tbytes(on, ot));
  return PMPI_Get_accumulate(o, on, ot, res, rn, rt, r, d, tn, tt, op, w);
}

/* ---- collectives: estimates of the bytes this rank sends (docs/throttle.md) --------- */

int MPI_Barrier(MPI_Comm c) {
  PACE_COMM(c, 0);
  return PMPI_Barrier(c);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  PACE_COMM(c, tbytes(n, t)); /* the root sends it, tree ranks forward it once */
  return PMPI_Bcast(b, n, t, root, c);
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c) {
  PACE_COMM(c, tbytes(n, t));
  return PMPI_Reduce(s, r, n, t, o, root, c);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  PACE_COMM(c, tbytes(n, t));
  return PMPI_Allreduce(s, r, n, t, o, c);
}

int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm c) {
  PACE_COMM(c, comm_rank(c) == root ? 0 : tbytes(sn, st));
  return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}

int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                MPI_Comm c) {
  PACE_COMM(c, comm_rank(c) == root ? tbytes(sn, st) * (comm_size(c) - 1) : 0);
  return PMPI_Scatter(s, sn, st, r, rn, rt, root, c);
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c) {
  PACE_COMM(c, (s == MPI_IN_PLACE ? tbytes(rn, rt) : tbytes(sn, st)) * (comm_size(c) - 1));
  return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}

int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *d,
                   MPI_Datatype rt, MPI_Comm c) {
  PACE_COMM(c, (s == MPI_IN_PLACE ? tbytes(rn[comm_rank(c)], rt) : tbytes(sn, st)) *
                   (comm_size(c) - 1));
  return PMPI_Allgatherv(s, sn, st, r, rn, d, rt, c);
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c) {
  PACE_COMM(c, (s == MPI_IN_PLACE ? tbytes(rn, rt) : tbytes(sn, st)) * (comm_size(c) - 1));
  return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}

static double alltoallv_bytes(const void *s, const int *sn, MPI_Datatype st, const int *rn,
                              MPI_Datatype rt, MPI_Comm c) {
  const int n = comm_size(c), me = comm_rank(c);
  const int *counts = s == MPI_IN_PLACE ? rn : sn;
  double total = 0;
  for (int i = 0; i < n; i++)
    if (i != me)
      total += counts[i];
  return tbytes(1, s == MPI_IN_PLACE ? rt : st) * total;
}

int MPI_Alltoallv(const void *s, const int *sn, const int *sd, MPI_Datatype st, void *r,
                  const int *rn, const int *rd, MPI_Datatype rt, MPI_Comm c) {
  PACE_COMM(c, alltoallv_bytes(s, sn, st, rn, rt, c));
  return PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c);
}

int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  PACE_COMM(c, tbytes(n, t) * (comm_size(c) - 1));
  return PMPI_Reduce_scatter_block(s, r, n, t, o, c);
}

int MPI_Reduce_scatter(const void *s, void *r, const int *n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  PACE_COMM(c, ({
              double sum_ = 0;
              const int me_ = comm_rank(c), p_ = comm_size(c);
              for (int i = 0; i < p_; i++)
                sum_ += i == me_ ? 0 : n[i];
              tbytes(1, t) * sum_;
            }));
  return PMPI_Reduce_scatter(s, r, n, t, o, c);
}
