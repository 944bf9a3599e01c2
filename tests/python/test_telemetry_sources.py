"""contend.telemetry on each source's fixture (tests/fixtures/telemetry/<source>/).

Per source: the samples read, counter wrap (or saturation where the source's
counters saturate instead), a reset, a missing port and a malformed line
(TelemetryError ``file:line``).  Expected PTs are the hand-computed values
listed in each fixture's README.  Also: PTs on a tiny hand-checked case, the
simulator's sparse rows against a plain loop on a real `contend jobs --engine
sim` counter file, injection_stall on it, and the sampler writing N samples.
"""

import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, run_bounded
from contend.telemetry import (
    TelemetryError,
    counter_deltas,
    detect_source,
    injection_stall,
    make_frame,
    read_counters,
    sampler,
    stall_intervals,
    write_counters,
)
from contend.telemetry.sources import cxi as cxi_source
from contend.telemetry.sources import ib_sysfs
from contend.telemetry.stallrules import parse_tick, tick_ns_for

FIX = ROOT / "tests" / "fixtures" / "telemetry"


def pts_of(frame, component, port=""):
    rows = frame[(frame["component"] == component) & (frame["port"] == port)]
    return [round(v, 6) for v in rows.sort_values("t0_s")["pts_percent"]]


def events_of(events, kind):
    return [(e["component"], e["port"], e["counter"]) for e in events if e["event"] == kind]


def malformed(path, line, source="auto"):
    with pytest.raises(TelemetryError) as info:
        read_counters(path, source=source)
    assert str(info.value).startswith(f"{path}:{line}: "), str(info.value)
    return str(info.value)


# ------------------------------------------------------------------ hand-checked PTs


def test_pts_hand_checked_250_of_1000_ns_is_25_percent():
    frame = make_frame(
        [0.0, 1e-6, 0.0, 1e-6],
        ["h:mlx5_0", "h:mlx5_0", "h:mlx5_0", "h:mlx5_0"],
        ["1", "1", "1", "1"],
        ["port_xmit_wait", "port_xmit_wait", "port_xmit_data", "port_xmit_data"],
        [1000, 1025, 0, 64],
        ["ticks", "ticks", "octets4", "octets4"],
    )
    out = stall_intervals(frame, tick_ns=10)  # 25 ticks x 10 ns = 250 ns in 1000 ns
    assert len(out) == 1
    row = out.iloc[0]
    assert row["stall_ns"] == pytest.approx(250.0)
    assert row["interval_ns"] == pytest.approx(1000.0)
    assert row["pts_percent"] == pytest.approx(25.0)
    assert list(out.columns) == [
        "t0_s",
        "t1_s",
        "component",
        "port",
        "stall_ns",
        "interval_ns",
        "pts_percent",
    ]
    nodes = injection_stall(frame, tick_ns=10)
    assert list(nodes.columns) == ["t0_s", "t1_s", "node", "pts_percent"]
    assert nodes["node"].tolist() == ["h"] and nodes["pts_percent"].iloc[0] == pytest.approx(25.0)


def test_tick_presets_follow_the_documented_bytes_per_tick():
    # Quantum: 8 bytes of port time; HDR 200 Gb/s -> 64 bit / 200 Gb/s = 0.32 ns
    assert tick_ns_for("quantum", 200) == pytest.approx(0.32)
    # Switch-IB: 32 bytes per lane; EDR 100 Gb/s over 4 lanes -> 256 bit / 25 Gb/s
    assert parse_tick("switch-ib@100x4") == pytest.approx(10.24)
    # the IBA base tick at SDR (10 Gb/s signalling = 8 Gb/s data, 4 lanes): 4 ns
    assert parse_tick("symbol@8") == pytest.approx(4.0)
    assert parse_tick("2.5") == 2.5
    for bad in ("0", "-1", "quantum", "warp@100", "fast"):
        with pytest.raises(TelemetryError):
            parse_tick(bad)


# ------------------------------------------------------------------ InfiniBand


