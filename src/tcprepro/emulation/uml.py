"""The virtual-clock route: a batch of emulated runs inside one User-mode Linux boot.

This module owns the UML route (``--route uml``, ``emulation_route: uml``). The
kernel (:mod:`tcprepro.emulation.umlkernel`, built once by the project) runs as an
ordinary host process, booted with ``time-travel=inf-cpu``: guest CPU work takes no
guest time and the guest clock jumps to the next timer whenever the guest is idle.
Packet timing (htb rates, netem delays, TCP timers) then no longer depends on how
fast or how busy the host is, as in a discrete-event simulator but with the real
Linux stack; a busy host only makes the run take longer in wall time.

One boot per batch (:func:`run_batch`), as on the VM route, running the same guest
entry point (:mod:`tcprepro.emulation.guest`, hence the same Mininet backend):

- the host's ``/`` is the guest's root, read-only over hostfs (the same virtualenv,
  Mininet, iperf, ``tc``); ``/tmp``, ``/run`` and ``/dev/shm`` are tmpfs, ``/dev`` a
  devtmpfs with devpts (Mininet's node shells use ptys); a virtualenv or checkout under
  ``/tmp`` or ``/run`` is mounted back, read-only, at its own path;
- a temporary folder of the host holds the batch, the generated init script, the
  guest's datasets and its status lines; the guest mounts it read-write (hostfs) at
  :data:`GUEST_DIR`; UML's own run-time files (``uml_dir``) live there too, so that
  nothing of a boot survives the folder's removal;
- the init script never exits (the kernel would panic): it powers off with
  ``sysrq o`` after the guest program ends; every boot has a wall-clock limit
  (:func:`wall_budget_s`), after which the whole process group is killed (the boot
  plumbing of :mod:`tcprepro.emulation.batch`, shared with the VM route).

Busy-polling stalls virtual time (the clock advances only 256 ns per clock read
while a program spins), so the guest's TCP flows are sent with iperf 2, not with
iperf3's client (:data:`GUEST_TRAFFIC_TOOL`). The samplers sleep between samples.
The fidelity probe's UDP sender is the run's traffic tool too
(:mod:`tcprepro.emulation.probe`), so iperf 2 on this route.

Each dataset records ``route = uml``, ``clock_mode``, the guest and wall seconds of
its run and their ratio (``wall_time_ratio``: guest seconds per wall second). The
wall clock is the host's, read from inside the guest as the size the host keeps
giving a file in the shared folder (:func:`host_wall_clock`). The fidelity
gate keeps its rate and RTT probes (they read the guest clock) but no longer flags
CPU saturation, which cannot distort a virtual-time run.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcprepro.emulation import batch as boots
from tcprepro.emulation import umlkernel
from tcprepro.emulation.batch import move_into_place
from tcprepro.errors import CapabilityError

__all__ = [
    "CLOCK_MODE",
    "GUEST_DIR",
    "GUEST_TRAFFIC_TOOL",
    "boot_argv",
    "host_wall_clock",
    "init_script",
    "kernel_release",
    "run_batch",
    "traffic_tool",
    "wall_budget_s",
]

#: the name of this route (``--route uml``), written into its batches
ROUTE_NAME = "uml"
#: the guest's view of the shared folder
GUEST_DIR = "/tmp/tcprepro-batch"
#: UML boot option of the virtual clock, and the dataset's ``clock_mode``
CLOCK_OPTION = "time-travel=inf-cpu"
CLOCK_MODE = "virtual (UML time-travel=inf-cpu)"
#: guest memory (MiB); the host only backs the pages the guest touches
MEMORY_MIB = 2048
#: TCP's memory limits (``net.ipv4.tcp_mem``: pages at which it starts to economise, enters
#: memory pressure, refuses): 1/4, 1/2 and 3/4 of the guest's memory. Linux derives them
#: from the memory size (92 MB at most for a 1 GB guest, pressure from 62 MB), and two
#: sockets with the 32 MiB buffers of a 1 Gb/s scenario (64 MiB each once doubled) put
#: TCP in memory pressure: measured, the flow then stalled at 4 segments in flight.
TCP_MEM_PAGES = tuple(MEMORY_MIB * 256 * k // 4 for k in (1, 2, 3))
# The wall-clock limits guard against a hang; they are not speed targets. Each allows
# several times what a boot, the set-up (imports, Mininet), a guest second of probe or of a
# sampled run (every sample forks ss and tc) takes on a loaded 2-core host.
#: wall seconds the boot (to init) and the power-off may take
BOOT_S = 120.0
#: wall seconds of set-up (imports, Mininet, dataset) allowed per job
JOB_SETUP_S = 600.0
#: wall seconds allowed per guest second of probe, of run, and per bottleneck packet
WALL_PER_PROBE_S = 120.0
WALL_PER_GUEST_S = 40.0
WALL_PER_PACKET_S = 500e-6
#: the file whose size is the host's wall-clock microseconds since launch, and its update step
CLOCK_FILE = "host-clock"
CLOCK_STEP_S = 0.005
#: the traffic tool of the guest's TCP flows. iperf3's *sending* client busy-polls (it
#: loops on select() while it may not send), which stalls virtual time: measured at
#: 10 Mb/s, 15 s of wall time for a 3-s TCP flow sent by the iperf3 client, 1.1 s with
#: iperf 2 (or with the iperf3 server sending, -R); so jobs asking for iperf3 take
#: iperf 2 here, which sets the send buffer at the client and the receive buffer at the
#: server (the dataset's ``traffic_tool`` says so).
GUEST_TRAFFIC_TOOL = "iperf2"
#: environment variable naming, inside the guest, the kernel release it booted
RELEASE_ENV = "TCPREPRO_UML_RELEASE"


def traffic_tool(requested: str) -> str:
    """The traffic tool a job asking for ``requested`` uses on this route."""
    return GUEST_TRAFFIC_TOOL if requested == "iperf3" else requested


def kernel_release() -> str:
    """Release of this route's kernel: the booted one inside a guest, else the cached one."""
    if os.environ.get(RELEASE_ENV):
        return os.environ[RELEASE_ENV]
    kernel = umlkernel.find_kernel()
    return kernel.release if kernel else "none"


