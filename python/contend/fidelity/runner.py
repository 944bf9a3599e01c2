"""Runs the claims of the reproduction report and makes the document's
entries.  Every step runs in its directory under the work directory, its
output and a log beside it; a step whose output exists is reused (a rerun
with the same --workdir runs only what is missing, and claims that share a
step run it once).  A failed step or an unreadable output costs that seed
its value (the entry says why), never the report."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from .. import outfile
from ..results import ResultsError
from .claim import NOT_MEASURED, Claim
from .document import claim_entry


class StepFailed(RuntimeError):
    pass


def say(text: str) -> None:
    print(f"bench/fidelity: {text}", file=sys.stderr, flush=True)


def commands_of(claim: Claim, seeds: list, quick: bool) -> list:
    """Every command of the claim at ``seeds``, once each, in order."""
    seen = {}
    for seed in seeds:
        for step in claim.steps(seed, quick):
            seen.setdefault(step.text(), None)
    return list(seen)


def run_step(step, workdir: Path, contend: str, label: str = "") -> float | None:
    """Run one step unless its output exists; its wall time in s (None: reused).
    Says ``label`` and where the command's own progress goes before it runs."""
    where = workdir / step.where
    if (where / step.output).exists():
        return None
    where.mkdir(parents=True, exist_ok=True)
    for name, text in step.writes:
        if not (where / name).exists():
            outfile.write_text(where / name, text)
    argv = [contend if step.argv[0] == "contend" else step.argv[0], *step.argv[1:]]
    log = where / f"{step.output}.log"
    say(f"{label}running (its progress: {log})")
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as fh:
        rc = subprocess.run(argv, cwd=where, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if rc.returncode not in step.ok_status:
        raise StepFailed(f"`{step.text()}` failed (status {rc.returncode}; see {log})")
    if not (where / step.output).exists():
        raise StepFailed(f"`{step.text()}` wrote no {step.output} (see {log})")
    return time.monotonic() - t0


def why_not(claim: Claim, selected: bool, quick: bool) -> str:
    """Why the claim is not run this time ('' when it is)."""
    if not selected:
        return "not run this time (--only)"
    if claim.unmeasured:
        return claim.unmeasured
    if quick and claim.quick is None:
        return f"too long for --quick ({claim.runtime})"
    return ""


def build_of(output: Path):
    """The git commit of the contend build that wrote ``output`` (its
    tool.git_commit), or None: not JSON, not contend's, or not recorded."""
    try:
        with open(output, encoding="utf-8") as fh:
            tool = json.load(fh).get("tool")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(tool, dict) or tool.get("name") != "contend":
        return None
    commit = tool.get("git_commit")
    return commit if isinstance(commit, str) and commit else None


def measure(claim: Claim, seeds: list, quick: bool, workdir: Path, contend: str) -> tuple:
    """([SeedValue], {seed: error}, {seed: [git commit]}) of the claim at
    ``seeds``: the last, the builds whose results each seed read."""
    values, errors, builds = [], {}, {}

    def path(where, name):
        return workdir / where / name

    for seed in seeds:
        try:
            steps = claim.steps(seed, quick)
            for k, step in enumerate(steps, 1):
                label = f"{claim.id} seed {seed}: step {k}/{len(steps)} "
                wall = run_step(step, workdir, contend, label)
                done = "reused" if wall is None else f"ran in {wall:.0f} s"
                say(f"{label}{done}: {step.text()}")
            values.append(claim.extract(path, seed, quick))
            commits = {build_of(workdir / s.where / s.output) for s in steps}
            builds[seed] = sorted(c for c in commits if c)
        except (StepFailed, ResultsError, OSError, KeyError, ValueError) as exc:
            errors[seed] = " ".join(str(exc).split())
            say(f"{claim.id} seed {seed}: no value: {errors[seed]}")
    return values, errors, builds


def run_claims(claims, selected, seeds: list, quick: bool, workdir: Path, contend: str) -> list:
    """The document's entries of ``claims`` (all registered, in order);
    those in ``selected`` are run at ``seeds``."""
    entries = []
    for claim in claims:
        commands = commands_of(claim, seeds, quick)
        reason = why_not(claim, claim in selected, quick)
        if reason:
            entries.append(claim_entry(claim, [], {}, NOT_MEASURED, reason, commands, quick))
            continue
        say(f"{claim.id}: {len(seeds)} seed(s), {claim.runtime}")
        values, errors, builds = measure(claim, seeds, quick, workdir, contend)
        if not any(v.value is not None for v in values):
            first = next(iter(errors.values()), "no seed gave a value")
            verdict, reason = NOT_MEASURED, f"no seed gave a value: {first}"
        else:
            verdict, reason = claim.judge(values, claim)
        say(f"{claim.id}: {verdict} ({reason})")
        entries.append(claim_entry(claim, values, errors, verdict, reason, commands, quick, builds))
    return entries
