"""Shared steps of the Netscope benches run over seeds (bench/latency_model_seeds,
bench/sensitivity_seeds): the README's latency-model commands at one seed,
running a contend command (exit with its stderr on failure), the parser built
from a bench's docstring with options after -- passed through, and the median
and range of a list.  Imported by those scripts (they put this directory on
sys.path); not a command itself."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONTEND = ROOT / "build" / "bin" / "contend"
sys.path.insert(0, str(ROOT / "python"))
# the README's counts, with the default 16 pairs: the reproduction report's too
# (bench/fidelity's netscope_latency_model claim runs the same commands)
from contend.fidelity.netscope import LATENCY_FULL

README_PINGPONG = list(LATENCY_FULL)
MAX_SEEDS = 1000
MAX_SEED = 10**6  # the trainings' run seeds (S * 1000 + i) then stay below 2^31


def run(cmd):
    """Runs one command; when it fails, exits the bench with its stderr, and
    with status 2 when the command refused its input (e.g. options after --)."""
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False)
    if r.returncode:
        print(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr}", file=sys.stderr)
        sys.exit(2 if r.returncode == 2 else 1)
    return r


def latency_model(contend, seed, fit_seed, extra, tmp: Path) -> dict:
    """The README's latency model at ``seed``:
        contend pingpong-train --runs 24 --exchanges 2000 --seed S -o trainS.json
        contend model fit-latency trainS.json -o latencyS.json [--seed S]
    (fit-latency's --seed S when ``fit_seed`` is "same").  Returns its figures
    and ``path``, the model file written in ``tmp``."""
    train, model = tmp / f"train{seed}.json", tmp / f"latency{seed}.json"
    t0 = time.time()
    run([contend, "pingpong-train", *README_PINGPONG, "--seed", seed, "-q", "-o", train, *extra])
    fit = [contend, "model", "fit-latency", train, "-o", model]
    r = run(fit + (["--seed", seed] if fit_seed == "same" else []))
    doc = json.loads(model.read_text())
    acc = doc["accuracy"]
    return {
        "seed": seed,
        "path": model,
        "r_holdout": acc["holdout"]["pearson_r"],
        "r_train": acc["train"]["pearson_r"],
        "samples": acc["all"]["samples"],
        "within30": acc["all"]["within_30_percent_share"],
        "k": {**doc["k_link_ns_per_q"], "k_2": doc["k_const_ns"]},
        "folded": doc["fit"].get("folded_classes", []),
        "rank_warning": "warning: design rank" in r.stderr,
        "wall_s": time.time() - t0,
    }


def parser(doc: str, default_seeds: int) -> argparse.ArgumentParser:
    """A bench's parser: description and epilog from its docstring, and the
    options every seed bench has (--seeds, --first, --contend)."""
    ap = argparse.ArgumentParser(
        description=doc.split("\n\n")[0],
        epilog="\n\n".join(doc.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--seeds", type=int, default=default_seeds, help=f"how many seeds [default {default_seeds}]"
    )
    ap.add_argument("--first", type=int, default=1, help="first seed [default 1]")
    ap.add_argument("--contend", default=str(CONTEND), help="the contend binary")
    return ap


def usage_error(ap: argparse.ArgumentParser, message: str):
    """One line naming the problem, exit status 2, before any run."""
    print(f"{ap.prog}: {message}", file=sys.stderr)
    sys.exit(2)


def parse(ap: argparse.ArgumentParser, argv):
    """(options, the arguments after --); --seeds bounded by MAX_SEEDS."""
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    if not 1 <= a.seeds <= MAX_SEEDS:
        usage_error(ap, f"--seeds: expected 1 to {MAX_SEEDS}, not {a.seeds}")
    if not 0 <= a.first <= MAX_SEED - a.seeds + 1:
        usage_error(ap, f"--first: the seeds must lie in 0 to {MAX_SEED}, not from {a.first}")
    if not (Path(a.contend).is_file() and os.access(a.contend, os.X_OK)):
        usage_error(ap, f"--contend {a.contend}: not an executable file (run `make build`)")
    return a, argv[cut + 1 :]


def median_range(values) -> dict:
    """{median, min, max} of the values that are not None (all None when none are)."""
    v = [x for x in values if x is not None]
    if not v:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(v), "min": min(v), "max": max(v)}
