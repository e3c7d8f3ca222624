"""What a tier costs before it runs: the runs to do, the cached ones, the wall time.

For the verify tier it also counts the cells each figure's claims read and the
simulated time of every run.

The cost model of one ns-3 run is a per-run overhead plus the packets its links
carry divided by the measured event-loop throughput (BENCHMARKS.md). Emulated runs
on the native and VM routes run in real time: their duration plus set-up and
probes. On the UML route (virtual clock) a run's wall time follows the measured
wall-time ratio (guest seconds per wall second): its probe's at the bottleneck rate,
its traffic's at the rate its flows can carry (window-, loss- and size-limited flows
carry fewer packets than the link), plus the cost of its samplers, times its figure's
calibration on a measured sample of its quick-tier runs (:func:`estimate_emulated_wall_s`,
:func:`uml_calibrations`).

A build's jobs share its cores: a simulate batch job and an emulated figure's job (one
UML boot, its runs one after the other) each take one core, longest first (the
workflow's job priorities are these estimates, :func:`simulate_job_s` and
:func:`emulate_job_s`), and the build's wall time is their makespan (:func:`build_wall_s`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tcprepro.campaign.batches import Batch
from tcprepro.campaign.calibration import (
    calibration_factor,
    calibration_runs,
    calibrations,
    tier_calibration,
    tier_calibrations,
    uml_calibrations,
    uml_sample_runs,
)
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.cost import (  # the UML route's run model lives with ns-3's
    REAL_TIME_SETUP_S,
    UML_BOOT_WALL_S,
    estimate_wall_s,
    uml_ratio,
    uml_run_wall_s,
)
from tcprepro.campaign.cost_records import (
    CostRecord,
    describe,
    recorded_calibrations,
    recorded_figures,
)
from tcprepro.campaign.measured import (
    MEASURED_QUICK,
    UML_NEIGHBOUR_SLOWDOWN,
)
from tcprepro.campaign.runs import Run, cell_name, is_cached
from tcprepro.campaign.schedule import makespan_s, shared_makespan_s
from tcprepro.emulation.routes import VM, Route, get_route
from tcprepro.errors import ConfigError
from tcprepro.yamlfile import load_yaml

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
    "tier_calibration",
    "tier_calibrations",
    "tier_cost",
    "tier_emulation",
    "twin_claims",
    "uml_calibrations",
    "uml_ratio",
    "uml_run_wall_s",
    "uml_sample_runs",
]


def estimate_emulated_wall_s(
    runs: Iterable[Run],
    route: str | Route,
    cores: int = 1,
    calibration: Mapping[str, float | None] | None = None,
) -> float:
    """Estimated wall time of emulating ``runs`` on ``route`` (a route or its name).

    A route in real time (native, VM) runs them one after the other: each run's
    duration plus :data:`REAL_TIME_SETUP_S`. The virtual-clock route (UML) runs in
    virtual time: each run costs its guest seconds over the measured wall-time ratio at
    its bottleneck rate (:func:`uml_ratio`), its samplers and a fixed set-up, times its
    figure's ``calibration`` (:func:`uml_calibrations`; none: the model alone), and the
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
    calibration = calibration or {}
    costs = (uml_run_wall_s(run.scenario()) * (calibration.get(run.figure) or 1.0) for run in runs)
    for cost in sorted(costs, reverse=True):
        loads[loads.index(min(loads))] += cost  # longest first onto the least loaded boot
    return UML_BOOT_WALL_S + max(loads)


