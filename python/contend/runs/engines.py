"""The engine registry of the harnesses: where the ``contend jobs`` runs of a
plan go.  It mirrors src/run/engines.c: every engine by the name that
``--engine NAME`` (or ``engine =`` of a study file) selects; adding an engine
is its class here and one entry in :data:`ENGINES`, the one list of names.

Each engine declares
- its parameters (:class:`Param`): the ``--topology``/``--launcher``/
  ``--nodes`` options of mitigate and the training commands and the keys of
  its table in a study file (``[sim] topology = ...``) come from them;
- what it can do: ``in_process`` (a run is one process on this host, no
  launcher: runs may overlap, take simulator options, and the throttle is an
  option of the simulated NICs, not the PMPI library around the job),
  ``whole_machine`` (what a run takes when it takes the whole machine: then
  the runs go one at a time),
  ``records_counters`` (a counter CSV beside each run), ``clock_key``
  (the ``pass_clock`` entry on the clock of those counters) and
  ``tree_in_runs`` (the runs need the machine's tree given, as the dry
  runs do);
- the command line of a run (:meth:`Engine.command`: its launcher, then
  ``contend jobs`` with the engine's options and the spec's, see
  :mod:`contend.runs.spec`), the dry run that checks a job file
  (:meth:`Engine.dry_run`), how many nodes the runs get
  (:meth:`Engine.nodes`), the counters it records meanwhile
  (:meth:`Engine.sampling`), and the routing paths of its fabric.
"""

from __future__ import annotations

import csv
import re
import shlex
import signal
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from .. import infile, outfile
from ..limits import MAX_NODES, clip_repr
from . import children
from .errors import RunError, UsageError
from .executor import SETUP_TIMEOUT_S, read_run, run_command, run_process
from .spec import RunSpec

DEFAULT_TOPOLOGY = "dragonfly:a=4,p=4,h=2"  # 144 nodes
PATHS_TIMEOUT_S = 300.0  # `contend topology paths` of every node pair


@dataclass(frozen=True)
class Param:
    """One parameter of an engine: ``--KEY`` on the command line, ``KEY =``
    in the engine's table of a study file."""

    key: str
    metavar: str
    help: str
    kind: str = "str"  # str | count (an integer from 1 to maximum)
    required: bool = False
    default: object = None
    maximum: int | None = None
    about_default: str = ""  # said of the default in --help ("144 nodes")


def make_engine(name: str, binary: str, options: dict | None = None, fabric=()) -> Engine:
    """The engine ``name`` with its parameters' values (checked by the caller)."""
    return engine_class(name)(binary, options, fabric)