def _under(path: Path, roots: Sequence[str]) -> str | None:
    resolved = path.resolve()
    for root in roots:
        if resolved == Path(root) or Path(root) in resolved.parents:
            return root
    return None


#: host folders the guest mounts over (tmpfs); what it needs from them is mounted back
_GUEST_TMPFS = ("/tmp", "/run")


def _needed_host_paths() -> list[Path]:
    """The host folders the guest program needs: this Python, tcprepro, ``PYTHONPATH``."""
    import tcprepro

    paths = [Path(sys.prefix), Path(tcprepro.__file__).resolve().parents[1]]
    paths += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [path.resolve() for path in paths if path.exists()]


def remounted_paths() -> list[Path]:
    """Needed host folders under the guest's tmpfs mounts (/tmp, /run), outermost first.

    A checkout or virtualenv under /tmp (a CI runner's clone, say) would be hidden by the
    guest's own /tmp; init mounts each of these back, read-only, at the same path.
    """
    hidden = sorted({p for p in _needed_host_paths() if _under(p, _GUEST_TMPFS)})
    return [p for p in hidden if not any(q in p.parents for q in hidden)]


def path_problems() -> list[str]:
    """Why the guest could not see this Python or tcprepro (not under /dev)."""
    import tcprepro

    problems = []
    for label, path in (
        ("the Python interpreter", Path(sys.prefix)),
        ("the tcprepro package", Path(tcprepro.__file__).parent),
    ):
        hidden = _under(path, ("/dev",))
        if hidden:
            problems.append(f"{label} is under {hidden} ({path}), which the UML guest mounts over")
    return problems


