"""The PMPI throttle (libcontend-throttle.so) under `contend throttle`, on 2
Open MPI ranks of this host (docs/throttle.md).

The sender is tests/pmpi/throttle_sender.c (rank 0 -> rank 1 for a given
time); the `file:` counter source is a file these tests rewrite while the
job runs (a cumulative stall time in ns)."""

import csv
import io
import os
import threading
import time
from pathlib import Path

import pytest
from conftest import BUILD, mpi_env, mpirun_path, run_bounded

WARN = "contend-throttle: warning:"


def contend():
    path = BUILD / "bin" / "contend"
    if not path.exists():
        pytest.fail(f"{path} not built (set CONTEND_BUILD)")
    return path


def sender():
    path = BUILD / "bin" / "throttle_sender"
    if not path.exists():
        pytest.fail(f"{path} not built (set CONTEND_BUILD)")
    return path


def throttled(opts, prog, timeout=60):
    cmd = [mpirun_path(), "-n", "2", contend(), "throttle", *opts, "--", *prog]
    return run_bounded(cmd, timeout=timeout)


def sender_report(stdout):
    """The sender's line sent=N bytes=B seconds=S gbps=R as a dict of strings."""
    line = next(x for x in stdout.splitlines() if x.startswith("sent="))
    return dict(kv.split("=") for kv in line.split())


def achieved(stdout):
    return float(sender_report(stdout)["gbps"])


def read_log(path):
    text = Path(path).read_text()
    rows = list(
        csv.DictReader(io.StringIO("".join(x for x in text.splitlines(True) if x[0] != "#")))
    )
    assert rows, text
    return text, rows


def warnings(stderr):
    return [x for x in stderr.splitlines() if x.startswith(WARN)]


class StallWriter:
    """Rewrites `path` every 5 ms with a cumulative stall time (ns) that
    grows at `fraction` of real time from `start` s to `stop` s after
    the job started (its log part `started` exists, created at MPI_Init);
    afterwards an action can replace the file (garbage, removal)."""

    def __init__(self, path, fraction, start, stop, after=None, started=None):
        self.path, self.fraction, self.t = Path(path), fraction, (start, stop)
        self.after, self.started = after, started
        self.done = threading.Event()
        self.path.write_text("0\n")
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        limit = time.monotonic() + 30
        while self.started and not Path(self.started).exists() and time.monotonic() < limit:
            if self.done.wait(0.002):
                return
        t0 = time.monotonic()
        while not self.done.is_set():
            t = time.monotonic() - t0
            if self.after and t >= self.t[1]:
                self.after(self.path)
                return
            stalled = max(0.0, min(t, self.t[1]) - self.t[0]) * self.fraction * 1e9
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(f"{stalled:.0f}\n")
            os.replace(tmp, self.path)
            time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


# static:0.5 with 4 MiB messages: one message per slot of 67 ms
STATIC_GBPS, STATIC_BYTES = 0.5, 4 << 20
SLOT_S = 8 * STATIC_BYTES / (STATIC_GBPS * 1e9)


def test_static_rate_is_held(tmp_path):
    """static:0.5 holds a fast sender (loopback: tens of Gbit/s) at 0.5
    Gbit/s within 5 %, for Send and Isend, on a busy host too.

    The pacer gives each message a slot of bytes / R and makes up a late
    sender's lag within its slot (plus 1 ms): with 4 MiB messages a slot is
    67 ms, longer than a sleeping sender waits for a core on a loaded host
    (tens of ms; with 64 KiB slots of 1 ms it lost most of them and got a
    tenth of the rate).  The rate is that of the pacing, n messages over the
    n - 1 slots between the first and the last.  Load can only lower it, so
    the best of up to 3 runs counts; every run is checked never to exceed
    the limit, and the library's own log (load cannot inflate it) never to
    hold a message back longer than its slot: the injected delay is at most
    a slot per message, and is there."""
    for mode in ("send", "isend"):
        rates = []
        for attempt in range(3):
            log = tmp_path / f"{mode}{attempt}.csv"
            opts = ["--throttle", f"static:{STATIC_GBPS}", "--throttle-log", log]
            opts += ["--throttle-window-us", "100000"]
            r = throttled(opts, [sender(), str(STATIC_BYTES), "3", mode])
            assert r.returncode == 0, r.stderr
            report = sender_report(r.stdout)
            sent, seconds = int(report["sent"]), float(report["seconds"])
            assert sent >= 10, r.stdout
            rates.append(8 * STATIC_BYTES * (sent - 1) / seconds / 1e9)
            assert rates[-1] <= STATIC_GBPS * 1.05, (mode, rates)  # never above the limit
            _, rows = read_log(log)
            delay_s = sum(int(x["injected_delay_us"]) for x in rows if x["rank"] == "0") / 1e6
            # at most a slot per message (1 us of rounding each), and some
            assert 0 < delay_s <= sent * (SLOT_S + 1e-6), (mode, delay_s, sent * SLOT_S)
            if rates[-1] >= STATIC_GBPS * 0.95:
                break
        assert max(rates) >= STATIC_GBPS * 0.95, (mode, rates)


