"""``contend model``: fit Netscope's latency model, estimate delay sensitivity, show model files.

Console script ``contend-model`` (``contend model ...`` from the C binary).
Subcommands:

* ``fit-latency TRAIN.json -o model.json``: eq. 6-12 on a ping-pong training file;
* ``sensitivity RUNS.json... --latency model.json --job NAME -o sens.json``: eq. 2-5;
* ``show FILE``: either model file as tables with units.

Bad input gives one line on stderr and exit status 2 before any output is
written; outputs are written through a temporary file in the same directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import infile
from ..argtypes import nonneg_float, nonneg_int, positive_float
from ..guard import guarded, report
from ..limits import clip_repr
from ..outfile import check_distinct, check_output
from .errors import ModelError

EXIT_USAGE = 2
PROG = "contend model"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, status 2, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1), got {clip_repr(text)}")
    return value


def _check_output(path, what: str = "output") -> Path:
    return check_output(path, what, ModelError)


def _check_plot(path):
    if path is None:
        return None
    path = _check_output(path, "plot")
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ModelError(f"{path}: --plot takes a .png, .svg or .pdf file name")
    return path


def _save_plot(fig, path: Path) -> None:
    """Save a figure whole or not at all (through a temporary in the same directory)."""
    from ..reports.plots import save_figure

    save_figure(fig, path, ModelError)


# ----------------------------------------------------------------- fit-latency


def cmd_fit_latency(args) -> int:
    from .latency import fit_latency
    from .modelfile import LATENCY_SCHEMA, latency_document, relative_to, write_json_atomic
    from .paths import load_paths
    from .training import load_training

    out = _check_output(args.output)
    plot = _check_plot(args.plot)
    outputs = [("-o", out), ("--plot", plot)]
    inputs = [("TRAINING", args.training), ("--paths", args.paths), ("--counters", args.counters)]
    check_distinct(inputs, outputs, ModelError)
    if args.counters_source and not args.counters:
        raise ModelError("--counters-source goes with --counters")
    training = load_training(
        args.training,
        paths_override=args.paths,
        counters=args.counters,
        counters_source=args.counters_source,
        counters_override_all=bool(args.counters and args.all_runs),
    )
    named = [("TRAINING's counter file", ref["file"]) for ref in training.provenance["counters"]]
    check_distinct([("TRAINING's paths", training.paths_file), *named], outputs, ModelError)
    paths = load_paths(training.paths_file)
    fit = fit_latency(
        paths,
        training.samples,
        training.intervals,
        link_classes=args.link_classes,
        holdout=args.holdout,
        seed=args.seed,
        errors=args.errors,
    )
    out_dir = out.resolve().parent
    prov = dict(training.provenance)
    prov["file"] = relative_to(prov["file"], out_dir)
    prov["counters"] = [
        dict(ref, file=relative_to(ref["file"], out_dir)) for ref in prov["counters"]
    ]
    doc = latency_document(fit, paths, training.paths_file, out, [PROG, *args.argv], prov)
    if plot:
        from .figures import latency_figure

        _save_plot(latency_figure(doc), plot)
    write_json_atomic(doc, out, LATENCY_SCHEMA)
    if not args.quiet:
        acc = doc["accuracy"]
        r_hold = acc["holdout"]["pearson_r"]
        held = f", held-out r {r_hold:.3f}" if r_hold is not None else ""
        print(
            f"contend model fit-latency: {len(fit.samples)} samples, training r "
            f"{acc['train']['pearson_r']:.3f}{held}; "
            f"{100 * acc['all']['within_30_percent_share']:.0f} % of RTTs within 30 % -> {out}",
            file=sys.stderr,
        )
        if fit.dropped:
            print(
                f"contend model fit-latency: note: {len(fit.dropped)} sample(s) left out: no "
                "counter sampling interval overlaps their window",
                file=sys.stderr,
            )
        if fit.folded:
            print(
                f"contend model fit-latency: note: link class(es) {', '.join(fit.folded)} never "
                "stalled in the training and every path crosses them equally often: folded "
                "into k_2 (their k_1 is 0)",
                file=sys.stderr,
            )
        if fit.design_rank < fit.parameters:
            print(
                f"contend model fit-latency: warning: design rank {fit.design_rank} < "
                f"{fit.parameters} constants: the per-class constants are not unique "
                "(too little congestion variety); consider --link-classes one",
                file=sys.stderr,
            )
    return 0


# ----------------------------------------------------------------- sensitivity


def _delivery_for(run, args):
    """(DeliveryConstants, msg source, nic source) of one run; ModelError when unknown."""
    from .sensitivity import DeliveryConstants

    msg = args.msg_bytes if args.msg_bytes is not None else run.mean_msg_bytes
    if msg is None:
        raise ModelError(
            f"{run.file}: job {clip_repr(run.job)} sent no message the results count: give --msg-bytes"
        )
    nic = args.nic_gbps if args.nic_gbps is not None else run.nic_gbps
    if nic is None:
        raise ModelError(
            f"{run.file}: not a simulator run (no NIC bandwidth in its configuration): "
            "give --nic-gbps"
        )
    return DeliveryConstants(args.overhead_us, float(msg), float(nic))


def _estimate_app(name, runs, deliveries, args):
    """The application block of the sensitivity file."""
    from .paths import file_sha256
    from .sensitivity import degenerate_reason, estimate, run_order

    order = run_order(len(runs), args.order, args.seed)
    runs = [runs[i] for i in order]
    deliveries = [deliveries[i] for i in order]
    m = [d.m_a_us for _, d, _ in deliveries]
    t = [r.t_a_s for r in runs]
    reason = degenerate_reason(m, t)
    if reason:
        raise ModelError(f"job {clip_repr(name)}: cannot fit T_a = c_a M_a + k_a: {reason}")
    fixed = [c.fixed_us for c, _, _ in deliveries]
    uniform = estimate(m, t, fixed)
    mw = [d.m_a_weighted_us for _, d, _ in deliveries]
    weighted, note = None, None
    if any(v is None for v in mw):
        note = "the job's results list no traffic pair crossing the network"
    else:
        note = degenerate_reason(mw, t)
        weighted = None if note else estimate(mw, t, fixed)
    out_dir = Path(args.output).resolve().parent
    from .modelfile import relative_to

    table = []
    for (
        run,
        (consts, d, _),
    ) in zip(runs, deliveries):
        start, end = run.window
        table.append(
            {
                "file": relative_to(run.file, out_dir),
                "sha256": file_sha256(run.file),
                "seed": run.seed,
                "counters": relative_to(run.counters, out_dir),
                "t_a_s": run.t_a_s,
                "m_a_us": d.m_a_us,
                "m_a_weighted_us": d.m_a_weighted_us,
                "perform_start_s": run.perform_start_s,
                "perform_end_s": run.perform_end_s,
                "window_start_s": start,
                "window_end_s": end,
                "clock": run.clock,
                "coverage": min(d.coverage, 1.0),
                "intervals": d.intervals,
                "pts_clamped_intervals": d.pts_clamped_intervals,
                "nodes": len(set(run.nodes)),
                "msg_bytes": consts.msg_bytes,
                "nic_gbps": consts.nic_gbps,
            }
        )
    app = {
        "pass": runs[0].pass_name,
        "runs": len(runs),
        **{k: uniform[k] for k in ("c_a_s_per_us", "k_a_s", "r", "delay_sensitivity", "m_ref_us")},
        "estimates": {
            "uniform": uniform,
            "traffic_weighted": weighted,
            "traffic_weighted_note": note,
        },
        "delivery": {
            "overhead_us": args.overhead_us,
            "msg_bytes": args.msg_bytes,
            "msg_bytes_source": "option" if args.msg_bytes is not None else "traffic",
            "nic_gbps": args.nic_gbps,
            "nic_gbps_source": "option" if args.nic_gbps is not None else "simulation",
        },
        "run_table": table,
    }
    return app


def _expand_training_files(files) -> tuple:
    """A `contend sensitivity-train` file stands for its runs' results, in run
    order (a shell glob would sort run10 before run2)."""
    out, jobs = [], set()
    for f in files:
        doc = None
        if str(f).endswith(".json") and Path(f).is_file():
            try:
                with open(f, encoding="utf-8") as fh:
                    head = fh.read(4096)
                if '"contend-sensitivity-train"' in head:
                    doc = infile.load_json(f)
            except (OSError, ValueError):
                doc = None
        if isinstance(doc, dict) and doc.get("schema") == "contend-sensitivity-train":
            runs = sorted(doc.get("runs") or [], key=lambda r: r.get("run", 0))
            out += [str(Path(f).parent / r["results"]) for r in runs if "results" in r]
            if doc.get("job"):
                jobs.add(doc["job"])
        else:
            out.append(f)
    return out, jobs


def cmd_sensitivity(args) -> int:
    from .jobruns import load_job_run
    from .modelfile import (
        SENSITIVITY_SCHEMA,
        check_paths_match,
        load_latency_model,
        relative_to,
        resolve,
        sensitivity_document,
        write_json_atomic,
    )
    from .paths import load_paths
    from .sensitivity import run_delivery
    from .training import read_intervals

    out = _check_output(args.output)
    plot = _check_plot(args.plot)
    outputs = [("-o", out), ("--plot", plot)]
    given = [("RUNS", r) for r in args.runs] + [
        ("--latency", args.latency),
        ("--paths", args.paths),
    ]
    check_distinct(given, outputs, ModelError)
    args.runs, jobs = _expand_training_files(args.runs)
    args.job = args.job or sorted(jobs)
    if not args.job:
        raise ModelError("name the application with --job (or give a sensitivity-train file)")
    if len(set(args.job)) != len(args.job):
        raise ModelError("a job is named twice with --job")
    if len(args.runs) < 2:
        raise ModelError(
            f"{len(args.runs)} results file given: the runtime fit T_a = c_a M_a + k_a "
            "needs runs under at least two congestion levels"
        )
    if args.counters_dir and not Path(args.counters_dir).is_dir():
        raise ModelError(f"{args.counters_dir}: --counters-dir is not a directory")
    model, mdoc = load_latency_model(args.latency)
    paths_file = Path(args.paths) if args.paths else resolve(mdoc["paths"]["file"], args.latency)
    named = [("RUNS' results", r) for r in args.runs] + [("the model's paths", paths_file)]
    check_distinct(named, outputs, ModelError)
    paths = load_paths(paths_file)
    check_paths_match(mdoc, paths, args.latency)
    plan = {}
    for job in args.job:  # every input checked before counters are read
        runs = [load_job_run(p, job, args.pass_name, args.counters_dir) for p in args.runs]
        passes = {r.pass_name for r in runs}
        if len(passes) > 1:
            raise ModelError(
                f"job {clip_repr(job)}: --pass auto picked different passes ({', '.join(sorted(passes))}) "
                "in different files; choose one with --pass"
            )
        consts = [_delivery_for(r, args) for r in runs]
        for r in runs:
            nodes = sorted(set(r.nodes))
            need = [(a, b) for a in nodes for b in nodes if a != b]
            need += [(int(p[0]), int(p[1])) for p in r.traffic_pairs if int(p[0]) != int(p[1])]
            paths.require_pairs(need, f"job {clip_repr(job)} ({r.file})")
        check_distinct([("a run's counter CSV", r.counters) for r in runs], outputs, ModelError)
        plan[job] = (runs, consts)
    cache = {}
    apps = {}
    for job, (runs, consts) in plan.items():
        deliveries = []
        for run, const in zip(runs, consts):
            key = (run.counters.resolve(), args.counters_source)
            if key not in cache:
                cache[key] = read_intervals(run.counters, args.counters_source)
            d = run_delivery(
                model,
                paths,
                cache[key],
                run.nodes,
                run.traffic_pairs,
                run.window,
                const,
                source=f"{run.file} (job {clip_repr(job)}, counters {run.counters})",
            )
            deliveries.append((const, d, run))
        apps[job] = _estimate_app(job, runs, deliveries, args)
    from .paths import file_sha256

    out_dir = out.resolve().parent
    provenance = {
        "latency_model": {
            "file": relative_to(args.latency, out_dir),
            "sha256": file_sha256(args.latency),
        },
        "paths": {
            "file": relative_to(paths_file, out_dir),
            "sha256": paths.sha256,
            "topology": paths.topology,
            "routing": paths.routing,
        },
        "order": args.order,
        "order_seed": args.seed if args.order == "shuffled" else None,
    }
    doc = sensitivity_document([PROG, *args.argv], apps, provenance)
    if plot:
        from .figures import sensitivity_figure

        name = next(iter(apps))
        _save_plot(sensitivity_figure(name, doc["applications"][name]), plot)
    write_json_atomic(doc, out, SENSITIVITY_SCHEMA)
    if not args.quiet:
        for job, app in doc["applications"].items():
            ds = app["delay_sensitivity"]
            print(
                f"contend model sensitivity: {job}: c_a {app['c_a_s_per_us']:.4g} s/us, "
                f"k_a {app['k_a_s']:.4g} s, r {app['r']:.3f}, delay sensitivity "
                + (f"{ds:.3f}" if ds is not None else "n/a")
                + f" over {app['runs']} runs -> {out}",
                file=sys.stderr,
            )
    return 0


# ------------------------------------------------------------------------ show


def cmd_show(args) -> int:
    from .modelfile import load_model_file
    from .views import render_model

    doc = load_model_file(args.file)
    text = render_model(doc, str(args.file), args.format)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


# --------------------------------------------------------------------- parsers

FIT_HELP = """\
Fits Netscope's network latency model (eq. 6-12) on ping-pong round trips:

  D(n1,n2) = sum over the routing's paths S_i of (1/|S*|) * sum over links l of S_i
             of k_1[class(l)] * Q_l  +  k_2                                   [ns]
  Q_l = 100 / (100 - PTs_l), PTs_l = % of time link l stalled (clamped to 99 %)

