"""One run specification: what a harness's plan asks of one run.

A plan (``contend mitigate``, ``study``, the training commands, ``sweep``)
is a list of :class:`RunSpec`.  A spec names either a job file, run as
``contend jobs`` on an engine (:mod:`contend.runs.engines` turns it into the
command line: the engine's options, then the spec's run options, defines,
extra options, seed, mode, throttle and counters, in that order), or a whole contend
command (a sweep's scenario: :func:`contend_command`).  The executor
(:mod:`contend.runs.executor`) runs it within its timeout and names it in
its messages and progress lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunSpec:
    job_file: Path | str | None = None  # `contend jobs JOB_FILE`, or
    command: tuple = ()  # a contend command's arguments, the command first ('sim', ...)
    seed: int | str | None = None  # --seed (None: the command's own default)
    mode: str | None = None  # --mode isolated|concurrent
    throttle: tuple = ()  # --throttle MODE --throttle-ca ...: options of the throttle
    options: tuple = ()  # the harness's run options (contend.runs.command.run_options)
    defines: tuple = ()  # NAME=VALUE, each given as -DNAME=VALUE
    extra: tuple = ()  # further options of every run (after -- of a harness)
    output: Path | str | None = None  # -o: the results file the run writes
    counters: Path | None = None  # the counter CSV the engine records beside the run
    counter_interval_us: float | None = None  # the simulator's counter interval
    sample_interval_s: float | None = None  # the emulated cluster's link sampling interval
    timeout: float | None = None  # wall seconds before the run is stopped (None: none)
    name: str = ""  # the run in messages: 'dcqcn run, seed 3' ('': the message alone)
    progress: str = ""  # its progress line before it starts ('': none)


def contend_command(binary: str, spec: RunSpec) -> list:
    """The command line of a spec that names a whole contend command: the
    binary, the command's arguments, then ``-o OUTPUT``."""
    return [str(binary), *map(str, spec.command), "-o", str(spec.output)]