def boot_argv(kernel: Path, folder: Path, module_arguments: Sequence[str] = ()) -> list[str]:
    """The UML command line of a boot whose shared folder is ``folder``.

    ``module_arguments`` (``tcp_cubic.beta=819``) give built-in modules the parameters of
    the jobs' testbed profile at boot (:func:`tcprepro.emulation.linux.boot_module_arguments`).
    """
    return [
        str(kernel),
        *module_arguments,
        f"mem={MEMORY_MIB}M",
        "rootfstype=hostfs",
        "rootflags=/",
        "ro",
        f"init={folder / 'init'}",
        CLOCK_OPTION,
        f"uml_dir={folder / 'uml'}",
        f"umid=tcprepro-{uuid.uuid4().hex[:8]}",
        "con=null",
        "con0=fd:0,fd:1",
    ]


def _boot_module_arguments(jobs: Sequence[Any]) -> list[str]:
    """The module parameters of the batch's testbed profile, for the kernel command line.

    The jobs of a batch run one figure, so one stack; when they ask for different values
    of a parameter it is left to each run's own write (:mod:`tcprepro.emulation.network`).
    """
    from tcprepro.emulation import linux
    from tcprepro.scenario_io import load_scenario_dict

    wanted: dict[str, set[str]] = {}
    for job in jobs:
        scenario = load_scenario_dict(json.loads(job.scenario_json), "emulated job")
        for path, value in linux.module_parameters(scenario).items():
            wanted.setdefault(path, set()).add(value)
    agreed = {path: values.pop() for path, values in wanted.items() if len(values) == 1}
    return linux.boot_module_arguments(agreed)


def init_script(folder: Path, command: Sequence[str], release: str) -> str:
    """The guest's init: mounts, the shared folder, ``command``, then power-off.

    ``command`` runs with its output in ``guest.log`` of the shared folder and its
    exit status in ``guest.rc``; init itself never exits.
    """
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/sbin:/usr/local/bin:"
        "/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        # the same order of set-up steps in every boot (set and dict iteration over names)
        "PYTHONHASHSEED": "0",
        RELEASE_ENV: release,
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    exports = "\n".join(f"export {key}={shlex.quote(value)}" for key, value in env.items())
    shared = shlex.quote(GUEST_DIR)
    remounts = "".join(
        f"mkdir -p {shlex.quote(str(path))}\n"
        f"mount -r -t hostfs -o {shlex.quote(str(path))} none {shlex.quote(str(path))}\n"
        for path in remounted_paths()
    )
    return f"""#!/bin/sh
# init of a tcprepro UML boot (generated by tcprepro.emulation.uml); never exits
{exports}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o ptmxmode=0666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
{remounts}mkdir -p {shared}
mount -t hostfs -o {shlex.quote(str(folder))} none {shared}
echo {" ".join(map(str, TCP_MEM_PAGES))} > /proc/sys/net/ipv4/tcp_mem
cd /tmp
{shlex.join(command)} > {shared}/guest.log 2>&1
echo $? > {shared}/guest.rc
sync
echo o > /proc/sysrq-trigger
while :; do sleep 3600; done
"""


def host_wall_clock(folder: str | Path) -> float:
    """The host's wall-clock seconds since the batch was launched, read inside the guest.

    The guest's clock is virtual. While the boot runs, the host keeps the *size* of
    :data:`CLOCK_FILE` in the shared folder equal to the microseconds since launch
    (a sparse file, updated every :data:`CLOCK_STEP_S`); hostfs looks every path up
    afresh, so ``stat`` returns the host's current value (hostfs keeps only whole
    seconds of a file's times, hence the size).
    """
    return os.stat(Path(folder) / CLOCK_FILE).st_size / 1e6