def test_ib_snapshot_saturation_reset_and_missing_port():
    path = FIX / "ib" / "snapshot.txt"
    assert detect_source(path) == "ib-snapshot"
    frame = read_counters(path)
    assert set(frame["component"].astype(str)) == {"node01:mlx5_0"}
    units = dict(zip(frame["counter"].astype(str), frame["unit"].astype(str)))
    assert units == {"port_xmit_wait": "ticks", "port_xmit_data": "octets4"}
    events = []
    out = stall_intervals(frame, tick_ns=4, events=events)
    # 62,500,000 ticks x 4 ns in 1 s = 25 %; saturated and reset intervals left out
    assert pts_of(out, "node01:mlx5_0", "1") == [25.0, 50.0]
    assert events_of(events, "saturated") == [("node01:mlx5_0", "1", "port_xmit_wait")] * 2
    assert events_of(events, "reset") == [("node01:mlx5_0", "1", "port_xmit_wait")]
    # port 2 has no rows at 1002, 1003: one 3 s interval of 10 %
    p2 = out[out["port"] == "2"].sort_values("t0_s")
    assert p2["t0_s"].tolist() == [1000.0, 1001.0, 1004.0]
    assert p2["t1_s"].tolist() == [1001.0, 1004.0, 1005.0]
    assert p2["pts_percent"].tolist() == pytest.approx([10.0, 10.0, 0.0])
    # the node's injection stall: the larger of its ports over each piece of time
    nodes = injection_stall(frame, tick_ns=4)
    assert nodes["t0_s"].tolist() == [1000.0, 1001.0, 1004.0]
    assert nodes["pts_percent"].tolist() == pytest.approx([25.0, 10.0, 50.0])


def test_ib_saturated_value_gives_no_delta_and_a_64_bit_counter_does_not_wrap():
    frame = make_frame(
        [0, 1, 2, 0, 1],
        ["h:d"] * 5,
        ["1"] * 5,
        ["port_xmit_wait"] * 3 + ["port_xmit_data"] * 2,
        [4294967000, 4294967295, 4294967295, 2**40, 5],
        ["ticks"] * 3 + ["octets4"] * 2,
    )
    events = []
    deltas = counter_deltas(frame, events=events)
    wait = deltas[deltas["counter"] == "port_xmit_wait"]
    assert wait["status"].tolist() == ["saturated", "saturated"]
    assert wait["delta"].isna().all()
    data = deltas[deltas["counter"] == "port_xmit_data"]
    assert data["status"].tolist() == ["reset"]  # a drop of a 64-bit counter is no wrap


def test_ib_tree_one_sample_and_missing_counters_directory():
    frame = read_counters(FIX / "ib" / "sysfs", host="n1", time_s=12.5)
    assert set(frame["time_s"]) == {12.5}
    assert len(frame) == 18  # 3 ports x 6 counters
    row = frame[(frame["component"] == "n1:mlx5_1") & (frame["counter"] == "port_xmit_data")]
    assert row["value"].tolist() == [123456789012.0]
    with pytest.raises(TelemetryError, match=r"mlx5_0/ports/2/counters: no such directory"):
        ib_sysfs.Tree(FIX / "ib" / "sysfs-missing", host="n1")
    with pytest.raises(TelemetryError, match=r"no device mlx5_9 \(found: mlx5_0, mlx5_1\)"):
        ib_sysfs.Tree(FIX / "ib" / "sysfs", devices=["mlx5_9"])


def test_ib_snapshot_malformed_line():
    msg = malformed(FIX / "ib" / "snapshot-malformed.txt", 6)
    assert "12x" in msg


# ------------------------------------------------------------------ cxi


def test_cxi_snapshot_wrap_reset_and_pause_classes():
    path = FIX / "cxi" / "snapshot.txt"
    assert detect_source(path) == "cxi"
    frame = read_counters(path)
    assert set(frame["unit"].astype(str)) == {"cycles"}
    # the files of one round share one time: the median of their timestamps
    rounds = frame[frame["component"] == "node07:cxi0"].groupby("time_s").size()
    assert rounds.tolist() == [3] * 5
    assert rounds.index[0] == pytest.approx(1700000000.000002, abs=1e-6)
    events = []
    out = stall_intervals(frame, events=events)
    # class 0 wraps (25 %), class 1 is larger in the second interval (40 %),
    # the reset of class 0 drops the third interval
    assert pts_of(out, "node07:cxi0") == [25.0, 40.0, 10.0]
    assert pts_of(out, "node07:cxi1") == [1.0, 1.0, 1.0, 1.0]
    assert events_of(events, "wrap") == [("node07:cxi0", "", "hni_tx_paused_0")]
    assert events_of(events, "reset") == [("node07:cxi0", "", "hni_tx_paused_0")]
    nodes = injection_stall(frame)
    assert set(nodes["node"]) == {"node07"}
    assert nodes["pts_percent"].tolist() == pytest.approx([25.0, 40.0, 1.0, 10.0])


