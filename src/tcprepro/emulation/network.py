"""The emulated network of one run: Mininet built from the plan, always torn down.

This module owns the network's lifecycle. :class:`Emulation` builds a Mininet
topology from :func:`tcprepro.network_plan.build_plan` (hosts and Linux routers
joined by shaped veth pairs, addressing, routes and sysctls from
:mod:`tcprepro.emulation.topo`), raises the host-wide socket-buffer limits the
run's requests need, runs commands in the nodes' namespaces, and tears
everything down, always (success, error, Ctrl-C, and SIGTERM through
:func:`sigterm_as_interrupt`): every process it started killed, the Mininet
hosts stopped (their namespaces and veths vanish with them), host-wide sysctls
restored.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tcprepro.emulation import linux
from tcprepro.emulation.iperf import requested_buffers
from tcprepro.emulation.topo import (
    Addressing,
    configure_network,
    make_topo,
    shaped_intf_class,
)
from tcprepro.errors import CapabilityError
from tcprepro.network_plan import NetworkPlan
from tcprepro.scenario import Scenario

__all__ = ["Emulation", "sigterm_as_interrupt"]


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt so teardown runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Emulation:
    """The emulated network of one run; a context manager that always tears it down.

    Every process started through :meth:`popen` is killed on exit, the Mininet
    hosts are stopped (their network namespaces, veth pairs and qdiscs vanish
    with them), and host-wide sysctls raised for the run are restored.
    """

    def __init__(
        self, scenario: Scenario, plan: NetworkPlan, workdir: Path, tool: str = "iperf3"
    ) -> None:
        self.scenario = scenario
        self.tool = tool
        self.plan = plan
        self.workdir = workdir
        self.addressing = Addressing(plan)
        self.net: Any = None
        self.processes: list[subprocess.Popen[bytes]] = []
        self.sysctls: dict[str, dict[str, str]] = {}
        #: kernel-wide module parameters this run set (its testbed profile's), as read back
        self.module_parameters: dict[str, str] = {}
        self._restore: dict[str, str] = {}

    def __enter__(self) -> Emulation:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _raise_global(self, key: str, minimum: int) -> None:
        path = Path("/proc/sys", *key.split("."))
        current = int(path.read_text().split()[0])
        if current < minimum:
            self._write_global(path, str(minimum))

    def _write_global(self, path: Path, value: str) -> None:
        """Set a kernel-wide file for this run; :meth:`close` puts the old value back."""
        current = path.read_text().strip()
        if current != value:
            self._restore.setdefault(str(path), current)
            path.write_text(value)

    def _set_module_parameters(self) -> None:
        """The testbed profile's module parameters for this run's congestion controls."""
        wanted = linux.module_parameters(self.scenario)
        for name, value in wanted.items():
            path = Path(name)
            if not path.exists():
                raise CapabilityError(
                    f"{name}: this kernel has no such module parameter, which the scenario's "
                    f"testbed profile ({self.scenario.stack.testbed}) sets"
                )
            self._write_global(path, value)
            self.module_parameters[name] = path.read_text().strip()

    def _start(self) -> None:
        from mininet.link import Link
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import Host

        setLogLevel("error")
        # Mininet.init() would raise host-wide limits and sysctls for good (fixLimits);
        # the few this run needs are raised below and restored at teardown.
        Mininet.inited = True
        tcp = self.scenario.tcp
        for key in ("net.core.rmem_max", "net.core.wmem_max"):
            self._raise_global(key, max(requested_buffers(tcp, self.tool)))
        self.net = Mininet(
            topo=make_topo(self.plan, tcp),
            host=Host,
            link=Link,
            intf=shaped_intf_class(),
            controller=None,
            build=False,
            autoSetMacs=True,
            waitConnected=False,
        )
        self.net.build()
        self._set_module_parameters()
        self.sysctls = configure_network(self.net, self.plan, tcp, self.scenario.stack)

    def node(self, name: str) -> Any:
        """The Mininet node of a plan node."""
        return self.net.get(name)

    def pexec(self, node: str, argv: list[str]) -> tuple[str, str, int]:
        """Run a command in a node's namespace and wait for it."""
        return self.node(node).pexec(argv)

    def popen(
        self, node: str, argv: list[str], stdout: Path | None = None
    ) -> subprocess.Popen[bytes]:
        """Start a command in a node's namespace; it is killed at teardown."""
        out = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
        try:
            proc = self.node(node).popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        finally:
            if stdout:
                out.close()
        self.processes.append(proc)
        return proc

    def close(self) -> None:
        """Tear everything down; safe to call twice and after a partial start."""
        for proc in self.processes:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
        deadline = time.monotonic() + 3.0
        for proc in self.processes:
            try:
                proc.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait()
        self.processes = []
        if self.net is not None:
            net, self.net = self.net, None
            try:
                net.stop()
            finally:
                for host in net.hosts:
                    shell = getattr(host, "shell", None)
                    if shell is not None and shell.poll() is None:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(shell.pid, signal.SIGKILL)
                        shell.wait()
        for path, value in self._restore.items():
            Path(path).write_text(value)
        self._restore = {}

    # ---- helpers used by the run ----------------------------------------

    def wait_listening(self, node: str, port: int, timeout_s: float = 20.0) -> None:
        """Wait until a TCP or UDP server listens on ``port`` in ``node``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out, _, _ = self.pexec(node, ["ss", "-ltnuH"])
            if any(
                line.split()[4].endswith(f":{port}")
                for line in out.splitlines()
                if len(line.split()) > 4
            ):
                return
            time.sleep(0.05)
        raise RuntimeError(f"{node}: no server listening on port {port} after {timeout_s:g} s")
