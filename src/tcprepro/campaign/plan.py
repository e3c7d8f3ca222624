"""What a tier costs before it runs: the runs to do, the cached ones, the wall time.

For the verify tier it also counts the cells each figure's claims read and the
simulated time of every run.

The cost model of one ns-3 run is a per-run overhead plus the packets its links
carry divided by the measured event-loop throughput (BENCHMARKS.md). Emulated runs
on the native and VM routes run in real time: their duration plus set-up and
probes. On the UML route (virtual clock) a run's wall time follows the measured
wall-time ratio (guest seconds per wall second): its probe's at the bottleneck rate,
its traffic's at the rate its flows can carry (window-, loss- and size-limited flows
carry fewer packets than the link), plus the cost of its samplers
(:func:`estimate_emulated_wall_s`).

A build's jobs share its cores: a simulate batch job and an emulated figure's job (one
UML boot, its runs one after the other) each take one core, longest first (the
workflow's job priorities are these estimates, :func:`simulate_job_s` and
:func:`emulate_job_s`), and the build's wall time is their makespan (:func:`build_wall_s`).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tcprepro.campaign.batches import Batch
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.cost import _flow_bound_packets, estimate_wall_s
from tcprepro.campaign.runs import Run, cell_name, is_cached
from tcprepro.emulation.routes import VM, Route, get_route
from tcprepro.errors import ConfigError
from tcprepro.network_plan import build_plan
from tcprepro.scenario import Scenario

__all__ = [
    "CLUSTER_CORES",
    "TIER_COMMANDS",
    "Cost",
    "batch_costs",
    "budget_report",
    "build_wall_s",
    "calibration_runs",
    "calibrations",
    "claim_costs",
    "decide_command",
    "decide_commands",
    "duration_text",
    "emulate_job_s",
    "estimate_emulated_wall_s",
    "estimate_wall_s",
    "is_cached",
    "makespan_s",
    "plan_report",
    "runs_cost",
    "simulate_job_s",
    "study_budgets",
    "tier_cost",
    "uml_ratio",
]

#: UML route: guest seconds per wall second of a run's traffic by the rate it carries,
#: interpolated in log-log. Fitted with the constants below to the wall time of the
#: smoke cells of every twin and the quick cells of X9, X10, X12, X13, X14 and X4, each
#: with its own set-up (tcprepro.emulation.topo: one ip and one tc batch an interface),
#: on the 2-core machine with two boots side by side and nothing else running
#: (``stage_*`` of each dataset). ``tcprepro plan``'s estimate stands for such a host: a
#: run on a loaded one takes longer.
UML_WALL_TIME_RATIO = ((10e6, 3.2), (50e6, 0.6), (1e9, 0.55))
#: the sampling interval the ratios include; the wall seconds each further sample of one
#: namespace costs (it forks ss and tc)
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


def _uml_run_wall_s(scenario: Scenario) -> float:
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


def estimate_emulated_wall_s(runs: Iterable[Run], route: str | Route, cores: int = 1) -> float:
    """Estimated wall time of emulating ``runs`` on ``route`` (a route or its name).

    A route in real time (native, VM) runs them one after the other: each run's
    duration plus :data:`REAL_TIME_SETUP_S`. The virtual-clock route (UML) runs in
    virtual time: each run costs its guest seconds over the measured wall-time ratio at
    its bottleneck rate (:func:`uml_ratio`), its samplers and a fixed set-up, and the
    runs are shared among the route's boots side by side for ``cores`` (each paying
    :data:`UML_BOOT_WALL_S` once).
    """
    runs = list(runs)
    if not runs:
        return 0.0
    route = get_route(route)
    if not route.virtual_clock:
        return sum(run.scenario().duration + REAL_TIME_SETUP_S for run in runs)
    boots = route.boots(len(runs), cores)
    loads = [0.0] * boots
    for cost in sorted((_uml_run_wall_s(run.scenario()) for run in runs), reverse=True):
        loads[loads.index(min(loads))] += cost  # longest first onto the least loaded boot
    return UML_BOOT_WALL_S + max(loads)


def plan_report(
    config: WorkflowConfig,
    tier: str,
    cores: int,
    workdir: Path = Path("."),
    claims: Iterable[str] | None = None,
    route: str | Route | None = None,
) -> str:
    """Say how many simulations a tier needs, how many are cached, and how long the rest take.

    ``claims`` (verify tier only) restricts the plan to the cells those claims read.
    ``route`` is the emulation route the build takes (a route or its name);
    ``None``: not known, emulated runs are announced in real time.
    """
    route = None if route is None else get_route(route)
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
    covered = claim_coverage(config, tier) if tier != "verify" else {}
    calibration = calibrations(config)
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
        batches = config.group_runs(figure, runs)
        waiting = {run.path for run in todo}
        jobs = sum(any(run.path in waiting for run in b.runs) for b in batches)
        lines.append(
            f"  {figure}: {cells}{len(runs)} runs in {len(batches)} batch jobs, "
            f"{len(runs) - len(todo)} cached, {len(todo)} to simulate ({jobs} jobs){note}; "
            f"about {runs_cost(config, todo, cores, calibration=calibration).local_s / 60:.1f} min"
        )
        emulated = config.runs(figure, tier, "mininet")
        if emulated and route is not None and route.virtual_clock:
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs on the {route.title} "
                f"(virtual clock, one boot), about {emulate_job_s(emulated, route) / 60:.0f} "
                "min when none is cached (measured wall-time ratios)"
            )
        elif emulated:
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs in real time, about "
                f"{estimate_emulated_wall_s(emulated, route or VM) / 60:.0f} min when none is "
                "cached (if the build includes emulation)"
            )
        if coverage := covered.get(figure):
            lines.append(
                f"  {figure}: claims' cells in this tier's sweep: "
                + ", ".join(f"{claim} {k}/{n}" for claim, k, n in coverage)
            )
        todo_all += todo
    estimate = runs_cost(config, todo_all, cores, calibration=calibration).local_s
    lines.append(
        f"  total: {len(todo_all)} simulations to run, about {estimate / 60:.1f} min "
        f"of wall time on {cores} core(s)"
    )
    emulated_runs, emulated_s = (0, 0.0)
    if route is not None and route.virtual_clock and claims is None:
        emulated_runs, emulated_s = emulated_cost(config, tier, cores, route)
    if emulated_runs:
        lines.append(
            f"  emulated: up to {emulated_runs} runs on the {route.title}, about "
            f"{emulated_s / 60:.0f} min alone on {cores} core(s) when none is cached (one "
            "boot a figure, figures side by side); with the simulations, sharing the cores "
            "longest job first, about "
            f"{build_wall_s(config, tier, cores, route, calibration=calibration) / 3600:.1f} h"
        )
    if tier == "verify":
        lines.append(f"  simulated time of the verify tier: {simulated_s / 3600:.1f} h")
    return "\n".join(lines)


def emulate_job_s(runs: Iterable[Run], route: str | Route = "uml") -> float:
    """Wall seconds of an emulated figure's job: one boot runs its runs one after the other.

    On a real-time route too (one such job at a time: the host's kernel or cores are shared).
    """
    return estimate_emulated_wall_s(runs, route, cores=1)


def simulate_job_s(
    config: WorkflowConfig, batch: Batch, calibration: Mapping[str, float | None]
) -> float:
    """Wall seconds of a simulate batch job on one core.

    Its runs' cost model times its study's ``calibration`` (:func:`calibrations`), plus a
    local job's start-up (:data:`LOCAL_JOB_OVERHEAD_S`).
    """
    study = config.figure(batch.figure)["study"]
    return batch.cost_s * (calibration.get(study) or 1.0) + LOCAL_JOB_OVERHEAD_S


def _emulated_jobs(
    config: WorkflowConfig,
    tier: str,
    route: str | Route,
    figures: Iterable[str] | None = None,
) -> tuple[int, list[float]]:
    """A tier's emulated runs and each figure's job time when none is cached.

    The twins and D1.1, or the emulated runs of ``figures``.
    """
    runs, jobs = 0, []
    for figure in config.simulated_figures if figures is None else figures:
        emulated = config.runs(figure, tier, "mininet")
        if emulated:
            runs += len(emulated)
            jobs.append(emulate_job_s(emulated, route))
    return runs, jobs


def emulated_cost(
    config: WorkflowConfig, tier: str, cores: int = 2, route: str | Route = "uml"
) -> tuple[int, float]:
    """A tier's emulated runs (the twins, D1.1) and their wall time when none is cached.

    On ``route`` and ``cores`` with nothing else running: on the UML route each figure is
    one job, one boot, and ``cores`` such jobs run side by side, longest first; a
    real-time route runs one job at a time.
    """
    runs, jobs = _emulated_jobs(config, tier, route)
    parallel = cores if get_route(route).virtual_clock else 1
    return runs, makespan_s(jobs, parallel) if jobs else 0.0


def build_wall_s(
    config: WorkflowConfig,
    tier: str,
    cores: int = 2,
    route: str | Route | None = "uml",
    figures: Iterable[str] | None = None,
    twins: Iterable[str] | None = None,
    calibration: Mapping[str, float | None] | None = None,
) -> float:
    """Wall time of a local build of ``tier`` when nothing is cached, on ``cores``.

    Its simulate batch jobs (:func:`simulate_job_s`) and, on a virtual-clock ``route``,
    its emulated figures' jobs (:func:`emulate_job_s`) share the cores, longest first,
    as the workflow's job priorities order them. Real-time emulation (native, VM) and
    ``route`` None count the simulations alone. ``figures`` and ``twins``: the figures
    whose simulations and whose emulated runs the build makes (default: every one).
    """
    calibration = calibrations(config) if calibration is None else calibration
    jobs = [
        simulate_job_s(config, batch, calibration)
        for figure in (config.simulated_figures if figures is None else figures)
        for batch in config.batches(figure, tier)
    ]
    if route is not None and get_route(route).virtual_clock:
        jobs += _emulated_jobs(config, tier, route, twins)[1]
    return makespan_s(jobs, cores) if jobs else 0.0


def claim_coverage(config: WorkflowConfig, tier: str) -> dict[str, list[tuple[str, int, int]]]:
    """Per figure, which of the claims' cells the tier's sweep holds: (claim, held, read).

    The claims registry names the cells (sweep points) each claim reads
    (:meth:`WorkflowConfig.claim_cells`); a tier's sweep holds some or all of them, run
    with the tier's settings (a scaled-down tier runs them shorter or slower: its verdict
    stays inconclusive, docs/claims.md). Dropping a held cell from a tier takes it from
    the claims that read it. The registry is read once, each claim only for the figures
    it names.
    """
    from tcprepro.claims import load_registry
    from tcprepro.claims.cells import claim_cells

    out: dict[str, list[tuple[str, int, int]]] = {}
    held: dict[str, set[str]] = {}  # per figure, the names of the tier's cells
    simulated = set(config.simulated_figures)
    for claim in load_registry():
        for figure in claim_cells(claim.cells):
            if figure not in simulated:
                continue
            cells = config.claim_cells(figure, [claim.id])
            if cells:
                if figure not in held:
                    held[figure] = {cell_name(cell) for cell in config.cells(figure, tier)}
                found = sum(cell_name(c) in held[figure] for c in cells)
                out.setdefault(figure, []).append((claim.id, found, len(cells)))
    return out


# ---------------------------------------------------------------------------
# Budget of a tier for a cluster: core-hours, wall time on N cores, bundle storage


@dataclass(frozen=True)
class StudyMeasurement:
    """One study's runs in the plan's calibration sample (BENCHMARKS.md).

    ``wall_s`` sums each run's own time in its batch process (the batch manifest's);
    ``mib`` is the size of the run datasets.
    """

    runs: int
    simulated_s: float
    wall_s: float
    mib: float

    @property
    def wall_per_simulated_s(self) -> float:
        """Measured wall seconds per simulated second."""
        return self.wall_s / self.simulated_s


#: the calibration sample: every CALIBRATION_STRIDE-th quick-tier run of each figure
#: (:func:`calibration_runs`), which `tcprepro bench` simulates (:data:`MEASURED_QUICK`)
CALIBRATION_STRIDE = 6
#: the calibration sample simulated by two batch processes side by side on the idle 2-core
#: machine, as `tcprepro bench` measures it (its section "The simulation's cost per study",
#: :func:`tcprepro.bench_workflow.calibration_sample`)
MEASURED_QUICK = {
    "A": StudyMeasurement(28, 13600.0, 152.8, 7.27),
    "B": StudyMeasurement(30, 1100.0, 221.8, 4.25),
    "C": StudyMeasurement(13, 1120.0, 215.1, 2.72),
    "D": StudyMeasurement(18, 859.0, 81.9, 2.14),
}
#: what a cluster job costs besides its run's own event loop and writing: starting
#: Snakemake in the job and the tcprepro process. Measured on the one-node test cluster
#: (tests/test_slurm.py): SLURM's elapsed time of the two smoke-tier D1 jobs (41 and 46 s)
#: minus their runs' own wall times (0.7 and 7.1 s), on a 2-core host under load ~10
JOB_OVERHEAD_S = 40.0
#: the same for a job of a local Snakemake run (a new tcprepro process, no Snakemake of its
#: own): Snakemake's job time minus its runs' own wall times, 1.7 s a job over the 17 and
#: the 31 simulate jobs of two smoke-tier builds on the idle 2-core machine; a calibration
#: process's wall time minus its runs', 2.1 s
LOCAL_JOB_OVERHEAD_S = 2.0
#: a bundle holds the run datasets and the combined datasets made of them: the combined
#: ones add this share of the runs' size. Measured on three quick-tier A1 runs (4000
#: samples each, 838 KB) and their combination (773 KB); on the smoke tier, whose tiny
#: files are mostly per-variable overhead, it was 0.63
COMBINED_SHARE = 0.92
#: a .tar.gz bundle's size against the .tar's, on those quick-tier datasets (0.16 on the
#: smoke tier's tiny files)
GZIP_SHARE = 0.62


@dataclass(frozen=True)
class StudyBudget:
    """A study's cost in a tier: runs, simulated and core time, storage."""

    study: str
    runs: int
    simulated_s: float
    core_s: float
    gib: float
    calibration: float | None  # measured / cost model on the quick tier (None: not measured)


