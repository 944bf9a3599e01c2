"""Command line of the analysis layer: report, compare, significance, plot, html
(and sweep, in :mod:`contend.sweep`).

The C binary runs ``contend X ...`` as the program ``contend-X``; the console
scripts ``contend-report``, ``contend-compare``, ``contend-significance``,
``contend-plot`` and ``contend-html`` all enter :func:`main` here.  Bad
input gives one message on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

from . import __version__, sweep
from .argtypes import count, nonneg_int
from .formatting import FORMATS
from .guard import TRACEBACK_ENV, guarded, report
from .limits import MAX_BOOTSTRAP, MAX_RESAMPLES, clip, clip_repr
from .outfile import check_distinct, check_output, write_text

EXIT_USAGE = 2
JOBS_SCHEMA = "contend-jobs"  # results of `contend jobs`: contend.jobsresults
MITIGATE_SCHEMA = "contend-mitigate"  # results of `contend mitigate`: contend.mitigatestats
STUDY_SCHEMA = "contend-study"  # results of `contend study`: contend.studystats
COMMANDS = ("report", "compare", "significance", "plot", "html", "sweep")
PLOT_KINDS = ("hist", "congestors", "impact", "jobs", "mitigate", "study")


class UsageError(ValueError):
    """Invalid command-line input (reported like a bad results file)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, status 2, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _write(text: str, output) -> None:
    """To stdout (no -o, or -o -), else to the file whole or not at all."""
    text = text if text.endswith("\n") else text + "\n"
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    write_text(output, text, error=UsageError)


def _canary_list(text):
    return [c for c in (text or "").split(",") if c] or None


def _check_canaries(wanted, frame) -> None:
    """UsageError naming a --canaries name that no run (or baseline) has."""
    have = list(dict.fromkeys(frame["name"]))
    unknown = [c for c in wanted or () if c not in have]
    if unknown:
        raise UsageError(
            f"--canaries: unknown canary {clip_repr(unknown[0])} (these results have: "
            f"{clip(', '.join(map(str, have)), 400) or 'none'})"
        )


def _alphas(text: str):
    try:
        vals = sorted((float(v) for v in text.split(",")), reverse=True)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--alpha takes comma-separated numbers in (0, 1), got {clip_repr(text)}"
        ) from None
    if not vals or any(not 0 < v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"--alpha values must be in (0, 1), got {clip_repr(text)}")
    return tuple(vals)


def _level(text: str) -> float:
    try:
        val = float(text)
    except ValueError:
        val = -1.0
    if not 0 < val < 1:
        raise argparse.ArgumentTypeError(
            f"--level must be a fraction in (0, 1), e.g. 0.95; got {clip_repr(text)}"
        )
    return val


# ------------------------------------------------------------------ commands


def cmd_report(args) -> int:
    from .models.modelfile import SCHEMAS as MODEL_SCHEMAS
    from .models.modelfile import load_model_file, sniff_schema
    from .reports.views.results import check_impact, render_report
    from .results import load_results

    schema = sniff_schema(args.results)
    if schema in MODEL_SCHEMAS:  # contend model fit-latency / sensitivity
        from .models.views import render_model

        _write(render_model(load_model_file(args.results), args.results, args.format), args.output)
        return 0
    if schema == MITIGATE_SCHEMA:  # contend mitigate
        from .mitigatestats import load_mitigate
        from .reports.views.mitigate import render_mitigate

        doc = load_mitigate(args.results)
        _write(render_mitigate(doc, args.format, source=args.results), args.output)
        return 0
    if schema == STUDY_SCHEMA:  # contend study
        from .reports.views.study import render_study
        from .studystats import load_study_results

        doc = load_study_results(args.results)
        _write(render_study(doc, args.format, source=args.results), args.output)
        return 0
    if schema == JOBS_SCHEMA:  # contend jobs
        from .jobsresults import load_jobs
        from .reports.views.jobs import check_slowdowns, render_jobs_report

        if args.bootstrap:
            raise UsageError(
                "--bootstrap resamples histograms of `contend network` / `contend load` "
                "results; a jobs report gives Student-t intervals (--level)"
            )
        jobs = load_jobs(args.results)
        check_slowdowns(jobs)
        _write(render_jobs_report(jobs, args.format, args.level), args.output)
        return 0
    results = load_results(args.results)
    check_impact(results)
    _write(
        render_report(
            results,
            args.format,
            args.bootstrap,
            args.level,
            args.seed,
            congestors=not args.no_congestors,
        ),
        args.output,
    )
    return 0


