"""One job's run from a ``contend jobs`` results file (schema contend-jobs), for eq. 2-5.

Extracts what the delay sensitivity model needs: the job's nodes and traffic
pairs, its runtime T_a = perform_end_s - perform_start_s in the chosen pass,
the perform window on the counter CSV's clock, the counter CSV
(``config.options.counters``) and, on the simulator, the NIC bandwidth.

Clock: perform_start_s / perform_end_s are relative to the pass's start;
``pass_clock`` gives that start on the engine's clock (the simulator's counter
CSV clock, ``perform_t0_clock_s``) and on the Unix wall clock
(``perform_t0_unix_s``, the clock of live counter sources).  Files without
``pass_clock`` (before 1.1) are taken to start at 0 on the counter clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .errors import ModelError
from .paths import check_header, read_json

SCHEMA_NAME = "contend-jobs"
PASSES = ("concurrent", "isolated")
HINT = "a results file of `contend jobs ... -o FILE --counters CSV` (schema 'contend-jobs' 1.x)"


@dataclass
class JobRun:
    """One job in one pass of one results file."""

    file: Path
    seed: int | None
    engine: str
    job: str
    pass_name: str
    nodes: list
    traffic_pairs: list  # [src, dst, bytes, messages]
    traffic_bytes: float
    traffic_messages: float
    t_a_s: float
    perform_start_s: float
    perform_end_s: float
    clock_offset_s: float
    clock: str  # which pass_clock entry aligned the window: engine | unix | none
    counters: Path
    nic_gbps: float | None

    @property
    def window(self) -> tuple:
        """The perform window on the counter CSV's clock, in s."""
        return (
            self.clock_offset_s + self.perform_start_s,
            self.clock_offset_s + self.perform_end_s,
        )

    @property
    def mean_msg_bytes(self) -> float | None:
        if self.traffic_messages > 0 and self.traffic_bytes > 0:
            return self.traffic_bytes / self.traffic_messages
        return None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _pick_pass(results: dict, pass_name: str, source: str, job: str) -> str:
    if pass_name == "auto":
        for name in PASSES:
            if isinstance(results.get(name), dict):
                return name
        raise ModelError(f"{source}: job {job!r} has no concurrent or isolated results")
    if not isinstance(results.get(pass_name), dict):
        have = ", ".join(k for k in results if isinstance(results[k], dict)) or "none"
        raise ModelError(
            f"{source}: job {job!r} has no {pass_name!r} pass results (passes present: {have}); "
            "use --pass auto or run `contend jobs --mode both`"
        )
    return pass_name


def _counters_path(doc: dict, path: Path, counters_dir, source: str) -> Path:
    options = doc.get("config", {}).get("options", {})
    given = options.get("counters") if isinstance(options, dict) else None
    if not isinstance(given, str) or not given:
        raise ModelError(
            f"{source}: config.options.counters is empty: the run wrote no counter CSV "
            "(rerun `contend jobs` with --counters FILE --counter-interval-us N)"
        )
    name = Path(given)
    if counters_dir:
        candidates = [Path(counters_dir) / name.name]
    else:  # as given, then beside the results file (moved together)
        candidates = [name, path.parent / name, path.parent / name.name]
    for cand in candidates:
        if cand.is_file():
            return cand
    looked = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise ModelError(
        f"{source}: counter CSV {given!r} not found (looked at {looked}); "
        "give its directory with --counters-dir"
    )


def load_job_run(path, job: str, pass_name: str = "auto", counters_dir=None) -> JobRun:
    """Read one results file and return the named job's run (ModelError on bad input)."""
    path = Path(path)
    source = str(path)
    doc = read_json(path, HINT)
    check_header(doc, SCHEMA_NAME, 1, source, HINT)
    if doc.get("dry_run"):
        raise ModelError(f"{source}: a dry run (no timings); give results of a real run")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise ModelError(f"{source}: field 'jobs' missing ({HINT})")
    found = [j for j in jobs if isinstance(j, dict) and j.get("name") == job]
    if not found:
        names = ", ".join(str(j.get("name")) for j in jobs if isinstance(j, dict))
        raise ModelError(f"{source}: no job named {job!r} (jobs: {names})")
    entry = found[0]
    where = f"{source}: jobs[{jobs.index(entry)}] ({job})"
    nodes = entry.get("nodes")
    if not isinstance(nodes, list) or not all(isinstance(n, int) and n >= 0 for n in nodes):
        raise ModelError(f"{where}: field 'nodes' must be a list of node indices")
    traffic = entry.get("traffic") if isinstance(entry.get("traffic"), dict) else {}
    pairs = traffic.get("pairs") or []
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 4 and all(_number(x) for x in pair)):
            raise ModelError(
                f"{where}: traffic.pairs[{i}] must be [src_node, dst_node, bytes, messages]"
            )
    results = entry.get("results")
    if not isinstance(results, dict):
        raise ModelError(f"{where}: field 'results' missing")
    chosen = _pick_pass(results, pass_name, source, job)
    res = results[chosen]
    start, end = res.get("perform_start_s"), res.get("perform_end_s")
    if not (_number(start) and _number(end)) or end <= start:
        raise ModelError(
            f"{where}: results.{chosen}.perform_start_s/perform_end_s must be numbers with "
            f"end > start (got {start!r}, {end!r})"
        )
    engine = str(doc.get("engine") or doc.get("config", {}).get("options", {}).get("engine", ""))
    offset, clock = 0.0, "none"
    for entry_clock in doc.get("pass_clock") or []:
        if isinstance(entry_clock, dict) and entry_clock.get("pass") == chosen:
            key = "perform_t0_clock_s" if engine == "sim" else "perform_t0_unix_s"
            if not _number(entry_clock.get(key)):
                raise ModelError(f"{source}: pass_clock entry of {chosen!r} lacks {key}")
            offset, clock = float(entry_clock[key]), "engine" if engine == "sim" else "unix"
    options = doc.get("config", {}).get("options", {})
    nic = options.get("node_gbps") if engine == "sim" and isinstance(options, dict) else None
    seed = doc.get("seed")
    return JobRun(
        file=path,
        seed=seed if isinstance(seed, int) else None,
        engine=engine,
        job=job,
        pass_name=chosen,
        nodes=[int(n) for n in nodes],
        traffic_pairs=[list(p) for p in pairs],
        traffic_bytes=float(traffic.get("bytes") or 0.0),
        traffic_messages=float(traffic.get("messages") or 0.0),
        t_a_s=float(end - start),
        perform_start_s=float(start),
        perform_end_s=float(end),
        clock_offset_s=offset,
        clock=clock,
        counters=_counters_path(doc, path, counters_dir, source),
        nic_gbps=float(nic) if _number(nic) and nic > 0 else None,
    )