def plan_report(
    config: WorkflowConfig,
    tier: str,
    cores: int,
    workdir: Path = Path("."),
    claims: Iterable[str] | None = None,
    route: str | Route | None = None,
    recorded: Mapping[str, CostRecord] | None = None,
) -> str:
    """Say how many simulations a tier needs, how many are cached, and how long the rest take.

    ``claims`` (verify tier only) restricts the plan to the cells those claims read.
    ``route`` is the emulation route the build takes (a route or its name);
    ``None``: not known, emulated runs are announced in real time. A figure is
    calibrated on its cached runs of the tier when it has enough
    (:func:`tier_calibration`), else on its latest run-cost record of the tier
    (``recorded``, default :func:`recorded_calibrations` of ``records/run-costs.csv``),
    else on the quick-tier sample (:func:`calibrations`).
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
    judged = twin_claims()
    recorded = recorded_calibrations(tier) if recorded is None else recorded
    quick = calibrations(config)
    calibration = tier_calibrations(config, tier, recorded)
    uml_calibration = uml_calibrations(config)
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
        measured = tier_calibration(config, figure, tier, workdir) if todo else None
        recalibrated = ""
        if measured is not None:
            factor, count = measured
            recalibrated = f" (calibrated on its {count} cached runs of this tier: x{factor:.2f}"
            calibration = {**calibration, figure: factor}
        elif todo and figure in recorded:
            record = recorded[figure]
            recalibrated = f" (calibrated on {describe(record, tier)}: x{record.factor:.2f}"
        if recalibrated:
            recalibrated += (
                " the cost model, where the quick-tier sample gives "
                f"x{calibration_factor(config, figure, quick):.2f})"
            )
        lines.append(
            f"  {figure}: {cells}{len(runs)} runs in {len(batches)} batch jobs, "
            f"{len(runs) - len(todo)} cached, {len(todo)} to simulate ({jobs} jobs){note}; "
            f"about {runs_cost(config, todo, cores, calibration=calibration).local_s / 60:.1f} min"
            + recalibrated
        )
        emulated = config.runs(figure, tier, "mininet")
        if emulated and route is not None and route.virtual_clock:
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs on the {route.title} "
                f"(virtual clock, one boot), about "
                f"{emulate_job_s(emulated, route, uml_calibration) / 60:.0f} min when none is "
                "cached" + ("" if uml_calibration.get(figure) else " (not calibrated)")
            )
        elif emulated:
            lines.append(
                f"  {figure}: plus up to {len(emulated)} emulated runs in real time, about "
                f"{estimate_emulated_wall_s(emulated, route or VM) / 60:.0f} min when none is "
                "cached (if the build includes emulation)"
            )
        if emulated:
            twice = judged.get(figure)
            lines.append(
                f"  {figure}: its emulated runs cross-check {len(config.cells(figure, tier))} "
                "cells against ns-3"
                + (f" and judge {', '.join(twice)} a second time, on Linux" if twice else "")
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


def emulate_job_s(
    runs: Iterable[Run],
    route: str | Route = "uml",
    calibration: Mapping[str, float | None] | None = None,
) -> float:
    """Wall seconds of an emulated figure's job: one boot runs its runs one after the other.

    On a real-time route too (one such job at a time: the host's kernel or cores are shared).
    ``calibration``: per figure, as :func:`uml_calibrations` gives it.
    """
    return estimate_emulated_wall_s(runs, route, cores=1, calibration=calibration)


def simulate_job_s(
    config: WorkflowConfig, batch: Batch, calibration: Mapping[str, float | None]
) -> float:
    """Wall seconds of a simulate batch job on one core.

    Its runs' cost model times its figure's or study's ``calibration`` (:func:`calibrations`),
    plus a local job's start-up (:data:`LOCAL_JOB_OVERHEAD_S`).
    """
    factor = calibration_factor(config, batch.figure, calibration)
    return batch.cost_s * factor + LOCAL_JOB_OVERHEAD_S


def _emulated_jobs(
    config: WorkflowConfig,
    tier: str,
    route: str | Route,
    figures: Iterable[str] | None = None,
) -> tuple[int, list[float]]:
    """A tier's emulated runs and each figure's job time when none is cached.

    The twins and D1.1, or the emulated runs of ``figures``; computed once per config
    (the report's tier table asks for them twice per tier).
    """
    wanted = tuple(config.simulated_figures if figures is None else figures)

    def compute() -> tuple[int, list[float]]:
        runs, jobs = 0, []
        calibration = uml_calibrations(config)
        for figure in wanted:
            emulated = config.runs(figure, tier, "mininet")
            if emulated:
                runs += len(emulated)
                jobs.append(emulate_job_s(emulated, route, calibration))
        return runs, jobs

    return config.derived(f"emulated_jobs:{tier}:{get_route(route).name}:{wanted}", compute)


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
    as the workflow's job priorities order them, a simulate job running beside an emulated
    one :data:`UML_NEIGHBOUR_SLOWDOWN` times slower (:func:`shared_makespan_s`). Real-time
    emulation (native, VM) and ``route`` None count the simulations alone. ``figures``
    and ``twins``: the figures whose simulations and whose emulated runs the build makes
    (default: every one). ``calibration``: default :func:`tier_calibrations`.
    """
    calibration = tier_calibrations(config, tier) if calibration is None else calibration
    jobs = [
        simulate_job_s(config, batch, calibration)
        for figure in (config.simulated_figures if figures is None else figures)
        for batch in config.batches(figure, tier)
    ]
    emulated: list[float] = []
    if route is not None and get_route(route).virtual_clock:
        emulated = _emulated_jobs(config, tier, route, twins)[1]
    return shared_makespan_s(jobs, emulated, cores, UML_NEIGHBOUR_SLOWDOWN)


def twin_claims() -> dict[str, list[str]]:
    """Per emulated figure, the claims it judges a second time on Linux (the registry's twins)."""
    from tcprepro.claims import load_registry

    out: dict[str, list[str]] = {}
    for claim in load_registry():
        if claim.twin is not None:
            out.setdefault(claim.twin[0], []).append(claim.id)
    return out


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


def _run_cost_s(config: WorkflowConfig, run: Run, calibration: Mapping[str, float | None]) -> float:
    """One run's core seconds: the cost model times its :func:`calibration_factor`."""
    return estimate_wall_s([run]) * calibration_factor(config, run.figure, calibration)


def study_budgets(config: WorkflowConfig, tier: str) -> tuple[list[StudyBudget], list[float]]:
    """Per study, the tier's core time from the measured quick-tier rate; every run's cost.

    The measured rate of a study (wall s per simulated s, :data:`MEASURED_QUICK`) is
    carried to the tier's cells through the cost model (:func:`estimate_wall_s`): each
    run costs its model estimate times the study's calibration (:func:`calibrations`),
    the ratio of the measured quick-tier wall time to the model's estimate of the same
    runs. A paper cell on a faster link thus costs more per simulated second than the
    quick tier's average. A figure with a run-cost record of the tier
    (:func:`recorded_calibrations`) takes its recorded factor instead. Storage: the
    measured MiB per simulated second.
    """
    budgets, costs = [], []
    calibration = tier_calibrations(config, tier)
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


def budget_report(config: WorkflowConfig, tier: str, cores: int) -> str:
    """The tier's budget on ``cores`` cores: core-hours, wall hours, bundle storage.

    Job start-up is counted twice, for a local Snakemake run (:data:`LOCAL_JOB_OVERHEAD_S`
    per job) and for cluster jobs (:data:`JOB_OVERHEAD_S`), which differ tenfold.
    """
    budgets, costs = study_budgets(config, tier)
    runs = [r for s in config.studies() for f in config.figures_of(s) for r in config.runs(f, tier)]
    recorded = recorded_figures(config, tier)
    lines = [
        f"budget of tier {tier!r} (measured quick-tier rates per study, BENCHMARKS.md; "
        "carried to this tier's cells by the cost model"
        + (
            f"; {', '.join(recorded)} by their measured runs, records/run-costs.csv"
            if recorded
            else ""
        )
        + "):"
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


def tier_emulation(tier: str, profiles: str | Path = "workflow/profiles") -> str:
    """What a tier's command does with the emulated figures: ``auto``, ``include`` or ``exclude``.

    Its profile's ``emulation=`` setting (``workflow/profiles/<tier>/config.yaml``), or
    the workflow's default, ``auto``, when the profile sets none.
    """
    path = Path(profiles) / tier / "config.yaml"
    if not path.exists():
        return "auto"
    settings = load_yaml(path.read_text()).get("config") or []
    for item in settings:
        key, _, value = str(item).partition("=")
        if key.strip() == "emulation":
            return value.strip()
    return "auto"


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
    """The :class:`Cost` of ``runs`` (calibrated per study, see :func:`study_budgets`).

    ``calibration``: default the quick-tier sample's (:func:`calibrations`); a tier's
    runs take :func:`tier_calibrations` (as :func:`tier_cost` and :func:`claim_costs` do).
    """
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
    config: WorkflowConfig,
    tier: str,
    cores: int = 2,
    cluster_cores: int = CLUSTER_CORES,
    figures: Iterable[str] | None = None,
) -> Cost:
    """The simulated runs of a whole tier and their :class:`Cost` (the verify tier: every claim).

    The budget :func:`budget_report` prints, without the emulated runs. ``figures``: only
    those (a build that leaves out the emulated figures leaves out the cross-checks' ns-3
    side too).
    """
    wanted = config.simulated_figures if figures is None else figures
    runs = [run for figure in wanted for run in config.runs(figure, tier)]
    return runs_cost(config, runs, cores, cluster_cores, tier_calibrations(config, tier))


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
    studies = sorted({config.figure(f)["study"] for f in read})
    calibration = tier_calibrations(config, "verify", studies=studies)
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