class _HostClock:
    """The host side of :func:`host_wall_clock`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started = time.monotonic()
        self.fd = os.open(folder / CLOCK_FILE, os.O_CREAT | os.O_WRONLY, 0o644)
        self.tick()

    def tick(self) -> None:
        os.ftruncate(self.fd, int((time.monotonic() - self.started) * 1e6))

    def close(self) -> None:
        os.close(self.fd)


def _job_rate_bps(scenario_json: str) -> float:
    from tcprepro.network_plan import build_plan
    from tcprepro.scenario_io import load_scenario_dict

    plan = build_plan(load_scenario_dict(json.loads(scenario_json)), 0)
    rates = [d.rate_bps for d in plan.traced.values()] or [
        max(link.a_to_b.rate_bps, link.b_to_a.rate_bps) for link in plan.links
    ]
    return max(rates)


def wall_budget_s(jobs: Sequence[Any]) -> float:
    """Wall-clock limit of a boot running ``jobs`` (each with ``scenario_json``, ``options``).

    Per job: set-up, its probes, and for its duration the larger of a fixed slowdown
    and the cost of the bottleneck's packets, all with a wide margin (a hang guard).
    """
    total = BOOT_S
    for job in jobs:
        scenario = json.loads(job.scenario_json)
        probe_s = float(job.options.get("probe_s", 2.0)) + 2.0
        duration = float(str(scenario["duration"]).rstrip("s"))
        packets_per_s = _job_rate_bps(job.scenario_json) / (1514 * 8)
        per_guest_s = max(WALL_PER_GUEST_S, packets_per_s * WALL_PER_PACKET_S)
        total += JOB_SETUP_S + probe_s * WALL_PER_PROBE_S + duration * per_guest_s
    return total


def guest_attrs(boot_wall_s: float) -> dict[str, Any]:
    """Dataset attributes every run of a UML boot shares (called inside the guest)."""
    return {
        "clock_mode": CLOCK_MODE,
        "uml_kernel": kernel_release(),
        "guest_memory_mib": MEMORY_MIB,
        "guest_tcp_mem_pages": Path("/proc/sys/net/ipv4/tcp_mem").read_text().strip(),
        "uml_boot_wall_s": round(boot_wall_s, 2),
    }


def timed_attrs(guest_s: float, wall_s: float) -> dict[str, Any]:
    """Attributes of one run's timing: guest and wall seconds, and their ratio."""
    return {
        "guest_time_s": round(guest_s, 3),
        "wall_time_s": round(wall_s, 3),
        "wall_time_ratio": round(guest_s / wall_s, 4) if wall_s > 0 else math.nan,
        "wall_time_ratio_description": "guest seconds per wall second over the run (probes "
        "and set-up included); > 1 is faster than real time",
    }


