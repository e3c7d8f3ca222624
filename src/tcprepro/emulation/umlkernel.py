"""The User-mode Linux kernel of the virtual-clock route: built once, cached, found.

This module owns the UML kernel that :mod:`tcprepro.emulation.uml` boots. Debian's
``user-mode-linux`` package lacks ``CONFIG_UML_TIME_TRAVEL_SUPPORT`` (the virtual
clock), so the project builds its own from Debian's ``linux-source-6.1``:

- from a **minimal configuration**: ``make ARCH=um allnoconfig`` with
  ``KCONFIG_ALLCONFIG`` holding exactly the options in :data:`OPTIONS` (the virtual
  clock, hostfs and tmpfs, network namespaces, veth and ifb, every queueing
  discipline and classifier the emulation uses, socket diagnostics for ``ss``, and
  every TCP congestion control Linux 6.1 has), all built in (``=y``, no modules);
  every option is checked in the resulting ``.config`` and a dropped one (an unmet
  dependency) fails the build by name;
- **once**: the kernel is cached under ``$TCPREPRO_CACHE_DIR`` (default
  ``~/.cache/tcprepro``) in ``uml/linux-<source version>-<config hash>/``, keyed by
  the source package's version and a hash of :data:`OPTIONS` and the build recipe;
  a new ``linux-source-6.1`` or a changed option list builds a new kernel;
- **atomically**: concurrent builds are serialised by a file lock, the tree is
  unpacked and compiled in a temporary folder next to the cache entry, and only the
  finished entry (``linux``, ``config``, ``build.json``) is renamed into place; the
  1.5 GB source tree is removed afterwards.

A host without the build tools gets a :class:`~tcprepro.errors.CapabilityError`
naming the Debian packages to install (:func:`build_missing`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tcprepro.errors import CapabilityError

__all__ = [
    "BUILD_PACKAGES",
    "OPTIONS",
    "SOURCE_PACKAGE",
    "UmlKernel",
    "build_kernel",
    "build_missing",
    "cache_root",
    "find_kernel",
    "kernel_key",
]

#: Debian package holding the kernel source tarball
SOURCE_PACKAGE = "linux-source-6.1"
#: the tarball it installs
SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
#: every Debian package the build needs (what a host lacking a tool is told to install)
BUILD_PACKAGES = (
    SOURCE_PACKAGE,
    "build-essential",
    "flex",
    "bison",
    "bc",
    "libelf-dev",
    "pkg-config",
)
#: bump when the recipe below changes in a way the option list does not show
RECIPE_VERSION = "1"

#: what the build needs on the host: (program or file, Debian package)
_TOOLS = (
    ("make", "build-essential"),
    ("gcc", "build-essential"),
    ("ld", "build-essential"),
    ("flex", "flex"),
    ("bison", "bison"),
    ("bc", "bc"),
    ("pkg-config", "pkg-config"),
    ("tar", "tar"),
    ("xz", "xz-utils"),
)
_FILES = (
    ("/usr/include/stdio.h", "build-essential"),
    ("/usr/include/gelf.h", "libelf-dev"),
)

_CONG = "BIC CUBIC WESTWOOD HTCP HSTCP HYBLA VEGAS NV SCALABLE LP VENO YEAH ILLINOIS DCTCP CDG BBR"

# fmt: off
#: options set to ``y`` on top of ``allnoconfig``, grouped by what needs them
OPTIONS: dict[str, tuple[str, ...]] = {
    # a 64-bit kernel that runs the host's programs from a read-only hostfs root
    "base": (
        "64BIT", "BINFMT_ELF", "BINFMT_SCRIPT", "PRINTK", "BUG", "MULTIUSER", "SYSVIPC",
        "POSIX_TIMERS", "FUTEX", "EPOLL", "SIGNALFD", "TIMERFD", "EVENTFD", "SHMEM", "AIO",
        "ADVISE_SYSCALLS", "MEMBARRIER", "FILE_LOCKING", "INOTIFY_USER", "FHANDLE", "SLUB",
        "HIGH_RES_TIMERS", "CC_OPTIMIZE_FOR_PERFORMANCE",
    ),
    # console on the host's stdout, ptys for Mininet's node shells
    "console": ("TTY", "UNIX98_PTYS", "STDERR_CONSOLE", "NULL_CHAN"),
    # the virtual clock, and power-off from init (sysrq o)
    "uml": ("UML_TIME_TRAVEL_SUPPORT", "MCONSOLE", "MAGIC_SYSRQ"),
    "filesystems": ("PROC_FS", "PROC_SYSCTL", "SYSFS", "TMPFS", "DEVTMPFS", "HOSTFS"),
    # Mininet's hosts are network namespaces joined by veth pairs; ss reads sock_diag
    "network": (
        "NET", "UNIX", "PACKET", "INET", "IPV6", "INET_DIAG", "INET_TCP_DIAG", "INET_UDP_DIAG",
        "NETDEVICES", "NET_CORE", "VETH", "IFB", "NAMESPACES", "NET_NS", "UTS_NS", "IPC_NS",
        "PID_NS", "ETHTOOL_NETLINK",
    ),
    "qdiscs": (
        "NET_SCHED", "NET_SCH_HTB", "NET_SCH_NETEM", "NET_SCH_PRIO", "NET_SCH_TBF",
        "NET_SCH_RED", "NET_SCH_SFQ", "NET_SCH_FQ", "NET_SCH_FQ_CODEL", "NET_SCH_CODEL",
        "NET_SCH_INGRESS", "NET_CLS", "NET_CLS_BASIC", "NET_CLS_U32", "NET_CLS_FW",
        "NET_CLS_MATCHALL", "NET_CLS_ACT", "NET_ACT_MIRRED",
    ),
    "congestion_controls": (
        "TCP_CONG_ADVANCED", *(f"TCP_CONG_{name}" for name in _CONG.split()), "DEFAULT_CUBIC",
    ),
}
# fmt: on

#: Linux congestion-control name -> its option (the others are TCP_CONG_<NAME>)
_CC_OPTION = {"highspeed": "TCP_CONG_HSTCP"}


def cache_root() -> Path:
    """``$TCPREPRO_CACHE_DIR/uml`` (default ``~/.cache/tcprepro/uml``)."""
    env = os.environ.get("TCPREPRO_CACHE_DIR")
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(env) if env else (Path(xdg) if xdg else Path.home() / ".cache") / "tcprepro"
    return root / "uml"


def config_fragment() -> str:
    """The ``KCONFIG_ALLCONFIG`` file: one ``CONFIG_<X>=y`` line per option."""
    return "".join(f"CONFIG_{name}=y\n" for group in OPTIONS.values() for name in group)


@functools.cache
def source_version() -> str | None:
    """Version of the installed ``linux-source-6.1`` package (None when it is missing)."""
    if not SOURCE_TARBALL.exists():
        return None
    dpkg_query = shutil.which("dpkg-query") or "/usr/bin/dpkg-query"
    with contextlib.suppress(OSError):
        out = subprocess.run(
            [dpkg_query, "-W", "-f", "${Version}", SOURCE_PACKAGE],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    stat = SOURCE_TARBALL.stat()  # no dpkg: the tarball itself identifies the source
    return f"tarball-{stat.st_size}-{int(stat.st_mtime)}"


def kernel_key(version: str) -> str:
    """Cache folder name for source ``version``: ``linux-<version>-<hash of the recipe>``."""
    digest = hashlib.sha256(f"{RECIPE_VERSION}\n{config_fragment()}".encode()).hexdigest()
    return f"linux-{version}-{digest[:12]}"


@dataclass(frozen=True)
class UmlKernel:
    """A built UML kernel in the cache."""

    path: Path
    #: upstream kernel version (``6.1.192``)
    version: str
    #: cache folder name: source package version and configuration hash
    key: str
    #: seconds the build took
    build_s: float
    config: frozenset[str]

    @property
    def release(self) -> str:
        """What identifies the kernel in an emulated run's cache key."""
        return f"{self.version}-uml-{self.key.rsplit('-', 1)[-1]}"

    def has_qdisc(self, kind: str) -> bool:
        """True when ``sch_<kind>`` is built in (pfifo always is)."""
        return kind == "pfifo" or f"NET_SCH_{kind.upper()}" in self.config

    def has_congestion_control(self, name: str) -> bool:
        """True when ``tcp_<name>`` is built in (reno always is)."""
        option = _CC_OPTION.get(name, f"TCP_CONG_{name.upper()}")
        return name == "reno" or option in self.config


