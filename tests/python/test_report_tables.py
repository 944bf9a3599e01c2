"""Impact tables, comparisons and published baselines against the fixtures' own values."""

import csv
import gzip
import io
import json
import math
from pathlib import Path

import pytest
from contend.cli import main
from contend.reports.published import figure11_rows, load_table2, published_impact_table
from contend.reports.tables import compare_table, impact_mismatches, impact_table
from contend.results import load_many, load_results

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
LOAD = FIXTURES / "load_vn1_n10.json.gz"
LOAD2 = FIXTURES / "load_vn2_n16.json.gz"
NETWORK = FIXTURES / "network_vn1_n4.json.gz"
SINGLE = sorted((FIXTURES / "single").glob("*_s1.json.gz"))


def raw(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def phase_stats(doc, name, phase):
    for test in doc["tests"]:
        if test["name"] == name and test["phase"] == phase and test["during"] is None:
            return test[test["metric"]], test["higher_is_better"]
    raise KeyError(name)


def expected_ci(iso, con, hib):
    return iso / con if hib else con / iso


@pytest.mark.parametrize("path", [LOAD, LOAD2] + SINGLE, ids=lambda p: p.name)
def test_table_equals_json_values(path):
    doc = raw(path)
    table = impact_table(load_results(path))
    names = list(dict.fromkeys(t["name"] for t in doc["tests"] if t["role"] == "canary"))
    assert table["name"].tolist() == names
    stored = {e["name"]: e for e in doc["impact"]}
    for _, row in table.iterrows():
        iso, hib = phase_stats(doc, row["name"], "isolated")
        con, _ = phase_stats(doc, row["name"], "congested")
        # exact equality: the table copies the file's unrounded numbers
        assert row["isolated_mean"] == iso["mean"]
        assert row["congested_mean"] == con["mean"]
        assert row["isolated_tail_99"] == iso["tail_99"]
        assert row["congested_tail_99"] == con["tail_99"]
        assert row["isolated_count"] == iso["count"]
        assert row["higher_is_better"] == hib
        # CI recomputed from raw values; latency congested/isolated, bandwidth isolated/congested
        assert row["ci_mean"] == expected_ci(iso["mean"], con["mean"], hib)
        assert row["ci_tail_99"] == expected_ci(iso["tail_99"], con["tail_99"], hib)
        # and it agrees with what the benchmark itself wrote
        assert math.isclose(row["ci_mean"], stored[row["name"]]["ci_mean"], rel_tol=1e-12)
        assert math.isclose(row["ci_tail_99"], stored[row["name"]]["ci_tail_99"], rel_tol=1e-12)
    assert impact_mismatches(load_results(path)) == []


def test_bandwidth_direction():
    table = impact_table(load_results(LOAD)).set_index("name")
    bw = table.loc["rr_bw_sync"]
    assert bw["units"] == "MiB/s/rank" and bw["higher_is_better"]
    assert bw["ci_mean"] == bw["isolated_mean"] / bw["congested_mean"]
    lat = table.loc["rr_lat"]
    assert lat["ci_mean"] == lat["congested_mean"] / lat["isolated_mean"]


def test_network_run_has_no_impact():
    table = impact_table(load_results(NETWORK))
    assert len(table) == 8
    assert table["congested_mean"].isna().all() and table["ci_mean"].isna().all()
    assert table["isolated_mean"].notna().all()


def test_report_csv_and_json_carry_exact_values(capsys):
    doc = raw(LOAD)
    assert main(["report", str(LOAD), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["name"] for r in rows] == ["rr_lat", "rr_bw_sync", "allreduce"]
    for r in rows:
        iso, hib = phase_stats(doc, r["name"], "isolated")
        con, _ = phase_stats(doc, r["name"], "congested")
        assert float(r["isolated_mean"]) == iso["mean"]
        assert float(r["congested_tail_99"]) == con["tail_99"]
        assert float(r["ci_tail_99"]) == expected_ci(iso["tail_99"], con["tail_99"], hib)
    assert main(["report", str(LOAD), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for r in out["canaries"]:
        iso, hib = phase_stats(doc, r["name"], "isolated")
        con, _ = phase_stats(doc, r["name"], "congested")
        assert r["isolated_mean"] == iso["mean"] and r["congested_mean"] == con["mean"]
        assert r["ci_mean"] == expected_ci(iso["mean"], con["mean"], hib)
    assert out["environment"]["nodes"] == 10


def test_report_text_and_markdown_round_the_same_numbers(capsys):
    doc = raw(LOAD)
    for fmt in ("text", "markdown"):
        assert main(["report", str(LOAD), "--format", fmt]) == 0
        out = capsys.readouterr().out
        line = next(x for x in out.splitlines() if x.lstrip("| ").startswith("rr_lat "))
        cells = [c for c in line.replace("|", " ").split() if c]
        iso, _ = phase_stats(doc, "rr_lat", "isolated")
        con, _ = phase_stats(doc, "rr_lat", "congested")
        numbers = [float(c) for c in cells[2:8]]
        expect = [
            iso["mean"],
            con["mean"],
            iso["tail_99"],
            con["tail_99"],
            con["mean"] / iso["mean"],
            con["tail_99"] / iso["tail_99"],
        ]
        for got, want in zip(numbers, expect):
            assert got == pytest.approx(want, rel=5e-3, abs=5e-4)
        assert "CI" in out and "Isolated 99%" in out


def test_compare_groups_by_nodes_and_ppn():
    runs = load_many([LOAD2, LOAD] + SINGLE)
    frame = compare_table(runs)
    keys = list(zip(frame["nodes"], frame["ranks_per_node"].astype(int)))
    assert keys == sorted(keys)  # 6-node singles, then 8x2, then 10x1
    assert set(frame["run"]) == {r.label for r in runs}
    assert frame.iloc[0]["nodes"] == 6 and frame.iloc[-1]["nodes"] == 10
    vn2 = frame[frame["run"] == "load_vn2_n16"]
    assert set(vn2["ranks_per_node"]) == {"2"} and set(vn2["ranks"]) == {16}
    assert frame["mpi_library"].str.startswith("Open MPI").all()


def test_compare_cli_with_published(capsys):
    assert main(["compare", str(LOAD), "--published", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    mine = [r for r in rows if r["run"] == "load_vn1_n10"]
    pub = [r for r in rows if r["source"].startswith("GPCNeT")]
    assert len(mine) == 3 and len(pub) == 19 * 3
    edison = next(r for r in pub if r["run"] == "Edison 5575n x24" and r["name"] == "rr_lat")
    assert float(edison["congested_tail_99"]) == 27117.9
    assert float(edison["ci_tail_99"]) == 27117.9 / 7.2


def test_table2_transcription():
    t2 = load_table2()
    assert len(t2) == 19
    assert list(t2["system"].unique()) == [
        "Crystal",
        "Osprey",
        "Edison",
        "Theta",
        "Summit",
        "Sierra",
        "Malbec",
    ]
    malbec = t2[t2["system"] == "Malbec"].iloc[0]
    assert (malbec["nodes"], malbec["pport"]) == (485, 20)
    assert malbec["iso_avg_lat"] == 1.8 and malbec["loaded_99_allreduce"] == 45.2
    theta = t2[(t2["system"] == "Theta") & (t2["pport"] == 16)].iloc[0]
    assert theta["loaded_99_lat"] == 36738.1 and theta["loaded_99_bw"] == 2.2
    osprey = t2[t2["system"] == "Osprey"]
    assert osprey["pport"].tolist() == [1, 8, 20, 32] and set(osprey["nodes"]) == {128}


def test_published_ci_computed_like_user_runs():
    pub = published_impact_table()
    row = pub[(pub["run"] == "Crystal 696n x20") & (pub["name"] == "rr_bw_sync")].iloc[0]
    assert row["ci_mean"] == 187.3 / 20.6 and row["ci_tail_99"] == 130.5 / 9.2
    row = pub[(pub["run"] == "Crystal 696n x20") & (pub["name"] == "allreduce")].iloc[0]
    assert row["ci_tail_99"] == 9337.0 / 71.6


def test_figure11_ordering():
    fig11 = figure11_rows()
    assert sorted(set(fig11["system"])) == sorted(
        ["Crystal", "Osprey", "Edison", "Theta", "Summit", "Sierra", "Malbec"]
    )
    pport = fig11.drop_duplicates("system").set_index("system")["ranks_per_node"].astype(int)
    assert pport.between(16, 24).all()
    lat = fig11[fig11["name"] == "rr_lat"].set_index("system")
    for key in ("ci_mean", "ci_tail_99"):
        # Edison and Theta (Aries) have the worst latency impact; Edison the very worst,
        # approaching four orders of magnitude at p99
        worst_two = lat[key].sort_values(ascending=False).index[:2]
        assert set(worst_two) == {"Edison", "Theta"}
        assert lat[key].idxmax() == "Edison"
    assert 1000 < lat.loc["Edison", "ci_tail_99"] < 10000
    for name in ("rr_lat", "rr_bw_sync", "allreduce"):
        sub = fig11[fig11["name"] == name].set_index("system")
        # Malbec (Slingshot) is best at p99 for every kernel, and under 10
        assert sub["ci_tail_99"].idxmin() == "Malbec"
        assert sub.loc["Malbec", "ci_tail_99"] < 10
        # Edison is worst for every kernel at p99
        assert sub["ci_tail_99"].idxmax() == "Edison"
