"""The full-kernel VM route: a batch of emulated runs inside one virtme-ng boot.

This module owns the route taken when the running kernel lacks netem or a
congestion control (containers, WSL, this reference machine): virtme-ng
(``vng``, from PyPI) boots Debian's full kernel (``linux-image-amd64``) in QEMU
(``qemu-system-x86``; its initramfs tool needs ``busybox-static``) with the
host's own filesystem shared read-only, so the same virtualenv, Mininet and
iperf3 run inside. KVM is used when it works (:func:`accelerator` boots a
kernel once to find out, and remembers the answer until the host reboots),
QEMU's TCG otherwise.

The VM boots **once per batch** (:func:`run_batch`): the host writes the jobs
(scenario, repetition, output) into a shared writable folder, the guest
(:mod:`tcprepro.emulation.guest`) loads the modules, runs every job with the
same code as the native route and writes each dataset and its status there,
and the host moves the datasets into place atomically.

Without KVM the VM runs under TCG (emulated CPU): its boot takes about a
minute and it cannot keep links of tens of Mb/s at their rate, which the
fidelity gate flags.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tcprepro
from tcprepro.emulation import batch as boots
from tcprepro.emulation.batch import GuestJob, move_into_place
from tcprepro.emulation.fidelity import CpuMonitor, Tolerances
from tcprepro.errors import CapabilityError

__all__ = [
    "VmKernel",
    "accelerator",
    "find_kernel",
    "find_program",
    "move_into_place",
    "run_batch",
]

#: the name of this route (``--route vm``), written into its batches
ROUTE_NAME = "vm"

#: seconds a TCG boot may take before the batch is declared failed
BOOT_TIMEOUT_S = 300.0
#: seconds of set-up (Mininet, probes, samplers, dataset) a job may take besides its duration
JOB_SETUP_S = 240.0
#: memory and vCPUs of the VM
MEMORY = "2G"


def find_program(name: str) -> str | None:
    """A program on PATH or next to this Python (virtualenv ``bin/``)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else None


@dataclass(frozen=True)
class VmKernel:
    """A bootable kernel image and its module tree."""

    release: str
    image: str
    modules: str

    def _module(self, name: str) -> bool:
        if glob.glob(f"{self.modules}/kernel/**/{name}.ko*", recursive=True):
            return True
        try:
            builtin = Path(self.modules, "modules.builtin").read_text()
        except OSError:
            return False
        return f"/{name}.ko" in builtin

    def has_qdisc(self, kind: str) -> bool:
        """True when the kernel builds ``sch_<kind>`` (pfifo is always there)."""
        return kind == "pfifo" or self._module(f"sch_{kind}")

    def has_congestion_control(self, name: str) -> bool:
        """True when the kernel builds ``tcp_<name>`` (reno is always there)."""
        return name == "reno" or self._module(f"tcp_{name}")


