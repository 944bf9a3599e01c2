"""StressBench's validation (seeds/stressbench-hpec21.md, section IV): an
application replayed from its communication pattern runs within 15 % of the
application.  Ours: ``bench/record_overhead replay --app lammps`` (record
Debian's LAMMPS with ``contend record``, replay the trace with ``contend
jobs``, replay / recorded runtime per run, docs/trace.md).  That bench
prints text only, so the claim is recorded as not measured with its
command until the bench writes a machine-readable output."""

from __future__ import annotations

from .claim import FAILS, HOLDS, QUALITATIVE, Claim, Step, spread

TOLERANCE = 0.15  # the paper: every proxy within 15 % of its application


def steps(seed: int, quick: bool) -> list:
    argv = ("bench/record_overhead", "replay", "--app", "lammps", "--clock", "cpu", "--runs", "1")
    return [Step(f"stressbench/run{seed}", argv, "")]


def judge(values: list, claim: Claim) -> tuple:
    ratios = [v.value for v in values if v.value is not None]
    inside = sum(abs(r - 1) <= TOLERANCE for r in ratios)
    s = spread(ratios)
    if s["median"] is None:
        return FAILS, "no run gave a ratio"
    text = f"within 15 % at {inside} of {len(ratios)} runs, median {s['median']:.3f}"
    if inside == len(ratios):
        return HOLDS, text
    if abs(s["median"] - 1) <= TOLERANCE:
        return QUALITATIVE, text
    return FAILS, text


STRESSBENCH = Claim(
    id="stressbench_replay_validation",
    paper="stressbench",
    figure="emulated vs measured runtime of four proxy applications: at most 15 % apart",
    where="section IV.B (TeaLeaf -10.4 %, Sweep3D -6 %, LULESH 15 %)",
    paper_value=1.15,
    paper_text="|emulated / measured - 1| <= 0.15 for every application and scale",
    quantity="replay / recorded runtime of LAMMPS (2 ranks, CPU-time gaps) per run, on MPI",
    unit="ratio",
    rule=(
        "holds: every run within 15 % (0.85 to 1.15); holds qualitatively: the median within "
        "15 %; else does not hold"
    ),
    judge=judge,
    steps=steps,
    extract=None,
    settings=(
        (
            "LAMMPS recorded as an OTF2 trace and replayed by the replay motif, not hand-built "
            "motif chains of TeaLeaf, Sweep3D and LULESH"
        ),
        "one host (2 shared cores), not Tinis or Isambard",
    ),
    quick=None,
    runtime="about 1 min per run; needs Debian's lammps and otf2-tools",
    unmeasured="bench/record_overhead writes no machine-readable output yet",
)
CLAIMS = (STRESSBENCH,)
