"""The cells each claim reads and the regime its runs must reach to decide it.

Each registry entry states, before any run, the *cells* it reads (``cells:``, per
figure, a list of sweep values per dimension, expanded as their product) and its
*regime criteria* (``regime:``), in the units :mod:`tcprepro.analysis.regime` measures.
An entry may name cells of its product the claim excepts (``except:``, a list of cells,
e.g. ``[{up: Compound, down: Cubic}]``, the cell a paragraph singles out): they are not
the claim's cells, so neither its coverage nor its regime criteria count them.
The criteria:

``min_loss_events``
    every bulk flow of every run has at least this many loss events in the measured
    window;
``past_slow_start``
    every bulk flow left its first slow start (by a loss or a window reduction)
    before the measured window;
``exclude_variants``
    flows of these variants are asked neither for losses nor for a loss-ended slow
    start: a delay-based flow (Vegas, FAST) may rightly never lose, and leaves slow
    start by holding its window;
``min_rtts``
    the measured window lasts at least this many of every bulk flow's mean RTT;
``min_completed_transfers``
    every cell completed at least this many generated transfers (repetitions pooled).

A claim whose present cells miss a criterion is *inconclusive* at that tier, the unmet
criterion named with the numbers and with the run it names (:class:`TracedRun`: the
worst flow-run or cell, the one the report draws the traces of). The coverage (``k of n
cells``) counts the claim's cells that have a run in the datasets at hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np
import xarray as xr

from tcprepro.analysis import regime as measures
from tcprepro.claims.glossary import count

__all__ = [
    "EXCEPT_KEY",
    "REGIME_KEYS",
    "Coverage",
    "TracedRun",
    "Unmet",
    "cell_coverage",
    "claim_cells",
    "describe_cells",
    "first_present_run",
    "present_cells",
    "regime_text",
    "spec_dims",
    "unmet_criteria",
    "unmet_regime",
    "validate_claim_cells",
]

#: the key of a ``cells:`` entry naming the cells of its product the claim excepts
EXCEPT_KEY = "except"

REGIME_KEYS = frozenset(
    {
        "min_loss_events",
        "exclude_variants",
        "past_slow_start",
        "min_rtts",
        "min_completed_transfers",
        "reason",
    }
)


@dataclass(frozen=True)
class Coverage:
    """How many of a claim's cells have a run: overall and per figure."""

    present: int
    total: int
    per_figure: tuple[tuple[str, int, int], ...] = ()

    def text(self) -> str:
        """``"4 of 12 cells"`` (with the figures when the claim reads several)."""
        out = count(self.present, self.total)
        if len(self.per_figure) > 1:
            out += " (" + ", ".join(f"{f}: {k}/{n}" for f, k, n in self.per_figure) + ")"
        return out


@dataclass(frozen=True)
class TracedRun:
    """One run of a combined dataset: the run a claim's "why" rests on.

    Attributes
    ----------
    figure
        The figure whose combined dataset holds the run.
    cell
        Its sweep values, as the dataset's coordinate labels (dimension order kept).
    rep
        Its repetition (the ``rep`` label).
    flow
        The flow the reason names (an unmet per-flow criterion), else None.
    reason
        Why this run (e.g. ``"the run the unmet criterion names"``).
    """

    figure: str
    cell: Mapping[str, Any]
    rep: int = 0
    flow: str | None = None
    reason: str = ""

    def cell_text(self) -> str:
        """``"up=NewReno, down=Cubic"``."""
        return _cell_name(self.cell)


@dataclass(frozen=True)
class Unmet:
    """One regime criterion the claim's runs miss: its text and the run it names."""

    text: str
    run: TracedRun


def _plain(value: Any) -> Any:
    """A coordinate label as a plain Python value (numpy scalars unwrapped)."""
    return value.item() if isinstance(value, np.generic) else value


def spec_dims(spec: Mapping[str, Any]) -> list[str]:
    """The sweep dimensions of a ``cells:`` entry (its keys but ``figure`` and ``except``)."""
    return [d for d in spec if d not in ("figure", EXCEPT_KEY)]


def validate_claim_cells(claim_id: str, cells: Sequence[Mapping[str, Any]]) -> None:
    """Check the shape of a ``cells:`` entry (a figure and a list of values per dimension).

    Each cell of its ``except:`` list names a value of every dimension of the entry, one
    of the entry's own.
    """
    for spec in cells:
        if "figure" not in spec:
            raise ValueError(f"{claim_id}: every cells entry names its figure")
        dims = spec_dims(spec)
        for dim in dims:
            values = spec[dim]
            if not isinstance(values, list) or not values:
                raise ValueError(f"{claim_id}: cells.{dim} must be a non-empty list")
        for cell in spec.get(EXCEPT_KEY, []):
            if not isinstance(cell, Mapping) or sorted(cell) != sorted(dims):
                raise ValueError(f"{claim_id}: cells.{EXCEPT_KEY} names cells by {dims}")
            if any(cell[d] not in spec[d] for d in dims):
                raise ValueError(f"{claim_id}: cells.{EXCEPT_KEY} {dict(cell)} is no cell of it")


