"""What an emulated scenario needs from this host, and what each route lacks for it.

This module owns the capability side of the emulation: from a scenario, the
Linux queueing disciplines (htb, pfifo/codel/fq_codel/sfq, netem when a direction
has a delay or a loss) and congestion controls it needs (:func:`scenario_needs`);
what the *native* route (Mininet on the running kernel, as root) lacks for
them; what the *UML* route (User-mode Linux with a virtual clock, see
:mod:`tcprepro.emulation.uml`) and the *VM* route (virtme-ng booting Debian's
full kernel, see :mod:`tcprepro.emulation.vm`) lack; the traffic tools' versions.
The routes themselves, and the choice between them, are
:mod:`tcprepro.emulation.routes`. ``tcprepro doctor`` prints the same facts.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass

from tcprepro.emulation import background, linux
from tcprepro.errors import ConfigError
from tcprepro.network_plan import build_plan
from tcprepro.scenario import Scenario

__all__ = [
    "TRAFFIC_TOOLS",
    "Missing",
    "Needs",
    "congestion_controls",
    "iperf3_version",
    "mininet_importable",
    "native_missing",
    "qdisc_works",
    "scenario_needs",
    "tool_needs",
    "tool_version",
    "uml_missing",
    "versions_record",
    "vm_missing",
]

#: a minimal ``tc qdisc add ... <kind> ...`` argument list per kind, to probe the kernel
_PROBE_ARGS = {
    "netem": ["netem", "delay", "1ms"],
    "htb": ["htb", "default", "1"],
    "pfifo": ["pfifo", "limit", "10"],
    "codel": ["codel", "limit", "10"],
    "fq_codel": ["fq_codel", "limit", "10"],
    "sfq": ["sfq", "limit", "10", "perturb", "0"],
}


#: traffic tools of the emulation: name -> (program, Debian package). iperf3's ``-w``
#: sets the same buffer on both sockets (the client sends it to the server); iperf 2
#: takes a separate ``-w`` at the server (receive buffer) and the client (send buffer)
TRAFFIC_TOOLS = {"iperf3": ("iperf3", "iperf3"), "iperf2": ("iperf", "iperf")}


@dataclass(frozen=True)
class Needs:
    """Kernel features (and extra programs) one emulated scenario needs."""

    qdiscs: tuple[str, ...]
    congestion_controls: tuple[str, ...]
    programs: tuple[str, ...] = ()

    def __or__(self, other: Needs) -> Needs:
        return Needs(
            tuple(sorted({*self.qdiscs, *other.qdiscs})),
            tuple(sorted({*self.congestion_controls, *other.congestion_controls})),
            tuple(sorted({*self.programs, *other.programs})),
        )


def tool_needs(tool: str) -> Needs:
    """What the traffic tool ``tool`` (``iperf3`` or ``iperf2``) needs.

    Raises
    ------
    ConfigError
        For an unknown tool (naming the field ``emulation_tool``).
    """
    if tool not in TRAFFIC_TOOLS:
        raise ConfigError(f"emulation_tool: {tool!r} is not one of {', '.join(TRAFFIC_TOOLS)}")
    return Needs((), (), (TRAFFIC_TOOLS[tool][0],) if tool != "iperf3" else ())


@dataclass(frozen=True)
class Missing:
    """A missing capability: its name, what was found, and how to get it."""

    name: str
    detail: str
    fix: str

    def __str__(self) -> str:
        return f"{self.name}: {self.detail} ({self.fix})"


def scenario_needs(scenario: Scenario) -> Needs:
    """Queueing disciplines and congestion controls the scenario's emulation uses.

    Raises
    ------
    ConfigError
        When a flow's variant has no Linux implementation, a link's queue
        discipline has no Linux mapping (or a buffer its Linux twin cannot hold), a
        traffic generator cannot be emulated (:func:`background.check_generators`),
        ``tcp.delayed_ack_count`` is neither 1 nor 2, or the scenario samples a model's
        internal state (``trace.congestion_state``), naming the field.
    """
    background.check_generators(scenario)
    if scenario.trace.congestion_state:
        raise ConfigError(
            "trace.congestion_state: the internal state of tcprepro's ns-3 models; Linux "
            "congestion controls do not report theirs, so the Mininet backend cannot sample it"
        )
    linux.delayed_ack_metrics(scenario.tcp)  # a delayed-ACK factor Linux cannot give
    plan = build_plan(scenario, 0)
    qdiscs = {"htb"}
    frame = linux.frame_bytes(scenario.tcp)
    for index, link in enumerate(plan.links):
        for side, direction in (("a_to_b", link.a_to_b), ("b_to_a", link.b_to_a)):
            where = f"topology ({direction.trace_name or f'{link.a}-{link.b} {side}'}) qdisc"
            qdiscs.add(linux.leaf_qdisc(direction, where, frame)[0])
            if linux.needs_netem(direction):
                qdiscs.add("netem")
        del index
    return Needs(tuple(sorted(qdiscs)), tuple(sorted(linux.scenario_congestion_controls(scenario))))


# ---------------------------------------------------------------------------
# Native route


def congestion_controls() -> list[str]:
    """Congestion controls the running kernel offers now."""
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as handle:
            return handle.read().split()
    except OSError:
        return []


def mininet_importable() -> str | None:
    """Mininet's version when ``import mininet`` works in this Python, else None."""
    try:
        import mininet.net  # noqa: F401
        from mininet.net import VERSION
    except ImportError:
        return None
    return str(VERSION)