@functools.cache
def find_kernel() -> VmKernel | None:
    """The newest ``/boot/vmlinuz-<release>`` that has ``/lib/modules/<release>`` (or None).

    ``TCPREPRO_VM_KERNEL`` may name an image explicitly.
    """
    explicit = os.environ.get("TCPREPRO_VM_KERNEL")
    images = [explicit] if explicit else sorted(glob.glob("/boot/vmlinuz-*"), reverse=True)
    for image in images:
        release = Path(image).name.removeprefix("vmlinuz-")
        modules = f"/lib/modules/{release}"
        if os.access(image, os.R_OK) and Path(modules).is_dir():
            return VmKernel(release, image, modules)
    return None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def _cache_dir() -> Path:
    root = os.environ.get("TCPREPRO_CACHE_DIR") or Path.home() / ".cache" / "tcprepro"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _kvm_boots(kernel: VmKernel, timeout_s: float = 20.0) -> tuple[bool, str]:
    qemu = find_program("qemu-system-x86_64")
    if not qemu or not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "no usable /dev/kvm"
    argv = [
        qemu,
        "-accel",
        "kvm",
        "-m",
        "256",
        "-nographic",
        "-no-reboot",
        "-kernel",
        kernel.image,
        "-append",
        "console=ttyS0 panic=-1",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
    text = output.decode(errors="replace")
    if "Linux version" in text:
        return True, "a KVM guest booted"
    return False, f"a KVM guest printed no kernel message in {timeout_s:g} s"


def accelerator() -> tuple[str, str]:
    """``("kvm" | "tcg", reason)``: KVM when a guest really boots with it, else TCG.

    ``TCPREPRO_VM_ACCEL=kvm|tcg`` forces the answer; otherwise the probe (up to
    20 s) runs once per host boot and its answer is cached.
    """
    forced = os.environ.get("TCPREPRO_VM_ACCEL")
    if forced in ("kvm", "tcg"):
        return forced, "forced by TCPREPRO_VM_ACCEL"
    kernel = find_kernel()
    if kernel is None:
        return "tcg", "no VM kernel"
    cache = _cache_dir() / "vm-accelerator.json"
    with contextlib.suppress(OSError, ValueError):
        cached = json.loads(cache.read_text())
        if cached.get("boot_id") == _boot_id() and cached.get("kernel") == kernel.release:
            return cached["accel"], cached["reason"]
    works, reason = _kvm_boots(kernel)
    accel = "kvm" if works else "tcg"
    reason = reason if works else f"KVM unusable: {reason}; QEMU TCG (slow, see fidelity gate)"
    with contextlib.suppress(OSError):
        cache.write_text(
            json.dumps(
                {"boot_id": _boot_id(), "kernel": kernel.release, "accel": accel, "reason": reason}
            )
        )
    return accel, reason


def run_batch(
    jobs: Sequence[GuestJob],
    *,
    cpus: int | None = None,
    log: Any = None,
    timeout_s: float | None = None,
    tolerances: Tolerances | None = None,
) -> list[dict[str, Any]]:
    """Boot the VM once, run every job inside, move each finished dataset into place.

    Returns one status per job (``ok``, ``error``, ``wall_s``; the guest's own
    record). Jobs that failed leave no output. The VM and everything in it
    (namespaces, qdiscs, processes) ends with the batch.

    Raises
    ------
    CapabilityError
        When the VM cannot be booted (missing vng, QEMU or kernel) or the guest
        never reports (the log tail is in the message).
    """
    tolerances = tolerances or Tolerances()
    kernel = find_kernel()
    vng = find_program("vng")
    if kernel is None or vng is None:
        raise CapabilityError("VM route: no kernel image or no vng (see `tcprepro doctor`)")
    accel, accel_reason = accelerator()
    cpus = cpus or min(2, os.cpu_count() or 1)
    workdir = Path(tempfile.mkdtemp(prefix="tcprepro-vm-"))
    try:
        launched = time.time()
        from tcprepro.provenance import git_state

        commit, dirty = git_state()  # the guest may not read the host's git metadata
        batch = {
            "route": ROUTE_NAME,
            "launched_wall_s": launched,
            "host_git_commit": commit,
            "host_git_dirty": int(dirty),
            "host_kernel": platform.release(),
            "accel": accel,
            "accel_reason": accel_reason,
            "jobs": [
                {
                    "scenario_json": job.scenario_json,
                    "rep": job.rep,
                    "output": str(workdir / f"job{i}.nc"),
                    "attrs": job.attrs,
                    "options": job.options,
                }
                for i, job in enumerate(jobs)
            ],
        }
        (workdir / "batch.json").write_text(json.dumps(batch))
        # the guest imports the host's tcprepro (an editable install, a PYTHONPATH or a
        # worktree alike): the host's environment does not reach the guest's command
        package_root = shlex.quote(str(Path(tcprepro.__file__).resolve().parents[1]))
        guest = (
            f"PYTHONPATH={package_root} {sys.executable} -m tcprepro.emulation.guest "
            f"{workdir / 'batch.json'} > {workdir / 'guest.log'} 2>&1"
        )
        argv = [
            vng,
            "--run",
            kernel.image,
            "--force-9p",
            "--user",
            "root",
            "--memory",
            MEMORY,
            "--cpus",
            str(cpus),
            "--rwdir",
            str(workdir),
            "--exec",
            guest,
        ]
        if accel == "tcg":
            argv.insert(3, "--disable-kvm")
        # per job: its duration twice, plus set-up; measured under TCG on a busy 2-core
        # host: 133-155 s of set-up per run, 370 s for the first (the guest's imports)
        budget = timeout_s or BOOT_TIMEOUT_S + sum(JOB_SETUP_S + 2.0 * _duration_s(j) for j in jobs)
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
        host_cpu = CpuMonitor()  # the guest cannot see the host's load: watch it here
        returncode = boots.boot(
            argv, workdir / "vng.log", budget, step_s=1.0, tick=host_cpu.sample, env=env
        )
        statuses = boots.read_statuses(workdir, len(jobs), "VM")
        if log is not None:
            print(
                f"VM batch: {len(jobs)} jobs, accel {accel}, {time.time() - launched:.0f} s",
                file=log,
            )
        if not statuses:
            tail = boots.log_tail(workdir, ("vng.log", "guest.log"))
            raise CapabilityError(f"the VM never reported (exit {returncode}); vng log:\n{tail}")
        for job, status in zip(jobs, statuses, strict=True):
            if status.get("ok"):
                flagged = _add_host_cpu(Path(status["output"]), host_cpu, tolerances)
                status["fidelity_ok"] = int(status.get("fidelity_ok", 0) and not flagged)
                move_into_place(Path(status["output"]), Path(job.output))
        return statuses
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _add_host_cpu(path: Path, cpu: CpuMonitor, tolerances: Tolerances) -> bool:
    """Record the host's CPU load over the batch in a guest-written dataset; True if flagged.

    Under TCG the guest's clock and CPU accounting cannot see a saturated host:
    the host's own ``/proc/stat`` decides.
    """
    from tcprepro.store import open_dataset, write_dataset

    mean, saturated = cpu.summary(tolerances.cpu_busy)
    ds = open_dataset(path)
    ds.attrs["host_cpu_mean_busy"] = mean
    ds.attrs["host_cpu_saturated_fraction"] = saturated
    flagged = bool(saturated > tolerances.cpu_saturated_fraction)
    if flagged:
        flag = (
            f"host CPU saturated (>= {tolerances.cpu_busy:.0%} busy) in {saturated:.0%} of the "
            "1-s windows of the VM batch"
        )
        flags = [f for f in str(ds.attrs.get("fidelity_flags", "")).split("; ") if f]
        ds.attrs["fidelity_flags"] = "; ".join([*flags, flag])
        ds.attrs["fidelity_ok"] = 0
        ds["fidelity_ok"] = ((), 0)
        ds["fidelity_ok"].attrs["description"] = "1: the run passed the fidelity gate"
    write_dataset(ds, path)
    return flagged


def _duration_s(job: GuestJob) -> float:
    return float(json.loads(job.scenario_json)["duration"].rstrip("s"))
