r"""What the figures of study B share: labels, one run of a cell, the window row, the y scale.

Used by the time series (:mod:`tcprepro.figures.study_b`) and the sharing figures
(:mod:`tcprepro.figures.study_b_sharing`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from tcprepro.analysis import study_b as analysis_b
from tcprepro.figures.common import (
    FONT_PT,
    Drawn,
    empty_panel,
    record,
)
from tcprepro.variants import variant_label

_QDISC_LABELS = {"FIFO": "FIFO", "FQ": "PFQ/LQD"}


def describe_case(case: str) -> str:
    """Readable title of a B5.1 case: ``2Reno.FIFO.20`` -> ``2 Reno, FIFO, B = 20``."""
    match = re.fullmatch(r"(.+)\.(FIFO|FQ)\.(\d+)", case)
    if not match:
        return case
    mix, qdisc, buffer = match.groups()
    mix = re.sub(r"^(\d)", r"\1 ", mix).replace("+", " + ")
    return f"{mix}, {_QDISC_LABELS[qdisc]}, B = {buffer}"


def _rate_text(rate: str) -> str:
    """A capacity label of the sweep as printed: ``50Mbps`` -> ``50 Mb/s``."""
    return re.sub(r"^([\d.]+)\s*([kMG])bps$", r"\1 \2b/s", rate)


def _load_text(ds: xr.Dataset) -> str:
    """The background load ρ_b the runs of ``ds`` were configured with, e.g. ``50 %``."""
    loads = np.asarray(analysis_b.background_load(ds), dtype=float).ravel()
    ran = np.asarray(ds["link_goodput_capacity_bps"].notnull().any("link"), dtype=bool)
    loads = loads[ran.ravel()] if ran.size == loads.size else loads
    values = sorted({round(float(v) * 100, 1) for v in loads if np.isfinite(v)})
    return " or ".join(f"{v:g} %" for v in values) if values else "not recorded"


def _measured_load_text(runs: Sequence[xr.Dataset]) -> str:
    """The background load the drawn ``runs`` measured over their window, e.g. ``12 %``.

    The sum over the runs' generators of :func:`tcprepro.analysis.study_b.offered_load`
    (a short run can miss its target widely); ``""`` when no run records it.
    """
    loads = []
    for run in runs:
        if "config" not in run.attrs:
            continue
        load = sum(analysis_b.offered_load(run).values())
        if np.isfinite(load):
            loads.append(load * 100)
    if not loads:
        return ""
    ends = sorted({f"{v:.0f}" for v in (min(loads), max(loads))}, key=float)
    return "-".join(ends) + " %"


def _has_run(ds: xr.Dataset) -> bool:
    return bool(ds["link_goodput_capacity_bps"].notnull().any())


def _first_run(ds: xr.Dataset, **selection: object) -> xr.Dataset | None:
    """The first repetition of one cell as a single-run dataset, or None when not run."""
    for dim, value in selection.items():
        if value not in ds[dim].values:
            return None
        ds = ds.sel({dim: value})
    run = ds.isel(rep=0) if "rep" in ds.dims else ds
    if not _has_run(run):
        return None
    run = run.copy()
    run.attrs["warmup_s"] = float(ds.attrs.get("warmup_s", 0.0))
    config = str(run["run_config"].values) if "run_config" in run else ""
    if config:
        run.attrs["config"] = config
    present = run["flow_kind"].astype(str).isin(["bulk", "sized", "transfers", "packets"])
    return run.sel(flow=run["flow"][present.values])


def _mss_bytes(run: xr.Dataset) -> float:
    return float(str(json.loads(run.attrs["config"])["tcp"]["mss"]).removesuffix("B"))


def _bulk_flows(run: xr.Dataset) -> list[str]:
    return [str(f) for f in run["flow"].values[analysis_b.bottlenecked(run).values]]


def _flow_colours(flows: Sequence[str], run: xr.Dataset) -> dict[str, tuple[float, ...]]:
    palettes = {"NewReno": plt.get_cmap("Blues"), "HighSpeed": plt.get_cmap("Oranges")}
    out = {}
    for k, flow in enumerate(flows):
        variant = str(run["flow_variant"].sel(flow=flow).values)
        cmap = palettes.get(variant, plt.get_cmap("Greens"))
        out[flow] = cmap(0.85 - 0.15 * (k % 4))
    return out


def _flow_legend_label(run: xr.Dataset, flow: str) -> str:
    """``Reno`` for a run's only bottlenecked flow, ``Reno, flow 2`` among several."""
    flows = _bulk_flows(run)
    variant = variant_label(str(run["flow_variant"].sel(flow=flow).values))
    return variant if len(flows) == 1 else f"{variant}, flow {flows.index(flow) + 1}"


