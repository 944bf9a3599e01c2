"""The simulator's results do not move under speed work: a fixed set of
runs (fat trees, dragonflies under each router model and several routings,
an incast with a victim flow under each congestion control, port counters,
GPCNeT's load test on 72 nodes, the network test) is compared with JSON
and CSV files written by the simulator before its event loop, event queue
and per-port state were reworked for machine scale.  Everything but the
wall-clock fields (wall time, peak memory, start and finish times, the
output's own path) must be equal, `events` and `packet_hops` included.
`df_ugal_voq_incast_counters` was written later, by the simulator before
voq's allocation read its requests output by output: its CSV has the
per-VC stall times that allocation's masks make.  `fattree_radix68_voq`
and `switch96_voq_islip3_drain` were written later still, by the simulator
before voq's allocation was compiled apart for radix <= 64, so they hold
the two-word masks' path to the results of the one generic path.

A change that is meant to move results (a documented bug fix) regenerates
the files with `python tests/python/test_sim_golden.py --regenerate` (or
`--regenerate NAME ...` for some) and says so in its commit."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import BUILD
from simkit import WALL_CLOCK

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "sim_golden"
INCAST = "incast:senders=8-31,dst=0,load=0.5;victim=flow:src=40,dst=9,load=0.2"
FT = "fattree:leaves=8,nodes=8,uplinks=4"
SHORT = [a for m in ("pairwise_a2a", "p2p_incast", "rma_put_incast", "rma_get_bcast")
         for a in (f"--{m}.iters", "16")]  # fmt: skip

# name -> argv after `contend`; a case named *_counters also writes --counters
CASES = {
    "xgft3_adaptive": ["sim", "--topology", "xgft:h=3,down=4,4,4,up=2,2,2", "--routing",
                       "adaptive", "--sweep", "0.3,0.9", "--warmup-us", "5", "--measure-us", "20"],
    "xgft3_dmodk_random": ["sim", "--topology", "xgft:h=3,down=4,4,4,up=2,2,2", "--routing",
                           "dmodk", "--traffic", "permutation", "--load", "0.8",
                           "--warmup-us", "5", "--measure-us", "20"],
    "fattree_dmodk_adaptive_counters": ["sim", "--topology", FT, "--routing", "dmodk-adaptive",
                                        "--load", "0.7", "--warmup-us", "5", "--measure-us", "60",
                                        "--counter-interval-us", "10"],
    "df_minimal_iq_drain": ["sim", "--topology", "dragonfly:a=4,p=2,h=2", "--load", "0.6",
                            "--warmup-us", "5", "--measure-us", "20", "--drain"],
    "df_ugal_iq": ["sim", "--topology", "dragonfly:a=4,p=2,h=2", "--traffic", "group_shift",
                   "--routing", "ugal", "--sweep", "0.2,0.6", "--warmup-us", "5",
                   "--measure-us", "20"],
    "df_par_voq": ["sim", "--topology", "dragonfly:a=4,p=2,h=2", "--traffic", "group_shift",
                   "--routing", "par", "--router", "voq", "--load", "0.5", "--warmup-us", "5",
                   "--measure-us", "20"],
    "df_valiant_oq_ecn": ["sim", "--topology", "dragonfly:a=4,p=2,h=2", "--routing", "valiant",
                          "--router", "oq", "--cc", "ecn", "--load", "0.7", "--warmup-us", "5",
                          "--measure-us", "20"],
    "df_ugalg_aries_like": ["sim", "--topology", "dragonfly:a=4,p=2,h=2", "--network",
                            "aries-like", "--traffic", "group_shift", "--load", "0.5",
                            "--warmup-us", "5", "--measure-us", "20"],
    "incast_victim_none_counters": ["sim", "--topology", FT, "--traffic", INCAST,
                                    "--warmup-us", "5", "--measure-us", "100",
                                    "--counter-interval-us", "25"],
    "incast_victim_ecn": ["sim", "--topology", FT, "--traffic", INCAST, "--cc", "ecn",
                          "--warmup-us", "5", "--measure-us", "100"],
    "incast_victim_perflow_voq": ["sim", "--topology", FT, "--traffic", INCAST, "--cc",
                                  "perflow", "--router", "voq", "--warmup-us", "5",
                                  "--measure-us", "100"],
    "df_ugal_voq_incast_counters": ["sim", "--topology", "dragonfly:a=4,p=2,h=2", "--routing",
                                    "ugal", "--router", "voq", "--traffic", INCAST,
                                    "--warmup-us", "5", "--measure-us", "60",
                                    "--counter-interval-us", "20"],
    "incast_victim_degraded": ["sim", "--topology", FT, "--traffic", INCAST, "--degrade",
                               "leaf0:8=0.5", "--warmup-us", "5", "--measure-us", "100"],
    "gpcnet_load_72": ["load", "--engine", "sim", "--topology", "dragonfly:a=4,p=2,h=2",
                       "--timeout", "0.0005", *SHORT],
    # routers of radix > 64: voq's masks take two words there, on the
    # allocation's generic path (radix <= 64 runs a one-word copy)
    "fattree_radix68_voq": ["sim", "--topology", "fattree:leaves=4,nodes=66,uplinks=2",
                            "--router", "voq", "--vcs", "2", "--routing", "adaptive", "--load",
                            "0.3", "--warmup-us", "5", "--measure-us", "60"],
    "switch96_voq_islip3_drain": ["sim", "--topology", "switch:nodes=96", "--router", "voq",
                                  "--load", "1", "--islip-iterations", "3", "--drain",
                                  "--warmup-us", "2", "--measure-us", "10"],
    "network_sim_ib_like": ["network", "--engine", "sim", "--network", "ib-like", "--nodes",
                            "64", "--measurements", "1", "--iters", "1", "--warmup", "0"],
}  # fmt: skip
SEED = "3"

# keys whose values differ between two runs of the same seed (git_commit:
# between two builds)
VARIES = WALL_CLOCK | {"output", "argv", "git_commit"}


def _strip(x):
    if isinstance(x, dict):
        # "counters" as a string is the CSV's path (as a dict, results)
        return {
            k: _strip(v)
            for k, v in x.items()
            if k not in VARIES and not (k == "counters" and isinstance(v, str))
        }
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def run_case(name, outdir):
    """Runs case `name` writing NAME.json (and NAME.csv) into outdir; the
    JSON without its wall-clock fields, and the CSV text or None."""
    out = outdir / f"{name}.json"
    argv = [str(BUILD / "bin" / "contend"), *CASES[name], "--seed", SEED, "-q", "-o", str(out)]
    csv = outdir / f"{name}.csv"
    if name.endswith("_counters"):
        argv += ["--counters", str(csv)]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if r.returncode:
        raise AssertionError(f"{name}: exit {r.returncode}: {r.stderr[-2000:]}")
    doc = _strip(json.loads(out.read_text()))
    return doc, csv.read_text() if csv.exists() else None


# result keys added after the golden files were written (what ran, not how
# it came out): left out of this run's document when the golden lacks them
NEW_RESULT_KEYS = {"iters_per_measurement", "tool"}  # tool: contend sim's, since git_commit


def _without_new_options(doc, golden, options=False):
    """doc without the recorded options (keys of a "config" or "options"
    object) and NEW_RESULT_KEYS that the golden files predate: an option or
    a field added later is an addition to the interface, not a change of
    results."""
    if isinstance(doc, dict) and isinstance(golden, dict):
        return {k: _without_new_options(v, golden.get(k), k in ("config", "options"))
                for k, v in doc.items()
                if k in golden or not (options or k in NEW_RESULT_KEYS)}  # fmt: skip
    if isinstance(doc, list) and isinstance(golden, list) and len(doc) == len(golden):
        return [_without_new_options(u, v) for u, v in zip(doc, golden)]
    return doc


def _first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'golden' if k in b else 'this run'}"
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (u, v) in enumerate(zip(a, b)):
            d = _first_difference(u, v, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} (this run) != {b!r} (golden)"


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_unchanged(tmp_path, name):
    doc, csv = run_case(name, tmp_path)
    golden = json.loads((GOLDEN / f"{name}.json").read_text())
    doc = _without_new_options(doc, golden)
    assert doc == golden, _first_difference(doc, golden)
    if csv is not None:
        want = (GOLDEN / f"{name}.csv").read_text()
        assert csv == want, f"{name}: the counters CSV differs from the golden one"


def test_cases_exercise_what_they_name():
    # the set covers what the speed work touches: each router model, a
    # congestion control, counters, the MPI layer, a drained run
    docs = {n: json.loads((GOLDEN / f"{n}.json").read_text()) for n in CASES}
    assert {docs[n].get("router") for n in docs if "router" in docs[n]} == {"iq", "voq", "oq"}
    assert all(d["packet_hops"] > 1_000 for n, d in docs.items() if "packet_hops" in d)
    sim = docs["gpcnet_load_72"]["environment"]["simulation"]
    assert sim["packet_hops"] > 100_000 and sim["topology_nodes"] == 72
    assert any(line.count(",") == 5 for line in (GOLDEN / "incast_victim_none_counters.csv")
               .read_text().splitlines()[1:3])  # fmt: skip
    # voq's stall masks: stalls on VCs above 0 are in the per-VC rows
    vc_stalls = {row.split(",")[3] for row in (GOLDEN / "df_ugal_voq_incast_counters.csv")
                 .read_text().splitlines()[1:] if ",xmit_wait_ns," in row and row.split(",")[3]
                 and float(row.split(",")[5]) > 0}  # fmt: skip
    assert len(vc_stalls) >= 2, vc_stalls
    # the two-word cases do have routers of radix > 64, and they are voq
    for name in ("fattree_radix68_voq", "switch96_voq_islip3_drain"):
        assert docs[name]["router"] == "voq"
        spec = CASES[name][CASES[name].index("--topology") + 1]
        r = subprocess.run([str(BUILD / "bin" / "contend"), "topology", "show", "--json", spec],
                           capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
        radix = max((lv["links_down"] + lv["links_up"]) // lv["switches"]
                    for lv in json.loads(r.stdout)["levels"])  # fmt: skip
        assert radix > 64, (name, radix)


def main():
    names = sys.argv[2:] or sorted(CASES)
    if sys.argv[1:2] != ["--regenerate"] or not set(names) <= set(CASES):
        print("usage: python tests/python/test_sim_golden.py --regenerate [NAME ...]\n"
              f"NAME: one of {', '.join(sorted(CASES))}", file=sys.stderr)  # fmt: skip
        return 2
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in names:
        doc, _ = run_case(name, GOLDEN)
        (GOLDEN / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"{name}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
