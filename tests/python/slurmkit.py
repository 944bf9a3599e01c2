"""A throw-away Slurm on this host for tests: munged, slurmctld and one
slurmd per node (Debian's slurm-wlm is built with multiple-slurmd support:
`slurmd -N NAME` plays node NAME), every node on this host's real short
hostname at 127.0.0.1, with all configuration, state, spool, logs, the munge
key and socket under one directory, and ports chosen free on 127.0.0.1.

The daemons run in the foreground as children of this process, each in its
own process group; stop() ends exactly those (and what they started, such
as slurmctld's slurmscriptd), never anything found by name.  srun starts MPI
ranks through PMIx (MpiDefault=pmix).  Each node has its own TmpFS (PMIx's
client directory is named after the job, the same on every node) and spool.

Contract: LocalSlurm(root, nodes).start() returns when every node is idle
(else raises SlurmError with the daemons' logs); env() is the environment
for sbatch/srun/squeue; stop() always returns with the daemons gone."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

PACKAGES = ("slurm-wlm", "munge")
COMMANDS = ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "munged")


class SlurmError(RuntimeError):
    pass


def missing_commands() -> list:
    return [c for c in COMMANDS if shutil.which(c) is None]


def ensure_installed() -> str:
    """Installs slurm-wlm and munge with apt-get when missing (as root);
    returns an empty string when Slurm is usable, else why not."""
    if not missing_commands():
        return ""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{', '.join(missing_commands())} not found and cannot apt-get install {PACKAGES}"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]
    r = None
    for _ in range(10):  # another apt-get may hold the dpkg lock for a while
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=900)
        if r.returncode == 0 or "lock" not in r.stderr:
            break
        time.sleep(15)
    if missing_commands():
        return f"apt-get install {' '.join(PACKAGES)} failed: {r.stderr.strip()[-500:]}"
    return ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def short_hostname() -> str:
    """This host's short name, which must resolve (slurmd checks it)."""
    name = socket.gethostname().split(".")[0]
    socket.gethostbyname(name)  # raises when /etc/hosts and DNS do not know it
    return name


