/* The throttle's counter sources (contract in sources.h): read the node's
 * injection-stall counter each control window and turn its increase into
 * the fraction of the window stalled.  Which files and counters follow
 * docs/telemetry.md (python/contend/telemetry/sources/). */
#include "sources.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CXI_WRAP 72057594037927936.0 /* 2^56: cxi counters are 56 bits wide */
#define IB_SATURATED 4294967295.0    /* 32-bit port_xmit_wait saturates */

/* What a file that is not regular is, for messages. */
static const char *kind_of(mode_t m) {
  return S_ISFIFO(m)   ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISDIR(m)  ? "a directory"
         : S_ISSOCK(m) ? "a socket"
                       : "a special file";
}

/* Reads a small regular text file without ever blocking: a FIFO or a
 * device put in its place is refused before it is opened (stat) and
 * after (fstat: it may have been swapped in between; the open itself is
 * non-blocking).  1, 0 (empty), -1 (missing, unreadable or not a regular
 * file: why in why). */
static int read_text(const char *path, char *buf, size_t len, char *why, size_t whylen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(why, whylen, "%s", strerror(errno));
    return -1;
  }
  const int fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
  if (fd < 0 && S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "%s", strerror(errno));
    return -1;
  }
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0)
      close(fd);
    snprintf(why, whylen,
             "it is %s, not a regular file: a counter source must be a regular file (a FIFO or a "
             "device could block its reader)",
             kind_of(st.st_mode));
    return -1;
  }
  const ssize_t n = read(fd, buf, len - 1);
  const int e = errno;
  close(fd);
  if (n < 0) {
    snprintf(why, whylen, "%s", strerror(e));
    return -1;
  }
  buf[n] = 0;
  return n > 0;
}

/* A number and nothing but blanks after it (cxi: up to '@'). */
static int parse_number(const char *t, char stop, double *v) {
  char *end;
  errno = 0;
  *v = strtod(t, &end);
  if (end == t || errno == ERANGE || !isfinite(*v))
    return -1;
  while (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r')
    end++;
  return (*end == 0 || (stop && *end == stop)) ? 0 : -1;
}

/* First entry of dir (sorted by name) for which root/dir/entry/suffix is
 * readable; its name in out.  0 or -1. */
static int first_entry(const char *dir, const char *suffix, char *out, size_t len) {
  struct dirent **names;
  const int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0)
    return -1;
  int found = -1;
  for (int i = 0; i < n; i++) {
    char p[CT_SRC_PATH + 256];
    snprintf(p, sizeof p, "%s/%s/%s", dir, names[i]->d_name, suffix);
    if (found < 0 && names[i]->d_name[0] != '.' && access(p, R_OK) == 0) {
      snprintf(out, len, "%s", names[i]->d_name);
      found = 0;
    }
    free(names[i]);
  }
  free(names);
  return found;
}

int ct_source_spec_check(const char *spec, char *err, size_t errlen) {
  if (!strcmp(spec, "auto") || !strcmp(spec, "cluster"))
    return 0;
  if (!strncmp(spec, "file:", 5) && spec[5])
    return 0;
  if (!strncmp(spec, "cxi:", 4) && spec[4] && !strchr(spec + 4, '/'))
    return 0;
  if (!strncmp(spec, "cluster:", 8) && spec[8] && strlen(spec + 8) < IF_NAMESIZE)
    return 0;
  if (!strncmp(spec, "ib:", 3)) {
    const char *colon = strchr(spec + 3, ':');
    if (colon && colon > spec + 3 && colon[1] && !strchr(spec + 3, '/') &&
        strspn(colon + 1, "0123456789") == strlen(colon + 1))
      return 0;
  }
  snprintf(err, errlen,
           "throttle source '%s' is not valid: expected auto, ib:HCA:PORT, cxi:DEV, "
           "cluster[:IF] or file:PATH",
           spec);
  return -1;
}

/* Reads the source's cumulative values (ns of stall, or ticks/cycles).
 * 1, 0 garbage, -1 gone; messages in err. */
static int read_values(ct_source *s, double *v, char *err, size_t errlen) {
  char buf[128], p[CT_SRC_PATH + 64];
  switch (s->kind) {
  case CT_SRC_FILE:
  case CT_SRC_IB: {
    char why[256];
    const int r = read_text(s->path, buf, sizeof buf, why, sizeof why);
    if (r < 0) {
      snprintf(err, errlen, "%s: %s", s->path, why);
      return -1;
    }
    if (!r || parse_number(buf, 0, v) || *v < 0) {
      snprintf(err, errlen, "%s: not a count: '%.*s'", s->path, r ? (int)strcspn(buf, "\n") : 0,
               buf);
      return 0;
    }
    if (s->kind == CT_SRC_IB && *v >= IB_SATURATED) {
      snprintf(err, errlen, "%s: saturated (%.0f)", s->path, *v);
      return 0;
    }
    return 1;
  }
  case CT_SRC_CXI:
    for (int c = 0; c < s->nclasses; c++) {
      snprintf(p, sizeof p, "%s/hni_tx_paused_%d", s->path, c);
      char why[256];
      const int r = read_text(p, buf, sizeof buf, why, sizeof why);
      if (r < 0) {
        snprintf(err, errlen, "%s: %s", p, why);
        return -1;
      }
      if (!r || parse_number(buf, '@', &v[c]) || v[c] < 0) {
        snprintf(err, errlen, "%s: not VALUE@SEC.NSEC: '%.*s'", p, r ? (int)strcspn(buf, "\n") : 0,
                 buf);
        return 0;
      }
    }
    return 1;
  }
  return 0;
}

