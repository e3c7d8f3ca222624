"""Provenance: where a result came from.

This module owns the facts recorded in every dataset's attributes: the
tcprepro version, the git commit of the code (and whether the tree was dirty),
the ns-3 version, the kernel, the host and the date. Results from a dirty tree
are allowed (for exploration) but flagged, so the paper can show it.
"""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from functools import cache
from pathlib import Path

import tcprepro
from tcprepro.errors import CapabilityError
from tcprepro.installation import find_wheel, source_digest

__all__ = ["git_state", "ns3_version", "software_versions", "static_provenance"]

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


@cache
def ns3_version() -> str:
    """The ns-3 in use: the wheel's version, or "source <version><profile>" (no import)."""
    try:
        return find_wheel().package_version
    except CapabilityError:
        return "not installed"


@cache
def software_versions() -> dict[str, str]:
    """Versions that change results; part of every cache key.

    ``models`` is a hash of tcprepro's C++ sources (models, applications, trace
    sinks), so editing a model invalidates the runs that used it.
    """
    return {"tcprepro": tcprepro.__version__, "ns3": ns3_version(), "models": source_digest()}


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