def test_control_communicator_is_not_throttled():
    """The same sender on a communicator named contend-control runs at full
    speed under a limit it would otherwise take 20x longer to meet."""
    r = throttled(["--throttle", "static:0.2"], [sender(), "65536", "0.5", "send", "control"])
    assert r.returncode == 0, r.stderr
    assert achieved(r.stdout) > 2, r.stdout  # 10x the limit
    r = throttled(["--throttle", "static:0.2"], [sender(), "65536", "0.5", "send", "measured"])
    assert r.returncode == 0, r.stderr
    assert achieved(r.stdout) < 0.2 * 1.05, r.stdout


def test_contend_network_paces_only_measured_calls(tmp_path):
    """Under the throttle, the calls it counts (every send-side call it would
    pace) are exactly the motif's Isends on contend-measured, as the PMPI
    counter finds them in the same run without it: contend's control traffic
    (Allreduce, Barrier, Reduce, Gather on contend-control) is never paced."""
    args = ["network", "--virtual-nodes", "1", "--canaries", "rr_lat", "--measurements", "2"]
    args += ["--rr_lat.iters", "50", "--rr_lat.warmup", "5", "--seed", "3", "-q"]
    args += ["--timeout", "10"]
    counter = BUILD / "lib" / "libcontend_pmpi_counter.so"
    cmd = [mpirun_path(), "-n", "2", "-x", f"LD_PRELOAD={counter}"]
    cmd += ["-x", f"CONTEND_PMPI_COUNT_DIR={tmp_path}", contend(), *args]
    r = run_bounded(cmd + ["-o", tmp_path / "a.json"], timeout=120)
    assert r.returncode == 0, r.stderr
    measured = control = 0
    for f in tmp_path.glob("rank*.txt"):
        for line in f.read_text().splitlines():
            comm, call, n = line.split("\t")
            if comm == "contend-measured" and call not in ("Recv", "Irecv"):
                measured += int(n)
            elif comm == "contend-control":
                control += int(n)
    assert measured > 0 and control > 0
    log = tmp_path / "t.csv"
    opts = ["--throttle", "static:0.05", "--throttle-log", log, "--throttle-window-us", "100000"]
    r = throttled(opts, [contend(), *args, "-o", tmp_path / "b.json"], timeout=120)
    assert r.returncode == 0, r.stderr
    _, rows = read_log(log)
    paced = sum(int(x["sends"]) for x in rows)
    assert paced == measured, (paced, measured, control)
    assert sum(int(x["injected_delay_us"]) for x in rows) > 0


def hand_sequence(rows, gain, ca, line, inc, thr=0.01, lo_frac=0.01):
    """alpha and R per row, recomputed from the logged signals (eq. 14-15)."""
    alpha, rate, out = 0.0, line, []
    for x in rows:
        if x["signal"] != "":
            s = float(x["signal"])
            alpha = (1 - gain) * alpha + gain * s
            rate = rate * (1 - alpha / (2 + ca)) if s > thr else rate + inc
            rate = min(max(rate, lo_frac * line), line)
        out.append((alpha, rate))
    return out


