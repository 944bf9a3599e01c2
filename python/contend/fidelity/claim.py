"""What one claim of a paper is, as the reproduction report runs and judges it.

A :class:`Claim` is a constant record: the paper's figure and where it is,
the steps (contend commands) that measure ours at one seed, how the value is
read from their files, and the verdict rule, in words (``rule``) and in code
(``judge``).  The runner calls ``steps`` and ``extract``; the judge sees only
the per-seed values, so a rule can be checked on hand-made values.
"""

from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HOLDS = "holds"
QUALITATIVE = "holds qualitatively"
FAILS = "does not hold"
NOT_MEASURED = "not measured"
VERDICTS = (HOLDS, QUALITATIVE, FAILS, NOT_MEASURED)

# the papers, by key (a claim's ``paper``): how the report names them
PAPERS = {
    "gpcnet": "GPCNeT (Chunduri et al., SC'19)",
    "stressbench": "StressBench (Chester et al., HPEC'21)",
    "netscope": "Netscope (ICS'21)",
    "fattree": "Fat-tree congestion poster (LLNL Quartz)",
}


@dataclass(frozen=True)
class Step:
    """One command of a claim at one seed: ``argv`` (the first word ``contend``
    is the binary; file names are relative to ``where``, a directory under
    the work directory) writes ``output`` there.  A step whose output exists
    is not run again (contend writes its outputs whole or not at all), so
    claims that name the same step share its run.  ``writes``: the files
    it reads that the claim makes (a copy of an example with another seed),
    written beside it before the command runs."""

    where: str
    argv: tuple
    output: str
    writes: tuple = ()  # (name, text) of input files the step needs, written first
    ok_status: tuple = (0,)  # exit statuses after which the output is a measurement

    def text(self) -> str:
        """The command as a user types it, from the work directory."""
        return f"(cd {shlex.quote(self.where)} && {shlex.join(self.argv)})"


@dataclass(frozen=True)
class SeedValue:
    """Ours at one seed: ``value`` (None: the run gave no value) and named
    numbers beside it (``detail``) that the rule may use."""

    seed: int
    value: float | None
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """One claim.  ``steps(seed, quick)``: the commands at a seed;
    ``extract(path, seed, quick)``: ours at that seed, ``path(where, name)``
    giving a step's file; ``judge(values, claim)``: (verdict, reason) from the
    measured seeds (never NOT_MEASURED: the runner gives that).
    ``settings``: what differs from the paper's setting in a full run;
    ``quick``: what --quick changes as well, None when the claim is too long
    for a quick run (then recorded as not measured, with its commands);
    ``unmeasured``: why no run can measure it yet (likewise not measured)."""

    id: str
    paper: str
    figure: str
    where: str
    paper_value: float | None
    paper_text: str
    quantity: str
    unit: str
    rule: str
    judge: Callable
    steps: Callable
    extract: Callable
    settings: tuple = ()
    quick: tuple | None = None
    runtime: str = ""
    unmeasured: str = ""  # why the runner cannot measure it yet (then not measured)


def spread(values) -> dict:
    """median, min and max of the numbers among ``values`` (None when none)."""
    v = [x for x in values if x is not None]
    if not v:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(v), "min": min(v), "max": max(v)}


def within_factor(x: float, ref: float, factor: float) -> bool:
    """Whether positive ``x`` is within ``factor`` of positive ``ref`` either way."""
    return x > 0 and ref > 0 and ref / factor <= x <= ref * factor


def command_lines(steps) -> list:
    return [s.text() for s in steps]


def rel(*parts) -> str:
    return str(Path(*map(str, parts)))


def source_file(name: str) -> str:
    """The absolute path of ``NAME`` (``examples/...``, ``bench/...``) in the
    source tree (a parent of the package) or an install prefix
    (``share/contend/NAME``); ``NAME`` itself when neither has it (the
    command then says so)."""
    here = Path(__file__).resolve().parent
    for parent in here.parents:
        for cand in (parent / name, parent / "share" / "contend" / name):
            if cand.is_file():
                return str(cand)
    return name


def example_file(name: str) -> str:
    """The absolute path of ``examples/NAME`` (:func:`source_file`)."""
    return source_file(f"examples/{name}")
