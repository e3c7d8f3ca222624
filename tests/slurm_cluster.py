"""A real one-node SLURM cluster on this machine, for the tests (Debian's SLURM 22.05).

:func:`start` runs every daemon a small site runs, each in the foreground as a child of
the test process, with its configuration, state, sockets, pid and log files in one
temporary folder:

- ``munged`` (authentication) on its own socket and key;
- ``mariadbd`` (a private MariaDB data folder) and ``slurmdbd``: the accounting database.
  ``sacct`` needs it: with ``AccountingStorageType=accounting_storage/none`` SLURM 22.05's
  ``sacct`` answers only "Slurm accounting storage is disabled" (measured), and the Snakemake
  SLURM executor asks ``sacct`` for every job's state. A job completion log
  (``JobCompType=jobcomp/filetxt``) is written as well;
- ``slurmctld`` and one ``slurmd`` whose node is this machine (its CPUs and memory as
  ``slurmd -C`` reports them), process tracking ``proctrack/linuxproc`` and ``task/none``
  (no cgroups).

Commands find the cluster through ``SLURM_CONF`` (:attr:`SlurmCluster.env`). Inside a job,
the Snakemake job-step executor drops every ``SLURM_*`` variable before it calls ``srun``,
so ``srun`` reads the default ``/etc/slurm/slurm.conf``, as on a real site: ``slurmd`` runs in
a private mount namespace in which this cluster's folder is bind-mounted on ``/etc/slurm``
(its jobs inherit that namespace; nothing changes for the rest of the machine).

Every daemon is stopped at the end, also when the block fails, and the folder removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SlurmCluster", "missing", "start"]

#: program -> the Debian package that provides it (Makefile: APT_TEST)
PROGRAMS = {
    "munged": "munge",
    "mungekey": "munge",
    "munge": "munge",
    "slurmctld": "slurmctld",
    "slurmd": "slurmd",
    "slurmdbd": "slurmdbd",
    "sbatch": "slurm-client",
    "sacct": "slurm-client",
    "sacctmgr": "slurm-client",
    "sinfo": "slurm-client",
    "scontrol": "slurm-client",
    "scancel": "slurm-client",
    "mariadbd": "mariadb-server-core",
    "mariadb-install-db": "mariadb-server-core",
    "mariadb": "mariadb-client-core",
    "my_print_defaults": "mariadb-client-core",
    "unshare": "util-linux",
}
SBIN = ("/usr/sbin", "/sbin")
CLUSTER = "tcprepro"
PARTITION = "tests"
ACCOUNT = "tcprepro"


def _which(program: str) -> str | None:
    return shutil.which(program) or shutil.which(
        program, path=os.pathsep.join([os.environ.get("PATH", ""), *SBIN])
    )


def missing() -> list[str]:
    """What this machine lacks to run the cluster: "program (Debian package)" entries."""
    out = [f"{prog} ({pkg})" for prog, pkg in PROGRAMS.items() if _which(prog) is None]
    if not Path("/etc/slurm").is_dir():
        out.append("/etc/slurm (slurm-client)")
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class SlurmCluster:
    """A running one-node cluster: its folder, the environment its commands need."""

    root: Path
    node: str
    cpus: int
    partition: str = PARTITION
    account: str = ACCOUNT
    _daemons: list[tuple[str, subprocess.Popen]] = field(default_factory=list, repr=False)

    @property
    def conf(self) -> Path:
        """The cluster's slurm.conf."""
        return self.root / "etc" / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """This process's environment with ``SLURM_CONF`` set to the cluster's config."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    @property
    def jobcomp_log(self) -> Path:
        """SLURM's job completion log (``jobcomp/filetxt``): one line per finished job."""
        return self.root / "log" / "jobcomp.txt"

    def run(self, *cmd: str, check: bool = True, timeout: float = 60) -> str:
        """Run a SLURM command against this cluster; its standard output."""
        result = subprocess.run(
            [_which(cmd[0]) or cmd[0], *cmd[1:]],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {result.stdout}{result.stderr}")
        return result.stdout

    def sacct(self) -> list[dict[str, str]]:
        """Every job the accounting database holds: id, name, account, partition, state."""
        fields = ["JobIDRaw", "JobName", "Account", "Partition", "State", "Elapsed", "ExitCode"]
        out = self.run(
            "sacct",
            "-X",
            "--parsable2",
            "--noheader",
            "--allusers",
            "--starttime",
            "2000-01-01",
            f"--format={','.join(fields)}",
        )
        return [dict(zip(fields, line.split("|"), strict=True)) for line in out.splitlines()]

    def log_tail(self, name: str, lines: int = 20) -> str:
        """The last lines of one daemon's log (for error messages)."""
        path = self.root / "log" / name
        if not path.exists():
            return f"({path} not written)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    # ---- start and stop ----

    def _spawn(self, name: str, cmd: list[str]) -> subprocess.Popen:
        out = open(self.root / "log" / f"{name}.out", "w")  # noqa: SIM115 (closed by the child)
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=self.root
        )
        out.close()
        self._daemons.append((name, proc))
        return proc

    def _wait(self, what: str, ready, log: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self._daemons:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited with {proc.returncode} while waiting for {what}:\n"
                        f"{self.log_tail(f'{name}.out')}\n{self.log_tail(log)}"
                    )
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                if ready():
                    return
            time.sleep(0.5)
        raise RuntimeError(
            f"timed out after {timeout:.0f} s waiting for {what}:\n{self.log_tail(log)}"
        )

    def stop(self) -> None:
        """Cancel every job, then stop the daemons in reverse order (TERM, then KILL)."""
        if any(name == "slurmctld" and proc.poll() is None for name, proc in self._daemons):
            with contextlib.suppress(Exception):
                self.run("scancel", "--full", "--user", "root", check=False, timeout=20)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and self.run(
                    "squeue", "--noheader", check=False, timeout=20
                ):
                    time.sleep(0.5)
        for _, proc in reversed(self._daemons):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=20)
        self._daemons.clear()


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.write_text(text)
    path.chmod(mode)


