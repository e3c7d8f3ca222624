r"""What a build has of each artefact: catalogue order, status, and the tier line.

:func:`figure_status` counts the cells of the paper's grid a figure drew;
:func:`tier_line` says what it was drawn from next to what the paper used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import xarray as xr

from tcprepro.campaign import WorkflowConfig

_BACKENDS = {"ns3": "ns-3", "mininet": "Mininet (real Linux TCP)"}


def figure_order(config: WorkflowConfig, figures: Iterable[str]) -> list[str]:
    """Figures in catalogue order: study A, B, C, D; within a study by number (A1, A1.1, A2)."""

    def key(figure: str) -> tuple[str, bool, list[int]]:
        study = str(config.figure(figure)["study"])
        numbers = [int(n) for n in re.findall(r"\d+", figure)]
        return (study, not figure.startswith(study), numbers)

    return sorted(figures, key=key)


@dataclass(frozen=True)
class Status:
    """What a build has of one artefact.

    ``kind`` is ``full`` (every cell of the paper's grid drawn), ``partial``,
    ``not run`` (nothing drawn in this tier) or ``excluded`` (with ``reason``).
    """

    figure: str
    kind: str
    cells_run: int | None = None
    cells_paper: int | None = None
    reason: str = ""

    @property
    def included(self) -> bool:
        """Whether the report shows the artefact (a figure or a table)."""
        return self.kind in ("full", "partial")

    def text(self) -> str:
        """The status as the at-a-glance table prints it (plain text)."""
        if self.kind == "full":
            return f"full ({self.cells_paper} cells)" if self.cells_paper else "full"
        if self.kind == "partial":
            return f"partial: {self.cells_run} of {self.cells_paper} cells"
        if self.kind == "excluded":
            reason = re.sub(r"^excluded\s+", "", self.reason)
            return f"excluded: {reason}" if reason else "excluded"
        return "not run in this tier" + (f" ({self.reason})" if self.reason else "")


def _matches(value: Any, allowed: Sequence[Any]) -> bool:
    """Whether a cell's value is one of ``allowed`` (``"re:<pattern>"``: a full match)."""
    text = str(value)
    for option in allowed:
        option_text = str(option)
        if option_text.startswith("re:"):
            if re.fullmatch(option_text[3:], text):
                return True
        elif option_text == text:
            return True
    return False


def _select(
    cells: Iterable[Mapping[str, Any]], selection: Mapping[str, Sequence[Any]] | None
) -> list[Mapping[str, Any]]:
    """The cells a figure shows: those whose values the selection allows (all without one)."""
    return [
        cell
        for cell in cells
        if not selection or all(_matches(cell[d], v) for d, v in selection.items() if d in cell)
    ]


def _cells_with_runs(ds: xr.Dataset) -> list[dict[str, Any]]:
    """Cells of a combined dataset that have runs (the grid less ``missing_cells``)."""
    dims = json.loads(ds.attrs.get("sweep_dims", "[]"))
    missing = json.loads(ds.attrs.get("missing_cells", "[]"))
    missing_keys = {tuple(str(cell[d]) for d in dims) for cell in missing}
    cells = []
    for combo in product(*(list(ds[d].values) for d in dims)):
        cell = {d: v.item() if hasattr(v, "item") else v for d, v in zip(dims, combo, strict=True)}
        if tuple(str(cell[d]) for d in dims) not in missing_keys:
            cells.append(cell)
    return cells


def _key(cell: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((d, str(v)) for d, v in cell.items()))


def figure_status(
    config: WorkflowConfig,
    figure: str,
    combined: xr.Dataset | None,
    facts: Mapping[str, Any] | None,
    excluded: str = "",
) -> Status:
    """The status of one artefact in this build.

    Parameters
    ----------
    combined
        The combined dataset the figure draws (None when not built).
    facts
        What the drawing recorded (``paper/figures/<id>.json``), None for a table.
    excluded
        Why this build skips the figure (e.g. emulation excluded), "" if it does not.
    """
    if excluded:
        return Status(figure, "excluded", reason=excluded)
    if combined is None:
        return Status(figure, "not run", reason="no dataset")
    facts = dict(facts or {})
    if facts.get("recorded") and int(facts.get("panels_drawn", 0)) == 0:
        return Status(figure, "not run")
    source = config.source(figure)
    selection = facts.get("selection")
    if facts.get("cells_total") is not None:
        total = int(facts["cells_total"])
        run = int(facts.get("cells_drawn") or 0)
    else:
        paper = _select(config.cells(source, "paper"), selection)
        pending = {_key(cell) for cell, _ in config.pending_cells(source, "paper")}
        paper_keys = {_key(cell) for cell in paper}
        run_keys = {_key(cell) for cell in _select(_cells_with_runs(combined), selection)}
        total = len(paper_keys)
        run = len((run_keys & paper_keys) - pending)
    if run == 0:
        return Status(figure, "not run", run, total)
    return Status(figure, "full" if run >= total else "partial", run, total)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _durations(ds: xr.Dataset) -> tuple[list[float], list[float]]:
    """Simulated durations and warm-ups of a combined dataset's runs (distinct, sorted)."""
    if "duration_s" in ds.attrs and "warmup_s" in ds.attrs:
        return [float(ds.attrs["duration_s"])], [float(ds.attrs["warmup_s"])]
    durations, warmups = set(), set()
    for config in ds["run_config"].values.ravel() if "run_config" in ds else []:
        if config:
            scenario = json.loads(str(config))
            durations.add(float(scenario["duration"]))
            warmups.add(float(scenario["warmup"]))
    return sorted(durations), sorted(warmups)


def _span(values: Sequence[float]) -> str:
    if not values:
        return "?"
    if len(values) == 1:
        return _seconds(values[0])
    return f"{_seconds(values[0])} to {_seconds(values[-1])}"


def tier_line(
    config: WorkflowConfig, figure: str, tier: str, combined: xr.Dataset, status: Status
) -> str:
    """What a figure was drawn from in this build, next to what the paper used (plain text).

    From the dataset: tier, backend, simulated duration and warm-up of each run,
    repetitions and cells run of the paper's grid. From the config's ``paper`` tier:
    the paper's duration, warm-up, repetitions and cells, with the tier's ``note``
    where its values are not the paper's own.
    """
    source = config.source(figure)
    durations, warmups = _durations(combined)
    reps = int(combined.sizes.get("rep", 1))
    backend = _BACKENDS.get(str(combined.attrs.get("backend", "")), combined.attrs.get("backend"))
    cells = ""
    if status.cells_paper:
        cells = (
            f"all {status.cells_paper} cells"
            if status.kind == "full"
            else f"{status.cells_run} of {status.cells_paper} cells"
        )
    warm = "no warm-up" if warmups == [0.0] else f"{_span(warmups)} warm-up"
    this = (
        f"This build: {tier} tier, {backend}, {_span(durations)} simulated per run ({warm}), "
        f"{reps} repetition{'s' if reps != 1 else ''}" + (f", {cells}" if cells else "") + "."
    )
    paper_scenario = config.figure_scenario(source, "paper")
    paper_settings = config.tier_settings(source, "paper")
    paper_reps = int(paper_settings["repetitions"])
    paper_warm = (
        "no warm-up" if paper_scenario.warmup == 0 else f"{_seconds(paper_scenario.warmup)} warm-up"
    )
    note = str(paper_settings.get("note", ""))
    paper = (
        f"Paper: {_seconds(paper_scenario.duration)} ({paper_warm}), {paper_reps} "
        f"repetition{'s' if paper_reps != 1 else ''}"
        + (f", {status.cells_paper} cells" if status.cells_paper else "")
        + (f" ({note})" if note else "")
        + "."
    )
    return f"{this} {paper}"


def _runs_text(config: WorkflowConfig, figure: str, tier: str, ds: xr.Dataset | None) -> str:
    """Short "this build; paper" run length and repetitions of a figure (plain text)."""
    source = config.source(figure)
    paper = config.figure_scenario(source, "paper")
    paper_reps = int(config.tier_settings(source, "paper")["repetitions"])
    paper_text = f"{_seconds(paper.duration)} ×{paper_reps}"
    if ds is None:
        return f"—; {paper_text}"
    durations, _ = _durations(ds)
    return f"{_span(durations)} ×{int(ds.sizes.get('rep', 1))}; {paper_text}"
