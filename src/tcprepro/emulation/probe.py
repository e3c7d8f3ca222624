"""The fidelity probes made on the emulated network before each run.

This module owns the measurements behind the "before the run" checks of
:mod:`tcprepro.emulation.fidelity`: for each traced link direction that a flow
crosses, from the first such flow's source to its destination, an unloaded
``ping`` (one to resolve ARP, then 7 replies) and a UDP probe at 105 % of the
direction's rate, sent by the run's traffic tool (iperf3 or iperf 2) and read at the
receiver (:func:`udp_received_bps`, :func:`iperf2_udp_received_bps`). The
results go into a :class:`~tcprepro.emulation.fidelity.FidelityReport`.
"""

from __future__ import annotations

import json
import math
import subprocess
import time
from pathlib import Path

from tcprepro.emulation import linux
from tcprepro.emulation.fidelity import (
    FidelityReport,
    LinkProbe,
    Tolerances,
    expected_udp_goodput_bps,
    parse_ping,
)
from tcprepro.emulation.network import Emulation
from tcprepro.network_plan import NetworkPlan

__all__ = ["PROBE_PORT", "iperf2_udp_received_bps", "probe_links", "udp_received_bps"]

PROBE_PORT = 6201
#: report interval of the iperf 2 probe's server (s)
IPERF2_REPORT_S = 0.5


def _probe_pairs(plan: NetworkPlan) -> dict[str, tuple[str, str]]:
    """One (src, dst) host pair per traced direction that a flow crosses."""
    pairs: dict[str, tuple[str, str]] = {}
    for flow in plan.flows:
        pairs.setdefault(flow.bottleneck, (flow.src, flow.dst))
    return pairs


def probe_links(
    emu: Emulation, probe_s: float, tolerances: Tolerances, tool: str = "iperf3"
) -> FidelityReport:
    """Probe rate and RTT of each traced direction a flow crosses, one after the other.

    Parameters
    ----------
    emu
        The network, built and idle.
    probe_s
        Duration of each UDP probe.
    tolerances
        Those of the report returned (judged later, with the run's other checks).
    tool
        ``iperf3`` or ``iperf2``: the program sending and receiving the UDP probe.
        The run's traffic tool sends the probe too. iperf 2 sleeps between datagrams
        (``clock_nanosleep``), iperf3 wakes on a select() loop that reads the clock:
        on UML's virtual clock, where every clock read is a traced syscall, a 1-s probe
        cost 8.5 / 7.7 / 20.9 / 34.5 wall s with iperf3 at 10 / 100 / 500 / 1000 Mb/s and
        1.7 / 3.0 / 6.5 / 15.2 with iperf 2 (both 0.98-1.00 of the expected goodput).

    Returns
    -------
    FidelityReport
        One :class:`~tcprepro.emulation.fidelity.LinkProbe` per probed direction.
    """
    report = FidelityReport(tolerances=tolerances)
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
        iperf2 = tool == "iperf2"
        ext = "csv" if iperf2 else "json"
        server_log = emu.workdir / f"probe-{link_name}.{ext}"
        client_log = emu.workdir / f"probe-{link_name}-client.{ext}"
        server = emu.popen(dst, _server_argv(tool, port), server_log)
        emu.wait_listening(dst, port)
        rate = direction.rate_bps * 1.05
        client = emu.popen(
            src, _client_argv(tool, dst_ip, port, rate, payload, probe_s), client_log
        )
        timeout = probe_s + 30.0 + configured_rtt * 10
        try:
            client.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            client.kill()
        if iperf2:  # its server stays up: let the last datagrams land, then end it
            time.sleep(configured_rtt + 0.5)
            server.terminate()
        try:
            server.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            server.kill()
        received = (iperf2_udp_received_bps if iperf2 else udp_received_bps)(server_log, probe_s)
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


def _server_argv(tool: str, port: int) -> list[str]:
    if tool == "iperf2":  # CSV reports every 0.5 s of the received datagrams
        return ["iperf", "-s", "-u", "-p", str(port), "-i", f"{IPERF2_REPORT_S:g}", "-y", "C"]
    return ["iperf3", "-s", "-1", "-J", "-p", str(port)]


def _client_argv(
    tool: str, dst_ip: str, port: int, rate_bps: float, payload: int, probe_s: float
) -> list[str]:
    common = ["-c", dst_ip, "-p", str(port), "-u", "-b", f"{rate_bps:.0f}", "-l", str(payload)]
    if tool == "iperf2":
        return ["iperf", *common, "-t", f"{probe_s:g}", "-y", "C"]
    return ["iperf3", *common, "-t", f"{probe_s:g}", "-J"]


def iperf2_udp_received_bps(path: Path, probe_s: float) -> float:
    """Receiver-side UDP goodput from an iperf 2 server's CSV reports (NaN if none).

    As :func:`udp_received_bps`: the whole reporting intervals that end within the
    probe's ``probe_s`` seconds (the server's last line, the whole test, is left out
    when there are intervals: it runs to the client's final datagram).
    """
    intervals = []
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return math.nan
    for line in lines:
        fields = line.split(",")
        if len(fields) < 9:
            continue
        try:
            start, end = (float(v) for v in fields[6].split("-"))
            intervals.append((start, end, float(fields[7])))
        except ValueError:
            continue
    whole = [
        (s, e, b)
        for s, e, b in intervals
        if abs(e - s - IPERF2_REPORT_S) < 1e-3 and e <= probe_s + 1e-3
    ]
    if whole:
        seconds = sum(e - s for s, e, _ in whole)
        return 8.0 * sum(b for _, _, b in whole) / seconds
    if intervals:  # a probe shorter than one report interval: the whole test
        start, end, total = intervals[-1]
        return 8.0 * total / (end - start) if end > start else math.nan
    return math.nan


def udp_received_bps(path: Path, probe_s: float) -> float:
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
