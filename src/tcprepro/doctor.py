"""Capability checks: what this host can run, and how to fix what it lacks.

This module owns the list of capabilities tcprepro depends on (the ns-3
bindings, a C++ compiler, tcprepro's compiled models, root, Mininet, iperf3, iperf 2,
the netem qdisc, the kernel's congestion controls, the UML kernel of the
virtual-clock route, LaTeX, ...). ``tcprepro
doctor`` prints them as a table; backends call :func:`require` to refuse a
run up front with one message naming everything that is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tcprepro.errors import CapabilityError

__all__ = ["CAPABILITIES", "Capability", "Status", "check_all", "format_table", "require"]


@dataclass(frozen=True)
class Status:
    """Result of one capability check."""

    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Capability:
    """A named thing tcprepro may need, with its check."""

    name: str
    needed_for: str
    check: Callable[[], Status]


def _python() -> Status:
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info[:2] == (3, 11)
    return Status(ok, f"Python {version}", "" if ok else "use Python 3.11 (make creates .venv)")


def _ns3() -> Status:
    try:
        from tcprepro.installation import find_wheel

        wheel = find_wheel()
    except CapabilityError as exc:
        return Status(False, str(exc), "pip install 'ns3==3.44.post0'")
    return Status(True, f"ns-3 {wheel.version} (wheel {wheel.package_version}) at {wheel.prefix}")


def _compiler() -> Status:
    cxx = os.environ.get("CXX", "g++")
    path = shutil.which(cxx)
    return Status(bool(path), path or f"{cxx} not found", "" if path else "apt-get install g++")


def _models() -> Status:
    try:
        from tcprepro.ns3.build import library_path

        path = library_path()
    except CapabilityError as exc:
        return Status(False, str(exc), "fix the ns-3 bindings and compiler first")
    if path.exists():
        return Status(True, f"built: {path}")
    return Status(True, "not built yet: compiled on first use (~30 s)", "tcprepro build-models")


def _root() -> Status:
    ok = os.geteuid() == 0
    return Status(
        ok,
        "running as root" if ok else f"uid {os.geteuid()}",
        "" if ok else "run emulations as root (sudo)",
    )


def _program(name: str, package: str) -> Callable[[], Status]:
    def check() -> Status:
        path = shutil.which(name)
        return Status(
            bool(path), path or f"{name} not found", "" if path else f"apt-get install {package}"
        )

    return check


def _mininet() -> Status:
    path = shutil.which("mn")
    if not path:
        return Status(False, "Mininet not found", "apt-get install mininet")
    from tcprepro.emulation.capabilities import mininet_importable

    version = mininet_importable()
    if version is None:
        return Status(
            False, f"{path}, but not importable here", "make setup-test links it into .venv"
        )
    return Status(True, f"Mininet {version} ({path})")


def congestion_controls() -> list[str]:
    """Congestion controls the running kernel offers right now."""
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    except OSError:
        return []
    return text.split()


def _kernel_cc() -> Status:
    available = congestion_controls()
    if not available:
        return Status(False, "cannot read tcp_available_congestion_control", "needs Linux")
    return Status(
        True, " ".join(available), "others need a module: modprobe tcp_vegas (or the VM route)"
    )


def netem_available() -> Status:
    """Whether a netem qdisc can be created (tried in a throw-away network namespace)."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        return Status(
            False, "cannot test without root, ip and tc", "run as root; apt-get install iproute2"
        )
    namespace = f"tcprepro-probe-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run(["ip", "netns", "add", namespace], check=True, capture_output=True)
        result = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                namespace,
                "tc",
                "qdisc",
                "add",
                "dev",
                "lo",
                "root",
                "netem",
                "delay",
                "1ms",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    except subprocess.CalledProcessError as exc:
        return Status(False, f"cannot create a network namespace: {exc.stderr!r}", "run as root")
    finally:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)
    if result.returncode == 0:
        return Status(True, "netem qdisc works")
    return Status(
        False,
        "the kernel has no netem qdisc (sch_netem)",
        "modprobe sch_netem, or use the UML (virtual clock) or full-kernel VM route",
    )


