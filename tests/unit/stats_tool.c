/* Reads numbers (one per line) from stdin into a contend_hist and prints
 * its summary as JSON: lets the Python tests compare contend's statistics
 * with numpy on the same samples.  usage: stats_tool [--higher-is-better] */
#include <stdio.h>
#include <string.h>

#include "contend/json.h"
#include "contend/stats.h"

int main(int argc, char **argv) {
  int hib = argc > 1 && !strcmp(argv[1], "--higher-is-better");
  static contend_hist h;
  contend_hist_reset(&h);
  double v;
  while (scanf("%lf", &v) == 1)
    contend_hist_add(&h, v);
  contend_summary s;
  contend_summarize(&h, hib, &s);
  contend_strbuf b = {0};
  contend_json j;
  contend_json_init(&j, &b);
  contend_json_obj_begin(&j, NULL);
  contend_json_uint(&j, "count", s.count);
  contend_json_double(&j, "mean", s.mean);
  contend_json_double(&j, "stddev", s.stddev);
  contend_json_double(&j, "min", s.min);
  contend_json_double(&j, "max", s.max);
  contend_json_double(&j, "p0_1", s.p0_1);
  contend_json_double(&j, "p1", s.p1);
  contend_json_double(&j, "p50", s.p50);
  contend_json_double(&j, "p99", s.p99);
  contend_json_double(&j, "p99_9", s.p99_9);
  contend_json_double(&j, "tail_99", s.tail_99);
  contend_json_obj_end(&j);
  fputs(b.s, stdout);
  contend_sb_free(&b);
  return 0;
}