def cmd_compare(args) -> int:
    import pandas as pd

    from . import formatting as fmt
    from .reports.tables import compare_table
    from .results import load_many

    if not args.results and not args.published:
        raise UsageError("give results files to compare, and/or --published")
    frame = compare_table(load_many(args.results))
    columns = fmt.columns_for(fmt.COMPARE_VIEW, fmt.COMPARE_MACHINE, args.format)
    if args.published:
        from .reports.published import figure11_rows, published_impact_table

        pub = figure11_rows() if args.figure11 else published_impact_table()
        frame = pd.concat([frame, pub[frame.columns]], ignore_index=True)
    if args.canaries:
        _check_canaries(args.canaries, frame)
        frame = frame[frame["name"].isin(args.canaries)]
    _write(fmt.render(frame, columns, args.format), args.output)
    return 0


def _parse_group(spec: str):
    label, sep, files = spec.partition("=")
    if not sep or not label or not files:
        raise UsageError(
            f"bad group {clip_repr(spec)}: write LABEL=FILE[,FILE...] (globs allowed), "
            "e.g. control='runs/ctl-*.json'"
        )
    paths = []
    for item in files.split(","):
        matches = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
        if not matches:
            raise UsageError(f"group {clip(label)}: pattern {clip_repr(item)} matches no file")
        paths.extend(matches)
    return label, paths


def cmd_significance(args) -> int:
    from . import formatting as fmt
    from .reports.tables import significance_table
    from .results import load_many

    groups = {}
    for label, paths in args.parsed_groups:
        if label in groups:
            raise UsageError(f"group {clip_repr(label)} given twice")
        groups[label] = load_many(paths)
    if len(groups) < 2:
        raise UsageError("give a control group and at least one condition group")
    control = args.control or next(iter(groups))
    frame = significance_table(groups, control, args.resamples, args.level, args.seed, args.alpha)
    columns = fmt.columns_for(fmt.SIGNIFICANCE_VIEW, fmt.SIGNIFICANCE_MACHINE, args.format)
    text = fmt.render(frame, columns, args.format)
    if args.format == "text":
        a = args.alpha
        text += (
            f"\n\n  Control: {control}.  Diff % = mean difference vs. control, negative = "
            f"worse.  Welch t-test (two-sided): * p < {a[0]:g}"
            + (f", ** p < {a[1]:g}" if len(a) > 1 else "")
            + f".  boot lo/hi: {args.level:.0%} percentile bootstrap of the condition's "
            f"mean over its trials ({args.resamples} resamples, seed {args.seed})."
        )
    _write(text, args.output)
    return 0


def _plot_jobs(args):
    import pandas as pd

    from .jobsresults import load_jobs
    from .reports import plots

    if not args.results:
        raise UsageError("plot jobs takes one or more results files of `contend jobs`")
    frames = []
    for path in args.results:
        jobs = load_jobs(path)
        if not jobs.has_repeats:
            raise UsageError(
                f"{path}: holds no per-repetition times (schema {jobs.doc['schema_version']}; "
                "they came with 1.2): rerun `contend jobs` with this version"
            )
        frame = plots.job_times_frame(jobs, motifs=args.motifs)
        if len(args.results) > 1:
            frame["panel"] = jobs.label + "/" + frame["panel"]
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        raise UsageError("plot jobs: no repetition has a time in these files")
    what = "time per motif invocation" if args.motifs else "run time per job"
    names = ", ".join(str(p) for p in args.results)
    return plots.job_boxes_figure(frame, f"{what} (per repetition, slowest rank): {names}")