/* One netlink dump of the qdiscs: the root qdisc of s->ifindex has a
 * backlog (1), has none (0), or the dump failed (-1). */
static int cluster_backlog(ct_source *s) {
  struct {
    struct nlmsghdr n;
    struct tcmsg t;
  } req = {.n = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
                 .nlmsg_type = RTM_GETQDISC,
                 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                 .nlmsg_seq = ++s->nl_seq},
           .t = {.tcm_family = AF_UNSPEC, .tcm_ifindex = s->ifindex}};
  if (send(s->nl_fd, &req, req.n.nlmsg_len, 0) < 0)
    return -1;
  int result = -1;
  static __thread char buf[32768]; /* one per sampler thread, not in the state */
  for (;;) {
    ssize_t n = recv(s->nl_fd, buf, sizeof buf, 0);
    if (n <= 0)
      return -1;
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != s->nl_seq)
        continue;
      if (h->nlmsg_type == NLMSG_DONE)
        return result;
      if (h->nlmsg_type == NLMSG_ERROR)
        return -1;
      if (h->nlmsg_type != RTM_NEWQDISC)
        continue;
      const struct tcmsg *t = NLMSG_DATA(h);
      if (t->tcm_ifindex != s->ifindex || t->tcm_parent != TC_H_ROOT)
        continue;
      int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *t);
      for (struct rtattr *a = (struct rtattr *)((char *)t + NLMSG_ALIGN(sizeof *t)); RTA_OK(a, len);
           a = RTA_NEXT(a, len))
        if (a->rta_type == TCA_STATS && RTA_PAYLOAD(a) >= sizeof(struct tc_stats)) {
          struct tc_stats st;
          memcpy(&st, RTA_DATA(a), sizeof st);
          result = st.qlen > 0 || st.backlog > 0;
        }
    }
  }
}

