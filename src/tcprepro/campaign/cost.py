"""The cost model of one ns-3 run: a per-run overhead plus the packets its links carry.

The packets are counted at the links' rates, or fewer when the flows cannot fill them;
divided by the measured event-loop throughput (BENCHMARKS.md). The plan
(:mod:`tcprepro.campaign.plan`) calibrates it per study; the simulate batches
(:mod:`tcprepro.campaign.batches`) group runs by it.
"""

from __future__ import annotations

from collections.abc import Iterable

from tcprepro.campaign.runs import Run
from tcprepro.models.throughput import padhye_throughput_bps
from tcprepro.network_plan import build_plan, flow_path
from tcprepro.scenario import Scenario

__all__ = ["DUMBBELL_HOPS", "PACKETS_PER_WALL_S", "RUN_OVERHEAD_S", "estimate_wall_s"]

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