def cmd_plot(args) -> int:
    from .reports import plots
    from .results import load_many

    plots.figure_format(args.output)  # a bad extension fails before any work
    if args.kind == "mitigate":
        from .mitigatestats import load_mitigate
        from .reports.views.mitigate import mitigate_figure

        if len(args.results) != 1:
            raise UsageError("plot mitigate takes one results file of `contend mitigate`")
        fig = mitigate_figure(load_mitigate(args.results[0]))
        out = plots.save_figure(fig, args.output, UsageError)
        print(f"wrote {out}", file=sys.stderr)
        return 0
    if args.kind == "study":
        from .reports.views.study import study_figure
        from .studystats import load_study_results

        if len(args.results) != 1:
            raise UsageError("plot study takes one results file of `contend study`")
        fig = study_figure(load_study_results(args.results[0]))
        out = plots.save_figure(fig, args.output, UsageError)
        print(f"wrote {out}", file=sys.stderr)
        return 0
    if args.kind == "jobs":
        fig = _plot_jobs(args)
        out = plots.save_figure(fig, args.output, UsageError)
        print(f"wrote {out}", file=sys.stderr)
        return 0
    runs = load_many(args.results)
    if args.kind == "hist":
        if len(runs) != 1:
            raise UsageError("plot hist takes one results file")
        fig = plots.histogram_figure(runs[0], args.canaries, log_y=not args.linear_y)
    elif args.kind == "congestors":
        fig = plots.congestor_panels_figure(runs, args.canaries, log_y=not args.linear_y)
    else:
        import pandas as pd

        from .reports.tables import compare_table

        frame = compare_table(runs)
        if args.published:
            from .reports.published import figure11_rows

            frame = pd.concat([frame, figure11_rows()[frame.columns]], ignore_index=True)
        if args.canaries:
            _check_canaries(args.canaries, frame)
            frame = frame[frame["name"].isin(args.canaries)]
        fig = plots.impact_bars_figure(frame)
    out = plots.save_figure(fig, args.output, UsageError)
    print(f"wrote {out}", file=sys.stderr)
    return 0


def cmd_html(args) -> int:
    from .jobsresults import load_jobs
    from .models.modelfile import SCHEMAS as MODEL_SCHEMAS
    from .models.modelfile import load_model_file, sniff_schema
    from .reports.html import render_html
    from .results import load_many

    schemas = [sniff_schema(p) for p in args.results]
    kind = [
        "model"
        if s in MODEL_SCHEMAS
        else {JOBS_SCHEMA: "jobs", MITIGATE_SCHEMA: "mitigate", STUDY_SCHEMA: "study"}.get(
            s, "results"
        )
        for s in schemas
    ]
    runs = load_many([p for p, k in zip(args.results, kind) if k == "results"])
    models = [(p, load_model_file(p)) for p, k in zip(args.results, kind) if k == "model"]
    jobs = [load_jobs(p) for p, k in zip(args.results, kind) if k == "jobs"]
    mitigate = []
    if "mitigate" in kind:
        from .mitigatestats import load_mitigate

        mitigate = [(p, load_mitigate(p)) for p, k in zip(args.results, kind) if k == "mitigate"]
    studies = []
    if "study" in kind:
        from .studystats import load_study_results

        studies = [(p, load_study_results(p)) for p, k in zip(args.results, kind) if k == "study"]
    _write(
        render_html(
            runs,
            args.title,
            args.published,
            log_y=not args.linear_y,
            models=models,
            jobs=jobs,
            mitigate=mitigate,
            studies=studies,
        ),
        args.output,
    )
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------- parsers


def _add_format(p, default="text"):
    p.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default=default,
        help="output format (csv/json carry unrounded values) [default %(default)s]",
    )
    p.add_argument("-o", "--output", help="write to this file instead of stdout")


