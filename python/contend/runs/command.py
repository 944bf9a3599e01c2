"""The shell of a harness command (``contend mitigate``, ``study``, the
training commands): its options shared by all, declared once, and its main.

:data:`OPTIONS` holds the harness-level options (key, flags, type, default,
unit in the help); a harness adds the ones it takes with
:func:`add_options`, the engine's with :func:`add_engine_options` (from the
registry: ``--engine`` and each engine parameter), and runs its work with
:func:`harness_main`, which maps the run layer's errors to the exit
statuses of :mod:`contend.runs.errors` and stops the runs on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from ..argtypes import count, positive_float, split_dashes
from ..limits import MAX_PARALLEL
from . import children, engines
from .binary import BinaryNotFound, find_binary
from .errors import EXIT_FAIL, EXIT_USAGE, RunError, UsageError


def _timeout(text: str) -> float:
    return positive_float(text, "timeout")


@dataclass(frozen=True)
class Option:
    """A harness-level option: its key (the args attribute), flags, type,
    default and help (the unit and limits in brackets); ``run_flag``: the
    `contend jobs` option it gives every run of every harness (such an
    option is added by :func:`add_engine_options`, not given: None)."""

    key: str
    flags: tuple
    help: str
    type: object = None
    default: object = None
    action: str | None = None
    run_flag: str | None = None

    def add(self, parser, help: str | None = None, default=None) -> None:
        kw = {"help": help or self.help, "dest": self.key}
        if self.action:
            kw["action"] = self.action
        else:
            kw.update(type=self.type, default=self.default if default is None else default)
        parser.add_argument(*self.flags, **kw)


OPTIONS = {
    o.key: o
    for o in (
        Option("seed", ("--seed",), "seed of placements and runs", int, 1),
        Option(
            "parallel",
            ("--parallel",),
            f"runs at once [count, 1 to {MAX_PARALLEL}, default %(default)s]",
            count(MAX_PARALLEL),
            1,
        ),
        Option("timeout", ("--timeout",), "per run [s, default %(default)s]", _timeout, 1800),
        Option("quiet", ("-q", "--quiet"), "no progress lines on stderr", action="store_true"),
    )
}


def add_options(parser, *keys, helps: dict | None = None, defaults: dict | None = None) -> None:
    """Adds the options ``keys`` of :data:`OPTIONS`; ``helps`` and
    ``defaults``: key -> what differs for this harness."""
    for key in keys:
        OPTIONS[key].add(parser, (helps or {}).get(key), (defaults or {}).get(key))


def run_options(args) -> tuple:
    """The `contend jobs` options of the run options given (``run_flag``):
    what every run of the plan gets (RunSpec.options)."""
    out = []
    for o in OPTIONS.values():
        value = getattr(args, o.key, None) if o.run_flag else None
        if value is True:
            out.append(o.run_flag)
        elif value not in (None, False):
            out += [o.run_flag, str(value)]
    return tuple(out)


def add_engine_options(parser, *, default: str | None = engines.DEFAULT_ENGINE, lead: str = "where the runs go",
                       note: str = "", params: bool = True) -> None:  # fmt: skip
    """``--engine`` (its choices and their help from the registry), with
    ``params`` one option per engine parameter (``--topology``,
    ``--launcher``, ``--nodes``; None when not given), and the run options
    of :data:`OPTIONS` (those with a ``run_flag``)."""
    listed = "; ".join(f"{e.name}: {e.help}" for e in engines.ENGINES)
    tail = f" [default {default}]" if default else ""
    parser.add_argument(
        "--engine",
        choices=engines.names(),
        default=default,
        help=f"{lead}: {listed}{'. ' + note if note else ''}{tail}",
    )
    for o in OPTIONS.values():
        if o.run_flag:
            o.add(parser)
    if not params:
        return
    for key, rows in engines.param_rows():
        first = rows[0][1]
        text = "; ".join(f"{e.name}: {p.help}" for e, p in rows)
        defaults = [p for _, p in rows if p.default]
        if defaults:
            about = f", {defaults[0].about_default}" if defaults[0].about_default else ""
            text += f" [default {defaults[0].default}{about}]"
        kind = count(first.maximum) if first.kind == "count" else str
        if first.maximum:
            text += f" [count, at most {first.maximum}]"
        parser.add_argument(f"--{key}", type=kind, default=None, metavar=first.metavar, help=text)


def engine_from_args(args, binary: str, fabric=()) -> engines.Engine:
    """The engine of ``--engine`` with its parameters' options."""
    values = {key: getattr(args, key, None) for key, _ in engines.param_rows()}
    return engines.engine_from_options(args.engine, binary, values, fabric)


def harness_binary(what: str) -> str:
    """The contend binary the harness runs (contend.runs.binary); UsageError
    when there is none (``what``: who runs `contend jobs`)."""
    try:
        return find_binary()
    except BinaryNotFound as exc:
        raise UsageError(
            f"cannot run the contend binary {exc.named or 'contend'!r}: put build/bin on PATH "
            f"or set CONTEND_BIN ({what} runs `contend jobs`)"
        ) from None


def harness_parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A harness's parser (description and epilog as written: line breaks kept)."""
    return argparse.ArgumentParser(
        prog=prog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=description,
        epilog=epilog,
    )


def one_line_errors(parser: argparse.ArgumentParser, prog: str) -> argparse.ArgumentParser:
    """Bad options end the command with one line and exit status 2."""
    parser.error = lambda message: parser.exit(
        EXIT_USAGE, f"{prog}: error: {message} (see {prog} --help)\n"
    )
    return parser


def harness_main(prog: str, parser, body, argv=None, *, stopped: str, extra: bool = False) -> int:
    """Parses ``argv`` (``extra``: what follows ``--`` becomes
    ``args.jobs_args``; ``args.argv`` is argv), runs ``body(args)`` with the
    runs stopped on SIGTERM/SIGINT, and returns its exit status: bad input
    one line and 2, a failed run 3, a signal 128 + N (``stopped`` says what
    became of the runs)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    one_line_errors(parser, prog)
    own, rest = split_dashes(argv) if extra else (argv, [])
    args = parser.parse_args(own)
    args.jobs_args, args.argv = rest, argv
    try:
        with children.forward_signals():
            return body(args)
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RunError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except (children.Interrupted, KeyboardInterrupt) as exc:
        print(f"{prog}: interrupted; {stopped}", file=sys.stderr)
        return children.interrupt_status(exc)
