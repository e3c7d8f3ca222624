"""The Mininet backend: run one repetition of a scenario with real Linux TCP.

This module owns one emulated run, on the kernel it runs on (the native
route, or inside the VM of :mod:`tcprepro.emulation.vm` -- the code is the same):

1. capability checks (:func:`check_scenario`): root, Mininet, iperf3, ethtool,
   tc, every qdisc and congestion control the scenario names -- one error
   listing everything missing, before anything starts;
2. the network (:class:`Emulation`): a Mininet topology from
   :func:`tcprepro.topology.build_plan`, shaped interfaces, routes, sysctls;
3. the fidelity probes (:mod:`tcprepro.emulation.fidelity`);
4. the traffic: one iperf3 server per flow on its destination, one client per
   flow on its source started at the planned time with ``-C <linux name>``,
   ``-w <socket buffer>``, and ``-n <bytes>`` for sized flows (``-t`` until the
   end of the run for bulk ones). iperf3's ``-w`` sets the same value on both
   sockets (the client sends it to the server), so a run whose send and
   receive buffers must differ (study D) takes iperf 2 instead
   (``EmulationOptions.traffic_tool = "iperf2"``): ``iperf -s -w <recv_buffer>``
   on the destination, ``iperf -c -w <send_buffer> -Z <linux name>`` on the
   source, as in the thesis;
5. the traces: one sampler per namespace (:mod:`tcprepro.emulation.sampler`)
   reading ``ss -tin`` (cwnd, smoothed RTT, segments, retransmissions, bytes
   received, bytes in flight) and ``tc -s qdisc`` (queue, drops, bytes sent)
   every interval;
   iperf3's JSON gives each flow's totals and the congestion control it used;
6. teardown, always (success, error, Ctrl-C, SIGTERM): every process killed,
   the Mininet hosts stopped (their namespaces and veths vanish with them),
   host-wide sysctls restored;
7. the dataset, in the schema of :mod:`tcprepro.store`.

What the emulation cannot measure is present as NaN and explained in the
``emulation_notes`` attribute: per-flow drop counts (``tc`` counts drops per
queue, not per flow), and random-loss counts when a loss rate is set.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from tcprepro import provenance
from tcprepro.emulation import capabilities, linux
from tcprepro.emulation.fidelity import (
    CpuMonitor,
    FidelityReport,
    LinkProbe,
    Tolerances,
    expected_udp_goodput_bps,
    parse_ping,
    sleep_until,
)
from tcprepro.emulation.topo import (
    Addressing,
    configure_network,
    make_topo,
    qdisc_tree,
    shaped_intf_class,
)
from tcprepro.errors import CapabilityError
from tcprepro.scenario import Scenario, TcpSettings
from tcprepro.store import RawTraces, link_info, make_run_dataset, run_attributes
from tcprepro.topology import NetworkPlan, build_plan
from tcprepro.variants import get_variant

__all__ = [
    "BACKEND",
    "L2_OVERHEAD_BYTES",
    "Emulation",
    "EmulationOptions",
    "check_scenario",
    "run_scenario",
]

BACKEND = "mininet"
#: htb and tc count the Ethernet header (no preamble, FCS or gap) on veth links
L2_OVERHEAD_BYTES = linux.ETHERNET_HEADER_BYTES
#: iperf3 sends a 37-byte cookie on each data connection before the test data
IPERF3_COOKIE_BYTES = 37
SERVER_PORT = 5201
PROBE_PORT = 6201
CLIENT_PORT = 40001

NOTES = {
    "goodput_bps": "from ss bytes_received of the receiving socket at each sample "
    "(iperf3 JSON totals are in the iperf3 attribute)",
    "rtt_s": "the sender's smoothed RTT (ss rtt) at each sample: one sample per interval",
    "cwnd_bytes": "ss cwnd x mss of the sending socket",
    "lost_data_pkts": "NaN: tc counts drops per queue, not per flow",
    "lost_ack_pkts": "NaN: tc counts drops per queue, not per flow",
    "random_lost_pkts": "NaN: netem does not attribute random losses to flows",
    "random_drops_pkts": "0 without a loss rate; NaN with one (netem does not separate them)",
    "link_queue_max_pkts": "largest occupancy among the samples (not between them)",
    "flow_connected_s": "first sample at which the data connection was established",
    "flow_end_s": "first sample at which every byte had arrived (sized flows)",
    "unacked_bytes": "the sender's bytes in flight at each sample (ss bytes_sent - "
    "bytes_retrans - bytes_acked, see tcprepro.emulation.linux.in_flight_bytes), held over "
    "the interval: a sampled average, not a time integral",
}


@dataclass(frozen=True)
class EmulationOptions:
    """How an emulated run is made (not part of the scenario)."""

    route: str = "native"
    probe_s: float = 2.0
    #: ``iperf3`` (both sockets get min(send_buffer, recv_buffer)) or ``iperf2`` (the
    #: server gets recv_buffer, the client send_buffer): see the module docstring
    traffic_tool: str = "iperf3"
    tolerances: Tolerances = field(default_factory=Tolerances)
    extra_attrs: Mapping[str, Any] = field(default_factory=dict)


def check_scenario(scenario: Scenario, tool: str = "iperf3") -> capabilities.Needs:
    """Refuse, before anything starts, a scenario this kernel cannot emulate natively.

    Raises
    ------
    ConfigError
        A variant or queue discipline without a Linux mapping (naming the field).
    CapabilityError
        Listing every missing capability (root, programs, qdiscs, congestion controls).
    """
    needs = capabilities.scenario_needs(scenario) | capabilities.tool_needs(tool)
    missing = capabilities.native_missing(needs)
    if missing:
        lines = "\n  ".join(str(m) for m in missing)
        raise CapabilityError(f"cannot emulate {scenario.id} on this kernel:\n  {lines}")
    return needs


def socket_buffer_bytes(tcp: TcpSettings) -> int:
    """iperf3 ``-w``: the smaller of the scenario's socket buffers (it sets both)."""
    return min(tcp.send_buffer, tcp.recv_buffer)


