"""Bad input the C commands used to accept (exit 0): each is refused before
any work, exit 2, one line naming the problem."""

import pytest
from refusal import assert_refused, listing, run


@pytest.mark.parametrize(
    "traffic, why",
    [
        ("flow:src=0,dst=0", "src and dst are the same node"),
        ("incast:senders=,dst=0", "the senders list is empty"),
        ("incast:senders=2,dst=2", "every sender is dst itself"),
        ("uniform:nodes=", "the nodes list is empty"),
        ("shift:4", "a shift by a multiple of the node count"),
        ("a=uniform;b=flow:src=3,dst=3", "src and dst are the same node"),
        ("flow:src=0,dst=1;" * 300, "more than the limit of 4095"),
        ("n" * 48 + "=uniform", "more than 47"),
    ],
)
def test_sim_traffic_that_sends_nothing(tmp_path, traffic, why):
    """Such a component measured nothing: `contend sim` printed null (nan)
    latencies and exited 0."""
    before = listing(tmp_path)
    args = ["sim", "--topology", "switch:nodes=4", "--traffic", traffic, "--measure-us", "1"]
    r = run([*args, "-o", "s.json"], cwd=tmp_path)
    assert_refused(r, "--traffic", why, dirs=[tmp_path], before=[before])


def test_sim_traffic_that_sends_is_accepted(tmp_path):
    args = ["sim", "--topology", "switch:nodes=4", "--measure-us", "1", "-q"]
    r = run([*args, "--traffic", "incast:senders=0-3,dst=0;f=flow:src=1,dst=2"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["version", "--bogus"], ["contend version", "'--bogus'"]),
        (["version", "extra"], ["'extra'"]),
        (["list", "bogus_test"], ["unknown test 'bogus_test'", "rr_lat"]),
        (["list", "--bogus"], ["unknown option '--bogus'"]),
    ],
)
def test_version_and_list_refuse_arguments(args, words):
    r = run(args)
    assert_refused(r, *words)
    assert r.stdout == ""


def test_list_names_tests():
    r = run(["list", "rr_lat", "p2p-incast"])
    assert r.returncode == 0, r.stderr
    heads = [x.split()[1] for x in r.stdout.splitlines() if x.startswith(("canary", "congestor"))]
    assert heads == ["rr_lat", "p2p_incast"], r.stdout
    assert run(["version", "--help"]).returncode == 0


@pytest.mark.parametrize("spec", ["a=1,a=2", "a=1,b=2,b=3"])
def test_throttle_ca_job_given_twice(tmp_path, spec):
    marker = tmp_path / "ran"
    r = run(["throttle", "--throttle", "netscope", "--throttle-ca", spec, "--", "touch", marker])
    assert_refused(r, "--throttle-ca", "is given twice")
    assert not marker.exists()
    (tmp_path / "j.job").write_text("[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] wl_allreduce\n")
    args = ["jobs", "j.job", "--engine", "sim", "--topology", "switch:nodes=2"]
    r = run([*args, "--throttle", "netscope", "--throttle-ca", spec], cwd=tmp_path)
    assert_refused(r, "--throttle-ca", "is given twice")
    assert run(["throttle", "--throttle-ca", "a=1,ab=2", "--", "true"]).returncode == 0


@pytest.mark.parametrize(
    "text, cycle",
    [
        ("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "'a' -> 'b' -> 'a'"),
        (
            "SwitchName=s0 Nodes=n[0-3] Switches=t\nSwitchName=t Switches=s0\n",
            "'s0' -> 't' -> 's0'",
        ),
    ],
)
def test_cyclic_topology_conf_names_the_cycle(tmp_path, text, cycle):
    """A cycle of switches without nodes used to say only "no Nodes="."""
    (tmp_path / "t.conf").write_text(text)
    for args in (
        ["topology", "show", "t.conf"],
        ["sim", "--topology", "slurm:t.conf"],
        ["jobs", "x.job", "--dry-run", "--nodes", "2", "--topology-conf", "t.conf"],
    ):
        if args[0] == "jobs":
            (tmp_path / "x.job").write_text("[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] barrier\n")
        r = run(args, cwd=tmp_path)
        assert_refused(r, "the switches form a cycle: " + cycle)
