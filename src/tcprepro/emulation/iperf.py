"""The traffic tool of an emulated run: iperf3 or iperf 2 command lines and reports.

This module owns how each flow's traffic is made and what the tool says about it
afterwards. One server per flow listens on its destination (port
``SERVER_PORT + i``), and one client per flow on its source (bound to port
``CLIENT_PORT + i``, by which :mod:`tcprepro.emulation.traces` finds the socket in
``ss``) runs with the flow's Linux congestion control, the socket buffer, ``-t`` until
the end of the run, and ``--fq-rate`` for a paced flow (:data:`PACING_MAX_BPS`). These
are the bulk flows: a sized flow is one transfer of :mod:`tcprepro.emulation.transfers`
on the same ports, whose sink times its last byte (iperf's client may exit before a
sample sees a flow that fits in its send buffer).

A flow's ``write_size`` (:class:`tcprepro.scenario.FlowConfig`) is the client's ``-l``,
the bytes handed to the socket per write; unset, the tool's default
(:data:`TOOL_WRITE_BYTES`). It matters on a current kernel: Linux 6.1 keeps a sender
to a small SO_SNDBUF with iperf 2's 128-KiB writes and lets it go far past with 8 or
16-KiB ones (docs/emulation.md, "Study D with real Linux TCP").

iperf3's ``-w`` sets the same value on both sockets (the client sends it to the
server), so a run whose send and receive buffers must differ (study D) takes
iperf 2 instead (``EmulationOptions.traffic_tool = "iperf2"``):
``iperf -s -w <recv_buffer>`` on the destination, ``iperf -c -w <send_buffer> -Z
<linux name>`` on the source, as in the thesis. iperf3's JSON gives each flow's
totals and the congestion control it used; iperf 2's text gives the socket buffer
the kernel granted.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from tcprepro.emulation import linux, transfers
from tcprepro.emulation.topo import NetworkFacts
from tcprepro.network_plan import PlannedFlow
from tcprepro.scenario import TcpSettings

__all__ = [
    "CLIENT_PORT",
    "IPERF3_COOKIE_BYTES",
    "PACING_MAX_BPS",
    "SERVER_PORT",
    "client_argv",
    "flow_ports",
    "iperf2_summary",
    "iperf3_summary",
    "requested_buffers",
    "server_argv",
    "socket_buffer_bytes",
    "write_bytes",
]

#: iperf3 sends a 37-byte cookie on each data connection before the test data
IPERF3_COOKIE_BYTES = 37
SERVER_PORT = 5201
CLIENT_PORT = 40001


#: ``--fq-rate`` of a paced flow's client (bit/s; both tools pass it to SO_MAX_PACING_RATE
#: in bytes/s, a 32-bit value). Any maximum switches Linux's internal TCP pacing on for
#: a congestion control that does not ask for it (Reno, CUBIC...; no ``fq`` qdisc
#: needed since Linux 4.13), at the kernel's own rate: ``tcp_pacing_ss_ratio`` (200 %)
#: of cwnd / sRTT while cwnd < ssthresh / 2, ``tcp_pacing_ca_ratio`` (120 %) after, the
#: rules and defaults of ns-3's pacing (PacingSsRatio, PacingCaRatio), which also leaves
#: the initial window unpaced as Linux does before its first RTT sample (defaults: a
#: testbed profile sets both ratios in both stacks, study B's to 100 %). 10 Gb/s lies
#: above every link of the studies, so the maximum never binds.
PACING_MAX_BPS = 10_000_000_000


#: bytes per write when a flow sets no ``write_size``: today's iperf 2 (Debian's 2.1)
#: and iperf3 write 128 KiB (the iperf 2.0 documentation gives 8 KB)
TOOL_WRITE_BYTES = {"iperf2": 128 * 1024, "iperf3": 128 * 1024}


def write_bytes(flow: PlannedFlow, tool: str) -> int:
    """Bytes a flow's application hands the socket per write.

    A bulk flow's client is ``tool``; a sized flow's sender is
    :mod:`tcprepro.emulation.transfers`'s.
    """
    if flow.write_bytes:
        return flow.write_bytes
    return transfers.WRITE_BYTES if flow.size_bytes else TOOL_WRITE_BYTES[tool]


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


def flow_ports(index: int) -> tuple[int, int]:
    """(server, client) TCP ports of flow ``index``."""
    return SERVER_PORT + index, CLIENT_PORT + index


def client_argv(emu: NetworkFacts, index: int) -> list[str]:
    """The client command of flow ``index``, run on its source at the flow's start."""
    flow = emu.plan.flows[index]
    port, cport = flow_ports(index)
    scenario = emu.scenario
    cc = linux.congestion_control(flow.variant, f"flows.{flow.name}.variant")
    send_buffer, _ = requested_buffers(scenario.tcp, emu.tool)
    # the options both tools spell alike, after each tool's own
    common = ["-l", str(flow.write_bytes)] if flow.write_bytes else []
    if flow.pacing:
        common += ["--fq-rate", str(PACING_MAX_BPS)]
    common += ["-t", str(max(1, math.ceil(scenario.duration - flow.start_s)))]
    if emu.tool == "iperf2":
        return [
            "iperf",
            "-c",
            emu.addressing.host_ip(flow.dst),
            "-p",
            str(port),
            "-B",
            f"{emu.addressing.host_ip(flow.src)}:{cport}",
            "-Z",
            cc,
            "-w",
            str(send_buffer),
            "-e",
            *common,
        ]
    return [
        "iperf3",
        "-c",
        emu.addressing.host_ip(flow.dst),
        "-p",
        str(port),
        "--cport",
        str(cport),
        "-C",
        cc,
        "-w",
        str(send_buffer),
        "-J",
        "-i",
        "0",
        *common,
    ]


def server_argv(emu: NetworkFacts, index: int) -> list[str]:
    """The server command of flow ``index``, started on its destination before the run."""
    port, _ = flow_ports(index)
    if emu.tool == "iperf2":
        _, recv_buffer = requested_buffers(emu.scenario.tcp, emu.tool)
        # -w on the listening socket: the accepted one inherits it, window scale included
        return ["iperf", "-s", "-p", str(port), "-w", str(recv_buffer), "-e"]
    return ["iperf3", "-s", "-1", "-J", "-p", str(port)]


def iperf3_summary(path: Path) -> dict[str, Any]:
    """Read one end's iperf3 JSON: totals and congestion controls (or its error)."""
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


def iperf2_summary(path: Path) -> dict[str, Any]:
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
