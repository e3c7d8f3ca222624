"""The cost models of one run: in ns-3, and emulated on the UML route.

ns-3: a per-run overhead plus the packets its links carry, counted at the links' rates,
or fewer when the flows cannot fill them, divided by the measured event-loop throughput
(BENCHMARKS.md). The plan (:mod:`tcprepro.campaign.plan`) calibrates it per study; the
simulate batches (:mod:`tcprepro.campaign.batches`) group runs by it.

UML: the run's set-up per node, its probe and its traffic over the measured wall-time
ratio at the rate they carry, and its samplers (:func:`uml_run_wall_s`). The plan
calibrates it per emulated figure.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

from tcprepro.campaign.runs import Run
from tcprepro.models.throughput import padhye_throughput_bps
from tcprepro.network_plan import build_plan, flow_path
from tcprepro.scenario import Scenario

__all__ = [
    "DUMBBELL_HOPS",
    "PACKETS_PER_WALL_S",
    "PROBE_S",
    "REAL_TIME_SETUP_S",
    "RUN_OVERHEAD_S",
    "UML_BOOT_WALL_S",
    "UML_SETUP_WALL_S_PER_NODE",
    "UML_WALL_TIME_RATIO",
    "estimate_wall_s",
    "uml_ratio",
    "uml_run_wall_s",
]

#: wall-clock cost model of one ns-3 run on one core (measured, see BENCHMARKS.md). The
#: overhead is a run's time in its batch process besides its event loop (scenario, set-up,
#: dataset): 0.08 s, the mean over the 89 runs of the plan's calibration sample (0.05-0.16
#: s per study); the process's own start-up is the job's (campaign.plan)
RUN_OVERHEAD_S = 0.08
PACKETS_PER_WALL_S = 35_000.0
#: links a packet crosses on a dumbbell (the estimate's rate counts one per packet); with
#: it, a quick-tier B5.14 run and a C3.3 run are estimated at 18 and 24 s; they took 26.5 and
#: 43 s on a machine shared with the test suite (without it: 8 and 10 s, far too low)
DUMBBELL_HOPS = 3


def _flow_bound_packets(scenario: Scenario) -> float:
    """Packets (data and ACKs) the flows of a run can send at most.

    Each flow sends at most at the rate of its narrowest link, of its window
    (the smaller socket buffer per RTT) and, under random loss, of the Padhye
    model; a sized flow sends at most its size. ACKs add one packet per
    ``delayed_ack_count`` data packets. Traffic generators are not bounded here
    (``inf``): their load is their own.
    """
    if scenario.traffic:
        return float("inf")
    tcp = scenario.tcp
    plan = build_plan(scenario, 0)
    packet_bits = 8.0 * tcp.packet_bytes
    total = 0.0
    for flow in plan.flows:
        path = flow_path(plan, flow)
        rate_bps = path.rate_bps
        if path.rtt_s > 0:
            rate_bps = min(rate_bps, 8.0 * min(tcp.send_buffer, tcp.recv_buffer) / path.rtt_s)
            if path.loss_rate > 0:
                padhye = padhye_throughput_bps(
                    tcp.mss,
                    path.rtt_s,
                    path.loss_rate,
                    max(tcp.min_rto, path.rtt_s),
                    tcp.recv_buffer / tcp.mss,
                    tcp.delayed_ack_count,
                )
                rate_bps = min(rate_bps, float(padhye))
        data_pkts = scenario.duration * rate_bps / packet_bits
        if flow.size_bytes:
            data_pkts = min(data_pkts, flow.size_bytes / tcp.mss)
        total += data_pkts * (1.0 + 1.0 / tcp.delayed_ack_count)
    return total


def estimate_wall_s(runs: Iterable[Run], cores: int = 1) -> float:
    """Estimated wall time of running ``runs`` on ``cores`` cores (ns-3 backend).

    The cost model is a per-run overhead (interpreter, library load, writing)
    plus the packets the traced links carry divided by the measured event-loop
    throughput (:data:`PACKETS_PER_WALL_S`): the links' packets at full rate,
    or fewer when the flows cannot fill them (window-, loss- or size-limited
    flows, see :func:`_flow_bound_packets`).
    """
    total = 0.0
    for run in runs:
        scenario = run.scenario()
        rate_bps = 0.0
        topo = scenario.topology
        for name in ("downlink", "uplink", "bottleneck", "reverse"):
            direction = getattr(topo, name, None)
            if direction is not None:
                rate_bps += direction.rate
        packets = scenario.duration * rate_bps / (8 * scenario.tcp.packet_bytes)
        packets = min(packets, _flow_bound_packets(scenario))
        # the rate was measured on study A's access link, one link per packet; on a
        # dumbbell each packet (and its ACK) crosses three: access, bottleneck, receiver's
        hops = DUMBBELL_HOPS if getattr(topo, "kind", "") == "dumbbell" else 1
        total += RUN_OVERHEAD_S + hops * packets / PACKETS_PER_WALL_S
    return total / max(1, cores)


#: UML route: guest seconds per wall second of a run's traffic by the rate it carries,
#: interpolated in log-log. Fitted with the constants below to the wall time of the
#: smoke cells of every twin and the quick cells of X9, X10, X12, X13, X14 and X4, each
#: with its own set-up (tcprepro.emulation.topo: one ip and one tc batch an interface),
#: on the 2-core machine with two boots side by side and nothing else running
#: (``stage_*`` of each dataset), when each sample started ss and tc. The base of the
#: model: each figure's measured calibration (:func:`uml_calibrations`) scales it to what
#: its runs cost with today's samplers. ``tcprepro plan``'s estimate stands for such a
#: host: a run on a loaded one takes longer.
UML_WALL_TIME_RATIO = ((10e6, 3.2), (50e6, 0.6), (1e9, 0.55))
#: the sampling interval the ratios include; the wall seconds each further sample of one
#: namespace cost when it forked ss and tc (a figure's calibration scales them to today's)
UML_RATIO_INTERVAL_S = 0.5
UML_SAMPLE_WALL_S = 0.1
#: the network's set-up per node, relays included: its ip, tc, ethtool and sysctl
#: commands, about 0.15 s of host time each in UML (measured: 1.5-2.0 s a node)
UML_SETUP_WALL_S_PER_NODE = 1.75
#: reading the samples and queues back, the teardown and the dataset, per run
UML_RUN_OTHER_WALL_S = 1.5
#: wall seconds of one UML boot, the guest program's imports and the job around them
#: (once per boot)
UML_BOOT_WALL_S = 20.0
#: the fidelity probe's guest seconds per run (tcprepro.emulation.runner's default)
PROBE_S = 2.0
#: real-time routes (native, VM): set-up and probes per run, on top of its duration
REAL_TIME_SETUP_S = 30.0


def uml_ratio(rate_bps: float) -> float:
    """Measured wall-time ratio of the UML route at ``rate_bps`` (guest s per wall s)."""
    points = [(math.log(r), math.log(v)) for r, v in UML_WALL_TIME_RATIO]
    x = math.log(max(rate_bps, 1.0))
    if x <= points[0][0]:
        return UML_WALL_TIME_RATIO[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x <= x1:
            return math.exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0))
    return UML_WALL_TIME_RATIO[-1][1]


def uml_run_wall_s(scenario: Scenario) -> float:
    """Wall seconds of one run on the UML route (see :data:`UML_WALL_TIME_RATIO`)."""
    from tcprepro.emulation.topo import with_relays

    plan = build_plan(scenario, 0)
    rates = [d.rate_bps for d in plan.traced.values()] or [
        max(link.a_to_b.rate_bps, link.b_to_a.rate_bps) for link in plan.links
    ]
    # the probe fills the link; the flows carry what they can send (window-, loss- or
    # size-limited flows fewer packets, and UML's cost is per packet)
    link_bps = max(rates)
    packets = _flow_bound_packets(scenario)
    per_data_pkt = 1.0 + 1.0 / scenario.tcp.delayed_ack_count
    flows_bps = packets / per_data_pkt * 8.0 * scenario.tcp.packet_bytes / scenario.duration
    traffic_bps = min(link_bps, flows_bps)
    wall = (
        UML_SETUP_WALL_S_PER_NODE * len(with_relays(plan).nodes)
        + UML_RUN_OTHER_WALL_S
        + PROBE_S / uml_ratio(link_bps)
        + scenario.duration / uml_ratio(traffic_bps)
    )
    # samplers: one per namespace holding a flow's end or a traced queue
    sampled = {h for flow in plan.flows for h in (flow.src, flow.dst)}
    sampled |= {
        node
        for link in plan.links
        for node, direction in ((link.a, link.a_to_b), (link.b, link.b_to_a))
        if direction.trace_name
    }
    interval = float(scenario.trace.interval)
    extra = scenario.duration * (1.0 / interval - 1.0 / UML_RATIO_INTERVAL_S)
    return wall + max(0.0, extra) * len(sampled) * UML_SAMPLE_WALL_S