@pytest.mark.parametrize("mode, ca", [("dcqcn", 0.0), ("netscope", 4.6)])
def test_adaptive_cuts_under_stalls_and_recovers(tmp_path, mode, ca):
    stall = tmp_path / "stall"
    log = tmp_path / "log.csv"
    opts = ["--throttle", mode, "--throttle-ca", str(ca), "--throttle-source", f"file:{stall}"]
    opts += ["--throttle-window-us", "100000", "--throttle-line-gbps", "2"]
    opts += ["--throttle-gain", "0.5", "--throttle-increase-gbps", "0.4", "--throttle-log", log]
    opts += ["--throttle-seed", "7"]
    # stalls half of the time from 0.3 s to 1.3 s, then none
    with StallWriter(stall, 0.5, 0.3, 1.3, started=f"{log}.part0"):
        r = throttled(opts, [sender(), "65536", "2.6", "send"])
    assert r.returncode == 0, r.stderr
    assert not warnings(r.stderr), r.stderr
    text, rows = read_log(log)
    assert "seed=7" in text.splitlines()[0]
    for rank in ("0", "1"):
        mine = [x for x in rows if x["rank"] == rank]
        hand = hand_sequence(mine, 0.5, ca, 2.0, 0.4)
        for x, (alpha, rate) in zip(mine, hand):
            assert float(x["alpha"]) == pytest.approx(alpha, rel=1e-6, abs=1e-9), (x, alpha)
            assert float(x["rate_gbps"]) == pytest.approx(rate, rel=1e-6), (x, rate)
        signals = [float(x["signal"]) for x in mine if x["signal"] != ""]
        assert max(signals) == pytest.approx(0.5, abs=0.1), signals
        rates = [float(x["rate_gbps"]) for x in mine]
        assert min(rates) < (0.5 if mode == "dcqcn" else 1.5), rates  # cut
        assert rates[-1] == pytest.approx(2.0), rates  # recovered at +0.4 per window
    # the sender was held back while the rate was below its own speed
    assert sum(int(x["injected_delay_us"]) for x in rows if x["rank"] == "0") > 10000


def test_each_job_of_contend_jobs_takes_its_c_a(tmp_path):
    """One `contend jobs` process per rank runs two jobs (one rank each):
    contend's MPI engine tells the library which job the rank runs, and
    CONTEND_THROTTLE_CA=JOB=C_A gives each its own c_a: under the same node
    signal rank 0 (c_a 0) follows eq. 15 with c_a 0 and is cut more than
    rank 1 (c_a 50)."""
    job = tmp_path / "two.job"
    job.write_text(
        "[JOB_NAME] blunt\n[NID_LIST] 0\n[MOTIF] compute iters=1 mean=2.2\n"
        "[JOB_NAME] sensitive\n[NID_LIST] 1\n[MOTIF] compute iters=1 mean=2.2\n"
    )
    stall, log = tmp_path / "stall", tmp_path / "log.csv"
    opts = ["--throttle", "netscope", "--throttle-ca", "blunt=0,sensitive=50"]
    opts += ["--throttle-source", f"file:{stall}", "--throttle-window-us", "100000"]
    opts += ["--throttle-line-gbps", "2", "--throttle-gain", "0.5"]
    opts += ["--throttle-increase-gbps", "0.4", "--throttle-log", log]
    prog = [contend(), "jobs", job, "--virtual-nodes", "1", "-q", "-o", tmp_path / "j.json"]
    # stalls half of the time from 0.6 s on (after the jobs are set up)
    with StallWriter(stall, 0.5, 0.6, 3.0, started=f"{log}.part0"):
        r = throttled(opts, prog, timeout=90)
    assert r.returncode == 0, r.stderr
    _, rows = read_log(log)
    final = {}
    for rank, ca in (("0", 0.0), ("1", 50.0)):
        mine = [x for x in rows if x["rank"] == rank]
        assert sum(x["signal"] != "" and float(x["signal"]) > 0.3 for x in mine) >= 5
        for x, (alpha, rate) in zip(mine, hand_sequence(mine, 0.5, ca, 2.0, 0.4)):
            assert float(x["rate_gbps"]) == pytest.approx(rate, rel=1e-6), (rank, x, rate)
        final[rank] = min(float(x["rate_gbps"]) for x in mine)
    assert final["0"] < 0.5 * final["1"], final