def calibration_runs(
    config: WorkflowConfig, study: str, stride: int = CALIBRATION_STRIDE, tier: str = "quick"
) -> list[Run]:
    """A study's calibration sample: every ``stride``-th run of each figure of ``tier``.

    In the config's order; cross-checked figures aside (their ns-3 runs repeat another
    figure's cells).
    """
    return [
        run
        for figure in config.figures_of(study)
        if not config.crosschecked(figure)
        for run in config.runs(figure, tier)[::stride]
    ]


def calibrations(
    config: WorkflowConfig, studies: Iterable[str] | None = None
) -> dict[str, float | None]:
    """Per study, measured quick-tier wall time over the cost model's estimate of those runs.

    None for a study not measured (:data:`MEASURED_QUICK`) or whose quick tier no longer
    has the measured number of runs: its runs keep the cost model alone. ``studies``:
    only those (default: every study of the config).
    """
    out: dict[str, float | None] = {}
    for study in config.studies() if studies is None else studies:
        measured = MEASURED_QUICK.get(study)
        out[study] = None
        if measured is not None:
            quick = calibration_runs(config, study)
            if len(quick) == measured.runs:
                out[study] = measured.wall_s / estimate_wall_s(quick)
    return out


def _run_cost_s(config: WorkflowConfig, run: Run, calibration: Mapping[str, float | None]) -> float:
    """One run's core seconds: the cost model times its study's calibration."""
    return estimate_wall_s([run]) * (calibration.get(config.figure(run.figure)["study"]) or 1.0)