def test_cxi_wrap_delta_is_exact_for_56_bit_values():
    frame = make_frame(
        [0.0, 1.0],
        ["h:cxi0"] * 2,
        "",
        ["hni_tx_paused_0"] * 2,
        [2**56 - 200, 100],
        ["cycles"] * 2,
    )
    deltas = counter_deltas(frame)
    assert deltas["status"].tolist() == ["wrap"]
    assert deltas["delta"].tolist() == [300.0]


def test_cxi_tree_and_missing_telemetry_directory():
    frame = read_counters(FIX / "cxi" / "sysfs", host="n9")
    assert len(frame) == 8
    assert set(frame["component"].astype(str)) == {"n9:cxi0", "n9:cxi1"}
    # one time per device and round
    assert frame.groupby("component", observed=True)["time_s"].nunique().tolist() == [1, 1]
    with pytest.raises(TelemetryError, match=r"cxi0/device/telemetry: no such directory"):
        cxi_source.Tree(FIX / "cxi" / "sysfs-missing")
    assert cxi_source.parse_value("17@1700000000.5") == (17, pytest.approx(1700000000.5))
    assert cxi_source.parse_value("17") is None


def test_cxi_snapshot_malformed_line():
    msg = malformed(FIX / "cxi" / "snapshot-malformed.txt", 3)
    assert "<value>@<seconds>.<nanoseconds>" in msg


# ------------------------------------------------------------------ LDMS


def test_ldms_ibmad_saturation_reset_and_rate_columns_left_out():
    path = FIX / "ldms" / "ibmad.csv"
    assert detect_source(path) == "ldms"
    frame = read_counters(path)
    counters = set(frame["counter"].astype(str))
    assert "port_xmit_wait" in counters and not any(c.endswith(".rate") for c in counters)
    assert set(frame["component"].astype(str)) == {"node01:mlx5_0", "node02:mlx5_0"}
    assert set(frame["port"].astype(str)) == {"1"}
    assert frame["time_s"].min() == pytest.approx(1700000000.0001)
    events = []
    out = stall_intervals(frame, tick_ns=4, events=events)
    assert pts_of(out, "node01:mlx5_0", "1") == [20.0, 10.0]
    assert pts_of(out, "node02:mlx5_0", "1") == [1.0, 1.0, 1.0]
    # node02's set is missing at 1700000002: one 2 s interval
    n2 = out[out["component"] == "node02:mlx5_0"]
    assert (n2["interval_ns"] / 1e9).round(6).tolist() == [1.0, 2.0, 1.0]
    assert [e["event"] for e in events] == ["saturated", "reset"]


def test_ldms_sysclassib_time_msec_and_port_suffix():
    frame = read_counters(FIX / "ldms" / "sysclassib.csv")
    assert set(frame["component"].astype(str)) == {"node03:mlx4_0"}
    assert frame["time_s"].min() == pytest.approx(1700000000.00025)
    out = stall_intervals(frame, tick_ns=4)
    assert pts_of(out, "node03:mlx4_0", "1") == [50.0]


def test_ldms_aries_stall_flit_ratio_reset_and_router_tiles():
    nic = read_counters(FIX / "ldms" / "aries_nic.csv")
    units = dict(zip(nic["counter"].astype(str), nic["unit"].astype(str)))
    assert units["AR_NIC_NETMON_ORB_EVENT_CNTR_REQ_FLITS"] == "flits"
    assert units["AR_NIC_NETMON_ORB_EVENT_CNTR_REQ_STALLED"] == "cycles"
    events = []
    out = stall_intervals(nic, events=events)
    assert pts_of(out, "nid00012") == [25.0, 0.0, 50.0]
    assert pts_of(out, "nid00013") == [0.0, 50.0]  # the reset interval left out
    assert events_of(events, "reset") == [
        ("nid00013", "", "AR_NIC_NETMON_ORB_EVENT_CNTR_REQ_FLITS")
    ]
    nodes = injection_stall(nic)
    assert sorted(set(nodes["node"])) == ["nid00012", "nid00013"]
    # read as cycles of a 1 GHz clock: 1000 stalled cycles in 1 s = 0.0001 %
    cyc = stall_intervals(nic, aries_clock_hz=1e9)
    assert pts_of(cyc, "nid00012")[0] == pytest.approx(1e-4)
    rtr = read_counters(FIX / "ldms" / "aries_rtr.csv")
    assert set(rtr["component"].astype(str)) == {"c0-0c0s3a0"}
    out = stall_intervals(rtr)
    assert pts_of(out, "c0-0c0s3a0", "0_0") == [50.0, 0.0]
    assert pts_of(out, "c0-0c0s3a0", "0_1") == [0.0, 50.0]
    assert injection_stall(rtr).empty  # router tiles are no injection links


