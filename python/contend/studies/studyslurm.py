"""``contend study FILE --slurm``: a batch script that runs the study on a
real cluster, each (condition, repetition) as one ``srun --nodelist=...``.

Node *i* of a placement is the *i*-th node of the Slurm ``topology.conf``
(nodes numbered in order of first appearance, as ``--topology slurm:FILE``
numbers them in the simulator).  Each run's placements are resolved by
``contend jobs --dry-run --nodes N`` (N = the file's nodes; with
``--topology-conf`` too when the binary has it, for leaf-aware placements);
the run's nodes, in topology order, become its ``--nodelist``, and its job
file is rewritten with explicit ``[NID_LIST]`` positions in that list
(``srun --distribution=block`` puts rank block *k* on the *k*-th node of the
list, in Slurm's node order: the topology file's order on clusters whose
``slurm.conf`` lists nodes in the same order, as is usual).
"""

from __future__ import annotations

import re
import shlex
import stat
from pathlib import Path

from ..outfile import write_text
from ..runs.errors import UsageError
from ..runs.executor import run_command

MAX_NODES = 1 << 18


# ------------------------------------------------------------- topology.conf


def _split_top(text: str) -> list:
    """Split a hostlist at commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [s for s in out if s]


def expand_hostlist(text: str, where: str = "hostlist") -> list:
    """'q[001-003,7]x' -> ['q001x', 'q002x', 'q003x', 'q7x'] (Slurm hostlist syntax)."""
    names = []
    for item in _split_top(text):
        parts = re.split(r"(\[[^\]]*\])", item)
        combos = [""]
        for part in parts:
            if not part.startswith("["):
                combos = [c + part for c in combos]
                continue
            if not part.endswith("]"):
                raise UsageError(f"{where}: unbalanced '[' in {item!r}")
            vals = []
            for rng in part[1:-1].split(","):
                m = re.fullmatch(r"(\d+)(?:-(\d+))?", rng.strip())
                if not m:
                    raise UsageError(f"{where}: bad range {rng!r} in {item!r}")
                lo, hi = m.group(1), m.group(2) or m.group(1)
                if int(hi) < int(lo):
                    raise UsageError(f"{where}: range {rng!r} runs backwards")
                if (int(hi) - int(lo) + 1) * len(combos) > MAX_NODES:
                    raise UsageError(f"{where}: {item!r} expands past {MAX_NODES} names")
                width = len(lo)
                vals += [f"{v:0{width}d}" for v in range(int(lo), int(hi) + 1)]
            combos = [c + v for c in combos for v in vals]
        if "[" in item and "]" not in item:
            raise UsageError(f"{where}: unbalanced '[' in {item!r}")
        names += combos
        if len(names) > MAX_NODES:
            raise UsageError(f"{where}: more than {MAX_NODES} names")
    return names


def read_topology_conf(path: Path) -> tuple:
    """(node names in order of first appearance, {node: its switch}) of a
    Slurm topology.conf; UsageError on a file that is not one."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--topology-conf {path}: cannot read ({exc})") from None
    names, switch_of = [], {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = {}
        for tok in line.split():
            key, sep, val = tok.partition("=")
            if not sep:
                raise UsageError(f"{path}:{lineno}: {tok!r} is not KEY=VALUE")
            fields[key.lower()] = val
        if "switchname" not in fields:
            raise UsageError(f"{path}:{lineno}: no SwitchName=")
        if "nodes" in fields:
            for n in expand_hostlist(fields["nodes"], f"{path}:{lineno}"):
                if n in switch_of:
                    raise UsageError(f"{path}:{lineno}: node {n} is under two switches")
                switch_of[n] = fields["switchname"]
                names.append(n)
    if not names:
        raise UsageError(f"--topology-conf {path}: no node (no SwitchName=... Nodes=... line)")
    return names, switch_of


# ------------------------------------------------------------- the script


def _supports_topology_conf(engine) -> bool:
    try:
        out, err = run_command([engine.binary, "jobs", "--help"], 60)
    except Exception:  # noqa: BLE001 - an old binary: no leaf-aware placements
        return False
    return "--topology-conf" in out + err


def write_slurm(study, runs: list, run_dir: Path, conf: Path, study_file: Path, engine) -> Path:
    """Writes run_dir/slurm/jobs/*.job and run_dir/slurm/study.sbatch; returns the script."""
    names, _ = read_topology_conf(conf)
    extra = ["--topology-conf", str(conf)] if _supports_topology_conf(engine) else []
    out_dir = run_dir / "slurm"
    jobs_dir = out_dir / "jobs"
    jobs_dir.mkdir(parents=True, exist_ok=True)
    ppn = study.slurm["ntasks_per_node"]
    srun_extra = " ".join(shlex.quote(a) for a in study.slurm["srun"])
    jobs_args = " ".join(shlex.quote(a) for a in study.jobs_args)
    lines, used = [], set()
    for run in runs:
        cond = study.condition(run.condition)
        tmp = jobs_dir / f".{cond.slug}-r{run.repetition}.plan.job"
        write_text(tmp, study.job_file(cond, run.repetition, run.seed), error=UsageError)
        try:
            plan = engine.dry_run(tmp, run.seed, len(names), extra)
        except UsageError as exc:
            raise UsageError(f"condition {run.condition!r} on {conf}: {exc}") from None
        finally:
            tmp.unlink(missing_ok=True)
        nodes = sorted({n for j in plan["jobs"] for n in j["nodes"]})
        pos = {n: i for i, n in enumerate(nodes)}
        explicit = {
            j["name"]: "[NID_LIST] " + ",".join(str(pos[n]) for n in j["nodes"])
            for j in plan["jobs"]
        }
        job_file = jobs_dir / f"{cond.slug}-r{run.repetition}.job"
        hand = "srun --nodelist=NODES (below) ... contend jobs FILE --seed SEED -o OUT.json"
        text = study.job_file(cond, run.repetition, run.seed, placements=explicit, hand=hand)
        text += "\n# nodes: " + ",".join(names[n] for n in nodes) + "\n"
        write_text(job_file, text, error=UsageError)
        hosts = [names[n] for n in nodes]
        used.update(nodes)
        rel_job = job_file.relative_to(run_dir)
        rel_out = run.results_file.relative_to(run_dir)
        lines += [
            f"# {run.order_index + 1}/{len(runs)}: {run.condition}, repetition {run.repetition}, "
            f"seed {run.seed}; "
            + "; ".join(
                f"{j['name']} on {','.join(names[n] for n in j['nodes'])}" for j in plan["jobs"]
            ),
            f"[ -s {shlex.quote(str(rel_out))} ] || srun --nodelist={','.join(hosts)} "
            f"--nodes={len(hosts)} --ntasks={len(hosts) * ppn} --ntasks-per-node={ppn} "
            f'--distribution=block {srun_extra} "$CONTEND" jobs {shlex.quote(str(rel_job))} '
            f"{jobs_args} --seed {run.seed} -q -o {shlex.quote(str(rel_out))}".replace("  ", " "),
        ]
    all_hosts = [names[n] for n in sorted(used)]
    sbatch = [f"#SBATCH {a}" for a in study.slurm["sbatch"]]
    head = [
        "#!/bin/bash",
        (
            f"# contend study {study.name!r}: {len(study.all_conditions())} conditions x "
            f"{study.repetitions} repetitions, in the order recorded in state.json"
        ),
        "# (docs/study.md).  Written by `contend study --slurm`; node i of the placements is",
        f"# the i-th node of {conf}.  A finished run (its results file present) is",
        "# skipped, so resubmitting the script resumes the study; the last step writes",
        "# study.json (contend study --collect).",
        f"#SBATCH --job-name=contend-study-{study.name}",
        f"#SBATCH --nodes={len(all_hosts)}",
        f"#SBATCH --nodelist={','.join(all_hosts)}",
        "#SBATCH --exclusive",
        f"#SBATCH --ntasks-per-node={ppn}",
        "#SBATCH --output=contend-study-%j.out",
        *sbatch,
        "set -euo pipefail",
        f"CONTEND=${{CONTEND:-{study.slurm['contend']}}}",
        f"cd {shlex.quote(str(run_dir.resolve()))}",
        "mkdir -p runs",
        "",
    ]
    tail = [
        "",
        (
            f'"$CONTEND" study {shlex.quote(str(study_file.resolve()))} --dir . --collect '
            "-o study.json"
        ),
    ]
    script = out_dir / "study.sbatch"
    write_text(script, "\n".join(head + lines + tail) + "\n", error=UsageError)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script