def study_budgets(config: WorkflowConfig, tier: str) -> tuple[list[StudyBudget], list[float]]:
    """Per study, the tier's core time from the measured quick-tier rate; every run's cost.

    The measured rate of a study (wall s per simulated s, :data:`MEASURED_QUICK`) is
    carried to the tier's cells through the cost model (:func:`estimate_wall_s`): each
    run costs its model estimate times the study's calibration (:func:`calibrations`),
    the ratio of the measured quick-tier wall time to the model's estimate of the same
    runs. A paper cell on a faster link thus costs more per simulated second than the
    quick tier's average. Storage: the measured MiB per simulated second.
    """
    budgets, costs = [], []
    calibration = calibrations(config)
    for study in config.studies():
        runs = [r for f in config.figures_of(study) for r in config.runs(f, tier)]
        if not runs:
            continue
        measured = MEASURED_QUICK.get(study)
        run_costs = [_run_cost_s(config, run, calibration) for run in runs]
        simulated = sum(run.scenario().duration for run in runs)
        mib_per_s = measured.mib / measured.simulated_s if measured else 0.0
        budgets.append(
            StudyBudget(
                study,
                len(runs),
                simulated,
                sum(run_costs),
                simulated * mib_per_s / 1024,
                calibration[study],
            )
        )
        costs += run_costs
    return budgets, costs


