"""What a tier costs before it runs: the runs to do, the cached ones, the wall time.

For the verify tier it also counts the cells each figure's claims read and the
simulated time of every run.

The cost model of one ns-3 run is a per-run overhead plus the packets its links
carry divided by the measured event-loop throughput (BENCHMARKS.md). Emulated runs
run in real time: their duration plus set-up and probes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.runs import Run, cell_name
from tcprepro.errors import ConfigError
from tcprepro.models.throughput import padhye_throughput_bps
from tcprepro.scenario import Scenario
from tcprepro.store import open_dataset
from tcprepro.topology import build_plan, flow_path

__all__ = ["estimate_wall_s", "is_cached", "plan_report"]

#: wall-clock cost model of one ns-3 run on one core (measured, see BENCHMARKS.md)
RUN_OVERHEAD_S = 2.5
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
    claims: Iterable[str] | None = None,
) -> str:
    """Say how many simulations a tier needs, how many are cached, and how long the rest take.

    ``claims`` (verify tier only) restricts the plan to the cells those claims read.
    """
    if claims is not None:
        claims = list(claims)
        if tier != "verify":
            raise ConfigError("--claim: a plan restricted to claims is a verify-tier plan")
        from tcprepro.claims import load_registry

        unknown = sorted(set(claims) - {c.id for c in load_registry()})
        if unknown:
            raise ConfigError(f"--claim: no claim {', '.join(unknown)} in the registry")
    title = f"tcprepro plan, tier {tier!r}"
    lines = [title + (f", claims {', '.join(claims)}:" if claims else ":")]
    todo_all: list[Run] = []
    simulated_s = 0.0
    for figure in config.simulated_figures:
        runs = config.runs(figure, tier)
        wanted = config.cells(figure, tier)
        if claims is not None:
            wanted = config.claim_cells(figure, claims)
            names = {cell_name(cell) for cell in wanted}
            runs = [run for run in runs if run.cell in names]
        if tier == "verify" and not runs:
            continue  # no claim reads this figure
        todo = [run for run in runs if not is_cached(run, workdir)]
        pending = config.pending_cells(figure, tier)
        note = f", {len(pending)} cells pending (model not built)" if pending else ""
        cells = ""
        if tier == "verify":
            cells = f"{len(wanted)} cells read by the claims, "
            simulated_s += sum(run.scenario().duration for run in runs)
        lines.append(
            f"  {figure}: {cells}{len(runs)} runs, {len(runs) - len(todo)} cached, "
            f"{len(todo)} to simulate{note}; about {estimate_wall_s(todo, cores) / 60:.1f} min"
        )
        emulated = config.runs(figure, tier, "mininet")
        if emulated:  # real time: the duration of each run plus about 30 s of set-up and probes
            real_time_s = sum(run.scenario().duration + 30.0 for run in emulated)
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs in real time, about "
                f"{real_time_s / 60:.0f} min when none is cached (if the build includes emulation)"
            )
        todo_all += todo
    estimate = estimate_wall_s(todo_all, cores)
    lines.append(
        f"  total: {len(todo_all)} simulations to run, about {estimate / 60:.1f} min "
        f"of wall time on {cores} core(s)"
    )
    if tier == "verify":
        lines.append(f"  simulated time of the verify tier: {simulated_s / 3600:.1f} h")
    return "\n".join(lines)