k_1 (ns per unit Q, one per link class or one for all) and k_2 (ns) are fitted by
non-negative least squares on RTT(a,b) = D(a,b) + D(b,a), with Q_l the
time-weighted mean over each sample's window of the run's sampling intervals.
A class whose links never stalled in the training, crossed as often by every path,
cannot be told from k_2: it is folded into k_2 (k_1 = 0, fit.folded_classes, a note).

Input: a training file of `contend pingpong-train` (its runs' counter CSVs and the
paths JSON it names are read from its directory).  Output: a model file (schema
contend-latency-model) with the constants, the training and held-out accuracy
(Pearson r, percentiles of the RTT error) and every sample's prediction.

Example:
  contend pingpong-train --engine sim --runs 8 -o train.json
  contend model fit-latency train.json --holdout 0.25 --seed 1 -o latency.json --plot fit.png
  contend model show latency.json
"""

SENS_HELP = """\
Estimates an application's delay sensitivity (Netscope eq. 2-5) from several runs:

  M(src,dst,t) = o + D(src,dst,t) + size/bw + o       (D from the latency model)
  M_s(t)  = mean over the job's unordered node pairs (both directions averaged),
            and a traffic-weighted mean over the job's traffic pairs (bytes)
  M_a     = time-weighted mean of M_s(t) over the job's perform window
  T_a     = perform_end_s - perform_start_s = c_a * M_a + k_a    (linear fit over runs)
  delay sensitivity = c_a * D_ref / T_ref at the run of smallest M_a (D_ref its M_a less o + size/bw + o, T_ref its runtime)
                      (1 for a pure ping-pong, 0 for a runtime blind to congestion)