def batch_costs(
    config: WorkflowConfig, runs: Iterable[Run], run_costs: Iterable[float]
) -> list[float]:
    """Per batch job a build of exactly ``runs`` starts, its runs' summed ``run_costs``.

    The runs are grouped per figure as the workflow groups them
    (:meth:`WorkflowConfig.group_runs`, by the uncalibrated cost model); each job adds
    its start-up on top (:data:`LOCAL_JOB_OVERHEAD_S`, :data:`JOB_OVERHEAD_S`).
    """
    runs, run_costs = list(runs), list(run_costs)
    cost = {run.path: c for run, c in zip(runs, run_costs, strict=True)}
    by_figure: dict[str, list[Run]] = {}
    for run in runs:
        by_figure.setdefault(run.figure, []).append(run)
    return [
        sum(cost[run.path] for run in batch.runs)
        for figure, mine in by_figure.items()
        for batch in config.group_runs(figure, mine)
    ]


def makespan_s(costs: Iterable[float], cores: int) -> float:
    """Wall time of independent jobs on ``cores`` cores: longest first, each to a free core."""
    loads = [0.0] * max(1, cores)
    heapq.heapify(loads)
    for cost in sorted(costs, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + cost)
    return max(loads)


def budget_report(config: WorkflowConfig, tier: str, cores: int) -> str:
    """The tier's budget on ``cores`` cores: core-hours, wall hours, bundle storage.

    Job start-up is counted twice, for a local Snakemake run (:data:`LOCAL_JOB_OVERHEAD_S`
    per job) and for cluster jobs (:data:`JOB_OVERHEAD_S`), which differ tenfold.
    """
    budgets, costs = study_budgets(config, tier)
    runs = [r for s in config.studies() for f in config.figures_of(s) for r in config.runs(f, tier)]
    lines = [
        f"budget of tier {tier!r} (measured quick-tier rates per study, BENCHMARKS.md; "
        "carried to this tier's cells by the cost model):"
    ]
    for b in budgets:
        measured = MEASURED_QUICK.get(b.study)
        rate = (
            f"measured {measured.wall_per_simulated_s:.3f} wall s per simulated s, "
            f"calibration x{b.calibration:.2f}"
            if measured and b.calibration
            else "not measured: cost model alone"
        )
        lines.append(
            f"  study {b.study}: {b.runs} runs, {b.simulated_s / 3600:.1f} simulated h "
            f"({rate}): {b.core_s / 3600:.1f} core-h"
        )
    core_s = sum(b.core_s for b in budgets)
    local_s, cluster_s = LOCAL_JOB_OVERHEAD_S, JOB_OVERHEAD_S
    batches = batch_costs(config, runs, costs)
    local_jobs = [cost + local_s for cost in batches]
    cluster_jobs = [cost + cluster_s for cost in batches]
    jobs = len(local_jobs)
    lines.append(
        f"  total: {len(costs)} runs in {jobs} batch jobs, {core_s / 3600:.1f} core-h of "
        f"simulation + job start-up: {local_s * jobs / 3600:.1f} core-h locally "
        f"({local_s:.1f} s per job), {cluster_s * jobs / 3600:.1f} core-h as cluster jobs "
        f"({cluster_s:.0f} s per job)"
    )
    local_h, cluster_h = (makespan_s(j, cores) / 3600 for j in (local_jobs, cluster_jobs))
    lines.append(
        f"  on {cores} core(s): about {local_h:.1f} h of wall time locally, "
        f"{cluster_h:.1f} h as cluster jobs (longest run {max(costs, default=0.0) / 60:.0f} "
        f"min, longest job {max(batches, default=0.0) / 60:.0f} min of "
        "runs; longest jobs first)"
    )
    runs_gib = sum(b.gib for b in budgets)
    bundle_gib = runs_gib * (1 + COMBINED_SHARE)
    lines.append(
        f"  storage: run datasets about {runs_gib:.2f} GiB; its trace bundle (runs + combined "
        f"datasets) about {bundle_gib:.1f} GiB as .tar, {bundle_gib * GZIP_SHARE:.1f} GiB "
        "as .tar.gz"
    )
    return "\n".join(lines)