def requested_buffers(tcp: TcpSettings, tool: str) -> tuple[int, int]:
    """(send, receive) socket buffers the tool requests with ``-w`` (SO_SNDBUF, SO_RCVBUF).

    The kernel doubles each request for its bookkeeping (``socket(7)``) and caps it
    at ``net.core.wmem_max`` / ``rmem_max``, which the run raises to fit.
    """
    if tool == "iperf2":
        return tcp.send_buffer, tcp.recv_buffer
    both = socket_buffer_bytes(tcp)
    return both, both


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
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
            self._restore[key] = str(current)
            path.write_text(str(minimum))

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
        self.sysctls = configure_network(self.net, self.plan, tcp)

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
        for key, value in self._restore.items():
            Path("/proc/sys", *key.split(".")).write_text(value)
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


# ---------------------------------------------------------------------------
# Fidelity probes


def _probe_pairs(plan: NetworkPlan) -> dict[str, tuple[str, str]]:
    """One (src, dst) host pair per traced direction that a flow crosses."""
    pairs: dict[str, tuple[str, str]] = {}
    for flow in plan.flows:
        pairs.setdefault(flow.bottleneck, (flow.src, flow.dst))
    return pairs


def _probe(emu: Emulation, options: EmulationOptions) -> FidelityReport:
    report = FidelityReport(tolerances=options.tolerances)
    tcp = emu.scenario.tcp
    payload = linux.mtu_bytes(tcp) - 28
    for index, (link_name, (src, dst)) in enumerate(_probe_pairs(emu.plan).items()):
        direction = emu.plan.traced[link_name]
        dst_ip = emu.addressing.host_ip(dst)
        forward = emu.addressing.path_directions(src, dst)
        backward = emu.addressing.path_directions(dst, src)
        configured_rtt = sum(d.delay_s for d in forward) + sum(d.delay_s for d in backward)
        emu.pexec(src, ["ping", "-c", "1", "-W", "3", dst_ip])  # ARP resolved before measuring
        ping_out, _, _ = emu.pexec(src, ["ping", "-c", "7", "-i", "0.2", "-W", "3", dst_ip])
        rtt = parse_ping(ping_out)
        replies = [
            line.split("time=")[1].split()[0] for line in ping_out.splitlines() if "time=" in line
        ]
        port = PROBE_PORT + index
        server_log = emu.workdir / f"probe-{link_name}.json"
        server = emu.popen(dst, ["iperf3", "-s", "-1", "-J", "-p", str(port)], server_log)
        emu.wait_listening(dst, port)
        rate = direction.rate_bps * 1.05
        client = emu.popen(
            src,
            [
                "iperf3",
                "-c",
                dst_ip,
                "-p",
                str(port),
                "-u",
                "-b",
                f"{rate:.0f}",
                "-l",
                str(payload),
                "-t",
                f"{options.probe_s:g}",
                "-J",
            ],
            emu.workdir / f"probe-{link_name}-client.json",
        )
        timeout = options.probe_s + 30.0 + configured_rtt * 10
        for proc in (client, server):
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
        received = _udp_received_bps(server_log, options.probe_s)
        report.links.append(
            LinkProbe(
                link=link_name,
                src=src,
                dst=dst,
                configured_rate_bps=direction.rate_bps,
                expected_goodput_bps=expected_udp_goodput_bps(direction.rate_bps, payload),
                probe_goodput_bps=received,
                configured_rtt_s=configured_rtt,
                probe_rtt_s=rtt,
                ping_ms=" ".join(replies),
            )
        )
        # let the queues the probe filled drain before the next probe or the run
        drain = direction.buffer_pkts * linux.frame_bytes(tcp) * 8 / direction.rate_bps
        time.sleep(drain + configured_rtt + 0.2)
    return report