def _read_config(text: str) -> frozenset[str]:
    return frozenset(m.group(1) for m in re.finditer(r"^CONFIG_(\w+)=y$", text, re.MULTILINE))


def find_kernel() -> UmlKernel | None:
    """The cached kernel for the installed source and today's options (None if not built)."""
    version = source_version()
    if version is None:
        return None
    folder = cache_root() / kernel_key(version)
    try:
        info = json.loads((folder / "build.json").read_text())
        config = _read_config((folder / "config").read_text())
    except (OSError, ValueError):
        return None
    binary = folder / "linux"
    if not os.access(binary, os.X_OK):
        return None
    return UmlKernel(
        binary, str(info["kernel_version"]), folder.name, float(info["build_s"]), config
    )


def build_missing(which: Callable[[str], str | None] = shutil.which) -> list[tuple[str, str]]:
    """``(what, Debian package)`` for every build tool or file this host lacks."""
    missing = [(program, package) for program, package in _TOOLS if not which(program)]
    missing += [(path, package) for path, package in _FILES if not Path(path).exists()]
    if not SOURCE_TARBALL.exists():
        missing.append((str(SOURCE_TARBALL), SOURCE_PACKAGE))
    return missing


def _require_tools() -> None:
    missing = build_missing()
    if missing:
        packages = sorted({package for _, package in missing})
        what = ", ".join(name for name, _ in missing)
        raise CapabilityError(
            f"cannot build the UML kernel: {what} missing; install them with "
            f"`apt-get install {' '.join(packages)}` "
            f"(all it needs: {' '.join(BUILD_PACKAGES)})"
        )