#: the cluster size the report and the evaluator's guide quote (docs/cluster.md's example)
CLUSTER_CORES = 64
#: the command that runs each tier (the README's); the verify tier: every claim's cells
TIER_COMMANDS = {
    "smoke": "make figures PROFILE=smoke",
    "quick": "make figures",
    "paper": "make figures PROFILE=paper",
    "verify": "snakemake --profile workflow/profiles/verify claims_tables",
}


@dataclass(frozen=True)
class Cost:
    """What a set of runs costs: on ``cores`` local cores and as jobs on ``cluster_cores``.

    ``core_s`` is the simulation's core time (cost model times each study's calibration);
    ``local_s`` and ``cluster_s`` are wall times with each job's start-up
    (:data:`LOCAL_JOB_OVERHEAD_S`, :data:`JOB_OVERHEAD_S`) once per batch job
    (:func:`batch_costs`), longest jobs first.
    """

    runs: int
    simulated_s: float
    core_s: float
    local_s: float
    cluster_s: float
    cores: int
    cluster_cores: int


def runs_cost(
    config: WorkflowConfig,
    runs: Iterable[Run],
    cores: int = 2,
    cluster_cores: int = CLUSTER_CORES,
    calibration: Mapping[str, float | None] | None = None,
) -> Cost:
    """The :class:`Cost` of ``runs`` (calibrated per study, see :func:`study_budgets`)."""
    runs = list(runs)
    calibration = calibrations(config) if calibration is None else calibration
    costs = [_run_cost_s(config, run, calibration) for run in runs]
    batches = batch_costs(config, runs, costs)
    local = [cost + LOCAL_JOB_OVERHEAD_S for cost in batches]
    cluster = [cost + JOB_OVERHEAD_S for cost in batches]
    return Cost(
        len(runs),
        sum(run.scenario().duration for run in runs),
        sum(costs),
        makespan_s(local, cores) if costs else 0.0,
        makespan_s(cluster, cluster_cores) if costs else 0.0,
        cores,
        cluster_cores,
    )