def _udp_received_bps(path: Path, probe_s: float) -> float:
    """Receiver-side UDP goodput from an iperf3 server's JSON (NaN if unreadable).

    Counts the server's whole reporting intervals that end within the probe's
    ``probe_s`` seconds. iperf3's own total divides by the time until the
    client's end-of-test message arrives on the control connection, which
    crosses the same saturated bottleneck: when that segment is dropped, it comes
    one retransmission timeout later, and a 2-s probe at full rate read as about
    6.4 Mb/s on a 10 Mb/s link (2.5 MB over 3.1 s).
    """
    try:
        data = json.loads(path.read_text())
        whole = [
            item["sum"]
            for item in data.get("intervals", [])
            if float(item["sum"]["end"]) <= probe_s + 1e-3 and float(item["sum"]["seconds"]) > 0
        ]
        if whole:
            seconds = sum(float(item["seconds"]) for item in whole)
            return 8.0 * sum(float(item["bytes"]) for item in whole) / seconds
        return float(data["end"]["sum_received"]["bits_per_second"])
    except (OSError, ValueError, KeyError, TypeError):
        return math.nan


# ---------------------------------------------------------------------------
# Traffic and sampling


def _flow_ports(index: int) -> tuple[int, int]:
    return SERVER_PORT + index, CLIENT_PORT + index


def _sampler_plan(emu: Emulation) -> dict[str, dict[str, Any]]:
    """Per node: whether it samples sockets, and which interfaces' qdiscs."""
    plan: dict[str, dict[str, Any]] = {}
    for flow in emu.plan.flows:
        for host in (flow.src, flow.dst):
            plan.setdefault(host, {"ss": False, "tc": {}})["ss"] = True
    for index, link in enumerate(emu.plan.links):
        for node, direction in ((link.a, link.a_to_b), (link.b, link.b_to_a)):
            if direction.trace_name:
                entry = plan.setdefault(node, {"ss": False, "tc": {}})
                entry["tc"][direction.trace_name] = emu.addressing.interface(index)
    return plan


def _client_argv(emu: Emulation, index: int) -> list[str]:
    flow = emu.plan.flows[index]
    port, cport = _flow_ports(index)
    scenario = emu.scenario
    variant = get_variant(flow.variant.name)
    send_buffer, _ = requested_buffers(scenario.tcp, emu.tool)
    if emu.tool == "iperf2":
        argv = [
            "iperf",
            "-c",
            emu.addressing.host_ip(flow.dst),
            "-p",
            str(port),
            "-B",
            f"{emu.addressing.host_ip(flow.src)}:{cport}",
            "-Z",
            str(variant.linux_name),
            "-w",
            str(send_buffer),
            "-e",
        ]
        if flow.size_bytes:
            return [*argv, "-n", str(flow.size_bytes)]
        return [*argv, "-t", str(max(1, math.ceil(scenario.duration - flow.start_s)))]
    argv = [
        "iperf3",
        "-c",
        emu.addressing.host_ip(flow.dst),
        "-p",
        str(port),
        "--cport",
        str(cport),
        "-C",
        str(variant.linux_name),
        "-w",
        str(send_buffer),
        "-J",
        "-i",
        "0",
    ]
    if flow.size_bytes:
        argv += ["-n", str(flow.size_bytes), "-l", str(min(flow.size_bytes, 131072))]
    else:
        argv += ["-t", str(max(1, math.ceil(scenario.duration - flow.start_s)))]
    return argv