class Engine:
    """Where runs go (module docstring).  ``options``: a value for each
    parameter (the defaults filled in); ``fabric``: further options of the
    simulated fabric that `contend topology` takes too (training's)."""

    name: ClassVar[str] = ""
    help: ClassVar[str] = ""
    params: ClassVar[tuple] = ()
    in_process: ClassVar[bool] = False
    whole_machine: ClassVar[str] = ""
    records_counters: ClassVar[bool] = False
    clock_key: ClassVar[str] = "perform_t0_unix_s"
    tree_in_runs: ClassVar[bool] = False  # runs need placement_tree() too (they do not know it)

    def __init__(self, binary: str, options: dict | None = None, fabric=()):
        self.binary = str(binary)
        self.options = {p.key: p.default for p in self.params}
        self.options.update(options or {})
        self.fabric = [str(a) for a in fabric]
        self._nodes = None  # nodes(), once asked

    # ---------------------------------------------------------------- commands

    def launch_prefix(self, binary: str | None = None) -> list:
        """The words before the contend binary (a launcher); ``binary``: the
        binary's name in them (default: the one that runs)."""
        return []

    def jobs_options(self) -> list:
        """The engine's own options of every `contend jobs` run."""
        return []

    def counter_options(self, spec: RunSpec) -> list:
        """Options that make a run write its counters itself."""
        return []

    def jobs_argv(self, spec: RunSpec) -> list:
        """The `contend jobs` part of a run's command line."""
        cmd = [self.binary, "jobs", spec.job_file, *self.jobs_options(), *spec.options]
        cmd += [f"-D{d}" for d in spec.defines] + list(spec.extra)
        cmd += ["--seed", spec.seed, "-q"] if spec.seed is not None else ["-q"]
        cmd += ["--mode", spec.mode] if spec.mode else []
        cmd += list(spec.throttle) if self.in_process else []
        cmd += self.counter_options(spec)
        return [str(c) for c in [*cmd, "-o", spec.output]]

    def command(self, spec: RunSpec) -> list:
        """A run's whole command line: the launcher, on launchers the throttle
        library around the job (`contend throttle OPTIONS --`), then
        :meth:`jobs_argv`."""
        jobs = self.jobs_argv(spec)
        if spec.throttle and not self.in_process:
            jobs = [self.binary, "throttle", *map(str, spec.throttle), "--", *jobs]
        return [*map(str, self.launch_prefix()), *jobs]

    def hand_launcher(self) -> str:
        """The launcher as a person writes it (the option's text)."""
        return ""

    def hand_command(self, jobs_args) -> str:
        """A run's command line for a person (FILE, SEED and OUT.json to fill in)."""
        pre = self.hand_launcher()
        rest = " ".join(shlex.quote(str(a)) for a in [*self.jobs_options(), *jobs_args])
        line = f"{pre + ' ' if pre else ''}contend jobs FILE {rest} --seed SEED -o OUT.json"
        return line.replace("  ", " ")

    def dry_run(self, spec: RunSpec, nodes: int) -> dict:
        """The plan of the spec's job file on ``nodes`` nodes (`contend jobs
        --dry-run`: its defines, extra options and seed); its refusals are
        the harness's bad input (UsageError)."""
        with tempfile.TemporaryDirectory(prefix="contend-dry-run-") as tmp:
            out = Path(tmp) / "dry.json"
            cmd = [self.binary, "jobs", spec.job_file, "--dry-run", "--nodes", nodes]
            cmd += [f"-D{d}" for d in spec.defines] + list(spec.extra)
            cmd += ["--seed", spec.seed] if spec.seed is not None else []
            run_command([*cmd, "-q", "-o", out], SETUP_TIMEOUT_S)
            return read_run(out)

    # ---------------------------------------------------------------- the machine

    def simulator_args(self) -> list:
        """The options of the simulated fabric ([] without one)."""
        return []

    def nodes(self) -> int:
        """Nodes the runs get (the placements)."""
        raise NotImplementedError

    def placement_tree(self, local: bool = True) -> list:
        """``--topology-conf`` options that give a dry run the tree of the
        machine (tree placements), or []; ``local``: the machine is here."""
        return []

    @contextmanager
    def sampling(self, spec: RunSpec):
        """The counters the engine records beside the run (spec.counters)."""
        yield

    def node_of(self, results: dict, index: int) -> int:
        """The machine's number of node ``index`` of a run's results."""
        return index

    def paths(self, pairs: list, out: Path, all_pairs_max: int) -> dict | None:
        """Writes the routing paths of the node pairs to ``out`` (all pairs
        when there are at most ``all_pairs_max``) and returns them; None when
        the engine knows no paths."""
        return None


