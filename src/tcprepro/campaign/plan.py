"""What a tier costs before it runs: the runs to do, the cached ones, the wall time.

The cost model of one ns-3 run is a per-run overhead plus the packets its links
carry divided by the measured event-loop throughput (BENCHMARKS.md). Emulated runs
on the native and VM routes run in real time: their duration plus set-up and
probes. On the UML route (virtual clock) a run's wall time follows the measured
wall-time ratio (guest seconds per wall second) at its bottleneck rate, plus the
cost of its samplers; its boots run side by side, one per core
(:func:`estimate_emulated_wall_s`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from pathlib import Path

from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.runs import Run
from tcprepro.models.throughput import padhye_throughput_bps
from tcprepro.scenario import Scenario
from tcprepro.store import open_dataset
from tcprepro.topology import build_plan, flow_path

__all__ = [
    "estimate_emulated_wall_s",
    "estimate_wall_s",
    "is_cached",
    "plan_report",
    "uml_ratio",
]

#: wall-clock cost model of one ns-3 run on one core (measured, see BENCHMARKS.md)
RUN_OVERHEAD_S = 2.5
PACKETS_PER_WALL_S = 35_000.0
#: links a packet crosses on a dumbbell (the estimate's rate counts one per packet); with
#: it, a quick-tier B5.14 run and a C3.3 run are estimated at 18 and 24 s; they took 26.5 and
#: 43 s on a machine shared with the test suite (without it: 8 and 10 s, far too low)
DUMBBELL_HOPS = 3

#: UML route: guest seconds per wall second of a whole run (set-up, a 1-s probe, a 12-s
#: CUBIC flow sampled every 0.5 s) by bottleneck rate, measured on the 2-core machine
#: with other jobs running (docs/emulation.md). Interpolated in log-log between them.
UML_WALL_TIME_RATIO = ((10e6, 0.74), (100e6, 0.46), (500e6, 0.090), (1e9, 0.068))
#: the sampling interval of those runs; the wall seconds each further sample of one
#: namespace costs (it forks ss and tc, 50-110 ms each in UML); and a fixed set-up per run
#: (Mininet's set-up forks many commands). The last two are fitted to runs on the same host
#: at a load of 9-12: study A's cells (10/2 Mb/s, 20 s sampled every 0.1 s in 3 namespaces:
#: 280-290 s), X2 at 10 Mb/s (20 s, 0.5 s: 84 s) and 500 Mb/s (4 s: 133 s), X3 at 1 Gb/s
#: (2 s, 0.1 s: 133-145 s); the model gives 284, 80, 117 and 130 s
UML_RATIO_INTERVAL_S = 0.5
UML_SAMPLE_WALL_S = 0.43
UML_RUN_SETUP_WALL_S = 50.0
#: wall seconds of one UML boot and the guest program's imports (once per boot)
UML_BOOT_WALL_S = 15.0
#: the fidelity probe's guest seconds per run (tcprepro.emulation.runner's default)
PROBE_S = 2.0
#: real-time routes (native, VM): set-up and probes per run, on top of its duration
REAL_TIME_SETUP_S = 30.0


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


def _uml_run_wall_s(scenario: Scenario) -> float:
    """Wall seconds of one run on the UML route (see :data:`UML_WALL_TIME_RATIO`)."""
    plan = build_plan(scenario, 0)
    rates = [d.rate_bps for d in plan.traced.values()] or [
        max(link.a_to_b.rate_bps, link.b_to_a.rate_bps) for link in plan.links
    ]
    wall = UML_RUN_SETUP_WALL_S + (scenario.duration + PROBE_S) / uml_ratio(max(rates))
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


def estimate_emulated_wall_s(runs: Iterable[Run], route: str, cores: int = 1) -> float:
    """Estimated wall time of emulating ``runs`` on ``route``.

    ``native`` and ``vm`` run in real time, one run after the other: each run's
    duration plus :data:`REAL_TIME_SETUP_S`. ``uml`` runs in virtual time: each
    run costs its guest seconds over the measured wall-time ratio at its bottleneck
    rate (:func:`uml_ratio`), its samplers and a fixed set-up, and the runs are shared
    among up to ``cores`` boots side by side, each paying :data:`UML_BOOT_WALL_S` once.
    """
    runs = list(runs)
    if not runs:
        return 0.0
    if route != "uml":
        return sum(run.scenario().duration + REAL_TIME_SETUP_S for run in runs)
    boots = max(1, min(cores, len(runs)))
    loads = [0.0] * boots
    for cost in sorted((_uml_run_wall_s(run.scenario()) for run in runs), reverse=True):
        loads[loads.index(min(loads))] += cost  # longest first onto the least loaded boot
    return UML_BOOT_WALL_S + max(loads)


def is_cached(run: Run, workdir: Path = Path(".")) -> bool:
    """True when the run's dataset exists and was made with the same cache key."""
    path = workdir / run.path
    if not path.exists():
        return False
    try:
        return open_dataset(path).attrs.get("cache_key") == run.cache_key()
    except (OSError, ValueError):
        return False


def plan_report(
    config: WorkflowConfig,
    tier: str,
    cores: int,
    workdir: Path = Path("."),
    route: str | None = None,
) -> str:
    """Say how many simulations a tier needs, how many are cached, and how long the rest take.

    ``route`` is the emulation route the build takes (``native``, ``uml``, ``vm``);
    ``None``: not known, emulated runs are announced in real time.
    """
    lines = [f"tcprepro plan, tier {tier!r}:"]
    todo_all: list[Run] = []
    for figure in config.simulated_figures:
        runs = config.runs(figure, tier)
        todo = [run for run in runs if not is_cached(run, workdir)]
        pending = config.pending_cells(figure, tier)
        note = f", {len(pending)} cells pending (model not built)" if pending else ""
        lines.append(
            f"  {figure}: {len(runs)} runs, {len(runs) - len(todo)} cached, "
            f"{len(todo)} to simulate{note}; about {estimate_wall_s(todo, cores) / 60:.1f} min"
        )
        emulated = config.runs(figure, tier, "mininet")
        if emulated and route == "uml":
            boots = max(1, min(cores, len(emulated)))
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs on the UML route "
                f"(virtual clock, {boots} boot(s) side by side), about "
                f"{estimate_emulated_wall_s(emulated, route, cores) / 60:.0f} min when none is "
                "cached (measured wall-time ratios)"
            )
        elif emulated:
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs in real time, about "
                f"{estimate_emulated_wall_s(emulated, route or 'vm') / 60:.0f} min when none is "
                "cached (if the build includes emulation)"
            )
        todo_all += todo
    estimate = estimate_wall_s(todo_all, cores)
    lines.append(
        f"  total: {len(todo_all)} simulations to run, about {estimate / 60:.1f} min "
        f"of wall time on {cores} core(s)"
    )
    return "\n".join(lines)