def _server_argv(emu: Emulation, index: int) -> list[str]:
    port, _ = _flow_ports(index)
    if emu.tool == "iperf2":
        _, recv_buffer = requested_buffers(emu.scenario.tcp, emu.tool)
        # -w on the listening socket: the accepted one inherits it, window scale included
        return ["iperf", "-s", "-p", str(port), "-w", str(recv_buffer), "-e"]
    return ["iperf3", "-s", "-1", "-J", "-p", str(port)]


def _traffic(emu: Emulation, cpu: CpuMonitor, progress: bool) -> dict[str, Any]:
    scenario = emu.scenario
    interval = scenario.trace.interval
    count = round(scenario.duration / interval)
    workdir = emu.workdir
    for index, flow in enumerate(emu.plan.flows):
        emu.popen(flow.dst, _server_argv(emu, index), workdir / f"server{index}.json")
    for index, flow in enumerate(emu.plan.flows):
        emu.wait_listening(flow.dst, _flow_ports(index)[0])
    go = workdir / "go"
    samplers = {}
    for node, what in _sampler_plan(emu).items():
        argv = [
            sys.executable,
            "-m",
            "tcprepro.emulation.sampler",
            "--out",
            str(workdir / f"samples-{node}.jsonl"),
            "--ready",
            str(workdir / f"ready-{node}"),
            "--go",
            str(go),
            "--interval",
            repr(interval),
            "--count",
            str(count),
        ]
        if what["ss"]:
            argv.append("--ss")
        if what["tc"]:
            argv += ["--tc", *what["tc"].values()]
        samplers[node] = emu.popen(node, argv, workdir / f"sampler-{node}.log")
    deadline = time.monotonic() + 120.0
    while not all((workdir / f"ready-{node}").exists() for node in samplers):
        if time.monotonic() > deadline:
            raise RuntimeError("the trace samplers did not start within 120 s")
        for node, proc in samplers.items():
            if proc.poll() is not None:
                log = (workdir / f"sampler-{node}.log").read_text(errors="replace")[-1000:]
                raise RuntimeError(f"sampler in {node} exited early: {log}")
        time.sleep(0.02)
    t0 = time.monotonic() + 0.3
    go.write_text(f"{t0!r}\n")
    starts: dict[int, float] = {}
    clients = {}
    order = sorted(range(len(emu.plan.flows)), key=lambda i: emu.plan.flows[i].start_s)
    for index in order:
        flow = emu.plan.flows[index]
        sleep_until(t0 + flow.start_s, cpu)
        starts[index] = time.monotonic() - t0
        clients[index] = emu.popen(
            flow.src, _client_argv(emu, index), workdir / f"client{index}.json"
        )
    end = t0 + scenario.duration
    if progress:
        print(f"{scenario.id}: emulating {scenario.duration:g} s in real time", file=sys.stderr)
    sleep_until(end, cpu)
    for node, proc in samplers.items():
        try:
            proc.wait(timeout=30.0 + 5 * interval)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"the sampler in {node} did not finish") from exc
    grace = time.monotonic() + 15.0
    for proc in clients.values():
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.05, grace - time.monotonic()))
    return {"starts": starts, "count": count, "samplers": list(samplers)}


# ---------------------------------------------------------------------------
# Traces -> dataset


def _read_samples(path: Path, count: int) -> list[dict[str, Any] | None]:
    samples: list[dict[str, Any] | None] = [None] * (count + 1)
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                sample = json.loads(line)
                if 0 <= sample["k"] <= count:
                    samples[sample["k"]] = sample
    return samples