def _add_report(sub):
    p = sub.add_parser(
        "report",
        help="impact table of one results file",
        description="Isolated vs. congested mean and 99%% of each canary and the "
        "Congestion Impact (GPCNeT Table 2 layout), from a results "
        "file of `contend load` or `contend network`; for results of `contend jobs`, "
        "per job and per motif the mean run time per repetition isolated and "
        "concurrent with a Student-t interval (--level), the slowdown and Welch's p; "
        "for a model file of `contend model` (latency model or delay sensitivity), its "
        "tables; for results of `contend mitigate`, runtime and node-seconds increase per "
        "throttle mode with Welch tests and the Netscope paper's numbers; for results of `contend study`, the fat-tree poster's Table I (difference vs. control, Welch p) and the bullies' bandwidth.  Times in the text tables in the unit their header names; CSV and JSON "
        "in seconds (keys ending _s).",
    )
    p.add_argument(
        "results",
        help="results file (.json or .json.gz) of `contend network`, `load`, `jobs` or "
        "`mitigate`, or a model file of `contend model`",
    )
    _add_format(p)
    p.add_argument(
        "--bootstrap",
        type=count(MAX_BOOTSTRAP, 0),
        default=0,
        metavar="N",
        help="add a bootstrap interval of the CIs from N resamples of the histograms "
        f"[count, at most {MAX_BOOTSTRAP}; default 0: off]",
    )
    p.add_argument(
        "--level",
        type=_level,
        default=0.95,
        help="interval level: bootstrap, and the Student-t intervals of jobs results "
        "[fraction, default 0.95]",
    )
    p.add_argument("--seed", type=nonneg_int, default=0, help="bootstrap seed [default 0]")
    p.add_argument("--no-congestors", action="store_true", help="omit the congestor table")
    p.set_defaults(func=cmd_report)


def _add_compare(sub):
    p = sub.add_parser(
        "compare",
        help="one table across runs (and published baselines)",
        description="Impact tables of several runs in one table, grouped by "
        "nodes, ranks per node and MPI library.",
    )
    p.add_argument("results", nargs="*", help="results files")
    p.add_argument(
        "--published",
        action="store_true",
        help="add GPCNeT SC'19 Table 2 (CI computed the same way)",
    )
    p.add_argument(
        "--figure11",
        action="store_true",
        help="with --published: only the runs of the paper's Figure 11",
    )
    p.add_argument("--canaries", type=_canary_list, help="only these canaries (comma-separated)")
    _add_format(p)
    p.set_defaults(func=cmd_compare)


def _add_significance(sub):
    p = sub.add_parser(
        "significance",
        help="repeated trials vs. a control: Welch t-test",
        description="Each condition's mean vs. the control's over repeated "
        "trials (one results file per trial): difference in %%, "
        "Welch's t-test with markers, bootstrap interval.",
    )
    p.add_argument(
        "groups",
        nargs="+",
        metavar="LABEL=FILE[,FILE...]",
        help="a condition and its trial files (globs allowed, quote them)",
    )
    p.add_argument("--control", help="label of the control group [default: the first]")
    p.add_argument(
        "--alpha",
        type=_alphas,
        default=(0.05, 0.01),
        help="significance levels for * and ** [default 0.05,0.01]",
    )
    p.add_argument(
        "--resamples",
        type=count(MAX_RESAMPLES),
        default=10000,
        help=f"bootstrap resamples [count, 1 to {MAX_RESAMPLES}, default 10000]",
    )
    p.add_argument("--level", type=_level, default=0.95, help="bootstrap level [default 0.95]")
    p.add_argument("--seed", type=nonneg_int, default=0, help="bootstrap seed [default 0]")
    _add_format(p)
    p.set_defaults(func=cmd_significance)