def run_fault(tmp_path, env_extra, writer=None, seconds="1.2"):
    """The sender with the library preloaded directly (environment set by
    hand, as a batch script would)."""
    lib = BUILD / "lib" / "libcontend-throttle.so"
    env = mpi_env()
    env.update({k: str(v) for k, v in env_extra.items()})
    cmd = [mpirun_path(), "-n", "2", "-x", f"LD_PRELOAD={lib}"]
    for k in env_extra:
        cmd += ["-x", k]
    cmd += [sender(), "65536", seconds, "send"]
    if writer:
        with writer:
            return run_bounded(cmd, timeout=60, env=env)
    return run_bounded(cmd, timeout=60, env=env)


ADAPTIVE = {
    "CONTEND_THROTTLE": "dcqcn",
    "CONTEND_THROTTLE_WINDOW_US": "100000",
    "CONTEND_THROTTLE_LINE_GBPS": "10",
    "CONTEND_THROTTLE_GAIN": "0.5",
}


def test_fault_source_removed_mid_run(tmp_path):
    stall, log = tmp_path / "stall", tmp_path / "log.csv"
    env = dict(ADAPTIVE, CONTEND_THROTTLE_SOURCE=f"file:{stall}", CONTEND_THROTTLE_LOG=log)
    w = StallWriter(stall, 0.5, 0.0, 0.5, after=lambda p: p.unlink(), started=f"{log}.part0")
    r = run_fault(tmp_path, env, w, seconds="1.5")
    assert r.returncode == 0, r.stderr
    assert len(warnings(r.stderr)) == 1 and "disappeared" in r.stderr, r.stderr
    _, rows = read_log(log)
    assert min(float(x["rate_gbps"]) for x in rows) < 10  # it throttled before
    assert float(rows[-1]["rate_gbps"]) == 10  # and is off (line rate) after


def test_fault_garbage_windows_are_ignored(tmp_path):
    stall, log = tmp_path / "stall", tmp_path / "log.csv"
    seq = ["abc\n", "nan\n", "5\n", "1\n"]  # not a number, NaN, then a decrease

    def garbage(p):
        for text in seq:
            p.write_text(text)
            time.sleep(0.15)

    env = dict(ADAPTIVE, CONTEND_THROTTLE_SOURCE=f"file:{stall}", CONTEND_THROTTLE_LOG=log)
    r = run_fault(tmp_path, env, StallWriter(stall, 0.0, 0.0, 0.3, garbage, f"{log}.part0"), "1.4")
    assert r.returncode == 0, r.stderr
    assert len(warnings(r.stderr)) == 1 and "garbage window" in r.stderr, r.stderr
    _, rows = read_log(log)
    assert all(float(x["rate_gbps"]) == 10 for x in rows)  # nothing cut on garbage
    assert any(x["signal"] == "" for x in rows[3:])  # those windows had no signal


STATIC_SLOW = {"CONTEND_THROTTLE": "static:0.05", "CONTEND_THROTTLE_WINDOW_US": "100000"}


@pytest.mark.parametrize(
    "env, why",
    [
        # a static limit that would hold the sender to 0.05 Gbit/s, switched off
        (dict(STATIC_SLOW, CONTEND_THROTTLE_WINDOW_US="0"), "CONTEND_THROTTLE_WINDOW_US"),
        (dict(STATIC_SLOW, CONTEND_THROTTLE="fastest"), "'fastest' is not valid"),
        # dcqcn without its source: no control window ever runs (empty log)
        ({"CONTEND_THROTTLE_SOURCE": "file:/nonexistent/stall"}, "/nonexistent/stall"),
        (
            {"CONTEND_THROTTLE_SOURCE": "auto", "CONTEND_THROTTLE_SYSFS_ROOT": "/nonexistent"},
            "no counter source",
        ),
    ],
)
def test_fault_bad_environment_turns_it_off(tmp_path, env, why):
    log = tmp_path / "log.csv"
    full = {**ADAPTIVE, "CONTEND_THROTTLE_LOG": log, **env}
    r = run_fault(tmp_path, full)
    assert r.returncode == 0, r.stderr
    w = warnings(r.stderr)
    assert len(w) == 1 and why in w[0] and "throttling off" in w[0], r.stderr
    if env.get("CONTEND_THROTTLE_SOURCE"):
        text = log.read_text()
        assert text.splitlines()[1].startswith("time_s,") and len(text.splitlines()) == 2, text
    else:
        assert achieved(r.stdout) > 0.5  # 10x the limit it would have had