int ct_source_open(ct_source *s, const char *spec, const char *root, double tick_ns, char *err,
                   size_t errlen) {
  memset(s, 0, sizeof *s);
  s->nl_fd = -1;
  s->tick_ns = tick_ns > 0 ? tick_ns : 4;
  if (ct_source_spec_check(spec, err, errlen))
    return -1;
  char dir[CT_SRC_PATH + 64], name[600], buf[128];
  if (!strcmp(spec, "auto")) {
    char hca[256], port[256];
    snprintf(dir, sizeof dir, "%s/class/infiniband", root);
    if (!first_entry(dir, "ports", hca, sizeof hca)) {
      snprintf(dir, sizeof dir, "%s/class/infiniband/%s/ports", root, hca);
      if (!first_entry(dir, "counters/port_xmit_wait", port, sizeof port)) {
        snprintf(name, sizeof name, "ib:%s:%s", hca, port);
        return ct_source_open(s, name, root, tick_ns, err, errlen);
      }
    }
    snprintf(dir, sizeof dir, "%s/class/cxi", root);
    if (!first_entry(dir, "device/telemetry/hni_tx_paused_0", hca, sizeof hca)) {
      snprintf(name, sizeof name, "cxi:%s", hca);
      return ct_source_open(s, name, root, tick_ns, err, errlen);
    }
    snprintf(err, errlen,
             "no counter source found (no readable %s/class/infiniband/*/ports/*/counters/"
             "port_xmit_wait, no %s/class/cxi/*/device/telemetry/hni_tx_paused_0)",
             root, root);
    return -1;
  }
  snprintf(s->desc, sizeof s->desc, "%s", spec);
  if (!strncmp(spec, "file:", 5)) {
    s->kind = CT_SRC_FILE;
    snprintf(s->path, sizeof s->path, "%s", spec + 5);
  } else if (!strncmp(spec, "ib:", 3)) {
    const char *colon = strchr(spec + 3, ':');
    s->kind = CT_SRC_IB;
    snprintf(s->path, sizeof s->path, "%s/class/infiniband/%.*s/ports/%s/counters/port_xmit_wait",
             root, (int)(colon - spec - 3), spec + 3, colon + 1);
    snprintf(dir, sizeof dir, "%s/class/infiniband/%.*s/ports/%s/rate", root,
             (int)(colon - spec - 3), spec + 3, colon + 1);
    char why[256];
    if (read_text(dir, buf, sizeof buf, why, sizeof why) > 0) /* "100 Gb/sec (4X EDR)" */
      s->line_gbps = strtod(buf, NULL) > 0 ? strtod(buf, NULL) : 0;
  } else if (!strncmp(spec, "cxi:", 4)) {
    s->kind = CT_SRC_CXI;
    snprintf(s->path, sizeof s->path, "%s/class/cxi/%s/device/telemetry", root, spec + 4);
    for (s->nclasses = 0; s->nclasses < CT_CXI_CLASSES; s->nclasses++) {
      snprintf(dir, sizeof dir, "%s/hni_tx_paused_%d", s->path, s->nclasses);
      if (access(dir, R_OK))
        break;
    }
    if (!s->nclasses) {
      snprintf(err, errlen, "%s/hni_tx_paused_0: %s", s->path, strerror(errno));
      return -1;
    }
    s->line_gbps = 200; /* Cassini: 200 Gbit/s; no rate file in the telemetry */
  } else {
    s->kind = CT_SRC_CLUSTER;
    const char *ifname = spec[7] == ':' ? spec + 8 : "eth0";
    snprintf(s->desc, sizeof s->desc, "cluster:%s", ifname);
    s->ifindex = (int)if_nametoindex(ifname);
    if (!s->ifindex) {
      snprintf(err, errlen, "cluster source: no interface %s in this network namespace", ifname);
      return -1;
    }
    snprintf(dir, sizeof dir, "/sys/class/net/%s/speed", ifname);
    char why[256];
    if (read_text(dir, buf, sizeof buf, why, sizeof why) > 0 && strtod(buf, NULL) > 0)
      s->line_gbps = strtod(buf, NULL) / 1000; /* Mbit/s */
    s->nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s->nl_fd < 0 || cluster_backlog(s) < 0) {
      snprintf(err, errlen, "cluster source: cannot read the qdisc of %s (netlink): %s", ifname,
               strerror(errno));
      ct_source_close(s);
      return -1;
    }
    return 0;
  }
  double v[CT_CXI_CLASSES];
  const int r = read_values(s, v, err, errlen);
  if (r <= 0)
    return -1; /* a source that is garbage from the start is refused */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  memcpy(s->last, v, sizeof v);
  s->last_t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  s->have_last = 1;
  return 0;
}

int ct_source_polls_per_window(const ct_source *s) { return s->kind == CT_SRC_CLUSTER ? 20 : 1; }

void ct_source_poll(ct_source *s) {
  if (s->kind != CT_SRC_CLUSTER)
    return;
  s->polls++;
  s->busy += cluster_backlog(s) == 1;
}

int ct_source_window(ct_source *s, double now_s, double *signal, char *err, size_t errlen) {
  if (s->kind == CT_SRC_CLUSTER) {
    if (s->polls == 0) {
      snprintf(err, errlen, "%s: no poll in this window", s->desc);
      return 0;
    }
    *signal = (double)s->busy / s->polls;
    s->polls = s->busy = 0;
    return 1;
  }
  double v[CT_CXI_CLASSES];
  const int r = read_values(s, v, err, errlen);
  if (r <= 0) {
    s->have_last = 0; /* garbage or gone: the next good read is a new baseline */
    return r;
  }
  const int first = !s->have_last;
  const double dt_ns = (now_s - s->last_t) * 1e9;
  double stall_ns = 0;
  int bad = 0;
  const int n = s->kind == CT_SRC_CXI ? s->nclasses : 1;
  for (int c = 0; c < n && !first; c++) {
    double d = v[c] - s->last[c];
    if (d < 0 && s->kind == CT_SRC_CXI && s->last[c] < CXI_WRAP &&
        CXI_WRAP - s->last[c] + v[c] < CXI_WRAP / 2)
      d = CXI_WRAP - s->last[c] + v[c]; /* one wrap of the 56-bit counter */
    if (d < 0)
      bad = 1;
    const double ns = s->kind == CT_SRC_IB ? d * s->tick_ns : d; /* file: ns; cxi: 1 ns cycles */
    if (ns > stall_ns)
      stall_ns = ns; /* cxi: the most paused class */
  }
  memcpy(s->last, v, sizeof(double) * (size_t)n);
  s->last_t = now_s;
  s->have_last = 1;
  if (first) {
    snprintf(err, errlen, "%s: no baseline before this window", s->desc);
    return 0;
  }
  if (bad || !(dt_ns > 0)) {
    snprintf(err, errlen, "%s: the counter decreased (reset?)", s->desc);
    return 0;
  }
  const double f = stall_ns / dt_ns;
  *signal = f > 1 ? 1 : f;
  return 1;
}

void ct_source_close(ct_source *s) {
  if (s->nl_fd >= 0)
    close(s->nl_fd);
  s->nl_fd = -1;
}