def _node_line() -> tuple[str, int]:
    """This machine as slurmd sees it (``slurmd -C``): the NodeName line and its CPUs."""
    out = subprocess.run(
        [_which("slurmd") or "slurmd", "-C"], capture_output=True, text=True, check=True
    ).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("NodeName="))
    fields = dict(item.split("=", 1) for item in line.split())
    return line, int(fields["CPUs"])


@contextlib.contextmanager
def start(timeout: float = 90) -> Iterator[SlurmCluster]:
    """Start munge, MariaDB, slurmdbd, slurmctld and slurmd; stop them all on exit.

    Must run as root (slurmd launches jobs; the mount namespace). Raises RuntimeError
    naming the daemon and quoting its log when one does not come up.
    """
    # not under pytest's tmp_path: munged wants every folder above its socket to be
    # searchable by all (pytest's base folder is private to its user)
    root = Path(tempfile.mkdtemp(prefix="tcprepro-slurm-"))
    root.chmod(0o755)
    for sub in ("etc", "log", "run", "state", "spool", "db", "munge"):
        (root / sub).mkdir()
    (root / "munge").chmod(0o700)
    node_line, cpus = _node_line()
    node = node_line.split()[0].split("=", 1)[1]
    cluster = SlurmCluster(root=root, node=node, cpus=cpus)
    ports = {name: _free_port() for name in ("slurmctld", "slurmd", "slurmdbd", "mariadb")}
    sock = root / "run" / "munge.sock"
    try:
        # --- munge: its own key and socket
        subprocess.run(
            [_which("mungekey"), "--create", "--keyfile", str(root / "munge/munge.key")],
            check=True,
            capture_output=True,
        )
        cluster._spawn(
            "munged",
            [
                _which("munged") or "munged",
                "--foreground",
                f"--key-file={root / 'munge/munge.key'}",
                f"--socket={sock}",
                f"--pid-file={root / 'run/munged.pid'}",
                f"--log-file={root / 'log/munged.log'}",
                f"--seed-file={root / 'munge/munged.seed'}",
            ],
        )

        def munge_ok() -> bool:
            return (
                sock.exists()
                and subprocess.run(
                    [_which("munge"), "--socket", str(sock), "--no-input"],
                    capture_output=True,
                    check=False,
                ).returncode
                == 0
            )

        cluster._wait("munged", munge_ok, "munged.log", timeout)

        # --- MariaDB for slurmdbd (a private data folder, TCP on 127.0.0.1 only)
        subprocess.run(
            [
                _which("mariadb-install-db"),
                "--no-defaults",
                f"--datadir={root / 'db'}",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
        )
        db_sock = root / "run" / "mariadb.sock"
        cluster._spawn(
            "mariadbd",
            [
                _which("mariadbd") or "mariadbd",
                "--no-defaults",
                f"--datadir={root / 'db'}",
                "--user=root",
                f"--socket={db_sock}",
                f"--port={ports['mariadb']}",
                "--bind-address=127.0.0.1",
                f"--pid-file={root / 'run/mariadb.pid'}",
                f"--log-error={root / 'log/mariadb.log'}",
                "--innodb-buffer-pool-size=64M",
            ],
        )

        def mariadb_ok() -> bool:
            return (
                subprocess.run(
                    [
                        _which("mariadb"),
                        "--no-defaults",
                        f"--socket={db_sock}",
                        "-uroot",
                        "-e",
                        "select 1",
                    ],
                    capture_output=True,
                    check=False,
                ).returncode
                == 0
            )

        cluster._wait("mariadbd", mariadb_ok, "mariadb.log", timeout)

        # --- slurmdbd (it reads slurmdbd.conf next to SLURM_CONF; must be 0600)
        auth = f"AuthType=auth/munge\nAuthInfo=socket={sock}\n"
        _write(
            root / "etc" / "slurmdbd.conf",
            auth
            + "DbdHost=localhost\nDbdAddr=127.0.0.1\n"
            + f"DbdPort={ports['slurmdbd']}\nSlurmUser=root\n"
            + f"PidFile={root / 'run/slurmdbd.pid'}\nLogFile={root / 'log/slurmdbd.log'}\n"
            + "StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\n"
            + f"StoragePort={ports['mariadb']}\nStorageUser=root\nStorageLoc=slurm_acct_db\n",
            0o600,
        )
        _write(
            cluster.conf,
            f"ClusterName={CLUSTER}\n"
            f"SlurmctldHost={node}(127.0.0.1)\n"
            f"SlurmctldPort={ports['slurmctld']}\nSlurmdPort={ports['slurmd']}\n"
            "SlurmUser=root\nSlurmdUser=root\n" + auth + "CredType=cred/munge\n"
            f"StateSaveLocation={root / 'state'}\nSlurmdSpoolDir={root / 'spool'}\n"
            f"SlurmctldPidFile={root / 'run/slurmctld.pid'}\n"
            f"SlurmdPidFile={root / 'run/slurmd.pid'}\n"
            f"SlurmctldLogFile={root / 'log/slurmctld.log'}\n"
            f"SlurmdLogFile={root / 'log/slurmd.log'}\n"
            # no cgroups: processes tracked through /proc, no task containment
            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
            "JobAcctGatherType=jobacct_gather/linux\n"
            # sacct reads slurmdbd; slurmdbd is reached with this cluster's munge socket
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            f"AccountingStorageHost=127.0.0.1\nAccountingStoragePort={ports['slurmdbd']}\n"
            f"AccountingStoragePass={sock}\n"
            f"JobCompType=jobcomp/filetxt\nJobCompLoc={cluster.jobcomp_log}\n"
            "SchedulerType=sched/backfill\n"
            # one job per core, several jobs on the node at once
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
            "MinJobAge=3600\nReturnToService=2\nMpiDefault=none\nSwitchType=switch/none\n"
            f"{node_line.split(' UpTime=')[0]} NodeAddr=127.0.0.1 State=UNKNOWN\n"
            f"PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP\n",
        )
        cluster._spawn("slurmdbd", [_which("slurmdbd") or "slurmdbd", "-D"])

        def slurmdbd_ok() -> bool:
            cluster.run("sacctmgr", "--noheader", "list", "cluster", timeout=10)  # raises
            return True

        cluster._wait("slurmdbd", slurmdbd_ok, "slurmdbd.log", timeout)
        # what a site's administrator sets up once: the cluster, an account, its user
        cluster.run("sacctmgr", "-i", "add", "cluster", CLUSTER)
        cluster.run("sacctmgr", "-i", "add", "account", ACCOUNT, "Description=tests")
        cluster.run("sacctmgr", "-i", "add", "user", "root", f"Account={ACCOUNT}")

        # --- slurmctld, then slurmd in its own mount namespace (see the module docstring)
        cluster._spawn(
            "slurmctld", [_which("slurmctld") or "slurmctld", "-D", "-i", "-f", str(cluster.conf)]
        )
        cluster._wait(
            "slurmctld",
            lambda: "is UP" in cluster.run("scontrol", "ping", check=False, timeout=10),
            "slurmctld.log",
            timeout,
        )
        cluster._spawn(
            "slurmd",
            [
                _which("unshare") or "unshare",
                "--mount",
                "--propagation",
                "private",
                "--",
                "sh",
                "-c",
                f'mount --bind "{root / "etc"}" /etc/slurm && exec "{_which("slurmd")}" -D '
                f'-f "{cluster.conf}"',
            ],
        )
        cluster._wait(
            f"node {node} idle in sinfo",
            lambda: (
                cluster.run("sinfo", "--noheader", "--format=%T", timeout=10).split() == ["idle"]
            ),
            "slurmd.log",
            timeout,
        )
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