def node_hardware() -> str:
    """The hardware part of a NodeName line, as `slurmd -C` sees this host."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"(\w+)=(\S+)", out.splitlines()[0]))
    keys = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
    return " ".join(f"{k}={fields[k]}" for k in keys) + " RealMemory=1000"


class LocalSlurm:
    def __init__(self, root: Path, nodes: int = 2):
        self.root = Path(root)
        self.nodes = [f"n{i + 1}" for i in range(nodes)]
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.sock"
        self.procs: dict[str, subprocess.Popen] = {}

    # -- the environment the Slurm commands need ---------------------------
    def env(self, **extra) -> dict:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def _spawn(self, name: str, cmd: list) -> None:
        log = open(self.root / "log" / f"{name}.out", "w")  # noqa: SIM115 (the child owns it)
        self.procs[name] = subprocess.Popen(
            [str(c) for c in cmd],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env(),
            start_new_session=True,
        )
        log.close()

    def logs(self) -> str:
        parts = []
        for f in sorted((self.root / "log").glob("*")):
            parts.append(f"--- {f.name}\n{f.read_text(errors='replace')[-2000:]}")
        return "\n".join(parts)

    # -- start: munged, slurmctld, slurmd per node ----------------------------
    def _write_conf(self, host: str) -> None:
        ctld_port = free_port()
        hw = node_hardware()
        r = self.root
        lines = [
            "ClusterName=contendtest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}/%n",
            f"TmpFS={r / 'tmp'}/%n",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'spool'}/slurmd-%n.pid",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log'}/slurmd-%n.log",
            "MailProg=/bin/true",
            "ProctrackType=proctrack/pgid",
            "TaskPlugin=task/affinity",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=pmix",
            "ReturnToService=2",
            "SlurmdTimeout=60",
            "InactiveLimit=0",
            "KillWait=5",
            "MinJobAge=600",
        ]
        for node in self.nodes:
            lines.append(
                f"NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 Port={free_port()} {hw}"
            )
        lines.append(
            f"PartitionName=debug Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE "
            "State=UP OverSubscribe=FORCE:4"
        )
        self.conf.write_text("\n".join(lines) + "\n")

    def start(self, timeout: float = 60) -> LocalSlurm:
        host = short_hostname()
        for d in ("munge", "state", "spool", "tmp", "log"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        for node in self.nodes:
            (self.root / "spool" / node).mkdir(exist_ok=True)
            (self.root / "tmp" / node).mkdir(exist_ok=True)
        os.chmod(self.root / "munge", 0o711)  # munged wants the socket's directory searchable
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        self._write_conf(host)
        try:
            m = self.root / "munge"
            self._spawn(
                "munged",
                [
                    "munged",
                    "--foreground",
                    "--force",  # root, and a key outside /etc/munge
                    f"--socket={self.munge_socket}",
                    f"--key-file={key}",
                    f"--log-file={self.root / 'log' / 'munged.log'}",
                    f"--pid-file={m / 'munged.pid'}",
                    f"--seed-file={m / 'munged.seed'}",
                ],
            )
            self._wait(lambda: self.munge_socket.exists(), timeout, "munged's socket")
            self._spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
            for node in self.nodes:
                self._spawn(f"slurmd-{node}", ["slurmd", "-D", "-N", node, "-f", self.conf])
            self._wait(self._all_idle, timeout, "every node idle")
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise SlurmError(
                    f"{', '.join(dead)} exited while waiting for {what}\n{self.logs()}"
                )
            if ready():
                return
            time.sleep(0.5)
        raise SlurmError(f"timed out after {timeout} s waiting for {what}\n{self.logs()}")

    def _all_idle(self) -> bool:
        r = self.run(["sinfo", "-h", "-N", "-o", "%N %T"], check=False)
        states = dict(line.split() for line in r.stdout.splitlines() if line.strip())
        return all(states.get(n) == "idle" for n in self.nodes)

    # -- jobs ------------------------------------------------------------------
    def run(self, cmd, check=True, timeout=60, **extra_env) -> subprocess.CompletedProcess:
        r = subprocess.run(
            [str(c) for c in cmd],
            capture_output=True,
            text=True,
            env=self.env(**extra_env),
            timeout=timeout,
            check=False,
        )
        if check and r.returncode != 0:
            raise SlurmError(f"{' '.join(map(str, cmd))}: {r.stderr.strip()}")
        return r

    def sbatch(self, args: list, cwd: Path, env: dict) -> str:
        """Submits; returns the job id.  env: the job's variables (exported)."""
        r = subprocess.run(
            ["sbatch", "--parsable", *[str(a) for a in args]],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=self.env(**env),
            timeout=60,
            check=False,
        )
        if r.returncode != 0:
            raise SlurmError(f"sbatch {args}: {r.stderr.strip()}")
        return r.stdout.strip().split(";")[0]

    def job_states(self, job: str) -> list:
        """scontrol's fields of a job (JobState, ExitCode, NodeList, ...); one
        dict per array task for a job array."""
        out = self.run(["scontrol", "show", "job", "-o", job]).stdout
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines() if line]

    def wait_job(self, job: str, timeout: float) -> list:
        """Waits until the job (every task of an array) has ended; returns
        job_states().  On timeout cancels it and raises."""
        running = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = self.job_states(job)
            if states and all(st["JobState"] not in running for st in states):
                return states
            time.sleep(1)
        self.run(["scancel", job], check=False)
        raise SlurmError(f"job {job} still running after {timeout} s\n{self.logs()}")

    # -- stop --------------------------------------------------------------------
    def stop(self) -> None:
        """Cancels the jobs, then ends the daemons this object started (SIGTERM,
        then SIGKILL to their process groups).  Idempotent."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run(["scancel", "--full", "-u", "root"], check=False)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                r = self.run(["squeue", "-h", "-o", "%i"], check=False)
                if r.returncode != 0 or not r.stdout.strip():
                    break
                time.sleep(0.5)
        # slurmds first (they end their job steps), then the controller, munge last
        for name in sorted(self.procs, key=lambda n: (n == "munged", n == "slurmctld")):
            _end_group(self.procs[name])
        self.procs.clear()


def _end_group(proc: subprocess.Popen, grace: float = 15) -> None:
    """Ends a daemon started with start_new_session and what it left in its
    process group.  The leader is not reaped until the group is killed, so
    its id (the group's) cannot have been reused meanwhile."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            break
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
