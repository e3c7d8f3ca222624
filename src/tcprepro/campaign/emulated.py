"""Emulated figures in the workflow: include or skip them, list and make their runs.

This module owns what ``workflow/rules/emulate.smk`` and ``tcprepro
emulate-figure`` need: the decision to include the emulated figures (those
whose config block lists ``backends: [ns3, mininet]``) given the profile's
``emulation`` setting (``auto``/``include``/``exclude``) and this host's
capabilities (:func:`decide`, whose reason is printed and written into the
paper); the emulated runs of a figure, limited to the cells whose variants the
route's kernel offers; their cache keys (the kernel, iperf3 and route make an
emulated result, not ns-3); and the batch that makes the missing runs (one UML or
VM boot) and combines them into one dataset.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tcprepro.campaign import Run, WorkflowConfig
from tcprepro.emulation import linux, routes
from tcprepro.emulation.routes import Route
from tcprepro.errors import CapabilityError, ConfigError, TcpreproError

__all__ = [
    "EmulationDecision",
    "decide",
    "emulated_figures",
    "emulated_runs",
    "make_emulated_figure",
    "run_cache_key",
]

BACKEND = "mininet"


@dataclass(frozen=True)
class EmulationDecision:
    """Whether this build includes the emulated figures, on which route, and why."""

    enabled: bool
    mode: str
    #: the route the build takes (None when it skips the emulated figures)
    route: Route | None
    reason: str
    figures_skipped: tuple[str, ...] = ()

    def keep(self, figures: Sequence[str]) -> list[str]:
        """``figures`` without the emulated ones this build skips."""
        return [f for f in figures if f not in self.figures_skipped]

    @property
    def parallel(self) -> bool:
        """True when emulation jobs may run side by side (a boot each) and beside simulations."""
        return self.enabled and self.route is not None and self.route.runs_in_parallel

    @property
    def summary(self) -> str:
        """One line for the log and the paper."""
        if self.enabled:
            return f"emulation included ({self.route} route: {self.reason})"
        skipped = ", ".join(self.figures_skipped) or "none"
        return f"emulation skipped (figures {skipped}): {self.reason}"


def emulated_figures(config: WorkflowConfig) -> list[str]:
    """Figures whose runs are also emulated."""
    return [f for f in config.figures if BACKEND in config.backends(f)]


def figure_tool(config: WorkflowConfig, figure: str) -> str:
    """The traffic tool of a figure's emulated runs (``emulation_tool``, default iperf3)."""
    return str(config.figure(figure).get("emulation_tool", "iperf3"))


def decide(config: WorkflowConfig, tier: str | None = None) -> EmulationDecision:
    """Include the emulated figures or skip them, from the config and this host.

    Raises
    ------
    CapabilityError
        With ``emulation: include`` on a host that cannot emulate.
    """
    mode = str(config.data.get("emulation", "auto"))
    forced = str(config.data.get("emulation_route", "auto"))
    figures = emulated_figures(config)
    if not figures:
        return EmulationDecision(False, mode, None, "no figure lists the mininet backend")
    if mode == "exclude":
        return EmulationDecision(
            False, mode, None, "excluded by the profile (emulation: exclude)", tuple(figures)
        )
    scenarios = [run.scenario() for f in figures for run in config.runs(f, tier, BACKEND)[:1]]
    tools = [figure_tool(config, f) for f in figures]
    try:
        # variants aside: a figure's cells are filtered by what the route's kernel offers
        choice = routes.choose_for(scenarios, forced, tools, variants=False)
    except CapabilityError as exc:
        if mode == "include":
            raise
        reason = "this host cannot emulate: " + str(exc).replace("\n", " ")
        return EmulationDecision(False, mode, None, reason, tuple(figures))
    return EmulationDecision(True, mode, choice.route, choice.reason)


def offered_variants(route: str | Route) -> set[str]:
    """Linux congestion-control names the route's kernel offers."""
    return routes.get_route(route).offered_variants()


