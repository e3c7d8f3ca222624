"""Figure sweeps: from the workflow config to the list of runs of each figure.

This module owns the meaning of ``workflow/config.yaml``: each figure names a
scenario file, the swept dimensions (a scenario key path and its values, or
named *cases*, each a set of scenario overrides) and its study; each study
defines the reproduction tiers (``smoke``, ``quick``, ``paper``) as overrides
and a number of repetitions. A figure may instead be drawn from another
figure's combined dataset (``data: <figure>``). From that it derives, for
a tier, every :class:`Run` (figure, cell, repetition), its output path, the
``--set`` overrides that produce its scenario, and its cache key. Snakemake
rules and the ``tcprepro`` CLI both call these functions, so a path or a key
is computed in exactly one place.

A sweep value that names a variant or queue discipline whose model is not
built yet makes its cell *pending*: no run is planned for it, and figures and
claims show it as pending.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tcprepro import provenance
from tcprepro.errors import ConfigError
from tcprepro.scenario import Scenario, load_scenario
from tcprepro.variants import QDISCS, VARIANTS, canonical_variant

__all__ = [
    "TIERS",
    "Run",
    "WorkflowConfig",
    "cell_name",
    "estimate_wall_s",
    "load_workflow_config",
    "pending_reason",
    "plan_report",
]

TIERS = ("smoke", "quick", "paper")
SCHEMA_PATH = Path("workflow/schemas/config.schema.yaml")
_CELL_VALUE = re.compile(r"^[A-Za-z0-9.+]+$")

#: wall-clock cost model of one ns-3 run on one core (measured, see BENCHMARKS.md)
RUN_OVERHEAD_S = 2.5
PACKETS_PER_WALL_S = 35_000.0
#: links a packet crosses on a dumbbell (the estimate's rate counts one per packet); with
#: it, a quick-tier B5.14 run and a C3.3 run are estimated at 18 and 24 s; they took 26.5 and
#: 43 s on a machine shared with the test suite (without it: 8 and 10 s, far too low)
DUMBBELL_HOPS = 3


def _setting(path: str, value: Any) -> str:
    if isinstance(value, (dict, list)):
        text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    return f"{path}={text}"


def _paths(dimension: Mapping[str, Any]) -> list[str]:
    """Scenario key paths a swept dimension sets (one path, or several set to one value)."""
    path = dimension["path"]
    return [path] if isinstance(path, str) else list(path)


def _cell_text(value: Any) -> str:
    """A sweep value as written in cell names: floats without exponents (1e-07 -> 0.0000001)."""
    if isinstance(value, float) and "e" in repr(value):
        return np.format_float_positional(value, trim="-")
    return str(value)


def pending_reason(value: Any) -> str | None:
    """Why a sweep value cannot run yet (a variant/qdisc whose model is pending), else None."""
    if not isinstance(value, str):
        return None
    try:
        variant = VARIANTS[canonical_variant(value)]
    except ValueError:
        variant = None
    if variant is not None and not variant.available:
        return f"{variant.name}: {variant.status}"
    qdisc = QDISCS.get(value)
    if qdisc is not None and not qdisc.available:
        return f"{qdisc.name}: {qdisc.status}"
    return None


def cell_name(sweep: Mapping[str, Any]) -> str:
    """File-system name of a cell: ``up-Cubic_down-NewReno``."""
    parts = []
    for dim, value in sweep.items():
        text = _cell_text(value)
        if not _CELL_VALUE.match(text):
            raise ConfigError(
                f"sweep value {text!r} of {dim!r} must be letters, digits, '.' or '+'"
            )
        parts.append(f"{dim}-{text}")
    return "_".join(parts) if parts else "base"


@dataclass(frozen=True)
class Run:
    """One simulation of a figure: a cell of its sweep and a repetition."""

    figure: str
    cell: str
    sweep: tuple[tuple[str, Any], ...]
    rep: int
    scenario_path: str
    overrides: tuple[str, ...]
    sweep_values: str  # JSON of every dimension's values (for the combined dataset)
    backend: str = "ns3"  # or "mininet" (emulated runs, tcprepro.emulation)

    @property
    def path(self) -> str:
        """Output dataset, relative to the workflow's working directory."""
        if self.backend != "ns3":
            return f"data/emulated/{self.figure}/{self.cell}/rep{self.rep}.nc"
        return f"data/runs/{self.figure}/{self.cell}/rep{self.rep}.nc"

    def scenario(self) -> Scenario:
        """The validated scenario of this run."""
        return _scenario(self.scenario_path, self.overrides)

    def cache_key(self, backend: str = "ns3") -> str:
        """Hash of everything that determines this run's (ns-3) dataset.

        Emulated runs have their own key (the kernel, not ns-3, makes the result):
        :func:`tcprepro.emulation.workflow.run_cache_key`.
        """
        return self.scenario().cache_key(self.rep, backend, provenance.software_versions())

    def attrs(self) -> dict[str, Any]:
        """Dataset attributes that place the run in its figure's sweep."""
        return {
            "figure": self.figure,
            "sweep": json.dumps(dict(self.sweep)),
            "sweep_values": self.sweep_values,
        }