def _latex() -> Status:
    """latexmk, pdflatex, the T1 Latin Modern fonts and pdftotext (the paper's build check)."""
    missing = [tool for tool in ("latexmk", "pdflatex", "pdftotext") if not shutil.which(tool)]
    if not missing and shutil.which("kpsewhich"):
        found = subprocess.run(
            ["kpsewhich", "lmodern.sty"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if not found:
            missing.append("lmodern.sty")
    ok = not missing
    return Status(
        ok,
        (shutil.which("latexmk") or "") if ok else f"missing: {', '.join(missing)}",
        "" if ok else "apt-get install latexmk texlive-latex-recommended lmodern poppler-utils",
    )


# ---- the emulation's full-kernel VM route (tcprepro.emulation.vm) ----------


def _vm_program(name: str, fix: str) -> Callable[[], Status]:
    def check() -> Status:
        from tcprepro.emulation.vm import find_program

        path = find_program(name)
        return Status(bool(path), path or f"{name} not found", "" if path else fix)

    return check


def _vm_kernel() -> Status:
    from tcprepro.emulation.vm import find_kernel

    kernel = find_kernel()
    if kernel is None:
        return Status(False, "no /boot/vmlinuz-* with modules", "apt-get install linux-image-amd64")
    extras = [n for n in ("netem", "htb") if kernel.has_qdisc(n)]
    ccs = [n for n in ("vegas", "cubic", "bbr", "highspeed") if kernel.has_congestion_control(n)]
    return Status(True, f"{kernel.image} (qdiscs {' '.join(extras)}; tcp {' '.join(ccs)} ...)")


def _kvm() -> Status:
    from tcprepro.emulation.vm import accelerator

    accel, reason = accelerator()
    return Status(accel == "kvm", reason, "the VM route falls back to QEMU TCG (slower)")


# ---- the emulation's virtual-clock UML route (tcprepro.emulation.uml) -------


def _uml_build_tools() -> Status:
    from tcprepro.emulation.umlkernel import build_missing

    missing = build_missing()
    if not missing:
        return Status(True, "linux-source-6.1 and the build tools are installed")
    packages = " ".join(sorted({package for _, package in missing}))
    return Status(
        False, "missing: " + ", ".join(name for name, _ in missing), f"apt-get install {packages}"
    )


def _uml_kernel() -> Status:
    from tcprepro.emulation.umlkernel import find_kernel, source_version

    kernel = find_kernel()
    if kernel is not None:
        return Status(
            True,
            f"Linux {kernel.version} with a virtual clock, built in {kernel.build_s:.0f} s: "
            f"{kernel.path}",
        )
    if source_version() is None:
        return Status(False, "no linux-source-6.1", "apt-get install linux-source-6.1")
    return Status(False, "not built yet", "tcprepro build-uml-kernel (once, a few minutes)")


def emulation_routes() -> list[str]:
    """Which emulation route (native, UML or VM) typical scenarios take here, and why."""
    from tcprepro.emulation.capabilities import Needs
    from tcprepro.emulation.routes import route_report

    lines = route_report(
        {
            "zero-delay scenario, reno/cubic": Needs(("htb", "pfifo"), ("cubic", "reno")),
            "study A (netem delays; reno, cubic, vegas)": Needs(
                ("htb", "netem", "pfifo"), ("cubic", "reno", "vegas")
            ),
        }
    )
    return [
        "Emulation routes on this host (force one with `tcprepro emulate --route native|uml|vm`",
        "or `emulation_route:` in workflow/config.yaml):",
        *(f"  {line}" for line in lines),
    ]


CAPABILITIES: list[Capability] = [
    Capability("python", "everything", _python),
    Capability("ns3-bindings", "simulations", _ns3),
    Capability("c++-compiler", "tcprepro's ns-3 models", _compiler),
    Capability("tcprepro-models", "simulations", _models),
    Capability("latex", "the paper PDF", _latex),
    Capability("root", "emulations", _root),
    Capability("mininet", "emulations", _mininet),
    Capability("iperf3", "emulations", _program("iperf3", "iperf3")),
    Capability(
        "iperf2",
        "emulated D1.1/D2.1 (separate send and receive buffers)",
        _program("iperf", "iperf"),
    ),
    Capability("ethtool", "emulations (offloads off)", _program("ethtool", "ethtool")),
    Capability("tc", "emulations", _program("tc", "iproute2")),
    Capability("netem", "emulated delay", netem_available),
    Capability("kernel-congestion-controls", "emulated variants", _kernel_cc),
    Capability("uml-build-tools", "building the UML kernel", _uml_build_tools),
    Capability("uml-kernel", "emulation UML route (virtual clock)", _uml_kernel),
    Capability("virtme-ng", "emulation VM route", _vm_program("vng", "pip install virtme-ng")),
    Capability(
        "qemu",
        "emulation VM route",
        _vm_program("qemu-system-x86_64", "apt-get install qemu-system-x86"),
    ),
    Capability(
        "busybox-static",
        "emulation VM route",
        _vm_program("busybox", "apt-get install busybox-static"),
    ),
    Capability("vm-kernel", "emulation VM route", _vm_kernel),
    Capability("kvm", "fast emulation VM route", _kvm),
]


def check_all(names: Iterable[str] | None = None) -> list[tuple[Capability, Status]]:
    """Run the checks (all, or the named ones)."""
    wanted = set(names) if names is not None else None
    return [(cap, cap.check()) for cap in CAPABILITIES if wanted is None or cap.name in wanted]


def format_table(results: Iterable[tuple[Capability, Status]]) -> str:
    """The capability table ``tcprepro doctor`` prints."""
    rows = [("capability", "status", "needed for", "detail / how to fix")]
    for cap, status in results:
        detail = status.detail + (f"  ->  {status.fix}" if status.fix and not status.ok else "")
        rows.append((cap.name, "ok" if status.ok else "MISSING", cap.needed_for, detail))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3] for r in rows)


def require(names: Iterable[str]) -> None:
    """Raise one CapabilityError naming every missing capability (and its fix)."""
    missing = [(cap, status) for cap, status in check_all(names) if not status.ok]
    if missing:
        lines = [f"{cap.name}: {status.detail} ({status.fix})" for cap, status in missing]
        raise CapabilityError("missing capabilities:\n  " + "\n  ".join(lines))