def _row_cwnd(ax: Axes, run: xr.Dataset) -> None:
    flows = _bulk_flows(run)
    colours = _flow_colours(flows, run)
    mss = _mss_bytes(run)
    for flow in flows:
        ax.plot(
            run["time"],
            run["cwnd_bytes"].sel(flow=flow) / mss,
            color=colours[flow],
            lw=0.8,
            label=_flow_legend_label(run, flow),
        )
    ax.set_ylim(bottom=0)


def _nothing_run(what: str, panels: int) -> Figure:
    """A small figure for a figure with nothing run in this tier (the report leaves it out)."""
    fig, ax = plt.subplots(figsize=(3.0, 1.0), layout="constrained")
    empty_panel(ax, f"{what}: not run in this tier")
    ax.set_xticks([])
    ax.set_yticks([])
    return record(fig, Drawn(panels=panels, panels_drawn=0, cells_drawn=0))


#: room above the largest value of the measured window on a time series' y axis
_HEADROOM = 1.1
#: a warm-up value above this many times the window's largest is clipped by the axis (a
#: smaller one the axis takes whole); the band above the window's data, a third of the
#: axis, holds the note saying so (two lines of small text in a panel 0.8 in high)
_CLIP_ABOVE = 1.5


def _drawn_xy(ax: Axes) -> list[tuple[np.ndarray, np.ndarray, object]]:
    """The (x, y, colour) of what ``ax`` draws in data coordinates: lines and their points."""
    out = []
    for line in ax.get_lines():
        if line.get_transform() == ax.transData:  # not an axhline's or axvline's
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            out.append((x, y, line.get_color()))
    for collection in ax.collections:
        if isinstance(collection, LineCollection) and collection.get_transform() == ax.transData:
            for segment in collection.get_segments():
                xy = np.asarray(segment, dtype=float).reshape(-1, 2)
                out.append((xy[:, 0], xy[:, 1], collection.get_color()[0]))
    return out


def fit_row_to_window(
    axes: Sequence[Axes],
    warmup_s: float,
    fmt: str = "{:.0f}",
    *,
    below: float = 0.0,
    empty_top: float = 1.0,
) -> list[float | None]:
    """One y scale for ``axes`` (a row of panels), fitted to what they draw after the warm-up.

    The top is the windows' largest value with some headroom (``empty_top`` when no window
    draws anything above zero), the bottom ``below`` times the top under zero (or the
    windows' smallest value, if lower): every value of every window lies inside, and the
    panels of a row compare at a glance. The warm-up stays drawn; a value of it far above
    the windows' (slow start's overshoot) is clipped by the axis, and its panel says so: a
    triangle on the top edge at the warm-up's largest value, in its line's colour, and
    "warm-up max" over that value (``fmt``) in the panel's top right corner, above the
    window's data. Returns, per panel, that value, or None when nothing is clipped there.
    """
    drawn = [_drawn_xy(ax) for ax in axes]
    window = [y[(x > warmup_s) & np.isfinite(y)] for lines in drawn for x, y, _ in lines]
    if not any(v.size for v in window):  # runs that end in their warm-up: all of them
        window = [y[np.isfinite(y)] for lines in drawn for _, y, _ in lines]
    values = np.concatenate(window) if window else np.array([])
    if not values.size:
        return [None] * len(axes)
    highest, lowest = float(values.max()), float(values.min())
    peaks = [_warm_up_peak(lines, warmup_s) for lines in drawn]
    peak = max((p[0] for p in peaks), default=-np.inf)
    if highest > 0 and peak > _CLIP_ABOVE * highest:
        top = _CLIP_ABOVE * highest  # the band above the windows' data holds the note
    else:
        highest = max(highest, peak)
        top = _HEADROOM * highest if highest > 0 else empty_top
    clipped: list[float | None] = []
    for ax, (value, x, colour) in zip(axes, peaks, strict=True):
        ax.set_ylim(min(-below * top, lowest), top)
        if value <= top:
            clipped.append(None)
            continue
        clipped.append(value)
        ax.plot([x], [top], "^", color=colour, ms=4, clip_on=False, zorder=6)
        ax.text(
            0.98,
            0.97,
            f"warm-up max\n{fmt.format(value)}",
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=FONT_PT - 2,
            color="0.3",
        )
    return clipped


def _warm_up_peak(
    lines: list[tuple[np.ndarray, np.ndarray, object]], warmup_s: float
) -> tuple[float, float, object]:
    """The largest value the lines draw in the warm-up: (value, its time, its colour)."""
    peak, peak_x, peak_colour = -np.inf, 0.0, None
    for x, y, colour in lines:
        early = (x <= warmup_s) & np.isfinite(y)
        if early.any() and float(y[early].max()) > peak:
            k = int(np.flatnonzero(early)[np.argmax(y[early])])
            peak, peak_x, peak_colour = float(y[k]), float(x[k]), colour
    return peak, peak_x, peak_colour