def test_ldms_malformed_line():
    msg = malformed(FIX / "ldms" / "ibmad-malformed.csv", 4)
    assert "18 fields, expected 17" in msg


# ------------------------------------------------------------------ emulated cluster


def test_cluster_packet_wrap_reset_and_backlog_analog():
    path = FIX / "cluster" / "stats.csv"
    assert detect_source(path) == "cluster"
    frame = read_counters(path)
    assert set(frame["port"].astype(str)) == {""}
    events = []
    deltas = counter_deltas(frame, events=events)
    n0 = deltas[deltas["component"] == "n000-egress"]
    pk = n0[n0["counter"] == "packets"]
    assert pk["delta"].tolist() == [496.0, 500.0, 500.0]
    assert pk["status"].tolist() == ["wrap", "ok", "ok"]
    by = n0[n0["counter"] == "bytes"]
    assert by["status"].tolist() == ["ok", "ok", "reset"]
    assert not (deltas["counter"] == "backlog_packets").any()  # gauges have no deltas
    out = stall_intervals(frame)
    # 100 L/(1+L), L = mean backlog in packets over the interval
    assert pts_of(out, "n000-egress") == [round(200 / 3, 6), 60.0, 0.0]
    assert pts_of(out, "n001-egress") == [0.0, round(450 / 5.5, 6), 90.0]
    up = out[out["component"] == "leaf0-uplink-up"]  # missing at 1 s
    assert list(zip(up["t0_s"], up["t1_s"])) == [(0.0, 2.0), (2.0, 3.0)]
    nodes = injection_stall(frame)
    assert sorted(set(nodes["node"])) == [0, 1]  # nIII-egress -> node III
    assert nodes[nodes["node"] == 1]["pts_percent"].tolist() == pytest.approx([0, 450 / 5.5, 90])


def test_cluster_malformed_line():
    msg = malformed(FIX / "cluster" / "stats-malformed.csv", 4)
    assert "'12k'" in msg


# ------------------------------------------------------------------ simulator


def test_sim_sparse_rows_filled_grid_vc_rows_and_injection():
    path = FIX / "sim" / "counters.csv"
    assert detect_source(path) == "sim"
    frame = read_counters(path)
    assert set(frame["port"].astype(str)) == {"0", "3"}  # per-VC rows dropped
    assert (
        dict(zip(frame["counter"].astype(str), frame["unit"].astype(str)))["occupancy_bytes"]
        == "bytes_gauge"
    )
    out = stall_intervals(frame)
    # grid 0, 100, 200, 300 (no rows there), 400, 450 us; every link every interval
    assert sorted(set(np.round(out["t0_s"] * 1e6, 6))) == [0, 100, 200, 300, 400]
    assert pts_of(out, "nic0", "0") == [25.0, 0.0, 0.0, 50.0, 0.0]
    assert pts_of(out, "g0.r0", "3") == [0.0, 10.0, 0.0, 0.0, 0.0]
    assert pts_of(out, "nic1", "0") == [0.0, 0.0, 0.0, 0.0, 40.0]
    sparse = stall_intervals(frame, dense=False)
    assert len(sparse) < len(out) and sparse["pts_percent"].max() == pytest.approx(50.0)
    nodes = injection_stall(frame)
    assert nodes["node"].dtype.kind == "i"
    assert nodes[nodes["node"] == 0]["pts_percent"].tolist() == pytest.approx(
        [25.0, 0.0, 0.0, 50.0, 0.0]
    )
    vcs = read_counters(path, keep_vcs=True)
    assert {"0/vc0", "0/vc1", "3/vc1"} <= set(vcs["port"].astype(str))