def emulated_runs(config: WorkflowConfig, figure: str, tier: str, route: str | Route) -> list[Run]:
    """The figure's emulated runs whose congestion controls the route's kernel offers."""
    offered = offered_variants(route)
    runs = []
    for run in config.runs(figure, tier, BACKEND):
        # read from the run's scenario, so a variant set through a case (a generalised
        # AIMD/MIMD pair) is checked as one set through a variant sweep
        try:
            controls = linux.scenario_congestion_controls(run.scenario())
        except ConfigError:  # a variant without a Linux module: never emulated
            continue
        if controls <= offered:
            runs.append(run)
    return runs


def run_cache_key(run: Run, route: str | Route, tool: str = "iperf3") -> str:
    """Cache key of an emulated run: scenario, repetition, kernel, iperf3, route, tcprepro.

    A figure whose runs use another traffic tool (iperf 2) adds it and its version.
    """
    return run.scenario().cache_key(run.rep, BACKEND, routes.get_route(route).versions(tool))


def _cached(run: Run, route: Route, workdir: Path, tool: str = "iperf3") -> bool:
    from tcprepro.store import open_dataset

    path = workdir / run.path
    if not path.exists():
        return False
    try:
        return open_dataset(path).attrs.get("cache_key") == run_cache_key(run, route, tool)
    except (OSError, ValueError):
        return False


def make_emulated_figure(
    config: WorkflowConfig,
    figure: str,
    tier: str,
    route: str | Route,
    output: str | Path,
    *,
    workdir: Path = Path("."),
    log: TextIO = sys.stderr,
    parallel: int = 1,
) -> Path:
    """Emulate the figure's missing runs (one batch), then combine every run into ``output``.

    ``route``: a route, its name, or ``auto`` (the route this host takes for the
    figure, chosen once here). A route whose batches run in parallel shares the
    batch out among up to ``parallel`` boots side by side
    (:func:`tcprepro.emulation.runner.emulate_batch`).

    Raises
    ------
    TcpreproError
        When a run failed (its dataset is not written; the rerun retries it).
    """
    from tcprepro.emulation.runner import EmulationJob, emulate_batch
    from tcprepro.store import combine_runs, write_dataset

    if BACKEND not in config.backends(figure):
        raise ConfigError(f"figures.{figure}.backends does not list {BACKEND}")
    runs = config.runs(figure, tier, BACKEND)
    if not runs:
        raise ConfigError(f"{figure} has no runs in tier {tier}")
    tool = figure_tool(config, figure)
    # the route given (each batch checks what it needs), else the one this host takes
    # for the figure, chosen once here
    choice: Route | routes.RouteChoice = (
        routes.choose_for([run.scenario() for run in runs[:1]], route, [tool])
        if route == "auto"
        else routes.get_route(route)
    )
    taken = choice if isinstance(choice, Route) else choice.route
    wanted = emulated_runs(config, figure, tier, taken)
    skipped = len(runs) - len(wanted)
    todo = [run for run in wanted if not _cached(run, taken, workdir, tool)]
    print(
        f"{figure}: {len(wanted)} emulated runs ({len(wanted) - len(todo)} cached, "
        f"{len(todo)} to run; {skipped} cells not offered by the {taken} kernel)",
        file=log,
    )
    jobs = [
        EmulationJob(
            run.scenario(),
            run.rep,
            workdir / run.path,
            run.attrs(),
            tool,
        )
        for run in todo
    ]
    results = emulate_batch(jobs, choice, log=log, parallel=parallel)
    failed = [r for r in results if not r.ok]
    if failed:
        raise TcpreproError(
            f"{len(failed)} emulated run(s) failed: "
            + "; ".join(f"{r.output}: {r.error}" for r in failed)
        )
    if not wanted:
        raise CapabilityError(f"{figure}: the {taken} kernel offers none of the figure's variants")
    combined = combine_runs(
        [workdir / run.path for run in wanted], sweep_values=json.loads(wanted[0].sweep_values)
    )
    combined.attrs["backend"] = BACKEND
    combined.attrs["emulation_route"] = taken.name
    combined.attrs["traffic_tool"] = taken.traffic_tool(tool)
    combined.attrs["cells_not_offered"] = json.dumps(
        [dict(run.sweep) for run in runs if run not in wanted and run.rep == 0]
    )
    write_dataset(combined, output)
    return Path(output)
