"""Command line of the analysis layer: report, compare, significance, plot, html
(and sweep, in :mod:`contend.studies.sweep`).

The C binary runs ``contend X ...`` as the program ``contend-X``; the console
scripts ``contend-report``, ``contend-compare``, ``contend-significance``,
``contend-plot`` and ``contend-html`` all enter :func:`main` here.  What a
file's report, page section or figure is, is its view's business: the
commands find the view in :mod:`contend.reports.registry`.  Bad input gives one
message on stderr and exit status 2, before any work.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

from . import __version__
from . import formatting as fmt
from .argtypes import count, nonneg_int
from .guard import TRACEBACK_ENV, guarded, report
from .limits import MAX_BOOTSTRAP, MAX_RESAMPLES, clip, clip_repr
from .outfile import check_distinct, check_output, write_text
from .reports import registry
from .reports.html import Page
from .reports.view import UsageError
from .studies import sweep

EXIT_USAGE = 2


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
    _write(registry.view_for(args.results).report(args.results, args), args.output)
    return 0


def cmd_compare(args) -> int:
    from .reports.published import beside, figure11_rows, published_impact_table
    from .reports.tables import COMPARE_MACHINE, COMPARE_VIEW, compare_table, pick_canaries

    if not args.results and not args.published:
        raise UsageError("give results files to compare, and/or --published")
    frame = compare_table(registry.comparable().load(args.results))
    columns = fmt.columns_for(COMPARE_VIEW, COMPARE_MACHINE, args.format)
    if args.published:
        frame = beside(frame, figure11_rows() if args.figure11 else published_impact_table())
    frame = pick_canaries(frame, args.canaries)
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
    from .reports.tables import SIGNIFICANCE_MACHINE, SIGNIFICANCE_VIEW, significance_table

    load = registry.comparable().load
    groups = {}
    for label, paths in args.parsed_groups:
        if label in groups:
            raise UsageError(f"group {clip_repr(label)} given twice")
        groups[label] = load(paths)
    if len(groups) < 2:
        raise UsageError("give a control group and at least one condition group")
    control = args.control or next(iter(groups))
    frame = significance_table(groups, control, args.resamples, args.level, args.seed, args.alpha)
    columns = fmt.columns_for(SIGNIFICANCE_VIEW, SIGNIFICANCE_MACHINE, args.format)
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


def cmd_plot(args) -> int:
    from .reports import plots

    plots.figure_format(args.output)  # a bad extension fails before any work
    fig = registry.plot_of(args.kind).draw(args)
    out = plots.save_figure(fig, args.output, UsageError)
    print(f"wrote {out}", file=sys.stderr)
    return 0


def cmd_html(args) -> int:
    page = Page(title=args.title, published=args.published, log_y=not args.linear_y)
    _write(registry.html_page(args.results, page), args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------- parsers


def _add_format(p, default="text"):
    p.add_argument(
        "--format",
        "-f",
        choices=fmt.FORMATS,
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
        description=registry.plot_help(),
    )
    p.add_argument("kind", choices=registry.plot_kinds())
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
            check_output(output, "-o output", UsageError)  # before any work: exit 2 at once
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