def _ffill(values: np.ndarray) -> np.ndarray:
    out = values.copy()
    last = 0.0
    for i, value in enumerate(out):
        if math.isnan(value):
            out[i] = last
        else:
            last = value
    return out


def _flow_series(
    emu: Emulation, samples: dict[str, list], count: int
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    plan = emu.plan
    n_flows = len(plan.flows)
    shape = (count + 1, n_flows)
    rx = np.full(shape, np.nan)
    cwnd = np.full(shape, np.nan)
    srtt = np.full(shape, np.nan)
    data_segs = np.full(shape, np.nan)
    retrans = np.full(shape, np.nan)
    in_flight = np.zeros(shape)  # 0 before the connection and after it closed
    cookie = IPERF3_COOKIE_BYTES if emu.tool == "iperf3" else 0
    cc_counts: list[dict[str, int]] = [{} for _ in range(n_flows)]
    connected = np.full(n_flows, np.nan)
    for index, flow in enumerate(plan.flows):
        port, cport = _flow_ports(index)
        src_ep = linux.endpoint(emu.addressing.host_ip(flow.src), cport)
        dst_ep = linux.endpoint(emu.addressing.host_ip(flow.dst), port)
        for k, sample in enumerate(samples[flow.src]):
            if sample is None:
                continue
            sock = linux.find_socket(linux.parse_ss(sample.get("ss", "")), src_ep, dst_ep)
            if sock is None:
                continue
            if sock.state == "ESTAB":
                if sock.cc:
                    cc_counts[index][sock.cc] = cc_counts[index].get(sock.cc, 0) + 1
                if math.isnan(connected[index]):
                    connected[index] = k
            mss = sock.number("mss", float(emu.scenario.tcp.mss))
            cwnd[k, index] = sock.number("cwnd") * mss
            srtt[k, index] = sock.pair("rtt")[0] / 1000.0
            data_segs[k, index] = sock.number("data_segs_out", 0.0)
            retrans[k, index] = sock.pair("retrans")[1] if "retrans" in sock.fields else 0.0
            in_flight[k, index] = linux.in_flight_bytes(sock, mss)
        for k, sample in enumerate(samples[flow.dst]):
            if sample is None:
                continue
            sock = linux.find_socket(linux.parse_ss(sample.get("ss", "")), dst_ep, src_ep)
            if sock is not None:
                rx[k, index] = max(0.0, sock.number("bytes_received", 0.0) - cookie)
    # cumulative counters hold their last value once a socket is gone (and are 0 before)
    rx = np.fmax.accumulate(np.nan_to_num(rx, nan=0.0), axis=0)
    data_segs = (
        np.column_stack([_ffill(data_segs[:, i]) for i in range(n_flows)]) if n_flows else data_segs
    )
    retrans = (
        np.column_stack([_ffill(retrans[:, i]) for i in range(n_flows)]) if n_flows else retrans
    )
    present = ~np.isnan(srtt)
    rtt_sum = np.cumsum(np.where(present, srtt, 0.0), axis=0)
    rtt_count = np.cumsum(present.astype(float), axis=0)
    nan = np.full(shape, np.nan)
    # a sample missing inside the connection (late or skipped) holds the previous value
    for index in range(n_flows):
        present_k = np.nonzero(~np.isnan(srtt[:, index]))[0]
        if present_k.size:
            first, last = present_k[0], present_k[-1]
            span = in_flight[first : last + 1, index]
            span[np.isnan(srtt[first : last + 1, index])] = np.nan
            in_flight[first : last + 1, index] = _ffill(span)
    interval = emu.scenario.trace.interval
    series = {
        "rx_bytes": rx,
        "cwnd_bytes": cwnd,
        "rtt_sum_s": rtt_sum,
        "rtt_count": rtt_count,
        "tx_data_pkts": data_segs,
        "retx_pkts": retrans,
        "lost_data_pkts": nan,
        "lost_ack_pkts": nan,
        "random_lost_pkts": nan,
        # the store averages each interval from this integral (byte x s) of the samples
        # (sample k stands for the interval that ends at it; sample 0 is the baseline)
        "unacked_byte_s": np.cumsum(np.vstack([in_flight[:1] * 0, in_flight[1:]]) * interval, 0),
    }
    # the congestion control the kernel reported most often for the established socket
    cc_seen = [max(counts, key=counts.get) if counts else "" for counts in cc_counts]
    return series, {"cc": cc_seen, "connected_k": connected}


def _link_series(
    emu: Emulation, samples: dict[str, list], count: int
) -> tuple[list[str], dict[str, np.ndarray]]:
    names: list[str] = []
    columns: dict[str, list[np.ndarray]] = {
        k: [] for k in ("queue_pkts", "queue_bytes", "drops_pkts", "tx_bytes", "random_drops_pkts")
    }
    for index, link in enumerate(emu.plan.links):
        for node, direction in ((link.a, link.a_to_b), (link.b, link.b_to_a)):
            if not direction.trace_name:
                continue
            dev = emu.addressing.interface(index)
            names.append(direction.trace_name)
            qlen = np.full(count + 1, np.nan)
            backlog = np.full(count + 1, np.nan)
            drops = np.full(count + 1, np.nan)
            sent = np.full(count + 1, np.nan)
            for k, sample in enumerate(samples[node]):
                if sample is None or dev not in sample.get("tc", {}):
                    continue
                qdiscs = linux.parse_tc_qdiscs(sample["tc"][dev])
                leaf, shaper = qdiscs.get("3:"), qdiscs.get("2:")
                if leaf is None or shaper is None:
                    continue
                qlen[k] = leaf["qlen_pkts"]
                backlog[k] = leaf["backlog_bytes"]
                drops[k] = leaf["drops"]
                sent[k] = shaper["bytes"]
            baseline_drops = drops[0] if not math.isnan(drops[0]) else 0.0
            baseline_sent = sent[0] if not math.isnan(sent[0]) else 0.0
            columns["queue_pkts"].append(qlen)
            columns["queue_bytes"].append(backlog)
            columns["drops_pkts"].append(_ffill(drops) - baseline_drops)
            columns["tx_bytes"].append(_ffill(sent) - baseline_sent)
            random = np.zeros(count + 1) if direction.loss_rate == 0 else np.full(count + 1, np.nan)
            columns["random_drops_pkts"].append(random)
    series = {
        key: np.column_stack(cols) if cols else np.empty((count + 1, 0))
        for key, cols in columns.items()
    }
    return names, series


def _iperf3_summary(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {"error": "no JSON"}
    if "error" in data:
        return {"error": str(data["error"])}
    end = data.get("end", {})
    return {
        "sent_bytes": end.get("sum_sent", {}).get("bytes"),
        "received_bytes": end.get("sum_received", {}).get("bytes"),
        "seconds": end.get("sum_received", {}).get("seconds"),
        "retransmits": end.get("sum_sent", {}).get("retransmits"),
        "sender_congestion": end.get("sender_tcp_congestion"),
        "receiver_congestion": end.get("receiver_tcp_congestion"),
    }


_IPERF2_UNITS = {"Byte": 1, "KByte": 1024, "MByte": 1024**2, "GByte": 1024**3}


def _iperf2_summary(path: Path) -> dict[str, Any]:
    """Read one end's ``iperf -e`` text output.

    It says which socket buffer the kernel granted (``TCP window size``: twice
    the request) and the request; the report's tail is kept as text.
    """
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return {"error": "no output"}
    out: dict[str, Any] = {"text_tail": text[-600:]}
    match = re.search(r"TCP window size:\s*([\d.]+)\s*(Byte|KByte|MByte|GByte)", text)
    if match:
        out["window_size_bytes"] = round(float(match.group(1)) * _IPERF2_UNITS[match.group(2)])
    match = re.search(r"requested\s*([\d.]+)\s*(Byte|KByte|MByte|GByte)", text)
    if match:
        out["window_requested_bytes"] = round(float(match.group(1)) * _IPERF2_UNITS[match.group(2)])
    return out


def _sampling_lateness(samples: dict[str, list], interval: float) -> tuple[float, float]:
    late = total = 0
    worst = 0.0
    for node_samples in samples.values():
        for sample in node_samples[1:]:
            total += 1
            if sample is None or sample["late_s"] > interval / 2:
                late += 1
            if sample is not None:
                worst = max(worst, float(sample["late_s"]))
    return (late / total if total else math.nan), worst


def run_scenario(
    scenario: Scenario,
    rep: int = 0,
    *,
    options: EmulationOptions | None = None,
    progress: bool = False,
    keep_workdir: Path | None = None,
) -> xr.Dataset:
    """Emulate repetition ``rep`` of ``scenario`` on this kernel and return its dataset.

    Parameters
    ----------
    scenario
        A validated scenario.
    rep
        Repetition index: it selects the random start times (as in ns-3).
    options
        Route (recorded), probe duration, tolerances, extra dataset attributes.
    progress
        Print what happens on stderr.
    keep_workdir
        Copy the raw traces (sampler output, iperf3 JSON) there (debugging).

    Raises
    ------
    CapabilityError
        Before anything starts, listing every missing capability.
    """
    options = options or EmulationOptions()
    scenario.check_rep(rep)
    needs = check_scenario(scenario, options.traffic_tool)
    plan = build_plan(scenario, rep)
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="tcprepro-emu-"))
    try:
        with (
            _sigterm_as_interrupt(),
            Emulation(scenario, plan, workdir, options.traffic_tool) as emu,
        ):
            report = _probe(emu, options)
            cpu = CpuMonitor()
            info = _traffic(emu, cpu, progress)
            report.cpu_mean_busy, report.cpu_saturated_fraction = cpu.summary(
                options.tolerances.cpu_busy
            )
            count = info["count"]
            samples = {
                node: _read_samples(workdir / f"samples-{node}.jsonl", count)
                for node in info["samplers"]
            }
            trees = {}
            for index, link in enumerate(plan.links):
                for node, direction in ((link.a, link.a_to_b), (link.b, link.b_to_a)):
                    if direction.trace_name:
                        trees[direction.trace_name] = qdisc_tree(
                            emu.node(node), emu.addressing.interface(index)
                        )
            sysctls = emu.sysctls
        report.sample_late_fraction, report.sample_max_late_s = _sampling_lateness(
            samples, scenario.trace.interval
        )
        report.judge()
        dataset = _dataset(
            scenario, rep, plan, needs, options, samples, info, report, trees, sysctls, workdir
        )
        dataset.attrs["wall_time_s"] = round(time.perf_counter() - started, 3)
        return dataset
    finally:
        if keep_workdir is not None:
            shutil.copytree(workdir, keep_workdir, dirs_exist_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)