Inputs: results files of `contend jobs ... --counters CSV` (their counter CSV is
config.options.counters, looked up as given, then next to the results file, or in
--counters-dir), the latency model, and the paths JSON (default: the model's; give
one holding the job's node pairs with --paths).  Output: a file of schema
contend-sensitivity (read by the throttle): per application c_a, k_a, r, delay
sensitivity, the per-run table and the convergence of the estimate with runs.

Example:
  for s in 1 2 3 4 5 6; do contend jobs mix.job --engine sim --seed $s \\
      -o run$s.json --counters run$s.csv --counter-interval-us 100; done
  contend topology paths --topology dragonfly:a=4,p=2,h=2 --all-pairs -o all.paths.json
  contend model sensitivity run*.json --latency latency.json --paths all.paths.json \\
      --job canaries -o sensitivity.json
"""

SHOW_HELP = """\
Prints a model file (contend-latency-model or contend-sensitivity) as tables with units:
the latency model's constants and accuracy, or per application the runtime fit, the
runs and the convergence table.

Example:
  contend model show latency.json
  contend model show sensitivity.json --format markdown
"""


def build_parser() -> argparse.ArgumentParser:
    from ..formatting import FORMATS
    from .latency import LINK_CLASS_MODES

    parser = _Parser(
        prog=PROG,
        description="Netscope's models: network latency from link stalls (fit-latency), "
        "application delay sensitivity (sensitivity), and a readable view (show).",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    raw = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "fit-latency",
        help="fit the latency model on ping-pong RTTs",
        description=FIT_HELP,
        formatter_class=raw,
    )
    p.add_argument("training", help="training file of `contend pingpong-train` (JSON)")
    p.add_argument("-o", "--output", required=True, help="model file to write (JSON)")
    p.add_argument(
        "--holdout",
        type=_fraction,
        default=0.25,
        metavar="F",
        help="fraction of samples kept out of the fit for validation [unit 1, default 0.25]",
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=0,
        help="seed of the held-out split (recorded in the model) [default 0]",
    )
    p.add_argument(
        "--link-classes",
        choices=LINK_CLASS_MODES,
        default="by-class",
        help="one k_1 per link class of the paths file, or one for all links [default by-class]",
    )
    p.add_argument(
        "--errors",
        choices=("absolute", "relative"),
        default="relative",
        help="squared errors minimised: relative to each measured RTT (default: RTTs from "
        "1 to 100 us weigh alike), or absolute (the few congested RTTs set the constants)",
    )
    p.add_argument("--paths", help="paths JSON to use instead of the one the training names")
    p.add_argument(
        "--counters",
        help="counter CSV for runs that name none (runs on a launcher; same clock as "
        "their windows)",
    )
    p.add_argument("--all-runs", action="store_true", help="with --counters: use it for every run")
    p.add_argument("--counters-source", help="with --counters: its source (default auto)")
    p.add_argument("--plot", help="also write the fit figure (.png, .svg or .pdf)")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    p.set_defaults(func=cmd_fit_latency)

    p = sub.add_parser(
        "sensitivity",
        help="fit T_a = c_a M_a + k_a over job runs",
        description=SENS_HELP,
        formatter_class=raw,
    )
    p.add_argument(
        "runs",
        nargs="+",
        help="results files of `contend jobs` (one per run), or the file of "
        "`contend sensitivity-train` (its runs, in order)",
    )
    p.add_argument(
        "--latency", required=True, help="latency model file of `contend model fit-latency`"
    )
    p.add_argument(
        "--job",
        action="append",
        metavar="NAME",
        help="the job (application) to model; repeat for several (default: the job of the "
        "sensitivity-train files given)",
    )
    p.add_argument(
        "--pass",
        dest="pass_name",
        choices=("concurrent", "isolated", "auto"),
        default="auto",
        help="which pass's runtime and window: auto = concurrent when present [default auto]",
    )
    p.add_argument("--paths", help="paths JSON holding the job's node pairs [default: the model's]")
    p.add_argument("--counters-dir", help="directory holding the runs' counter CSVs")
    p.add_argument("--counters-source", default="auto", help="counter CSV source [default auto]")
    p.add_argument(
        "--overhead-us",
        type=nonneg_float,
        default=0.0,
        help="end-host overhead o at each end of a message [unit us, default 0]",
    )
    p.add_argument(
        "--msg-bytes",
        type=nonneg_float,
        help="message size for size/bw [unit B, default: the job's mean message size]",
    )
    p.add_argument(
        "--nic-gbps",
        type=positive_float,
        help="NIC bandwidth bw [unit Gbit/s, default: the simulator's node_gbps; required "
        "for other engines]",
    )
    p.add_argument(
        "--order",
        choices=("given", "shuffled"),
        default="given",
        help="order in which the convergence table adds runs [default given]",
    )
    p.add_argument(
        "--seed", type=nonneg_int, default=0, help="seed of --order shuffled [default 0]"
    )
    p.add_argument("-o", "--output", required=True, help="sensitivity file to write (JSON)")
    p.add_argument("--plot", help="also write the first job's figure (.png, .svg or .pdf)")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    p.set_defaults(func=cmd_sensitivity)

    p = sub.add_parser(
        "show", help="print a model file as tables", description=SHOW_HELP, formatter_class=raw
    )
    p.add_argument("file", help="latency model or sensitivity file")
    p.add_argument(
        "--format", "-f", choices=FORMATS, default="text", help="output format [default text]"
    )
    p.set_defaults(func=cmd_show)
    return parser


@guarded(PROG)
def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    prog = f"{PROG} {args.command}"
    try:
        return args.func(args)
    except BrokenPipeError:
        return 0
    except ValueError as exc:  # ModelError, and bad values met while reading inputs
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        return report(prog, exc)


if __name__ == "__main__":
    sys.exit(main())
