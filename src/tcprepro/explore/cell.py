"""The explored cell: a figure's scenario with its knobs turned, validated, cached, saved.

This module owns what an explorer knows about one figure, without any widget: the
knobs that matter for it (:func:`figure_knobs`: its swept dimensions, the rate, delay,
buffer and loss of each traced link direction, the run length and the repetitions),
the cell a set of control texts describes (:meth:`FigureExplorer.cell`, validated with
the scenario schema so that a bad value is a :class:`~tcprepro.errors.ConfigError`
naming its field before anything runs), its runs (the workflow's
:class:`~tcprepro.campaign.runs.Run` objects, the explorer's changes applied last, so
that their cache keys are the workflow's), where each run's dataset is read from (the
workflow's ``data/runs`` or ``data/emulated`` when its cache key matches, else the
explorer's own ``data/explore``) and the scenario file that reproduces the cell
(:meth:`FigureExplorer.save_scenario`, ``base:`` the figure's scenario and the keys that
differ from it).

:func:`make_runs` makes a cell's missing runs with one backend; ``tcprepro explore-run``
calls it in a process of its own, which :mod:`tcprepro.explore.runner` starts and can
stop.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import yaml

from tcprepro.campaign import Run, WorkflowConfig, cell_name
from tcprepro.emulation.routes import UML
from tcprepro.errors import CapabilityError, ConfigError
from tcprepro.scenario import Scenario
from tcprepro.scenario_io import Override, load_scenario, merged_scenario_data, parse_override
from tcprepro.variants import VARIANTS

__all__ = [
    "BACKENDS",
    "ExploredCell",
    "FigureExplorer",
    "Knob",
    "LinuxSide",
    "field_errors",
    "figure_knobs",
    "make_runs",
]

#: the explorer's backends: ns-3, and real Linux TCP (Mininet in User-mode Linux)
BACKENDS = ("ns3", "linux")
#: the route of the explorer's Linux runs: virtual time, whatever the host's load
LINUX_ROUTE = UML
#: the workflow's backend name of emulated runs (their paths and cache keys)
EMULATED = "mininet"
#: where the explorer keeps the runs it made, under the working directory
EXPLORE_DIR = Path("data/explore")

#: where a validation message without a field puts its location
TOP_LEVEL = "(top level)"
#: a validation message that starts with its location (``a.b[0].c: ...``)
_LOCATED = re.compile(r"^(\(top level\)|[A-Za-z0-9_.*\[\]-]+): ")

#: the knobs of one traced link direction: (key, label suffix)
_DIRECTION_KNOBS = (
    ("rate", "rate"),
    ("delay", "one-way delay"),
    ("buffer_pkts", "buffer (packets)"),
    ("loss_rate", "loss rate"),
)
#: the knobs of every scenario: (key path, label)
_RUN_KNOBS = (("duration", "duration"), ("warmup", "warm-up"), ("repetitions", "repetitions"))


@dataclass(frozen=True)
class Knob:
    """One control of an explorer: a scenario key (or a swept dimension) and its start value.

    ``dimension`` names the swept dimension the knob sets (its ``path`` is then the
    dimension's first key path); ``choices`` are suggestions (the sweep's values, the
    registry's variants), except for a dimension given as named ``cases``, whose
    choices are the only values.
    """

    path: str
    label: str
    value: Any
    choices: tuple[str, ...] = ()
    dimension: str | None = None
    cases: bool = False

    @property
    def key(self) -> str:
        """The name the explorer's controls and texts use: the dimension, else the path."""
        return self.dimension or self.path

    @property
    def text(self) -> str:
        """The start value as a control shows it (as written in YAML)."""
        return value_text(self.value)


def value_text(value: Any) -> str:
    """A scenario value as a control shows it: ``2Mbps``, ``40``, ``0.01``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class ExploredCell:
    """One explored cell of a figure: a value per swept dimension, then the explorer's changes.

    ``changes`` are ``(key path, value)`` overrides applied after the tier's and the
    cell's (``repetitions`` among them).
    """

    figure: str
    tier: str
    sweep: tuple[tuple[str, Any], ...]
    changes: tuple[Override, ...] = ()

    @property
    def name(self) -> str:
        """The cell's file-system name, as the workflow names it (``up-NewReno_down-BBR``)."""
        return cell_name(dict(self.sweep))

    def describe(self) -> str:
        """One line: the swept values, then the changed keys."""
        parts = [f"{dim} = {value_text(value)}" for dim, value in self.sweep]
        parts += [f"{path} = {value_text(value)}" for path, value in self.changes]
        return ", ".join(parts) or "the figure's scenario"

    def args(self) -> list[str]:
        """The ``tcprepro explore-run`` options naming this cell."""
        out = ["--figure", self.figure, "--tier", self.tier, "--cell", json.dumps(dict(self.sweep))]
        for path, value in self.changes:
            out += ["--set", f"{path}={json.dumps(value)}"]
        return out


@dataclass(frozen=True)
class LinuxSide:
    """Whether an explorer can run its cells in real Linux too, and against what tolerance."""

    available: bool
    reason: str
    tolerance: Mapping[str, Any] = field(default_factory=dict)


def _label(path: str) -> str:
    return path.replace("topology.", "").replace(".", " ").replace("_", " ")


def figure_knobs(config: WorkflowConfig, figure: str, data: Mapping[str, Any]) -> list[Knob]:
    """The knobs of ``figure`` whose start values are read from ``data``.

    ``data`` is the merged mapping of the figure's first run in the chosen tier
    (:func:`~tcprepro.scenario_io.merged_scenario_data`). Swept dimensions come first
    (a variant's suggestions are every variant of the registry the ns-3 backend has),
    then each traced link direction's rate, delay, buffer and loss (a dumbbell's
    ``buffer_bdp`` instead of its buffer when the scenario sets it, each sender group's
    RTT when it gives one), then the duration, warm-up and repetitions. A key a swept
    dimension sets is not repeated.
    """
    sweep = config.figure(figure).get("sweep", {})
    knobs: list[Knob] = []
    swept_paths: set[str] = set()
    variants = tuple(name for name, variant in VARIANTS.items() if variant.available)
    for dim, spec in sweep.items():
        values = [value_text(v) for v in (spec["cases"] if "cases" in spec else spec["values"])]
        if "cases" in spec:
            paths = sorted({path for case in spec["cases"].values() for path in case})
            swept_paths |= set(paths)
            knobs.append(
                Knob(
                    paths[0] if paths else dim,
                    spec.get("label", dim),
                    values[0],
                    tuple(values),
                    dim,
                    cases=True,
                )
            )
            continue
        paths = [spec["path"]] if isinstance(spec["path"], str) else list(spec["path"])
        swept_paths |= set(paths)
        choices = tuple(values)
        if paths[0].endswith(".variant"):
            choices = tuple(dict.fromkeys([*values, *variants]))
        knobs.append(Knob(paths[0], str(spec.get("label", dim)), values[0], choices, dim))
    topology = data.get("topology", {})
    directions = (
        ("downlink", "uplink") if topology.get("kind") == "access" else ("bottleneck", "reverse")
    )
    for direction in directions:
        given = topology.get(direction)
        if not isinstance(given, Mapping):
            continue
        for key, suffix in _DIRECTION_KNOBS:
            path = f"topology.{direction}.{key}"
            if key == "buffer_pkts" and "buffer_bdp" in topology:
                path = "topology.buffer_bdp"
                knobs.append(Knob(path, "bottleneck buffer (x BDP)", topology["buffer_bdp"]))
                continue
            default = {"loss_rate": 0.0, "delay": "0ms", "buffer_pkts": 1000}.get(key)
            value = given.get(key, default)
            if value is not None:
                knobs.append(Knob(path, f"{direction} {suffix}", value))
    for index, group in enumerate(topology.get("senders", []) or []):
        if isinstance(group, Mapping) and "rtt" in group:
            path = f"topology.senders.{index}.rtt"
            knobs.append(Knob(path, f"sender group {group.get('name', index)} RTT", group["rtt"]))
    for path, label in _RUN_KNOBS:
        if path in data:
            knobs.append(Knob(path, label, data[path]))
    return [knob for knob in knobs if knob.dimension or knob.path not in swept_paths]


def field_errors(error: ConfigError, knobs: Sequence[Knob]) -> tuple[dict[str, str], list[str]]:
    """Split a validation error into messages per knob (by its key) and the rest.

    A message belongs to the knob whose key path starts its location (``flows.down.variant``
    for ``flows.down.variant.name: ...``); the longest such path wins.
    """
    text = str(error)
    if error.source and text.startswith(f"{error.source}: "):
        text = text[len(error.source) + 2 :]
    messages: list[str] = []
    for piece in text.split("; "):  # a message's own "; " continues it
        if messages and not _LOCATED.match(piece):
            messages[-1] += f"; {piece}"
        else:
            messages.append(piece)
    per_knob: dict[str, str] = {}
    rest: list[str] = []
    for message in messages:
        location, _, said = message.partition(": ")
        if location == TOP_LEVEL:  # "warmup (100 s) must be ...": the key it starts with
            location = said.split(" ", 1)[0]
        owners = [
            knob
            for knob in knobs
            if location == knob.key
            or location == knob.path
            or location.startswith(f"{knob.path}.")
            or location.startswith(f"{knob.path}[")
        ]
        if owners:
            owner = max(owners, key=lambda knob: len(knob.path))
            shown = said if message.startswith(TOP_LEVEL) else message
            per_knob.setdefault(owner.key, shown)
        else:
            rest.append(message)
    return per_knob, rest


class FigureExplorer:
    """What an explorer knows about one figure in one tier (no widgets).

    Parameters
    ----------
    figure
        Catalogue id; a data view (``data:``, e.g. D2) explores the figure it draws.
    tier
        The tier whose settings the explored cells start from.
    root
        Repository folder (default: found upwards from the working directory).
    workdir
        Folder holding ``data/`` (default: ``root``): the workflow's runs are read there,
        the explorer's own written under ``data/explore``.
    """

    def __init__(
        self,
        figure: str,
        tier: str = "smoke",
        root: str | Path | None = None,
        workdir: str | Path | None = None,
    ) -> None:
        from tcprepro.explore import find_root, workflow_config

        self.root = find_root(root)
        self.workdir = Path(workdir).resolve() if workdir is not None else self.root
        self.config = workflow_config(self.root)
        self.shown = figure
        self.figure = self.config.source(figure)
        self.tier = tier
        if not self.config.backends(self.figure) or "ns3" not in self.config.backends(self.figure):
            raise ConfigError(f"figures.{figure}: no ns-3 runs to explore (emulated only)")
        runs = self.config.runs(self.figure, tier)
        if not runs:
            raise ConfigError(f"figures.{figure}: no runs in tier {tier}")
        self.start = runs[0]
        self.knobs = figure_knobs(
            self.config,
            self.figure,
            merged_scenario_data(self._scenario_path, self.start.overrides),
        )

    @property
    def _scenario_path(self) -> Path:
        return Path(self.config.figure(self.figure)["scenario"])

    @property
    def title(self) -> str:
        """The figure's title in the workflow config."""
        return str(self.config.figure(self.shown).get("title", self.shown))

    def start_texts(self) -> dict[str, str]:
        """Every knob's start text, by the knob's key (the tier's first cell)."""
        sweep = dict(self.start.sweep)
        return {
            k.key: value_text(sweep[k.dimension]) if k.dimension else k.text for k in self.knobs
        }

    # ---- the cell the controls describe -----------------------------------

    def cell(self, texts: Mapping[str, str]) -> ExploredCell:
        """The cell the controls' texts describe (values parsed as YAML, as ``--set`` does).

        Dimensions take their text's value; a knob whose text differs from its start
        becomes a change. Raises ConfigError naming the field of a bad value (the cell's
        scenario is validated here, before anything runs).
        """
        start = self.start_texts()
        sweep: list[tuple[str, Any]] = []
        changes: list[Override] = []
        for knob in self.knobs:
            text = str(texts.get(knob.key, start[knob.key])).strip()
            value = parse_override(f"{knob.path}={text}")[1]
            if knob.dimension:
                spec = self.config.figure(self.figure)["sweep"][knob.dimension]
                if knob.cases and text not in spec["cases"]:
                    known = ", ".join(map(str, spec["cases"]))
                    raise ConfigError(f"{knob.key}: {text!r} is not one of the cases ({known})")
                sweep.append((knob.dimension, text if knob.cases else value))
            elif text != start[knob.key]:
                changes.append((knob.path, value))
        cell = ExploredCell(self.shown, self.tier, tuple(sweep), tuple(changes))
        self.runs(cell)[0].scenario()  # validated: a ConfigError names the field
        return cell

    def runs(self, cell: ExploredCell) -> list[Run]:
        """The ns-3 runs of ``cell``: the workflow's overrides, the cell's, then its changes."""
        sweep = dict(cell.sweep)
        overrides = (
            *self.config.base_overrides(self.figure, self.tier),
            *self.config.cell_settings(self.figure, sweep),
            *cell.changes,
        )
        load_scenario(self._scenario_path, overrides)  # a bad value: ConfigError naming it
        try:
            name = cell.name
        except ConfigError as error:
            raise ConfigError(f"{', '.join(sweep)}: {error}") from None
        values = self.config.sweep_values(self.figure, self.tier)
        for dim, value in sweep.items():  # a value outside the sweep joins its dimension
            if value not in values.get(dim, []):
                values[dim] = [*values.get(dim, []), value]
        template = Run(
            figure=self.figure,
            cell=name,
            sweep=tuple(sweep.items()),
            rep=0,
            scenario_path=str(self._scenario_path),
            overrides=tuple(overrides),
            sweep_values=json.dumps(values),
        )
        repetitions = template.scenario().repetitions
        return [replace(template, rep=rep) for rep in range(repetitions)]

    def scenario(self, cell: ExploredCell) -> Scenario:
        """The validated scenario of ``cell`` (that of every repetition)."""
        return self.runs(cell)[0].scenario()

    # ---- where each run's dataset is ----------------------------------------

    def linux(self) -> LinuxSide:
        """Whether this figure's cells can run in real Linux here, and their tolerance.

        The tolerance is the figure's own ``crosscheck`` block, else that of the emulated
        twin standing for it (claims registry), else that of a twin whose scenario is
        based on the figure's. Available when there is one and the host has the UML
        route's kernel (a variant Linux lacks is reported per cell, :meth:`linux_reason`).
        """
        tolerance = self._tolerance()
        if tolerance is None:
            return LinuxSide(False, "no cross-check tolerance for this figure (ns-3 only)")
        from tcprepro.emulation import umlkernel

        if umlkernel.find_kernel() is None:
            return LinuxSide(
                False,
                "missing capability: the UML route's kernel (make uml-kernel)",
                tolerance,
            )
        return LinuxSide(True, "real Linux TCP in User-mode Linux (virtual time)", tolerance)

    def _tolerance(self) -> Mapping[str, Any] | None:
        block = self.config.figure(self.figure)
        if "crosscheck" in block:
            return block["crosscheck"]
        standing = {source: twin for twin, source in self.config.twins().items()}
        if self.figure in standing:
            return self.config.figure(standing[self.figure])["crosscheck"]
        scenario = str(block["scenario"])
        for twin in self.config.figures:
            if self.config.crosschecked(twin) and scenario in self.config.scenario_files(twin)[1:]:
                return self.config.figure(twin)["crosscheck"]
        return None

    def linux_reason(self, cell: ExploredCell) -> str | None:
        """Why ``cell`` cannot run in Linux (a variant the UML kernel lacks), else None."""
        from tcprepro.campaign.emulated import offered_variants
        from tcprepro.emulation import linux

        try:
            controls = linux.scenario_congestion_controls(self.scenario(cell))
        except ConfigError as error:
            return f"no Linux implementation: {error}"
        lacking = sorted(controls - offered_variants(LINUX_ROUTE))
        if lacking:
            return f"the UML kernel has no {', '.join(lacking)}"
        return None

    def cache_key(self, run: Run, backend: str) -> str:
        """The run's cache key in ``backend``: the workflow's (ns-3) or an emulated run's."""
        if backend == "ns3":
            return run.cache_key()
        from tcprepro.campaign.emulated import figure_tool, run_cache_key

        tool = figure_tool(self.config, self.figure)
        return run_cache_key(replace(run, backend=EMULATED), LINUX_ROUTE, tool)

    def output_path(self, run: Run, backend: str, key: str | None = None) -> Path:
        """Where the explorer writes ``run``'s dataset made by ``backend`` (named by its key)."""
        key = key or self.cache_key(run, backend)
        kind = "runs" if backend == "ns3" else "emulated"
        return self.workdir / EXPLORE_DIR / kind / run.figure / run.cell / f"rep{run.rep}-{key}.nc"

    def cached(self, run: Run, backend: str, key: str | None = None) -> Path | None:
        """The dataset of ``run`` already made (by the workflow or the explorer), else None.

        The workflow's own path (``data/runs/...``, ``data/emulated/...``) counts only when
        the dataset there records the same cache key.
        """
        from tcprepro.store import open_dataset

        key = key or self.cache_key(run, backend)
        workflow = self.workdir / replace(run, backend="ns3" if backend == "ns3" else EMULATED).path
        if workflow.exists():
            try:
                with open_dataset(workflow) as ds:
                    if ds.attrs.get("cache_key") == key:
                        return workflow
            except (OSError, ValueError):
                pass
        own = self.output_path(run, backend, key)
        return own if own.exists() else None

    def paper_values(self, cell: ExploredCell, dataset: Any) -> Any:
        """The paper's own values for ``cell``, where the figure has them, else None.

        The utilisations a paper states for the cell in its text (``tcprepro.reference``'s
        stated values: study A's A-c1 and A-c5, B5.16's throughputs), labelled with their
        claim; study D's bulk-transfer cells: the thesis's throughput at the cell's RTT,
        receive and send buffers (Tables 3.1-3.3), as a utilisation of the flow's goodput
        capacity in ``dataset`` (the explored ns-3 runs). A DataFrame of ``flow``,
        ``util_pct``, ``label``.
        """
        import pandas as pd

        from tcprepro import metrics, reference
        from tcprepro.network_plan import build_plan, flow_path

        if dataset is None:
            return None
        stated = self._stated_utilisations(cell, dataset)
        if stated is not None or self.config.figure(self.figure).get("study") != "D":
            return stated
        scenario = self.scenario(cell)
        plan = build_plan(scenario, 0)
        if len(plan.flows) != 1 or scenario.traffic:
            return None
        flow = plan.flows[0]
        rtt_ms = round(flow_path(plan, flow).rtt_s * 1000.0, 3)
        table = reference.load("makassikis2006_windows")
        match = table[
            (table["rtt_ms"] == rtt_ms)
            & (table["br_kib"] == scenario.tcp.recv_buffer / 1024)
            & (table["be_kib"] == scenario.tcp.send_buffer / 1024)
        ]
        if match.empty:
            return None
        capacity_bps = float(metrics.flow_capacity_bps(dataset).max())
        row = match.iloc[0]
        util_pct = float(row["rate_mbps"]) * 1e6 / capacity_bps * 100.0
        return pd.DataFrame(
            {
                "flow": [str(dataset["flow"].values[0])],
                "util_pct": [util_pct],
                "label": [f"thesis, Table {row['table']}"],
            }
        )

    def _stated_utilisations(self, cell: ExploredCell, dataset: Any) -> Any:
        """The utilisations the paper states for ``cell``'s flows, or None when it states none.

        A throughput stated for a figure of one flow is drawn as that flow's utilisation
        of its goodput capacity in ``dataset``. A cell whose changes alter the experiment
        (anything but run length and repetitions) keeps the paper's value of its cell,
        labelled as the figure's own settings: the paper said nothing of the changed
        experiment.
        """
        import pandas as pd

        from tcprepro import metrics, reference

        sweep = dict(cell.sweep)
        flows = [str(f) for f in dataset["flow"].values]
        rows = []
        for flow in flows:
            for mark in reference.stated_for(cell.figure, f"utilisation_{flow}_pct", **sweep):
                if math.isfinite(mark.value):
                    rows.append({"flow": flow, "util_pct": mark.value, "claim": mark.claim})
        if len(flows) == 1:  # a throughput stated for the figure's one flow (B5.16)
            capacity_bps = float(metrics.flow_capacity_bps(dataset).max())
            for mark in reference.stated_for(cell.figure, "throughput_mbps", **sweep):
                if math.isfinite(mark.value):
                    util_pct = mark.value * 1e6 / capacity_bps * 100.0
                    rows.append({"flow": flows[0], "util_pct": util_pct, "claim": mark.claim})
        if not rows:
            return None
        run_knobs = {path for path, _ in _RUN_KNOBS}
        changed = any(path not in run_knobs for path, _ in cell.changes)
        claims = ", ".join(sorted({r["claim"] for r in rows}))
        label = f"paper ({claims})" + (", at the figure's own settings" if changed else "")
        return pd.DataFrame(rows)[["flow", "util_pct"]].assign(label=label)

    # ---- the latest build ----------------------------------------------------

    def latest_build(self) -> tuple[Any, str]:
        """The workflow's combined dataset of the figure, and which tier made it.

        ``(None, why)`` when the workflow has not built the figure in this working folder.
        The tier is the one whose runs have the cache keys the dataset records.
        """
        from tcprepro.store import open_dataset

        path = self.workdir / self.config.combined_path(self.figure)
        if not path.exists():
            return None, f"no build of {self.figure} in {path.parent} yet"
        ds = open_dataset(path)
        keys = set(map(str, ds["run_cache_key"].values.ravel())) if "run_cache_key" in ds else set()
        for tier in ("smoke", "quick", "paper"):
            try:
                runs = self.config.runs(self.figure, tier)
            except ConfigError:
                continue
            if keys and keys <= {run.cache_key() for run in runs}:
                return ds, f"{tier} tier"
        return ds, "an earlier configuration"

    # ---- the scenario file that reproduces a cell -----------------------------

    def scenario_text(self, cell: ExploredCell, output: str | Path) -> str:
        """The scenario YAML of ``cell`` as :meth:`save_scenario` writes it at ``output``.

        ``base:`` is the figure's scenario file (relative to ``output``), then every key
        whose value differs from it: the tier's and the cell's settings, the changes.
        """
        base_path = self._scenario_path
        run = self.runs(cell)[0]
        merged = merged_scenario_data(base_path, run.overrides)
        underneath = merged_scenario_data(base_path)
        changed = _difference(underneath, merged)
        folder = Path(output).resolve().parent
        inside = folder.is_relative_to(self.root)  # else the file names the repository's
        relative = os.path.relpath(base_path, folder) if inside else str(base_path)
        header = (
            f"# Explored cell of figure {cell.figure} ({cell.tier} tier settings): "
            f"{cell.describe()}.\n# Run it with: tcprepro simulate <this file> -o <output.nc>\n"
        )
        body = yaml.safe_dump({"base": relative, **changed}, sort_keys=False, allow_unicode=True)
        return header + body

    def save_scenario(self, cell: ExploredCell, output: str | Path) -> Path:
        """Write ``cell`` as a scenario file that ``tcprepro simulate`` runs as is.

        The file is validated before it replaces anything (written atomically): its
        scenario must give the cache key of the cell's first run.

        Raises
        ------
        ConfigError
            When the written file would not give the explored cell's scenario.
        """
        from tcprepro.latex import atomic_write

        output = Path(output)
        text = self.scenario_text(cell, output)
        output.parent.mkdir(parents=True, exist_ok=True)
        check = output.with_name(f".{output.name}.check.yaml")
        check.write_text(text)
        try:
            saved = load_scenario(check)
        finally:
            check.unlink(missing_ok=True)
        run = self.runs(cell)[0]
        wanted = run.scenario()
        if saved.cache_key(0, "ns3", {}) != wanted.cache_key(0, "ns3", {}):
            raise ConfigError("the written scenario differs from the explored cell", str(output))
        atomic_write(output, text)
        return output


def _difference(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """The mapping that, merged over ``base`` (``base:`` merging), gives ``top``.

    Mappings are compared key by key; any other value (a list included) is written
    whole when it differs; a key ``top`` lacks is set to null (removed).
    """
    out: dict[str, Any] = {}
    for key, value in top.items():
        if key not in base:
            out[key] = value
        elif isinstance(value, Mapping) and isinstance(base[key], Mapping):
            inner = _difference(base[key], value)
            if inner:
                out[key] = inner
        elif value != base[key]:
            out[key] = value
    for key in base:
        if key not in top:
            out[key] = None
    return out


def make_runs(
    explorer: FigureExplorer,
    cell: ExploredCell,
    backend: str,
    reps: Iterable[int] | None = None,
    log: TextIO = sys.stderr,
    out: TextIO = sys.stdout,
) -> list[Path]:
    """Make the missing runs of ``cell`` with ``backend`` (``ns3`` or ``linux``).

    Each finished run prints ``done <rep> <path>`` on ``out`` (the explorer's progress)
    and is written atomically to :meth:`FigureExplorer.output_path`; a cached run is
    reported as done without running. Linux runs share one UML boot.

    Raises
    ------
    CapabilityError
        When a Linux run cannot be made on this host (naming what is missing).
    """
    if backend not in BACKENDS:
        raise ConfigError(f"--backend: {backend!r} is not one of {', '.join(BACKENDS)}")
    runs = explorer.runs(cell)
    wanted = [run for run in runs if reps is None or run.rep in set(reps)]
    todo: list[tuple[Run, Path]] = []
    for run in wanted:
        key = explorer.cache_key(run, backend)
        cached = explorer.cached(run, backend, key)
        if cached is not None:
            print(f"done {run.rep} {cached}", file=out, flush=True)
        else:
            todo.append((run, explorer.output_path(run, backend, key)))
    written: list[Path] = []
    if backend == "ns3":
        from tcprepro.ns3.backend import run_scenario
        from tcprepro.store import write_dataset

        for run, path in todo:
            ds = run_scenario(run.scenario(), run.rep, extra_attrs=run.attrs())
            write_dataset(ds, path)
            print(f"done {run.rep} {path}", file=out, flush=True)
            written.append(path)
        return written
    reason = explorer.linux_reason(cell)
    if reason is not None:
        raise CapabilityError(f"{cell.describe()}: {reason}")
    from tcprepro.campaign.emulated import figure_tool
    from tcprepro.emulation.runner import EmulationJob, emulate_batch

    tool = figure_tool(explorer.config, explorer.figure)
    jobs = [EmulationJob(run.scenario(), run.rep, path, run.attrs(), tool) for run, path in todo]
    for job, result in zip(jobs, emulate_batch(jobs, LINUX_ROUTE, log=log), strict=True):
        if not result.ok:
            raise CapabilityError(f"Linux run rep {job.rep} failed: {result.error}")
        print(f"done {job.rep} {job.output}", file=out, flush=True)
        written.append(job.output)
    return written
