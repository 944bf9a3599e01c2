"""Every size a user controls in the C commands is bounded: refused before
any work (exit 2, one line naming the limit), in little time and memory
(each run here: at most 10 s and 1 GiB of address space)."""

import pytest
from refusal import assert_refused, listing, run

JOB_TAIL = "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] wl_allreduce\n"


def test_doubling_variables_stop_at_the_line_limit(tmp_path):
    """[VAR] V1={V0}{V0} ... 39 lines used to expand to hundreds of MB."""
    lines = ["[VAR] V0=xxxxxxxxxxxxxxxx"]
    lines += [f"[VAR] V{i}={{V{i - 1}}}{{V{i - 1}}}" for i in range(1, 40)]
    (tmp_path / "d.job").write_text("\n".join(lines) + "\n" + JOB_TAIL)
    before = listing(tmp_path)
    r = run(["jobs", "d.job", "--dry-run", "--nodes", "2"], cwd=tmp_path)
    # 16 x 2^16 = 1 MiB: line 17 defines V16, the first value past the limit
    assert_refused(r, "d.job:17:", "limit of 1048576 bytes", dirs=[tmp_path], before=[before])


def test_many_large_variables_stop_at_the_file_limit(tmp_path):
    """Each line under 1 MiB, together past 16 MiB of expanded text."""
    lines = ["[VAR] A=" + "x" * 1000, "[VAR] B={A}" + "{A}" * 511]  # 512 kB
    lines += [f"[VAR] C{i}={{B}}" for i in range(40)]
    (tmp_path / "m.job").write_text("\n".join(lines) + "\n" + JOB_TAIL)
    r = run(["jobs", "m.job", "--dry-run", "--nodes", "2"], cwd=tmp_path)
    assert_refused(r, "m.job:", "job file is longer than the limit of 16777216 bytes")


def test_job_file_size_is_bounded(tmp_path):
    with open(tmp_path / "big.job", "w") as f:
        f.write(JOB_TAIL)
        f.write(("# " + "c" * 1000 + "\n") * 17000)  # 17 MB of comments
    r = run(["jobs", "big.job", "--dry-run", "--nodes", "2"], cwd=tmp_path)
    assert_refused(r, "big.job", "limit of 16777216 bytes")


@pytest.mark.parametrize(
    "args",
    [
        ["load", "--dry-run", "--nodes", "10000000"],
        ["network", "--dry-run", "--nodes", "4", "--ranks-per-node", "100000"],
        ["network", "--engine", "sim", "--topology", "fattree:leaves=200,nodes=200,uplinks=4"],
    ],
)
def test_in_process_rank_counts_refused_up_front(args):
    """`load --dry-run --nodes 10000000` used to fail after seconds with
    "rank -1: cannot protect a fiber stack's guard page" (exit 3)."""
    r = run(args)  # under 1 GiB of address space, whatever vm.max_map_count is
    assert_refused(r, "ranks: the", "at most", "engine plays every rank")


def test_rank_limit_past_the_fixed_maximum():
    """Without an address-space limit the bound is 2^20 ranks per process
    (vm.max_map_count no longer is one: the stacks share a few mappings)."""
    r = run(["network", "--dry-run", "--nodes", "1048577", "-q"], memory=None)
    assert_refused(r, "--nodes 1048577 nodes", "at most 1048576 here", "fixed maximum of 1048576")


def test_rank_limit_follows_the_address_space_limit():
    """Under a 1 GiB address space the limit is what the stacks fit in."""
    r = run(["load", "--dry-run", "--nodes", "20000", "-q"], memory=1 << 30)
    assert_refused(r, "--nodes 20000 nodes", "address-space limit (ulimit -v) of 1024 MiB")


def test_topology_paths_pairs_and_links_bounded(tmp_path):
    """All pairs of 32768 nodes (10^9 pairs) used to take 18 s and 8 GB
    before running out of memory (exit 3)."""
    r = run(["topology", "paths", "--topology", "xgft:h=2,down=32,32,up=16,32", "--all-pairs"])
    assert_refused(r, "ordered pairs", "limit of 10000000")
    args = ["topology", "paths", "--topology", "fattree:leaves=32,nodes=32,uplinks=16"]
    args += ["--routing", "random", "--random-pairs", "1000000", "-o", "p.json"]
    r = run(args, cwd=tmp_path)
    assert_refused(r, "links, more than the limit of 40000000", "--max-paths")
    assert not list(tmp_path.iterdir())


def test_sim_packet_memory_bounded():
    r = run(["sim", "--topology", "switch:nodes=4", "--mtu", "1", "--buffer-bytes", "1000000"])
    assert_refused(r, "--buffer-bytes 1000000 B holds 1000000 packets", "limit of 65536")
    r = run(["sim", "--topology", "switch:nodes=4", "--source-queue", "1000000"])
    assert_refused(r, "--source-queue", "65536")


def test_jobs_samples_times_ranks_bounded(tmp_path):
    (tmp_path / "s.job").write_text(JOB_TAIL)
    args = ["jobs", "s.job", "--engine", "sim", "--topology", "switch:nodes=2"]
    r = run([*args, "--ranks-per-node", "4", "--samples", "5000000", "-o", "x.json"], cwd=tmp_path)
    assert_refused(r, "--samples 5000000 x 8 ranks", "limit of 10000000")
    assert not (tmp_path / "x.json").exists()


def test_placement_count_message_names_the_range(tmp_path):
    (tmp_path / "p.job").write_text(
        "[JOB_NAME] a\n[PLACEMENT] linear nodes=2000000000\n[MOTIF] wl_allreduce\n"
    )
    r = run(["jobs", "p.job", "--dry-run", "--nodes", "4"], cwd=tmp_path)
    assert_refused(r, "p.job:2:", "[1, 10000000]")


def test_job_file_values_and_io_paths_bounded(tmp_path):
    """Values were cut at 511 characters without a word (an I/O path then
    named another file); a path template must fit once expanded."""
    long = "x" * 600
    (tmp_path / "v.job").write_text(
        f"[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] io_write api=posix path={long}\n"
    )
    r = run(["jobs", "v.job", "--dry-run", "--nodes", "2"], cwd=tmp_path)
    assert_refused(r, "v.job:3:", "path has 600 characters", "limit of 511")
    (tmp_path / "t.job").write_text(
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] io_write api=posix path=" + "{job}" * 30 + "\n"
    )
    r = run(["jobs", "t.job", "--dry-run", "--nodes", "2"], cwd=tmp_path)
    assert_refused(r, "t.job:3:", "expands to up to", "limit of 1023")
