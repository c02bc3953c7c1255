"""A real single-node SLURM on this machine, for the tests: munged, slurmctld
and slurmd started by hand (there is no systemd), with their own config,
sockets, ports and state under a temporary folder, stopped by their PIDs.
Needs Debian's slurm-wlm and munge, and root (slurmd runs jobs as root)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue")
# Snakemake's SLURM job step drops SLURM_* variables (SLURM_CONF among them)
# before its nested srun, which then reads the default location: the test
# cluster's config goes there for its lifetime.
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")

CONFIG = """\
ClusterName=dlbench-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge}/munge.socket.2
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmctldPort={port}
SlurmdPort={port_d}
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName={host} CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def missing():
    """Why no SLURM can start here, or None."""
    absent = [name for name in DAEMONS if shutil.which(name) is None]
    if absent:
        return "not installed: {} (Debian: apt-get install slurm-wlm munge)".format(absent)
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs"
    if DEFAULT_CONF.exists():
        return "{} exists (a real SLURM here?): not replacing it".format(DEFAULT_CONF)
    return None


def install_executor_plugin(folder, repo):
    """The project's ``slurm`` extra (Snakemake's SLURM executor and job
    step plugins, as a cluster user installs them) in ``folder``, for
    PYTHONPATH: the main environment holds neither, since Snakemake imports
    every executor plugin it finds at each start. Their own dependencies are
    the main environment's."""
    pyproject = tomllib.loads((Path(repo) / "pyproject.toml").read_text())
    pins = pyproject["project"]["optional-dependencies"]["slurm"]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(folder)]
        + pins,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError("pip could not install {}:\n{}".format(pins, done.stderr[-3000:]))
    return str(folder)


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster(object):
    def __init__(self, root):
        self.root = Path(root)
        # munged runs as the munge user, who cannot enter a private test folder
        self.munge = Path(tempfile.mkdtemp(prefix="dlbench-munge-"))
        self.processes = []
        self.env = dict(os.environ, SLURM_CONF=str(self.root / "slurm.conf"))

    def start(self, timeout_s=60):
        root = self.root
        for folder in ("state", "spool"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        os.chmod(str(self.munge), 0o755)
        shutil.chown(str(self.munge), "munge", "munge")
        port = _free_port()
        memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        DEFAULT_CONF.parent.mkdir(parents=True, exist_ok=True)
        DEFAULT_CONF.write_text(
            CONFIG.format(
                host=socket.gethostname(),
                root=root,
                munge=self.munge,
                port=port,
                port_d=_free_port(),
                cpus=os.cpu_count(),
                memory=int(memory_mb * 0.8),
            )
        )
        (root / "slurm.conf").symlink_to(DEFAULT_CONF)
        munge = self.munge
        subprocess.run(
            ["runuser", "-u", "munge", "--", "munged", "--num-threads=4"]
            + ["--socket={}/munge.socket.2".format(munge), "--pid-file={}/munged.pid".format(munge)]
            + ["--log-file={}/munged.log".format(munge), "--seed-file={}/seed".format(munge)],
            check=True,
        )
        for daemon in ("slurmctld", "slurmd"):
            log = open(str(root / "{}.out".format(daemon)), "w")
            self.processes.append(
                subprocess.Popen(
                    [daemon, "-D", "-f", str(root / "slurm.conf")],
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            state = subprocess.run(
                ["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True
            ).stdout.strip()
            if state == "idle":
                return self
            time.sleep(1)
        self.stop()
        raise RuntimeError("SLURM did not come up: " + self.logs())

    def logs(self):
        return "\n".join(
            path.name + ":\n" + path.read_text()[-2000:]
            for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out"))
        )

    def stop(self):
        for process in reversed(self.processes):
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        pid_file = self.munge / "munged.pid"
        if pid_file.exists():
            munged = int(pid_file.read_text().strip())
            try:
                os.kill(munged, signal.SIGTERM)
                # it writes its seed file as it exits: a folder removed before that stays behind
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    os.kill(munged, 0)
                    time.sleep(0.1)
            except ProcessLookupError:
                pass
        shutil.rmtree(str(self.munge), ignore_errors=True)
        if DEFAULT_CONF.exists():
            DEFAULT_CONF.unlink()