def test_ib_source_from_a_sysfs_tree(tmp_path):
    """auto finds ib:mlx5_0:1 in a fixture tree; its rate file gives the line
    rate; port_xmit_wait growing at 1/4 of the window x 4 ns ticks cuts."""
    port = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    (port / "counters").mkdir(parents=True)
    (port / "rate").write_text("25 Gb/sec (1X EDR)\n")
    wait = port / "counters" / "port_xmit_wait"
    log = tmp_path / "log.csv"
    opts = ["--throttle", "dcqcn", "--throttle-sysfs-root", tmp_path, "--throttle-log", log]
    opts += ["--throttle-window-us", "100000", "--throttle-gain", "0.5"]
    # ticks of 4 ns: 0.25 of real time stalled = 0.0625e9 ticks per second
    with StallWriter(wait, 0.25 / 4, 0.0, 10, started=f"{log}.part0"):
        r = throttled(opts, [sender(), "65536", "0.8", "send"])
    assert r.returncode == 0, r.stderr
    assert "source auto" in r.stderr and "line 25 Gbit/s" in r.stderr, r.stderr
    _, rows = read_log(log)
    sig = [float(x["signal"]) for x in rows if x["signal"] != "" and x["rank"] == "0"]
    # the writer starts once the library has begun (its log part exists): the
    # first window may hold little of its stall; every later one all of it
    assert len(sig) >= 5 and all(abs(s - 0.25) < 0.08 for s in sig[1:]), sig
    assert sig[0] <= 0.25 + 0.08, sig
    assert float(rows[-1]["rate_gbps"]) < 25


@pytest.mark.parametrize(
    "args, why",
    [
        (["--throttle", "fast", "--", "true"], "throttle mode 'fast'"),
        (["--throttle", "netscope", "--throttle-ca", "-1", "--", "true"], "--throttle-ca '-1'"),
        (["--throttle-bogus", "1", "--", "true"], "throttle-bogus"),
        (["--throttle", "dcqcn"], "missing '-- CMD"),
        (["--throttle", "dcqcn", "--"], "missing the program"),
        (["--throttle-source", "ib:mlx5_0", "--", "true"], "throttle source 'ib:mlx5_0'"),
        (["--throttle-window-us", "0", "--", "true"], "throttle-window"),
    ],
)
def test_contend_throttle_bad_input(tmp_path, args, why):
    marker = tmp_path / "ran"
    args = [a if a != "true" else "touch" for a in args]
    if "touch" in args:
        args.append(marker)
    r = run_bounded([contend(), "throttle", *args], timeout=20)
    assert r.returncode == 2, r
    assert why in r.stderr and r.stderr.count("error:") == 1, r.stderr
    assert not marker.exists()


def test_contend_throttle_sets_the_environment(tmp_path):
    out = tmp_path / "env"
    cmd = [contend(), "throttle", "--throttle", "static:25%", "--throttle-seed", "9", "--"]
    cmd += ["sh", "-c", f"env > {out}"]
    r = run_bounded(cmd, timeout=20)
    assert r.returncode == 0, r.stderr
    env = dict(x.split("=", 1) for x in out.read_text().splitlines() if "=" in x)
    assert env["CONTEND_THROTTLE"] == "static:25%"
    assert env["CONTEND_THROTTLE_SEED"] == "9"
    assert env["LD_PRELOAD"].split(":")[0].endswith("lib/libcontend-throttle.so")
    helptext = run_bounded([contend(), "help"], timeout=20).stdout
    assert any(x.split()[:1] == ["throttle"] for x in helptext.splitlines()), helptext