def test_sim_reset_is_left_out_not_a_wrap():
    events = []
    out = stall_intervals(read_counters(FIX / "sim" / "counters-reset.csv"), events=events)
    assert pts_of(out, "nic0", "0") == [25.0, 25.0, 10.0]
    assert [round(t * 1e6) for t in out["t0_s"]] == [0, 100, 300]
    assert events_of(events, "reset") == [("nic0", "0", "xmit_wait_ns")]
    assert not events_of(events, "wrap")


def test_sim_malformed_line():
    msg = malformed(FIX / "sim" / "counters-malformed.csv", 4)
    assert "7 fields, expected 6" in msg


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory, contend_bin):
    """A real simulator counter CSV: the GPCNeT mix on the default dragonfly."""
    tmp = tmp_path_factory.mktemp("simrun")
    counters = tmp / "run.counters.csv"
    proc = run_bounded(
        [
            contend_bin,
            "jobs",
            ROOT / "examples" / "jobs" / "gpcnet_mix.job",
            "--engine",
            "sim",
            "--seed",
            "1",
            "--counters",
            counters,
            "--counter-interval-us",
            "100",
            "-o",
            tmp / "run.json",
            "-q",
        ],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return counters


def _reference_pts(path, interval_s):
    """Per (component, port) the PTs of every grid interval, by plain loops: a
    port without a row at a sample kept its value, counters start at 0."""
    changes = defaultdict(list)
    last_t = 0.0
    with open(path) as fh:
        for row in csv.DictReader(fh):
            t = float(row["time_s"])
            last_t = max(last_t, t)
            if row["counter"] == "xmit_wait_ns" and row["vc"] == "":
                changes[(row["component"], row["port"])].append((t, float(row["value"])))
    n = math.floor(last_t / interval_s + 1e-6)
    grid = [k * interval_s for k in range(n + 1)]
    if last_t - grid[-1] > 1e-9:
        grid.append(last_t)
    out = {}
    for link, series in changes.items():
        values = []
        for g in grid:
            v = 0.0
            for t, val in series:
                if t <= g + 1e-12:
                    v = val
            values.append(v)
        out[link] = [
            100.0 * (values[i + 1] - values[i]) / ((grid[i + 1] - grid[i]) * 1e9)
            for i in range(len(grid) - 1)
        ]
    return out


def test_sim_real_run_matches_a_plain_loop(sim_run):
    frame = read_counters(sim_run)
    out = stall_intervals(frame)
    ref = _reference_pts(sim_run, 100e-6)
    assert len(ref) > 10
    got = {
        (c, p): list(g.sort_values("t0_s")["pts_percent"])
        for (c, p), g in out.groupby(["component", "port"], observed=True)
    }
    assert set(got) == set(ref)
    for link, values in ref.items():
        assert got[link] == pytest.approx(values, abs=1e-6), link
    # port-level xmit_wait_ns is the union over VCs: never more than the interval
    assert out["pts_percent"].between(0, 100 + 1e-6).all()
    assert out["pts_percent"].max() > 1.0  # the congestors do stall links


def test_injection_stall_on_a_real_sim_run(sim_run):
    frame = read_counters(sim_run)
    nodes = injection_stall(frame)
    links = stall_intervals(frame)
    nics = links[links["component"].astype(str).str.fullmatch(r"nic\d+")]
    assert sorted(set(nodes["node"])) == sorted({int(c[3:]) for c in nics["component"]})
    for node in sorted(set(nodes["node"]))[:5]:
        mine = nodes[nodes["node"] == node].sort_values("t0_s")
        link = nics[nics["component"] == f"nic{node}"].sort_values("t0_s")
        assert mine["pts_percent"].tolist() == pytest.approx(link["pts_percent"].tolist())
        assert mine["t1_s"].tolist() == pytest.approx(link["t1_s"].tolist())
    assert nodes["pts_percent"].max() > 1.0


# ------------------------------------------------------------------ format A


def test_common_csv_roundtrip_wrap_reset_missing_port(tmp_path):
    path = FIX / "csv" / "common.csv"
    assert detect_source(path) == "csv"
    frame = read_counters(path)
    assert list(frame.columns) == ["time_s", "component", "port", "counter", "value", "unit"]
    events = []
    out = stall_intervals(frame, tick_ns=10, events=events)
    assert pts_of(out, "host1:mlx5_0", "1") == [25.0, 50.0, 10.0]
    assert pts_of(out, "host1:mlx5_0", "2") == [10.0, 0.0]
    assert pts_of(out, "host1:cxi0") == [30.0]
    assert [e["event"] for e in events] == ["wrap", "reset"]
    again = read_counters(write_counters(frame, tmp_path / "copy.csv"))
    pd.testing.assert_frame_equal(frame, again)
    text = (tmp_path / "copy.csv").read_text().splitlines()
    assert text[0] == "time_s,component,port,counter,value,unit"
    assert "72057594037927736" in "\n".join(text)  # integers stay integers
    assert not list(tmp_path.glob(".*tmp"))


def test_common_csv_malformed_lines(tmp_path):
    malformed(FIX / "csv" / "common-malformed.csv", 3)
    head = "time_s,component,port,counter,value,unit\n"
    cases = {
        "1.0,c,1,x,5,\n": "field 'unit' is empty",
        "1.0,,1,x,5,ns\n": "field 'component' is empty",
        "1.0,c,1,x,5,ns,9\n": "7 fields, expected 6",
        "1.0,c,1,x,inf,ns\n": "not a finite number",
        "1.0,c,1,x,5,Nano Seconds\n": "is not one word",
    }
    for i, (line, what) in enumerate(cases.items()):
        path = tmp_path / f"bad{i}.csv"
        path.write_text(head + "0.5,c,1,x,4,ns\n\n" + line)
        assert what in malformed(path, 4)
    bad_head = tmp_path / "head.csv"
    bad_head.write_text("time,component,port,counter,value,unit\n")
    assert "expected 'time_s,component" in malformed(bad_head, 1, source="csv")
    assert "cannot tell the counter format" in malformed(bad_head, 1)


def test_frames_from_other_code_are_checked_and_sorted():
    with pytest.raises(TelemetryError, match="missing column"):
        stall_intervals(pd.DataFrame({"time_s": [0.0]}))
    # plain (non-categorical) columns in any order are accepted
    frame = pd.DataFrame(
        {
            "time_s": [1e-6, 0.0],
            "component": ["h:d", "h:d"],
            "port": ["1", "1"],
            "counter": ["port_xmit_wait", "port_xmit_wait"],
            "value": [25.0, 0.0],
            "unit": ["ticks", "ticks"],
        }
    )
    assert stall_intervals(frame, tick_ns=10)["pts_percent"].tolist() == pytest.approx([25.0])
    with pytest.raises(TelemetryError, match="wrap_bits"):
        counter_deltas(frame, wrap_bits=3)


def test_read_counters_refuses_unknown_source_and_parameters(tmp_path):
    with pytest.raises(TelemetryError, match="unknown source 'lmds'"):
        read_counters(FIX / "ldms" / "ibmad.csv", source="lmds")
    with pytest.raises(TelemetryError, match="unknown parameter"):
        read_counters(FIX / "ldms" / "ibmad.csv", keep_vcs=True)
    with pytest.raises(TelemetryError, match="no such file"):
        read_counters(tmp_path / "nope.csv")
    odd = tmp_path / "odd.csv"
    odd.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(TelemetryError, match=r"odd.csv:1: cannot tell the counter format"):
        read_counters(odd)


# ------------------------------------------------------------------ sampler


def test_sampler_writes_n_samples_from_a_fixture_tree(tmp_path):
    tree = ib_sysfs.Tree(FIX / "ib" / "sysfs", host="nodeX")
    out = tmp_path / "ib.csv"
    logs = []
    rounds, rows = sampler.run(tree, 0.02, out, count=3, log=logs.append)
    assert (rounds, rows) == (3, 54)
    frame = read_counters(out)
    times = sorted(set(frame["time_s"]))
    assert len(times) == 3 and times[1] - times[0] >= 0.015
    assert frame.groupby("time_s").size().tolist() == [18, 18, 18]
    wait = frame[(frame["component"] == "nodeX:mlx5_1") & (frame["counter"] == "port_xmit_wait")]
    assert wait["value"].tolist() == [4294967295.0] * 3
    assert not [p for p in Path(tmp_path).iterdir() if p.name != "ib.csv"]
    assert "3 samples" in logs[0]