def tier_cost(
    config: WorkflowConfig, tier: str, cores: int = 2, cluster_cores: int = CLUSTER_CORES
) -> Cost:
    """The simulated runs of a whole tier and their :class:`Cost` (the verify tier: every claim).

    The budget :func:`budget_report` prints, without the emulated runs.
    """
    runs = [run for figure in config.simulated_figures for run in config.runs(figure, tier)]
    return runs_cost(config, runs, cores, cluster_cores)


def claim_costs(
    config: WorkflowConfig,
    claims: Iterable[str],
    cores: int = 2,
    cluster_cores: int = CLUSTER_CORES,
) -> dict[str, Cost]:
    """Per claim, the :class:`Cost` of its verify runs (its cells at the paper's settings).

    The runs ``tcprepro plan --tier verify --claim <id>`` counts: the verify tier's runs
    of the cells the claim reads (:meth:`WorkflowConfig.claim_cells`).
    """
    from dataclasses import replace

    every = replace(
        config,
        data={**config.data, "tier": "verify", "verify_claims": None, "whatif": None},
        _runs={},
    )
    claims = list(claims)
    # only the figures these claims read (a claims job asks for its own study's)
    read = [f for f in every.simulated_figures if every.claim_cells(f, claims)]
    runs = {figure: every.runs(figure, "verify") for figure in read}
    calibration = calibrations(config, sorted({config.figure(f)["study"] for f in read}))
    out = {}
    for claim in claims:
        mine = []
        for figure, found in runs.items():
            names = {cell_name(cell) for cell in every.claim_cells(figure, [claim])}
            mine += [run for run in found if run.cell in names]
        out[claim] = runs_cost(config, mine, cores, cluster_cores, calibration)
    return out


def duration_text(seconds: float) -> str:
    """``"2.3 h"``, ``"12 min"`` or ``"40 s"``: a wall time as the plan quotes it."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def decide_command(claim: str) -> str:
    """The command that runs one claim's verify runs and judges it."""
    return (
        "snakemake --profile workflow/profiles/verify --config tier=verify "
        f"'verify_claims=[\"{claim}\"]' -- claims_tables"
    )


def decide_commands(
    config: WorkflowConfig, claims: Iterable[str], cores: int = 2
) -> dict[str, str]:
    """Per claim, the command that decides it (its verify runs) and what they cost.

    The verify tier runs the claim's cells at the papers' durations and repetitions
    (:meth:`WorkflowConfig.claim_cells`); the cost is :func:`claim_costs` on ``cores``
    cores, the runs ``tcprepro plan --tier verify --claim`` counts.
    """
    out = {}
    for claim, cost in claim_costs(config, claims, cores).items():
        out[claim] = (
            f"its verify runs ({cost.runs} runs at the paper's settings, about "
            f"{duration_text(cost.local_s)} on {cores} cores): `{decide_command(claim)}` "
            f"(`tcprepro plan --tier verify --claim {claim}`)"
        )
    return out