@functools.cache
def qdisc_works(kind: str) -> bool:
    """Whether the kernel lets a ``kind`` qdisc be created (tried in a throw-away namespace)."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        return False
    namespace = f"tcprepro-probe-{uuid.uuid4().hex[:8]}"
    try:
        created = subprocess.run(
            ["ip", "netns", "add", namespace], capture_output=True, check=False
        )
        if created.returncode != 0:
            return False
        result = subprocess.run(
            ["ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", "lo", "root"]
            + _PROBE_ARGS[kind],
            capture_output=True,
            check=False,
        )
        return result.returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)


def _programs() -> list[tuple[str, str]]:
    return [
        ("iperf3", "iperf3"),
        ("ethtool", "ethtool"),
        ("tc", "iproute2"),
        ("ip", "iproute2"),
        ("ss", "iproute2"),
        ("ping", "iputils-ping"),
        ("mnexec", "mininet"),
    ]


def _tools_missing() -> list[Missing]:
    missing = []
    if mininet_importable() is None:
        missing.append(
            Missing(
                "mininet",
                "cannot import mininet in this Python",
                "apt-get install mininet; `make setup-test` links it into .venv",
            )
        )
    for program, package in _programs():
        if not shutil.which(program):
            missing.append(Missing(program, f"{program} not found", f"apt-get install {package}"))
    return missing


def _extra_programs_missing(needs: Needs) -> list[Missing]:
    packages = dict(TRAFFIC_TOOLS.values())
    return [
        Missing(
            program,
            f"{program} not found (traffic tool of this scenario)",
            f"apt-get install {packages.get(program, program)}",
        )
        for program in needs.programs
        if not shutil.which(program)
    ]


def _cc_hint(name: str) -> str:
    return f"modprobe tcp_{name}, or take the UML (--route uml) or VM route (--route vm)"


def native_missing(needs: Needs) -> list[Missing]:
    """What the native route (Mininet on the running kernel) lacks for ``needs``."""
    missing = []
    if os.geteuid() != 0:
        missing.append(Missing("root", f"uid {os.geteuid()}", "run emulations as root (sudo)"))
    missing += _tools_missing() + _extra_programs_missing(needs)
    if os.geteuid() == 0:
        for kind in needs.qdiscs:
            if not qdisc_works(kind):
                fix = f"modprobe sch_{kind}, or take the UML (--route uml) or VM route (--route vm)"
                missing.append(Missing(f"qdisc {kind}", f"the kernel has no {kind} qdisc", fix))
    offered = congestion_controls()
    for name in needs.congestion_controls:
        if name not in offered:
            detail = f"the running kernel does not offer {name} (offers: {' '.join(offered)})"
            missing.append(Missing(f"congestion control {name}", detail, _cc_hint(name)))
    return missing


# ---------------------------------------------------------------------------
# VM route


def vm_missing(needs: Needs) -> list[Missing]:
    """What the full-kernel VM route lacks for ``needs`` (see :mod:`tcprepro.emulation.vm`)."""
    from tcprepro.emulation import vm

    missing = _tools_missing() + _extra_programs_missing(needs)
    for program, fix in (
        ("vng", "pip install virtme-ng (a dependency of tcprepro)"),
        ("qemu-system-x86_64", "apt-get install qemu-system-x86"),
        ("busybox", "apt-get install busybox-static"),
    ):
        if not vm.find_program(program):
            missing.append(Missing(program, f"{program} not found", fix))
    kernel = vm.find_kernel()
    if kernel is None:
        missing.append(
            Missing(
                "vm-kernel",
                "no /boot/vmlinuz-* with its modules in /lib/modules",
                "apt-get install linux-image-amd64",
            )
        )
        return missing
    for kind in needs.qdiscs:
        if not kernel.has_qdisc(kind):
            missing.append(
                Missing(f"qdisc {kind} (VM kernel)", f"{kernel.release} has no sch_{kind}", "")
            )
    for name in needs.congestion_controls:
        if not kernel.has_congestion_control(name):
            missing.append(
                Missing(
                    f"congestion control {name} (VM kernel)",
                    f"{kernel.release} has no tcp_{name}",
                    "use a kernel that builds it",
                )
            )
    return missing


# ---------------------------------------------------------------------------
# UML route


def uml_missing(needs: Needs) -> list[Missing]:
    """What the UML route lacks for ``needs`` (see :mod:`tcprepro.emulation.uml`).

    No root is needed on the host: UML runs as an ordinary process, root inside.
    """
    from tcprepro.emulation import uml, umlkernel

    tool = tool_needs(uml.traffic_tool("iperf3"))
    missing = _tools_missing() + _extra_programs_missing(needs | tool)
    missing += [Missing("uml-guest-paths", problem, "") for problem in uml.path_problems()]
    kernel = umlkernel.find_kernel()
    if kernel is None:
        lacking = umlkernel.build_missing()
        fix = "tcprepro build-uml-kernel (once, a few minutes)"
        if lacking:
            fix = f"apt-get install {' '.join(sorted({p for _, p in lacking}))}; then {fix}"
        missing.append(Missing("uml-kernel", "the virtual-clock UML kernel is not built", fix))
        return missing
    for kind in needs.qdiscs:
        if not kernel.has_qdisc(kind):
            missing.append(Missing(f"qdisc {kind} (UML kernel)", f"no sch_{kind} built in", ""))
    for name in needs.congestion_controls:
        if not kernel.has_congestion_control(name):
            missing.append(
                Missing(f"congestion control {name} (UML kernel)", f"no tcp_{name} built in", "")
            )
    return missing


# ---------------------------------------------------------------------------
# Versions (part of the cache key of an emulated run)


@functools.cache
def iperf3_version() -> str:
    """``iperf 3.12`` -> ``3.12`` (``not installed`` when missing)."""
    if not shutil.which("iperf3"):
        return "not installed"
    out = subprocess.run(["iperf3", "--version"], capture_output=True, text=True, check=False)
    words = out.stdout.split()
    return words[1] if len(words) > 1 else out.stdout.strip()


@functools.cache
def tool_version(tool: str) -> str:
    """Version of a traffic tool: ``iperf2`` -> ``2.1.8`` (``not installed`` when missing)."""
    if tool == "iperf3":
        return iperf3_version()
    program = TRAFFIC_TOOLS[tool][0]
    if not shutil.which(program):
        return "not installed"
    out = subprocess.run([program, "--version"], capture_output=True, text=True, check=False)
    words = (out.stdout + out.stderr).split()  # "iperf version 2.1.8 (12 August 2022) ..."
    return words[2] if len(words) > 2 and words[1] == "version" else " ".join(words[:3])


def versions_record(route: str, kernel_release: str, tool: str = "iperf3") -> dict[str, str]:
    """Versions that change an emulated run's result (kernel, iperf3, tcprepro) on ``route``.

    A tool other than iperf3 adds its name and version (iperf3 runs keep their keys).
    Each route gives its own kernel release and tool
    (:meth:`tcprepro.emulation.routes.Route.versions`).
    """
    import tcprepro

    return {
        "tcprepro": tcprepro.__version__,
        "kernel": kernel_release,
        "iperf3": iperf3_version(),
        "route": route,
        **({"traffic_tool": f"{tool} {tool_version(tool)}"} if tool != "iperf3" else {}),
    }