class Sim(Engine):
    name = "sim"
    help = "the simulated fabric"
    params = (
        Param(
            "topology",
            "SPEC",
            "the simulated fabric (contend jobs --help)",
            default=DEFAULT_TOPOLOGY,
            about_default="144 nodes",
        ),
    )
    in_process = True
    records_counters = True
    clock_key = "perform_t0_clock_s"

    def jobs_options(self) -> list:
        return ["--engine", self.name, "--topology", self.options["topology"]]

    def counter_options(self, spec: RunSpec) -> list:
        if spec.counters is None:
            return []
        return [
            "--counters",
            spec.counters,
            "--counter-interval-us",
            f"{spec.counter_interval_us:g}",
        ]

    def simulator_args(self) -> list:
        return ["--topology", self.options["topology"], *self.fabric]

    def fabric_args(self) -> list:
        """--topology and the fabric options, without those of the jobs alone
        (ranks per node), which `contend topology` does not take."""
        out, skip = ["--topology", self.options["topology"]], False
        for a in self.fabric:
            if skip:
                skip = False
            elif a == "--ranks-per-node":
                skip = True
            elif not a.startswith("--ranks-per-node="):
                out.append(a)
        return out

    def nodes(self) -> int:
        if self._nodes is None:
            cmd = [self.binary, "topology", "paths", "-q", *self.fabric_args(), "--pairs", "0:1"]
            out, _ = run_command(cmd, SETUP_TIMEOUT_S)
            doc = infile.parse_json(out, "contend topology paths", RunError)
            if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), int):
                raise RunError("contend topology paths printed no node count")
            self._nodes = doc["nodes"]
        return self._nodes

    def placement_tree(self, local: bool = True) -> list:
        # --topology-conf takes a topology spec too: the dry runs' tree placements
        return ["--topology-conf", self.options["topology"]]

    def paths(self, pairs: list, out: Path, all_pairs_max: int) -> dict:
        nodes = self.nodes()
        select = (
            ["--all-pairs"]
            if nodes * (nodes - 1) <= all_pairs_max
            else ["--pairs", ",".join(f"{a}:{b}" for a, b in pairs)]
        )
        cmd = [self.binary, "topology", "paths", "-q", *self.fabric_args(), *select, "-o", out]
        run_command(cmd, PATHS_TIMEOUT_S)
        return read_run(out)


class Mpi(Engine):
    name = "mpi"
    help = "real MPI through a launcher"
    params = (
        Param(
            "launcher",
            "CMD",
            "the launcher of the ranks, e.g. 'mpirun -n 16' or 'srun -N 16' (one rank per node, "
            "or --virtual-nodes K after --)",
            required=True,
        ),
        Param(
            "nodes",
            "N",
            "the nodes the launcher gives (the placements)",
            kind="count",
            required=True,
            maximum=MAX_NODES,
        ),
    )

    def launch_prefix(self, binary: str | None = None) -> list:
        return shlex.split(self.options["launcher"])

    def hand_launcher(self) -> str:
        return self.options["launcher"]

    def nodes(self) -> int:
        return self.options["nodes"]