@cache
def _scenario(path: str, overrides: tuple[str, ...]) -> Scenario:
    return load_scenario(path, overrides)


@dataclass(frozen=True)
class WorkflowConfig:
    """The validated workflow config (``workflow/config.yaml``)."""

    data: Mapping[str, Any]
    _runs: dict[tuple[str, str], list[Run]] = field(default_factory=dict, repr=False, compare=False)
    _files: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def tier(self) -> str:
        """Tier selected by the config (profiles override it)."""
        return str(self.data.get("tier", "quick"))

    @property
    def figures(self) -> list[str]:
        """Figure ids in config order."""
        return list(self.data["figures"])

    def figure(self, figure: str) -> Mapping[str, Any]:
        """The config block of one figure."""
        try:
            return self.data["figures"][figure]
        except KeyError:
            known = ", ".join(self.figures)
            raise ConfigError(f"figures: no figure {figure!r}; known: {known}") from None

    def source(self, figure: str) -> str:
        """Figure whose combined dataset ``figure`` draws: its ``data:`` or itself."""
        return str(self.figure(figure).get("data", figure))

    @property
    def simulated_figures(self) -> list[str]:
        """Figures that have runs of their own (not ``data:`` views of another)."""
        return [f for f in self.figures if "data" not in self.figure(f)]

    def combined_path(self, figure: str) -> str:
        """Combined dataset a figure's notebook reads (emulated-only figures: the emulated one)."""
        source = self.source(figure)
        if "ns3" not in self.backends(source):
            return f"data/combined/emulated/{source}.nc"
        return f"data/combined/{source}.nc"

    def crosschecked(self, figure: str) -> bool:
        """True for a figure run by both backends and compared (X1): ns-3 and mininet."""
        return {"ns3", "mininet"} <= set(self.backends(figure))

    def outputs(self, figure: str) -> list[str]:
        """What a figure's notebook produces for the paper: "figure" and/or "table"."""
        return list(self.figure(figure).get("outputs", ["figure"]))

    def paper_files(self, kind: str) -> list[str]:
        """Paths of every figure PDF (``kind="figure"``) or table (``"table"``) of the paper."""
        pattern = {"figure": "paper/figures/{}.pdf", "table": "paper/generated/{}.tex"}[kind]
        return [pattern.format(f) for f in self.figures if kind in self.outputs(f)]

    def studies(self) -> list[str]:
        """Studies that have at least one figure, in config order."""
        seen: list[str] = []
        for figure in self.figures:
            study = self.figure(figure)["study"]
            if study not in seen:
                seen.append(study)
        return seen

    def figures_of(self, study: str) -> list[str]:
        """Figure ids of one study."""
        return [f for f in self.figures if self.figure(f)["study"] == study]

    def tier_settings(self, figure: str, tier: str | None = None) -> Mapping[str, Any]:
        """The tier block (repetitions, set, values) of a figure: its own, else its study's."""
        tier = tier or self.tier
        if tier not in TIERS:
            raise ConfigError(f"tier: {tier!r} is not one of {', '.join(TIERS)}")
        block = self.figure(figure)
        if "tiers" in block:
            return block["tiers"][tier]
        study = block["study"]
        try:
            return self.data["studies"][study]["tiers"][tier]
        except KeyError:
            raise ConfigError(f"studies.{study}.tiers.{tier}: missing") from None

    # ---- sweep dimensions given as named cases ----

    def cell_settings(self, figure: str, cell: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """(scenario key path, value) pairs that make one cell of a figure's sweep.

        A dimension with ``path`` sets that path to the cell's value; a dimension
        with ``cases`` applies every override of the named case.
        """
        sweep = self.figure(figure).get("sweep", {})
        settings: list[tuple[str, Any]] = []
        for dim, value in cell.items():
            spec = sweep[dim]
            if "cases" in spec:
                settings += list(spec["cases"][value].items())
            else:
                settings += [(path, value) for path in _paths(spec)]
        return settings

    def sweep_values(self, figure: str, tier: str | None = None) -> dict[str, list[Any]]:
        """Values of each swept dimension for a tier (a tier may narrow them).

        The values of a dimension given as ``cases`` are the case names.
        """
        if "data" in self.figure(figure):
            return {}
        sweep = self.figure(figure).get("sweep", {})
        narrowed = self.tier_settings(figure, tier).get("values", {})
        out: dict[str, list[Any]] = {}
        for dim, spec in sweep.items():
            values = list(spec["cases"]) if "cases" in spec else list(spec["values"])
            if dim in narrowed:
                extra = [v for v in narrowed[dim] if v not in values]
                if extra:
                    raise ConfigError(
                        f"studies tier values for {figure}.{dim}: {extra} not among {values}"
                    )
                values = list(narrowed[dim])
            out[dim] = values
        for dim in narrowed:
            if dim not in sweep:
                raise ConfigError(f"tier values name {dim!r}, which {figure} does not sweep")
        return out

    def cells(self, figure: str, tier: str | None = None) -> list[dict[str, Any]]:
        """Every cell (one value per swept dimension) of a figure, pending ones included."""
        values = self.sweep_values(figure, tier)
        return [dict(zip(values, combo, strict=True)) for combo in product(*values.values())]

    def pending_cells(
        self, figure: str, tier: str | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """Cells that cannot run yet, with the reason."""
        out = []
        for cell in self.cells(figure, tier):
            values = [*cell.values(), *(v for _, v in self.cell_settings(figure, cell))]
            reasons = sorted({r for r in map(pending_reason, values) if r})
            if reasons:
                out.append((cell, "; ".join(reasons)))
        return out

    def runs(self, figure: str, tier: str | None = None, backend: str = "ns3") -> list[Run]:
        """Every run of a figure for a tier (pending cells excluded; none for data views).

        ``backend="mininet"`` gives the emulated runs of a figure whose
        ``backends`` list it (same cells and settings, other output paths).
        """
        if "data" in self.figure(figure):
            return []
        key = (figure, tier or self.tier)
        if key not in self._runs:
            self._runs[key] = self._make_runs(figure, tier)
        runs = list(self._runs[key])
        if backend not in self.backends(figure):
            return []  # e.g. no ns-3 runs for an emulated-only figure (backends: [mininet])
        if backend == "ns3":
            return runs
        return [replace(run, backend=backend) for run in runs]

    def backends(self, figure: str) -> list[str]:
        """Backends a figure's runs use (``ns3`` unless its block lists ``backends``).

        A data view (``data:``) has the backends of the figure it draws.
        """
        block = self.figure(figure)
        if "data" in block:
            return self.backends(str(block["data"]))
        return list(block.get("backends", ["ns3"]))

    def _make_runs(self, figure: str, tier: str | None) -> list[Run]:
        block = self.figure(figure)
        settings = self.tier_settings(figure, tier)
        base = [_setting(path, value) for path, value in block.get("set", {}).items()]
        base += [_setting(path, value) for path, value in settings.get("set", {}).items()]
        repetitions = int(settings["repetitions"])
        base.append(f"repetitions={repetitions}")
        values_json = json.dumps(self.sweep_values(figure, tier))
        pending = [cell for cell, _ in self.pending_cells(figure, tier)]
        runs = []
        for cell in self.cells(figure, tier):
            if cell in pending:
                continue
            overrides = [*base, *(_setting(p, v) for p, v in self.cell_settings(figure, cell))]
            for rep in range(repetitions):
                runs.append(
                    Run(
                        figure=figure,
                        cell=cell_name(cell),
                        sweep=tuple(cell.items()),
                        rep=rep,
                        scenario_path=str(block["scenario"]),
                        overrides=tuple(overrides),
                        sweep_values=values_json,
                    )
                )
        return runs

    def run(self, figure: str, cell: str, rep: int, tier: str | None = None) -> Run:
        """Find one run by figure, cell name and repetition."""
        for candidate in self.runs(figure, tier):
            if candidate.cell == cell and candidate.rep == rep:
                return candidate
        raise ConfigError(f"{figure} has no run {cell}/rep{rep} in tier {tier or self.tier}")

    def scenario_files(self, figure: str) -> list[str]:
        """The figure's scenario file and every ``base:`` file under it."""
        if "data" in self.figure(figure):
            return []
        if figure not in self._files:  # asked once per simulation job: read the chain once
            files: list[str] = []
            path: Path | None = Path(self.figure(figure)["scenario"])
            while path is not None and str(path) not in files:
                files.append(str(path))
                base = yaml.safe_load(path.read_text()).get("base")
                path = path.parent / base if base else None
            self._files[figure] = files
        return list(self._files[figure])

    def check(self, tier: str | None = None, figures: Iterable[str] | None = None) -> None:
        """Validate every run's scenario of a tier (raises ConfigError naming the figure)."""
        for figure in self.figures if figures is None else figures:
            runs = [
                run for backend in self.backends(figure) for run in self.runs(figure, tier, backend)
            ]
            for run in runs:
                try:
                    run.scenario()
                except ConfigError as exc:
                    raise ConfigError(f"figure {figure}, cell {run.cell}: {exc}") from None


def load_workflow_config(
    path: str | Path = "workflow/config.yaml", overrides: Mapping[str, Any] | None = None
) -> WorkflowConfig:
    """Read and validate the workflow config against its JSON schema."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError("file not found", str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", str(path)) from None
    data = {**(data or {}), **dict(overrides or {})}
    return validate_workflow_config(data, path.parent / "schemas" / "config.schema.yaml", str(path))


def validate_workflow_config(
    data: Mapping[str, Any], schema_path: str | Path, source: str = "workflow config"
) -> WorkflowConfig:
    """Validate an already-loaded workflow config (as Snakemake holds it)."""
    import jsonschema

    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(dict(data)), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: {error.message}", source)
    figures = data["figures"]
    for figure, block in figures.items():  # a data view draws a simulated figure of its study
        target = block.get("data")
        if target is None:
            continue
        if target not in figures or "data" in figures[target]:
            raise ConfigError(
                f"figures.{figure}.data: {target!r} must be a figure with runs of its own", source
            )
        if block.get("study") != figures[target].get("study"):
            raise ConfigError(f"figures.{figure}.data: {target!r} is in another study", source)
    return WorkflowConfig(dict(data))


def _flow_bound_packets(scenario: Scenario) -> float:
    """Packets (data and ACKs) the flows of a run can send at most.

    Each flow sends at most at the rate of its narrowest link, of its window
    (the smaller socket buffer per RTT) and, under random loss, of the Padhye
    model; a sized flow sends at most its size. ACKs add one packet per
    ``delayed_ack_count`` data packets. Traffic generators are not bounded here
    (``inf``): their load is their own.
    """
    from tcprepro.throughput_models import padhye_throughput_bps
    from tcprepro.topology import build_plan, flow_path

    if scenario.traffic:
        return float("inf")
    tcp = scenario.tcp
    plan = build_plan(scenario, 0)
    packet_bits = 8.0 * (tcp.mss + 52)
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
        packets = scenario.duration * rate_bps / (8 * (scenario.tcp.mss + 52))
        packets = min(packets, _flow_bound_packets(scenario))
        # the rate was measured on study A's access link, one link per packet; on a
        # dumbbell each packet (and its ACK) crosses three: access, bottleneck, receiver's
        hops = DUMBBELL_HOPS if getattr(topo, "kind", "") == "dumbbell" else 1
        total += RUN_OVERHEAD_S + hops * packets / PACKETS_PER_WALL_S
    return total / max(1, cores)


def is_cached(run: Run, workdir: Path = Path(".")) -> bool:
    """True when the run's dataset exists and was made with the same cache key."""
    from tcprepro.store import open_dataset

    path = workdir / run.path
    if not path.exists():
        return False
    try:
        return open_dataset(path).attrs.get("cache_key") == run.cache_key()
    except (OSError, ValueError):
        return False


def plan_report(config: WorkflowConfig, tier: str, cores: int, workdir: Path = Path(".")) -> str:
    """Say how many simulations a tier needs, how many are cached, and how long the rest take."""
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
    return "\n".join(lines)
