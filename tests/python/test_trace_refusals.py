"""Archives a replay must refuse before anything runs (issue 33, acceptance
3): a truncated event file, random bytes, a directory that is not OTF2, a
rank-count mismatch, an unknown communicator, a peer outside its
communicator; and `contend record` refusing its options.  Each: exit 2,
one line naming the problem, nothing written."""

import os
from pathlib import Path

import pytest
from conftest import BUILD, otf2_built, run_bounded
from refusal import refused

FORGE = BUILD / "bin" / "otf2_forge"


@pytest.fixture(scope="module")
def forge():
    if not FORGE.exists():
        pytest.skip("built without OTF2")

    def make(d: Path, kind: str) -> Path:
        r = run_bounded([FORGE, d, kind], timeout=60)
        assert r.returncode == 0, r.stderr
        return d

    return make


def job(d: Path, archive: Path, ranks: int) -> Path:
    f = d / "replay.job"
    f.write_text(f"[JOB_NAME] app\n[NID_LIST] 0-{ranks - 1}\n[MOTIF] replay trace={archive}\n")
    return f


def refuse_replay(tmp_path: Path, archive: Path, ranks: int, *needles: str) -> str:
    work = tmp_path / "work"
    work.mkdir()
    f = job(work, archive, ranks)
    argv = ["jobs", f, "--dry-run", "--nodes", str(ranks), "-o", "plan.json"]
    line = refused(argv, work, needles[0], extra_dirs=[archive] if archive.is_dir() else [])
    for n in needles[1:]:
        assert n in line, (n, line)
    return line


def test_a_valid_forged_archive_replays(tmp_path, forge, contend_bin):
    """The control: the forged archives differ from a good one in one field."""
    archive = forge(tmp_path / "ok.trace", "ok")
    work = tmp_path / "w"
    work.mkdir()
    r = run_bounded(
        [contend_bin, "jobs", job(work, archive, 2), "--dry-run", "--nodes", "2", "-o", "p.json"],
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    assert (work / "p.json").exists()


def test_unknown_communicator(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "unknown-comm")
    refuse_replay(tmp_path, archive, 2, "unknown communicator 7", "rank 0", "MpiSend", str(archive))


def test_peer_outside_its_communicator(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "outside-comm")
    refuse_replay(tmp_path, archive, 2, "rank 5 outside communicator", "MpiSend")


def test_message_beyond_the_size_limit(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "huge-message")
    refuse_replay(tmp_path, archive, 2, "more than the limit of 1073741824", "MpiSend")


def test_ranks_beyond_the_limit(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "many-ranks")
    refuse_replay(tmp_path, archive, 2, "more than 65536 locations (the limit of ranks)")


def test_rank_count_mismatch(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "ok")
    refuse_replay(tmp_path, archive, 4, "recorded on 2 ranks, the job has 4")


def test_truncated_event_file(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "ok")
    evt = archive / "traces" / "1.evt"
    os.truncate(evt, evt.stat().st_size // 2)
    refuse_replay(tmp_path, archive, 2, str(archive), "rank 1")


def test_random_bytes(tmp_path):
    archive = tmp_path / "a.trace"
    archive.mkdir()
    (archive / "traces.otf2").write_bytes(os.urandom(4096))
    refuse_replay(tmp_path, archive, 2, str(archive), "not a readable OTF2 archive")


def test_corrupted_definitions(tmp_path, forge):
    archive = forge(tmp_path / "a.trace", "ok")
    (archive / "traces.def").write_bytes(os.urandom(2048))
    refuse_replay(tmp_path, archive, 2, str(archive), "definitions")


def test_a_fifo_in_the_archive_is_not_opened(tmp_path, forge):
    """A FIFO would block the reader: refused by its path, not opened."""
    archive = forge(tmp_path / "a.trace", "ok")
    evt = archive / "traces" / "1.evt"
    evt.unlink()
    os.mkfifo(evt)
    refuse_replay(tmp_path, archive, 2, f"{evt}: not a regular file")


def test_a_directory_that_is_not_otf2(tmp_path):
    archive = tmp_path / "notes"
    archive.mkdir()
    (archive / "README").write_text("not a trace\n")
    refuse_replay(tmp_path, archive, 2, "not an OTF2 archive")


def test_missing_trace_parameter(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "r.job").write_text("[JOB_NAME] app\n[NID_LIST] 0-1\n[MOTIF] replay\n")
    argv = ["jobs", "r.job", "--dry-run", "--nodes", "2", "-o", "plan.json"]
    refused(argv, work, "trace= is required")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["-o", "EXISTING", "--", "true"], "exists already"),
        (["--", "true"], "-o DIR is required"),
        (["-o", "new.trace"], "missing '-- CMD"),
        (["-o", "new.trace", "--"], "missing the program"),
        (["-o", "no/such/dir/new.trace", "--", "true"], "does not exist"),
        (["-o", "new.trace", "--compute-scale", "-1", "--", "true"], "compute"),
        (["-o", "new.trace", "--compute-cpu=maybe", "--", "true"], "--compute-cpu"),
    ],
)
def test_record_refuses(tmp_path, args, needle):
    if not otf2_built():
        pytest.skip("built without OTF2")
    (tmp_path / "EXISTING").mkdir()
    (tmp_path / "EXISTING" / "keep").write_text("mine\n")
    refused(["record", *args], tmp_path, needle)