def _add_plot(sub):
    p = sub.add_parser(
        "plot",
        help="figures as PNG, SVG or PDF",
        description="hist: isolated vs. congested histograms of one run "
        "(GPCNeT Figs 1-3); congestors: one row per single-congestor "
        "run (Figs 4-5); impact: CI bars across runs, log y (Fig 11); "
        "jobs: box plots of the per-repetition run times of each job (the slowest "
        "rank's, in s/ms/us as each panel's axis says), isolated and concurrent side "
        "by side, from results of `contend jobs` (StressBench Figs 1-2); "
        "mitigate: p99 runtime increase per job and throttle mode, p99 node-seconds "
        "increase, and the proxy's p99 vs. c_a error, from one results file of "
        "`contend mitigate` (Netscope Figs 5-7); study: each run's performance difference vs. the "
        "control per application and condition, from one results file of `contend study` "
        "(the fat-tree poster's Table I as a figure).",
    )
    p.add_argument("kind", choices=PLOT_KINDS)
    p.add_argument("results", nargs="*", help="results files")
    p.add_argument(
        "-o", "--output", required=True, help="figure file: .png, .svg or .pdf by its extension"
    )
    p.add_argument("--canaries", type=_canary_list, help="only these canaries (comma-separated)")
    p.add_argument("--linear-y", action="store_true", help="histograms: linear y axis")
    p.add_argument(
        "--published", action="store_true", help="impact: add the GPCNeT paper's Figure 11 systems"
    )
    p.add_argument(
        "--motifs", action="store_true", help="jobs: one panel per motif instead of per job"
    )
    p.set_defaults(func=cmd_plot)


def _add_html(sub):
    p = sub.add_parser(
        "html",
        help="self-contained HTML report",
        description="One offline HTML page (figures embedded) with each run's "
        "configuration, tables and histograms, and for several "
        "runs the comparison and impact bars; results of `contend jobs` add their job "
        "and motif tables and box plots of the per-repetition times; model files of "
        "`contend model` add their tables and figures (RTT fit, runtime fit, convergence).",
    )
    p.add_argument(
        "results",
        nargs="+",
        help="results files (`contend network`, `load`, `jobs`) and model files of `contend model`",
    )
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    p.add_argument("--title", default="contend report", help="page title")
    p.add_argument("--published", action="store_true", help="add GPCNeT SC'19 Table 2")
    p.add_argument("--linear-y", action="store_true", help="histograms: linear y axis")
    p.set_defaults(func=cmd_html)


def build_parser(prog: str = "contend") -> argparse.ArgumentParser:
    parser = _Parser(
        prog=prog,
        description="contend analysis: reports, comparisons, "
        "significance, plots and HTML from results files.",
    )
    parser.add_argument("--version", action="version", version=f"contend {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (_add_report, _add_compare, _add_significance, _add_plot, _add_html):
        add(sub)
    sweep.add_parser(sub)
    return parser


def _inputs(args) -> list:
    """(option, path) of every input file of the command, for the output rule."""
    if args.command == "significance":
        return [(f"group {label}", p) for label, paths in args.parsed_groups for p in paths]
    results = args.results if isinstance(args.results, list) else [args.results]
    return [("RESULTS", p) for p in results]


@guarded("contend")
def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = f"contend {args.command}"
    try:
        if args.command == "sweep":  # sweep checks its own inputs and outputs
            return args.func(args)
        if args.command == "significance":
            args.parsed_groups = [_parse_group(spec) for spec in args.groups]
        output = getattr(args, "output", None)
        if output not in (None, "-"):
            check_output(output, error=UsageError)  # before any work: exit 2 at once
        check_distinct(_inputs(args), [("-o", output)], UsageError)
        return args.func(args)
    except BrokenPipeError:  # e.g. `contend report R.json | head`
        return 0
    except ValueError as exc:  # ResultsError and UsageError are ValueErrors
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV):
            raise
        return report(prog, exc)


def _entry(command: str):
    def run(argv=None) -> int:
        return main([command] + list(sys.argv[1:] if argv is None else argv))

    run.__name__ = f"main_{command}"
    run.__doc__ = f"Console script contend-{command}."
    return run


main_report = _entry("report")
main_compare = _entry("compare")
main_significance = _entry("significance")
main_plot = _entry("plot")
main_html = _entry("html")
main_sweep = _entry("sweep")


if __name__ == "__main__":
    sys.exit(main())
