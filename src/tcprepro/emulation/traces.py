"""The traces of an emulated run: what the samplers record, read back as arrays.

This module owns both ends of the trace files of
:mod:`tcprepro.emulation.sampler`: which node samples what
(:func:`sampler_plan`: ``ss -tin`` on flow endpoints, ``tc -s qdisc`` on the
egress interface of each traced link direction), and, once the network is gone
(:class:`View`), the per-flow series read from ``ss`` (bytes received, cwnd,
smoothed RTT, segments, retransmissions, bytes in flight) and the per-link
series read from ``tc`` (queue, drops, bytes sent), each counter measured from
sample 0, and how late the samples were taken.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tcprepro.emulation import linux
from tcprepro.emulation.iperf import IPERF3_COOKIE_BYTES, flow_ports
from tcprepro.emulation.topo import Addressing, NetworkFacts
from tcprepro.emulation.transfers import HEADER
from tcprepro.network_plan import NetworkPlan
from tcprepro.scenario import Scenario

__all__ = [
    "View",
    "flow_random_losses",
    "flow_series",
    "link_series",
    "read_samples",
    "sampler_plan",
    "sampling_lateness",
]


def sampler_plan(emu: NetworkFacts) -> dict[str, dict[str, Any]]:
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


def read_samples(path: Path, count: int) -> list[dict[str, Any] | None]:
    """Samples ``0..count`` of one sampler's JSON lines (None where one is missing)."""
    samples: list[dict[str, Any] | None] = [None] * (count + 1)
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                sample = json.loads(line)
                if 0 <= sample["k"] <= count:
                    samples[sample["k"]] = sample
    return samples


def _since_baseline(values: np.ndarray) -> np.ndarray:
    """A cumulative counter counted from its first reading (0 before it; NaN if never read)."""
    present = np.nonzero(~np.isnan(values))[0]
    if not present.size:
        return values.copy()
    out = _ffill(values) - values[present[0]]
    out[: present[0]] = 0.0
    return out


def _ffill(values: np.ndarray) -> np.ndarray:
    out = values.copy()
    last = 0.0
    for i, value in enumerate(out):
        if math.isnan(value):
            out[i] = last
        else:
            last = value
    return out