def _dataset(
    scenario: Scenario,
    rep: int,
    plan: NetworkPlan,
    needs: capabilities.Needs,
    options: EmulationOptions,
    samples: dict[str, list],
    info: dict[str, Any],
    report: FidelityReport,
    trees: dict[str, str],
    sysctls: dict[str, dict[str, str]],
    workdir: Path,
) -> xr.Dataset:
    interval = scenario.trace.interval
    count = info["count"]
    tool = options.traffic_tool
    emu_view = _View(scenario, plan, tool)
    flow_series, flow_facts = _flow_series(emu_view, samples, count)
    link_names, link_series = _link_series(emu_view, samples, count)
    summarise = _iperf3_summary if tool == "iperf3" else _iperf2_summary
    iperf3 = {
        flow.name: summarise(workdir / f"server{i}.json") for i, flow in enumerate(plan.flows)
    }
    senders = {
        flow.name: summarise(workdir / f"client{i}.json") for i, flow in enumerate(plan.flows)
    }
    for name, summary in senders.items():
        if tool == "iperf2":  # the two ends report different facts: keep both
            iperf3[name] = {"server": iperf3[name], "client": summary}
            continue
        iperf3[name] = {**iperf3[name], **{k: v for k, v in summary.items() if v is not None}}
    rx_final = flow_series["rx_bytes"][-1] if plan.flows else np.empty(0)
    end_s = np.full(len(plan.flows), np.nan)
    for i, flow in enumerate(plan.flows):
        if flow.size_bytes:
            done = np.nonzero(flow_series["rx_bytes"][:, i] >= flow.size_bytes)[0]
            if done.size:
                end_s[i] = done[0] * interval
    times = interval * np.arange(1, count + 1)
    raw = RawTraces(
        times_s=times,
        flow_names=[f.name for f in plan.flows],
        link_names=link_names,
        flow_series={k: v[1:] for k, v in flow_series.items()},
        link_series={k: v[1:] for k, v in link_series.items()},
        flow_info={
            "flow_variant": [f.variant.name for f in plan.flows],
            "flow_cc_type": [f"linux:{cc}" if cc else "" for cc in flow_facts["cc"]],
            "flow_src": [f.src for f in plan.flows],
            "flow_dst": [f.dst for f in plan.flows],
            "flow_label": [f.label for f in plan.flows],
            "flow_link": [f.bottleneck for f in plan.flows],
            "flow_start_s": [info["starts"].get(i, math.nan) for i in range(len(plan.flows))],
            "flow_connected_s": flow_facts["connected_k"] * interval,
            "flow_end_s": end_s,
            "flow_size_bytes": [f.size_bytes for f in plan.flows],
            "flow_kind": ["sized" if f.size_bytes else "bulk" for f in plan.flows],
            "flow_rx_bytes": rx_final,
        },
        link_info={},
    )
    traced = plan.traced
    directions = [traced[name] for name in link_names]
    queue_max = [
        float(np.nanmax(link_series["queue_pkts"][:, j]))
        if np.isfinite(link_series["queue_pkts"][:, j]).any()
        else math.nan
        for j in range(len(link_names))
    ]
    raw.link_info = link_info(directions, scenario.tcp, L2_OVERHEAD_BYTES, queue_max)
    versions = capabilities.emulation_versions(options.route, tool)
    raw.attrs = {
        **run_attributes(scenario, rep, BACKEND, versions, L2_OVERHEAD_BYTES),
        "route": options.route,
        "iperf3_version": capabilities.iperf3_version(),
        "mininet_version": capabilities.mininet_importable() or "",
        "qdiscs": json.dumps(trees, sort_keys=True),
        "qdiscs_needed": " ".join(needs.qdiscs),
        "congestion_controls_available": " ".join(capabilities.congestion_controls()),
        "sysctls": json.dumps(sysctls, sort_keys=True),
        "offloads": "tso, gso, gro off on every emulated interface (checked with ethtool -k)",
        "socket_buffer_bytes": socket_buffer_bytes(scenario.tcp),
        "traffic_tool": tool,
        "traffic_tool_version": capabilities.tool_version(tool),
        "send_buffer_requested_bytes": requested_buffers(scenario.tcp, tool)[0],
        "recv_buffer_requested_bytes": requested_buffers(scenario.tcp, tool)[1],
        "iperf3": json.dumps(iperf3, sort_keys=True),
        "fidelity": report.to_json(),
        "fidelity_ok": int(report.ok),
        "fidelity_flags": "; ".join(report.flags),
        "emulation_notes": json.dumps(NOTES, sort_keys=True),
        **provenance.static_provenance(),
        **dict(options.extra_attrs),
    }
    ds = make_run_dataset(raw)
    probes = {p.link: p for p in report.links}
    ds["link_probe_goodput_bps"] = (
        "link",
        [probes[n].probe_goodput_bps if n in probes else math.nan for n in link_names],
    )
    ds["link_probe_expected_bps"] = (
        "link",
        [probes[n].expected_goodput_bps if n in probes else math.nan for n in link_names],
    )
    ds["link_probe_rtt_s"] = (
        "link",
        [probes[n].probe_rtt_s if n in probes else math.nan for n in link_names],
    )
    ds["link_probe_configured_rtt_s"] = (
        "link",
        [probes[n].configured_rtt_s if n in probes else math.nan for n in link_names],
    )
    ds["fidelity_ok"] = ((), int(report.ok))
    for name in ("link_probe_goodput_bps", "link_probe_expected_bps"):
        ds[name].attrs["units"] = "bit/s"
    for name in ("link_probe_rtt_s", "link_probe_configured_rtt_s"):
        ds[name].attrs["units"] = "s"
    ds["fidelity_ok"].attrs["description"] = (
        "1: the run passed the fidelity gate (see attribute fidelity)"
    )
    return ds


@dataclass
class _View:
    """What the trace parsers need after the network is gone."""

    scenario: Scenario
    plan: NetworkPlan
    tool: str = "iperf3"

    @property
    def addressing(self) -> Addressing:
        return Addressing(self.plan)
