"""Provenance: where a result came from.

This module owns the facts recorded in every dataset's attributes: the
tcprepro version, the git commit of the code (and whether the tree was dirty),
the ns-3 version, the kernel, the host and the date. Results from a dirty tree
are allowed (for exploration) but flagged, so the paper can show it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import subprocess
from functools import cache
from pathlib import Path

import tcprepro
from tcprepro.errors import CapabilityError
from tcprepro.installation import find_wheel, source_digest
from tcprepro.variants import MODEL_SOURCES

__all__ = ["git_state", "host_description", "ns3_version", "software_versions", "static_provenance"]

_REPO = Path(tcprepro.__file__).resolve().parents[2]


@cache
def git_state() -> tuple[str, bool]:
    """Return (commit, dirty) of the source tree tcprepro runs from, or ("unknown", False)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(_REPO), *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "src", "workflow"))
    except (OSError, subprocess.SubprocessError):
        return "unknown", False
    return commit, dirty


def host_description() -> dict[str, str]:
    """The host tcprepro runs on: name, kernel, CPU model, cores, memory, Python."""
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = "unknown"
    with contextlib.suppress(OSError, ValueError, IndexError):
        memory = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.0f} GiB"
    return {
        "host": platform.node(),
        "kernel": platform.release(),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": memory,
        "python": platform.python_version(),
    }


@cache
def ns3_version() -> str:
    """The ns-3 in use: the wheel's version, or "source <version><profile>" (no import)."""
    try:
        return find_wheel().package_version
    except CapabilityError:
        return "not installed"


@cache
def software_versions(models: frozenset[str] | None = None) -> dict[str, str]:
    """Versions that change results; part of every cache key.

    ``models`` in the result is a hash of tcprepro's C++ sources. Given the model
    sources a run uses (:meth:`tcprepro.scenario.Scenario.cpp_models`), it covers the
    shared sources (applications, topology, trace sinks) and those models only, so
    editing one model reruns exactly the runs that use it; without, every source.
    """
    leave_out = MODEL_SOURCES - models if models is not None else frozenset()
    return {
        "tcprepro": tcprepro.__version__,
        "ns3": ns3_version(),
        "models": source_digest(leave_out),
    }


def static_provenance() -> dict[str, str | int]:
    """Attributes describing the code and host that produced a dataset."""
    commit, dirty = git_state()
    return {
        "tcprepro_version": tcprepro.__version__,
        "ns3_version": ns3_version(),
        "git_commit": commit,
        "git_dirty": int(dirty),
        "kernel": platform.release(),
        "host": platform.node(),
        "python": platform.python_version(),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