def flow_series(
    emu: NetworkFacts, samples: dict[str, list], count: int
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Per-flow series (sample x flow) from ``ss`` on each flow's two ends.

    Returns
    -------
    series
        The flow series of :class:`tcprepro.store.RawTraces`, sample 0 included.
    facts
        ``cc``: the congestion control seen most often on each established
        socket; ``connected_k``: the first sample at which it was established;
        ``max_pacing_bps``: the socket's SO_MAX_PACING_RATE as ``ss`` reported it (the
        second value of ``pacing_rate a/b``, NaN when unset: an unpaced socket).
    """
    plan = emu.plan
    n_flows = len(plan.flows)
    shape = (count + 1, n_flows)
    rx = np.full(shape, np.nan)
    cwnd = np.full(shape, np.nan)
    srtt = np.full(shape, np.nan)
    data_segs = np.full(shape, np.nan)
    retrans = np.full(shape, np.nan)
    in_flight = np.zeros(shape)  # 0 before the connection and after it closed
    # bytes before the data: iperf3's cookie, or the header of a sized flow's transfer
    tool_cookie = IPERF3_COOKIE_BYTES if emu.tool == "iperf3" else 0
    cookies = [HEADER.size if flow.size_bytes else tool_cookie for flow in plan.flows]
    cc_counts: list[dict[str, int]] = [{} for _ in range(n_flows)]
    connected = np.full(n_flows, np.nan)
    max_pacing = np.full(n_flows, np.nan)
    # the sender namespace's RTO expiries are one flow's when that flow is its only sender
    timeouts = np.full(shape, np.nan)
    senders = [flow.src for flow in plan.flows]
    counted = False
    for index, flow in enumerate(plan.flows):
        port, cport = flow_ports(index)
        src_ep = linux.endpoint(emu.addressing.host_ip(flow.src), cport)
        dst_ep = linux.endpoint(emu.addressing.host_ip(flow.dst), port)
        for k, sample in enumerate(samples[flow.src]):
            if sample is None:
                continue
            if "netstat" in sample:
                counted = True
                if senders.count(flow.src) == 1:
                    tcp_ext = linux.parse_netstat(sample["netstat"]).get("TcpExt", {})
                    timeouts[k, index] = tcp_ext.get("TCPTimeouts", math.nan)
            sock = linux.find_socket(linux.sample_sockets(sample), src_ep, dst_ep)
            if sock is None:
                continue
            if sock.state == "ESTAB":
                if sock.cc:
                    cc_counts[index][sock.cc] = cc_counts[index].get(sock.cc, 0) + 1
                if math.isnan(connected[index]):
                    connected[index] = k
                max_pacing[index] = linux.max_pacing_bps(sock)
            mss = sock.number("mss", float(emu.scenario.tcp.mss))
            cwnd[k, index] = sock.number("cwnd") * mss
            srtt[k, index] = sock.pair("rtt")[0] / 1000.0
            data_segs[k, index] = sock.number("data_segs_out", 0.0)
            retrans[k, index] = sock.pair("retrans")[1] if "retrans" in sock.fields else 0.0
            in_flight[k, index] = linux.in_flight_bytes(sock, mss)
        for k, sample in enumerate(samples[flow.dst]):
            if sample is None:
                continue
            sock = linux.find_socket(linux.sample_sockets(sample), dst_ep, src_ep)
            if sock is not None:
                rx[k, index] = max(0.0, sock.number("bytes_received", 0.0) - cookies[index])
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
    if counted:  # samplers that read /proc/net/netstat (absent from older runs)
        series["rto_count"] = (
            np.column_stack([_since_baseline(timeouts[:, i]) for i in range(n_flows)])
            if n_flows
            else timeouts
        )
    # the congestion control the kernel reported most often for the established socket
    cc_seen = [max(counts, key=counts.get) if counts else "" for counts in cc_counts]
    return series, {"cc": cc_seen, "connected_k": connected, "max_pacing_bps": max_pacing}


def link_series(
    emu: NetworkFacts, samples: dict[str, list], count: int
) -> tuple[list[str], dict[str, np.ndarray]]:
    """Traced link directions and their series (sample x link) from ``tc`` on each egress."""
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
            netem_drops = np.full(count + 1, np.nan)
            for k, sample in enumerate(samples[node]):
                qdiscs = None if sample is None else linux.sample_qdiscs(sample, dev)
                if qdiscs is None:
                    continue
                netem = qdiscs.get("1:")
                leaf, shaper = qdiscs.get("3:"), qdiscs.get("2:")
                if netem is not None and netem["kind"] == "netem":
                    # netem counts as its own drop every packet its child tree refuses
                    # (the buffer's overflow), on top of the packets it destroys itself
                    netem_drops[k] = netem["drops"] - (leaf["drops"] if leaf else 0)
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
            # netem (root, handle 1:) only where the direction has a delay or a loss; its
            # limit never binds (linux.NETEM_HEADROOM_PKTS): its drops less the buffer's
            # overflow (which it counts too) are the random losses
            columns["random_drops_pkts"].append(
                np.zeros(count + 1) if direction.loss_rate == 0 else _since_baseline(netem_drops)
            )
    series = {
        key: np.column_stack(cols) if cols else np.empty((count + 1, 0))
        for key, cols in columns.items()
    }
    return names, series


def flow_random_losses(
    emu: NetworkFacts, link_names: list[str], link_series: dict[str, np.ndarray], count: int
) -> np.ndarray:
    """Each flow's data packets destroyed by random loss (sample x flow, cumulative).

    netem counts per direction, not per flow: a flow gets the random drops of the
    one lossy direction its data crosses when that direction is traced and carries
    no other flow's data (D3's single transfer); 0 when its path has no loss; NaN
    otherwise (several lossy directions, or shared ones).
    """
    plan = emu.plan
    paths = [
        [d for d in emu.addressing.path_directions(f.src, f.dst) if d.loss_rate > 0]
        for f in plan.flows
    ]
    out = np.full((count + 1, len(plan.flows)), np.nan)
    for index, lossy in enumerate(paths):
        if not lossy:
            out[:, index] = 0.0
            continue
        name = lossy[0].trace_name
        shared = any(
            any(d.trace_name == name for d in other) for j, other in enumerate(paths) if j != index
        )
        if len(lossy) == 1 and name in link_names and not shared:
            out[:, index] = link_series["random_drops_pkts"][:, link_names.index(name)]
    return out


def sampling_lateness(samples: dict[str, list], interval: float) -> tuple[float, float]:
    """Fraction of samples late by more than half an interval (or missing), worst lateness."""
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


@dataclass
class View:
    """What the trace parsers need after the network is gone."""

    scenario: Scenario
    plan: NetworkPlan
    tool: str = "iperf3"

    @property
    def addressing(self) -> Addressing:
        """The addresses and interface names of the plan (as in the network)."""
        return Addressing(self.plan)