def run_batch(
    jobs: Sequence[Any],
    *,
    log: Any = None,
    timeout_s: float | None = None,
    tolerances: Any = None,
    cancel: threading.Event | None = None,
) -> list[dict[str, Any]]:
    """Boot UML once, run every job (:class:`tcprepro.emulation.batch.GuestJob`) inside.

    ``cancel``, when set by another thread, ends the boot as an interrupt of this one
    would: the instance is killed and a KeyboardInterrupt raised once it is gone.

    Returns one status per job (``ok``, ``error``, ``wall_s``, ``fidelity_ok`` and the
    guest's record); each finished dataset is moved into place atomically, a failed job
    leaves no output. Whatever happens, no UML process, mount or file of the boot is left
    on the host.

    Raises
    ------
    CapabilityError
        When the kernel is not built, the guest could not see this Python, or the guest
        never reported (the console and guest log tails are in the message).
    subprocess.TimeoutExpired
        When the boot outlived its wall-clock limit (it was killed).
    """
    del tolerances  # the guest's gate has them; no host-side check in virtual time
    kernel = umlkernel.find_kernel()
    if kernel is None:
        raise CapabilityError(
            "UML route: the kernel is not built (run `tcprepro build-uml-kernel`, a few minutes)"
        )
    problems = path_problems()
    if problems:
        raise CapabilityError("UML route: " + "; ".join(problems))
    folder = Path(tempfile.mkdtemp(prefix="tcprepro-uml-"))
    try:
        launched = time.time()
        from tcprepro.provenance import git_state

        commit, dirty = git_state()  # the guest may not read a worktree's git metadata
        guest_jobs = []
        for i, job in enumerate(jobs):
            options = dict(job.options)
            options["tolerances"] = {**dict(options.get("tolerances", {})), "cpu_gate": False}
            options["traffic_tool"] = traffic_tool(str(options.get("traffic_tool", "iperf3")))
            guest_jobs.append(
                {
                    "scenario_json": job.scenario_json,
                    "rep": job.rep,
                    "output": f"{GUEST_DIR}/job{i}.nc",
                    "attrs": job.attrs,
                    "options": options,
                }
            )
        batch = {
            "route": ROUTE_NAME,
            "launched_wall_s": 0.0,  # the guest's host_wall_clock counts from the launch
            "host_git_commit": commit,
            "host_git_dirty": int(dirty),
            "host_kernel": os.uname().release,
            "clock_folder": GUEST_DIR,
            "jobs": guest_jobs,
        }
        (folder / "batch.json").write_text(json.dumps(batch))
        init = folder / "init"
        command = [sys.executable, "-m", "tcprepro.emulation.guest", f"{GUEST_DIR}/batch.json"]
        init.write_text(init_script(folder, command, kernel.release))
        init.chmod(0o755)
        budget = timeout_s or wall_budget_s(jobs)
        clock = _HostClock(folder)
        progress = _Progress(folder, jobs, log)

        def tick() -> None:
            clock.tick()
            progress.poll()

        try:
            returncode = boots.boot(
                boot_argv(kernel.path, folder, _boot_module_arguments(jobs)),
                folder / "console.log",
                budget,
                step_s=CLOCK_STEP_S,
                tick=tick,
                cancel=cancel,
                cwd=folder,
            )
        finally:
            clock.close()
        statuses = boots.read_statuses(folder, len(jobs), "UML guest")
        if log is not None:
            print(
                f"UML batch: {len(jobs)} jobs, {CLOCK_MODE}, {time.time() - launched:.0f} s wall",
                file=log,
            )
        if not statuses:
            tail = boots.log_tail(folder, ("console.log", "guest.log"), headed=True)
            raise CapabilityError(f"the UML guest never reported (exit {returncode}):\n{tail}")
        for job, status in zip(jobs, statuses, strict=True):
            if status.get("ok"):
                move_into_place(folder / Path(status["output"]).name, Path(job.output))
        return statuses
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _job_label(job: Any) -> str:
    """``X5 protocol=Cubic, loss=1e-05`` for a workflow run, else the output's file name."""
    attrs = getattr(job, "attrs", None) or {}
    if "figure" in attrs and "sweep" in attrs:
        sweep = ", ".join(f"{k}={v}" for k, v in json.loads(attrs["sweep"]).items())
        return f"{attrs['figure']} {sweep}".strip()
    return Path(job.output).name


class _Progress:
    """Reports each run of a boot as the guest finishes it (its ``status.jsonl`` lines).

    One line per run: its guest and wall seconds and the boot's remaining time at its
    pace so far.
    """

    def __init__(self, folder: Path, jobs: Sequence[Any], log: Any) -> None:
        self.path = folder / "status.jsonl"
        self.names = [_job_label(job) for job in jobs]
        self.log = log
        self.seen = 0
        self.started = time.monotonic()
        self.polled = 0.0

    def poll(self, every_s: float = 1.0) -> None:
        now = time.monotonic()
        if self.log is None or now - self.polled < every_s:
            return
        self.polled = now
        try:
            text = self.path.read_text()
        except OSError:
            return
        lines = text.splitlines() if text.endswith("\n") else text.splitlines()[:-1]
        total = len(self.names)
        for line in lines[self.seen :]:
            status = json.loads(line)
            self.seen += 1
            elapsed = now - self.started
            left = total - self.seen
            what = "done" if status.get("ok") else "failed"
            pace = (
                f"{left} left, about {elapsed / self.seen * left / 60:.0f} min more"
                if left
                else "the last"
            )
            guest = status.get("guest_s", float("nan"))
            wall = status.get("wall_s", float("nan"))
            print(
                f"UML boot: run {self.seen}/{total} {what} ({self.names[self.seen - 1]}: "
                f"{guest:.0f} guest s in {wall:.0f} wall s); {pace}",
                file=self.log,
                flush=True,
            )