class Cluster(Engine):
    name = "cluster"
    help = (
        "the emulated cluster (`contend cluster up` first; runs go through `contend cluster "
        "run --`)"
    )
    params = (
        Param("launcher", "CMD", "the launcher [default `contend cluster run --`]", default=""),
    )
    whole_machine = "the whole emulated cluster"
    records_counters = True
    tree_in_runs = True

    def __init__(self, binary: str, options: dict | None = None, fabric=()):
        super().__init__(binary, options, fabric)
        self._desc = None

    def description(self) -> dict:
        """The emulated cluster that is up (`contend cluster show --json`)."""
        if self._desc is None:
            fin = run_process([self.binary, "cluster", "show", "--json"], SETUP_TIMEOUT_S)
            if fin.returncode != 0:
                raise UsageError(
                    "--engine cluster: no emulated cluster is up (start one with `contend "
                    "cluster up`)"
                )
            try:
                self._desc = infile.parse_json(fin.out, "the cluster's description", UsageError)
            except UsageError as exc:
                raise UsageError(
                    f"--engine cluster: cannot read the cluster's description: {exc}"
                ) from None
        return self._desc

    def launch_prefix(self, binary: str | None = None) -> list:
        return shlex.split(self.options["launcher"]) or [
            binary or self.binary,
            "cluster",
            "run",
            "--",
        ]

    def hand_launcher(self) -> str:
        return self.options["launcher"] or "contend cluster run --"

    def nodes(self) -> int:
        return len(self.description()["nodes"])

    def placement_tree(self, local: bool = True) -> list:
        """The topology.conf that `contend cluster up` wrote (one leaf per
        leaf switch, host names the nodes')."""
        if not local:
            return []
        from ..cluster.state import state_dir

        desc = self.description()
        path = Path(state_dir(desc["prefix"])) / "topology.conf"
        if not path.is_file():
            raise UsageError(
                f"--engine cluster: the cluster {clip_repr(desc['prefix'])} has no {path} "
                "(bring it up again with `contend cluster up`)"
            )
        return ["--topology-conf", str(path)]

    @contextmanager
    def sampling(self, spec: RunSpec):
        """`contend cluster stats` samples the links while the run runs; its
        CSV's times become Unix seconds, the clock of the run's pass_clock."""
        if spec.counters is None:
            yield
            return
        stats = children.start(
            [self.binary, "cluster", "stats", "--sample-interval",
             f"{spec.sample_interval_s:g}", "--csv", spec.counters],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            line = stats.stderr.readline()  # "sampling N links ...; time_s 0 = ... (unix T)"
            m = re.search(r"\(unix ([0-9.]+)\)", line)
            if not m:
                raise RunError(f"contend cluster stats did not start: {line.strip()}")
            yield
        finally:
            if stats.poll() is None:
                stats.send_signal(signal.SIGTERM)
            try:
                stats.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                children.signal_group(stats, signal.SIGKILL)
                stats.communicate()
            children.finished(stats)
        _shift_csv_times(Path(spec.counters), float(m.group(1)))

    def node_of(self, results: dict, index: int) -> int:
        from ..cluster.paths import node_index

        return node_index(self.description(), results["environment"]["node_names"][index])

    def paths(self, pairs: list, out: Path, all_pairs_max: int) -> dict:
        from ..cluster.paths import paths_doc
        from .files import write_json_atomic

        doc = paths_doc(self.description(), pairs)
        write_json_atomic(out, doc)
        return doc


def _shift_csv_times(path: Path, offset: float) -> None:
    """Adds offset to the time_s column (first column) of a counter CSV."""

    def shift(dst):  # streams: the new file is a temporary until renamed over path
        with open(path, newline="") as src:
            r, w = csv.reader(src), csv.writer(dst, lineterminator="\n")
            w.writerow(next(r))
            for row in r:
                row[0] = f"{float(row[0]) + offset:.6f}"
                w.writerow(row)

    outfile.write_with(path, shift, "w", "counter CSV", UsageError, newline="")


ENGINES = (Sim, Mpi, Cluster)  # the one list of engine names, in the order --help shows them
DEFAULT_ENGINE = Sim.name  # where runs go without --engine (or engine =)
# The C binary's engine of --dry-run, which runs in one process too (contend X --engine NAME).
DRY_RUN_ENGINE = "trace"


def c_in_process() -> list:
    """The engines of the contend binary that need no launcher (a sweep's)."""
    return [e.name for e in ENGINES if e.in_process] + [DRY_RUN_ENGINE]


def c_engine_default(dry_run: bool) -> str:
    """The engine a contend command runs on without --engine."""
    return DRY_RUN_ENGINE if dry_run else Mpi.name


def names() -> list:
    return [e.name for e in ENGINES]


def engine_class(name: str) -> type:
    for e in ENGINES:
        if e.name == name:
            return e
    raise UsageError(f"unknown engine {clip_repr(name)} (expected one of {', '.join(names())})")


def param_rows() -> list:
    """(key, [(engine, Param)]) of every parameter of any engine, in order."""
    rows: dict = {}
    for e in ENGINES:
        for p in e.params:
            rows.setdefault(p.key, []).append((e, p))
    return list(rows.items())


def given(value) -> bool:
    """Whether an option's value was given (not None, not blank)."""
    return value is not None and str(value).strip() != ""


def engine_from_options(name: str, binary: str, values: dict, fabric=()) -> Engine:
    """The engine ``name`` with the parameter values given on the command line
    (key -> value, None when not given): a required one missing is bad input,
    and so is a value of a parameter the engine does not take, unless the
    parameter has a default (--topology: the engines without a simulated
    fabric ignore it)."""
    cls = engine_class(name)
    own = {p.key: p for p in cls.params}
    for key, rows in param_rows():
        if any(p.default for _, p in rows):
            continue
        if given(values.get(key)) and key not in own:
            takers = " or ".join(e.name for e, _ in rows)
            raise UsageError(f"--{key} is for --engine {takers}")
    missing = [p for p in cls.params if p.required and not given(values.get(p.key))]
    if missing:
        need = " and ".join(f"--{p.key} {p.metavar} ({p.help})" for p in missing)
        raise UsageError(f"--engine {cls.name} needs {need}")
    options = {k: values[k] for k in own if given(values.get(k))}
    return cls(binary, options, fabric)