def _run(argv: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None) -> None:
    with open(log, "a") as handle:
        handle.write(f"$ {' '.join(argv)}\n")
        handle.flush()
        result = subprocess.run(
            argv, cwd=cwd, stdout=handle, stderr=subprocess.STDOUT, env=env, check=False
        )
    if result.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"building the UML kernel failed at `{' '.join(argv)}`:\n{tail}")


def build_kernel(
    *, force: bool = False, jobs: int | None = None, progress: Callable[[str], None] | None = None
) -> UmlKernel:
    """Build the UML kernel unless the cache has it; return it.

    Parameters
    ----------
    force
        Build again even when the cache has this kernel (the old entry is replaced).
    jobs
        ``make -j`` (default: the number of CPUs).
    progress
        Called with a line of text at each step.

    Raises
    ------
    CapabilityError
        When a build tool or the kernel source is missing (naming the packages).
    RuntimeError
        When a step of the build fails or an option did not make it into ``.config``.
    """
    say = progress or (lambda text: None)
    if not force and (kernel := find_kernel()) is not None:
        return kernel
    _require_tools()
    version = source_version()
    assert version is not None  # the tarball exists: _require_tools checked it
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / kernel_key(version)
    with open(root / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and (kernel := find_kernel()) is not None:
            return kernel
        started = time.monotonic()
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
        try:
            log = tmp / "build.log"
            src, out, entry = tmp / "src", tmp / "obj", tmp / "entry"
            for folder in (src, out, entry):
                folder.mkdir()
            say(f"unpacking {SOURCE_TARBALL} ({SOURCE_PACKAGE} {version})")
            untar = ["tar", "xf", str(SOURCE_TARBALL), "--strip-components=1", "-C", str(src)]
            _run(untar, tmp, log)
            fragment = tmp / "options.config"
            fragment.write_text(config_fragment())
            make = ["make", "-s", "ARCH=um", f"O={out}"]
            env = {**os.environ, "KCONFIG_ALLCONFIG": str(fragment)}
            _run([*make, "allnoconfig"], src, log, env)
            config_text = (out / ".config").read_text()
            config = _read_config(config_text)
            dropped = [n for group in OPTIONS.values() for n in group if n not in config]
            if dropped:
                raise RuntimeError(
                    "the UML kernel configuration lost options (unmet dependencies): "
                    + " ".join(f"CONFIG_{n}" for n in dropped)
                )
            jobs = jobs or os.cpu_count() or 1
            say(f"compiling the UML kernel (make -j{jobs}; a few minutes)")
            _run([*make, f"-j{jobs}", "linux"], src, log)
            kernel_version = (
                subprocess.run(
                    [*make, "kernelversion"], cwd=src, capture_output=True, text=True, check=False
                ).stdout.strip()
                or version
            )
            shutil.copy2(out / "linux", entry / "linux")
            (entry / "config").write_text(config_text)
            build_s = round(time.monotonic() - started, 1)
            (entry / "build.json").write_text(
                json.dumps(
                    {
                        "kernel_version": kernel_version,
                        "source_package": f"{SOURCE_PACKAGE} {version}",
                        "base": "allnoconfig",
                        "options": config_fragment().split(),
                        "jobs": jobs,
                        "build_s": build_s,
                        "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    },
                    indent=1,
                )
            )
            if final.exists():  # --force: move the old entry aside, then drop it
                old = tmp / "old"
                os.rename(final, old)
            os.rename(entry, final)
            say(f"built {final / 'linux'} in {build_s:.0f} s")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    kernel = find_kernel()
    if kernel is None:
        raise RuntimeError(f"the UML kernel was built but {final} is not usable")
    return kernel