def claim_cells(cells: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every cell a claim reads, per figure (each entry's product but the cells it excepts)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for spec in cells:
        dims = spec_dims(spec)
        excepted = [{d: cell[d] for d in dims} for cell in spec.get(EXCEPT_KEY, [])]
        found = out.setdefault(str(spec["figure"]), [])
        for combo in product(*(spec[d] for d in dims)):
            cell = dict(zip(dims, combo, strict=True))
            if cell not in found and cell not in excepted:
                found.append(cell)
    return out


def _label(coords: np.ndarray, value: Any) -> Any | None:
    """The coordinate label equal to ``value`` (numbers compared as numbers), else None."""
    for label in coords:
        if isinstance(value, bool) or isinstance(label, (bool, np.bool_)):
            if isinstance(label, (bool, np.bool_)) and bool(label) == value:
                return label
            continue
        if isinstance(value, (int, float)) and isinstance(label, (int, float, np.number)):
            if np.isclose(float(label), float(value), rtol=1e-9, atol=0.0):
                return label
        elif str(label) == str(value):
            return label
    return None


def _has_run(ds: xr.Dataset) -> xr.DataArray:
    """Boolean over the sweep dims: some repetition of the cell has data."""
    capacity = ds["link_goodput_capacity_bps"]
    other = [d for d in capacity.dims if d in ("link", "rep")]
    return capacity.notnull().any(other) if other else capacity.notnull()


def _selection(ds: xr.Dataset, cell: Mapping[str, Any]) -> dict[str, Any] | None:
    """The coordinate labels of one cell in ``ds``, or None when the sweep lacks a value."""
    selection = {}
    for dim, value in cell.items():
        if dim not in ds.dims:
            return None
        label = _label(ds[dim].values, value)
        if label is None:
            return None
        selection[dim] = label
    return selection


def _cell_name(selection: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in selection.items())


def present_cells(ds: xr.Dataset, cells: Sequence[Mapping[str, Any]]) -> list[xr.Dataset]:
    """The runs (all repetitions) of each of ``cells`` present in ``ds``."""
    out = []
    has_run = _has_run(ds)
    for cell in cells:
        selection = _selection(ds, cell)
        if selection is not None and bool(has_run.sel(selection).any()):
            out.append(ds.sel(selection).assign_attrs(cell=_cell_name(selection)))
    return out


def _claim_mask(ds: xr.Dataset, cells: Sequence[Mapping[str, Any]]) -> xr.DataArray:
    """Boolean over the sweep dims: the cell is one of ``cells`` and has a run."""
    has_run = _has_run(ds)
    mask = xr.zeros_like(has_run, dtype=bool)
    for cell in cells:
        selection = _selection(ds, cell)
        if selection is not None:
            mask.loc[selection] = True
    return mask & has_run


def cell_coverage(
    cells: Sequence[Mapping[str, Any]], datasets: Mapping[str, xr.Dataset]
) -> Coverage:
    """How many of the claim's cells have a run in ``datasets``."""
    per_figure = []
    for figure, wanted in claim_cells(cells).items():
        ds = datasets.get(figure)
        present = int(_claim_mask(ds, wanted).sum()) if ds is not None else 0
        per_figure.append((figure, present, len(wanted)))
    return Coverage(
        sum(k for _, k, _ in per_figure), sum(n for _, _, n in per_figure), tuple(per_figure)
    )


#: regime measures of each dataset already computed (combined datasets are read-only)
_MEASURES: dict[int, tuple[xr.Dataset, xr.Dataset]] = {}


def _measures(ds: xr.Dataset) -> xr.Dataset:
    """Every regime measure of a combined dataset, computed once per dataset object."""
    cached = _MEASURES.get(id(ds))
    if cached is not None and cached[0] is ds:
        return cached[1]
    out = xr.Dataset(
        {
            "bulk": (ds["flow_kind"] == "bulk") & measures.present_flows(ds),
            "variant": ds["flow_variant"],
            "loss_events": measures.loss_events(ds),
            "slow_start_over": measures.first_slow_start_over(ds),
            "rtts": measures.measured_rtts(ds),
            "completed": measures.completed_transfers(ds),
        }
    )
    if len(_MEASURES) > 32:
        _MEASURES.clear()
    _MEASURES[id(ds)] = (ds, out)
    return out


def _failures(
    values: xr.DataArray, ok: xr.DataArray, valid: xr.DataArray
) -> tuple[int, int, float, dict[str, Any]]:
    """(failing, checked, worst value, labels of the worst) over the valid entries."""
    values, ok, valid = xr.broadcast(values, ok, valid)
    if values.ndim == 0:
        values, ok, valid = (a.expand_dims(entry_=[0]) for a in (values, ok, valid))
    ok = ok.fillna(False).astype(bool)
    valid = valid.fillna(False).astype(bool)
    checked = int(valid.sum())
    failing = valid & ~ok
    n_fail = int(failing.sum())
    if n_fail == 0:
        return 0, checked, float("nan"), {}
    flat = values.astype(float).where(failing).stack(entry=values.dims)
    index = int(np.nanargmin(flat.values)) if np.isfinite(flat.values).any() else 0
    labels = dict(zip(values.dims, flat["entry"].values[index], strict=True))
    labels.pop("entry_", None)
    return n_fail, checked, float(flat.values[index]), labels


def _where(figure: str, labels: Mapping[str, Any]) -> str:
    parts = [figure]
    for key, value in labels.items():
        parts.append(f"{key} {value}" if key in ("rep", "flow") else f"{key}={value}")
    return ", ".join(parts)


def unmet_regime(
    regime: Mapping[str, Any],
    cells: Sequence[Mapping[str, Any]],
    datasets: Mapping[str, xr.Dataset],
) -> list[Unmet]:
    """The regime criteria the claim's present cells miss, each with its numbers and run.

    The run of a criterion is its worst entry over the claim's figures (fewest loss
    events, shortest window in RTTs, fewest transfers; for the slow start, the first
    flow-run still in it), repetition 0 when the criterion pools the repetitions.
    """
    # key -> (failing, worst, figure, labels of the worst)
    failed: dict[str, tuple[int, float, str, dict[str, Any]]] = {}
    totals: dict[str, int] = {}
    excluded = list(regime.get("exclude_variants", []))
    for figure, wanted in claim_cells(cells).items():
        ds = datasets.get(figure)
        if ds is None:
            continue
        mask = _claim_mask(ds, wanted)
        if not bool(mask.any()):
            continue
        m = _measures(ds)
        bulk = m["bulk"] & mask
        loss_flows = bulk & ~m["variant"].isin(excluded) if excluded else bulk
        checks = []
        if "min_loss_events" in regime:
            events = m["loss_events"]
            checks.append(("loss", events, events >= regime["min_loss_events"], loss_flows))
        if regime.get("past_slow_start"):
            over = m["slow_start_over"]
            checks.append(("slow start", over, over, loss_flows))
        if "min_rtts" in regime:
            rtts = m["rtts"]
            checks.append(("rtts", rtts, rtts >= regime["min_rtts"], bulk & rtts.notnull()))
        if "min_completed_transfers" in regime:
            done = m["completed"]
            done = done.sum("rep") if "rep" in done.dims else done
            checks.append(("transfers", done, done >= regime["min_completed_transfers"], mask))
        for key, values, ok, valid in checks:
            n_fail, checked, worst, labels = _failures(values, ok, valid)
            totals[key] = totals.get(key, 0) + checked
            if n_fail:
                old = failed.get(key, (0, np.inf, "", {}))
                if worst < old[1]:
                    failed[key] = (n_fail + old[0], worst, figure, labels)
                else:
                    failed[key] = (n_fail + old[0], old[1], old[2], old[3])
    out = []
    for key, (n_fail, worst, figure, labels) in failed.items():
        checked = totals[key]
        where = _where(figure, labels)
        if key == "loss":
            least = int(regime["min_loss_events"])
            none = "no loss event" if least == 1 else f"fewer than {least} loss events"
            text = (
                f"{none} in the measured window for {count(n_fail, checked, 'flow-run')} "
                f"(fewest {worst:.0f}: {where})"
            )
        elif key == "slow start":
            text = (
                f"{count(n_fail, checked, 'flow-run')} still in their first slow start when the "
                f"measured window begins (e.g. {where})"
            )
        elif key == "rtts":
            text = (
                f"measured window shorter than {regime['min_rtts']:g} RTTs for "
                f"{count(n_fail, checked, 'flow-run')} (shortest {worst:.0f} RTTs: {where})"
            )
        else:
            text = (
                f"fewer than {regime['min_completed_transfers']} completed transfers in "
                f"{count(n_fail, checked)} (fewest {worst:.0f}: {where})"
            )
        cell = {k: _plain(v) for k, v in labels.items() if k not in ("rep", "flow")}
        flow = labels.get("flow")
        run = TracedRun(
            figure=figure,
            cell=cell,
            rep=int(labels.get("rep", _first_rep(datasets[figure], cell))),
            flow=None if flow is None else str(flow),
            reason="the run the unmet criterion names",
        )
        out.append(Unmet(text, run))
    return out


def regime_text(regime: Mapping[str, Any]) -> str:
    """The regime criteria in words.

    ``"at least 3 loss events per flow in the measured window, every flow past its first
    slow start, 300 RTTs measured"``.
    """
    parts = []
    if "min_loss_events" in regime:
        least = int(regime["min_loss_events"])
        events = "loss event" if least == 1 else "loss events"
        parts.append(f"at least {least} {events} per flow in the measured window")
    if regime.get("past_slow_start"):
        parts.append("every flow past its first slow start")
    if "min_rtts" in regime:
        parts.append(f"{regime['min_rtts']:g} RTTs measured")
    if "min_completed_transfers" in regime:
        parts.append(f"{regime['min_completed_transfers']} completed transfers per cell")
    return ", ".join(parts)


def unmet_criteria(
    regime: Mapping[str, Any],
    cells: Sequence[Mapping[str, Any]],
    datasets: Mapping[str, xr.Dataset],
) -> list[str]:
    """The regime criteria the claim's present cells miss, each with its numbers."""
    return [unmet.text for unmet in unmet_regime(regime, cells, datasets)]


def _first_rep(ds: xr.Dataset, selection: Mapping[str, Any]) -> int:
    """The first repetition of a cell with data (0 when the dataset has no ``rep``)."""
    if "rep" not in ds.dims:
        return 0
    capacity = ds["link_goodput_capacity_bps"].sel(dict(selection))
    has_run = capacity.notnull().any([d for d in capacity.dims if d != "rep"])
    reps = [int(r) for r, ok in zip(has_run["rep"].values, has_run.values, strict=True) if ok]
    return reps[0] if reps else int(ds["rep"].values[0])


def first_present_run(
    cells: Sequence[Mapping[str, Any]], datasets: Mapping[str, xr.Dataset], reason: str = ""
) -> TracedRun | None:
    """The first of ``cells`` with a run in ``datasets``, at its first repetition with data.

    ``cells`` are single cells (``{"figure": "A1", "up": "NewReno", "down": "Cubic"}``)
    or ``cells:`` entries of the registry (lists of values, expanded as their product).
    """
    for spec in cells:
        expanded = {k: v if isinstance(v, list) else [v] for k, v in spec.items() if k != "figure"}
        if EXCEPT_KEY in spec:
            expanded[EXCEPT_KEY] = list(spec[EXCEPT_KEY])
        for figure, wanted in claim_cells([{"figure": spec["figure"], **expanded}]).items():
            ds = datasets.get(figure)
            if ds is None:
                continue
            has_run = _has_run(ds)
            for cell in wanted:
                selection = _selection(ds, cell)
                if selection is None or not bool(has_run.sel(selection).any()):
                    continue
                plain = {k: _plain(v) for k, v in selection.items()}
                return TracedRun(figure, plain, _first_rep(ds, selection), reason=reason)
    return None


def describe_cells(
    cells: Sequence[Mapping[str, Any]], datasets: Mapping[str, xr.Dataset], limit: int = 3
) -> str:
    """What the traces of the claim's first ``limit`` present cells show (a "why" line)."""
    parts, retransmitted = [], False
    for figure, wanted in claim_cells(cells).items():
        ds = datasets.get(figure)
        if ds is None:
            continue
        for run in present_cells(ds, wanted):
            if len(parts) == limit:
                break
            s = measures.cell_summary(run)
            retransmitted |= not np.isfinite(s["loss_pct"])
            parts.append(
                f"{figure} ({run.attrs['cell']}): bulk goodput {s['goodput_mbps']:.1f} Mb/s, "
                + (
                    f"mean cwnd {s['cwnd_pkts']:.0f} segments, "
                    if np.isfinite(s["cwnd_pkts"])
                    else f"mean cwnd {s['cwnd_kb']:.0f} kB, "
                )
                + f"{s['loss_events']:.0f} loss events "
                + (
                    f"and {s['loss_pct']:.2f} % loss per flow "
                    if np.isfinite(s["loss_pct"])
                    else f"and {s['retx_pct']:.2f} % retransmitted per flow "
                )
                + f"in {s['window_s']:g} s "
                f"({s['rtts']:.0f} RTTs); {s['queue_link']} queue {s['queue_pkts']:.1f} of "
                f"{s['buffer_pkts']:.0f} packets on average"
            )
    if not parts:
        return ""
    note = " (retransmitted: these runs do not record drops per flow)" if retransmitted else ""
    return (
        "Means over the measurement window and repetitions" + note + ": " + "; ".join(parts) + "."
    )
