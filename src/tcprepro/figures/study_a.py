"""Study A figures (Kaminski et al.): utilisation grids, response-time curves, traces.

Drawn from combined datasets; every bar, error bar and annotation comes from the
data passed in. Cells without runs (e.g. a variant whose model is pending) are
drawn as a visible "pending" box.
"""

from __future__ import annotations

import json
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.figure import Figure, SubFigure

from tcprepro import metrics
from tcprepro.analysis import study_a as analysis_a
from tcprepro.analysis.common import first_scenario
from tcprepro.claims.glossary import plural, span
from tcprepro.figures import paper_values
from tcprepro.figures.common import (
    FONT_PT,
    MAX_HEIGHT_IN,
    TEXT_WIDTH_IN,
    Drawn,
    empty_panel,
    legend_below,
    points_style,
    record,
    spread_statement,
    suptitle,
)

__all__ = ["response_time_curves", "title", "trace_panels", "traffic_strip", "utilisation_grid"]

_DIRECTION_LABELS = {"up": "Up", "down": "Down"}


def _tidy_utilisation(ds: xr.Dataset) -> pd.DataFrame:
    util = (metrics.utilisation(ds) * 100.0).rename("utilisation_pct")
    frame = util.to_dataframe().reset_index()
    frame["direction"] = frame["flow"].map(_DIRECTION_LABELS)
    return frame.dropna(subset=["utilisation_pct"])


def utilisation_grid(
    ds: xr.Dataset,
    title: str = "",
    row_label: str = "Upload",
    col_label: str = "Download",
    rtt_range_ms: tuple[float, float] = (100.0, 2000.0),
) -> Figure:
    """Study A's grid: one panel per (upload, download) variant pair with Up/Down bars.

    Bars are means over repetitions (±1 standard deviation error bars when there
    are several), in percent of each direction's goodput capacity. A side panel
    shows the mean RTT (ms) of the download and upload flows for each cell, on a
    logarithmic colour scale fixed at ``rtt_range_ms`` (give A1 and A2 the same
    range, so that a colour means the same RTT in both), with its colour bar.
    """
    rows = [str(v) for v in ds["up"].values]
    cols = [str(v) for v in ds["down"].values]
    frame = _tidy_utilisation(ds)
    rtt = (metrics.mean_rtt_s(ds) * 1000.0).mean("rep")
    n_reps = int(ds.sizes.get("rep", 1))

    # the heat maps get room for one 3-digit value per cell (4 columns at 6.5 pt)
    grid_width = min(0.95 * len(cols), 3.8)
    fig = plt.figure(
        figsize=(grid_width + 2.8, min(0.95 * len(rows) + 0.9, MAX_HEIGHT_IN)),
        layout="constrained",
    )
    left, right = fig.subfigures(1, 2, width_ratios=[grid_width, 2.8])
    figure = str(ds.attrs.get("figure", ""))
    drawn_cells, stated = _utilisation_bars(left, frame, rows, cols, n_reps, figure)
    left.supylabel(f"{row_label} variant (rows): utilisation %")
    left.supxlabel(f"{col_label} variant (columns)")
    if title:
        suptitle(fig, title)

    _rtt_maps(right, rtt, rtt_range_ms, row_label, col_label)
    missing = json.loads(ds.attrs.get("missing_cells", "[]"))
    facts = Drawn(
        panels=len(rows) * len(cols),
        panels_drawn=drawn_cells,
        cells_drawn=drawn_cells,
    ).say(
        spread_statement(n_reps, "Bars: mean over repetitions; error bars"),
        f"RTT colour scale: logarithmic, fixed at {rtt_range_ms[0]:g}–{rtt_range_ms[1]:g} ms "
        "(values beyond it take the end colours).",
        paper_values.caption(stated),
        _stated_rtts(figure),
    )
    if missing:
        facts.say(f"{plural(len(missing))} pending (model not built yet): grey boxes.")
    return record(fig, facts)


def _utilisation_bars(
    left: SubFigure,
    frame: pd.DataFrame,
    rows: list[str],
    cols: list[str],
    n_reps: int,
    figure: str,
) -> tuple[int, list[paper_values.Mark]]:
    """The grid of Up/Down bars, the papers' stated values marked on them.

    Returns the cells drawn and the stated values marked.
    """
    axes = left.subplots(len(rows), len(cols), sharex=True, sharey=True, squeeze=False)
    palette = {"Up": "#4c72b0", "Down": "#dd8452"}
    drawn_cells = 0
    stated: list[paper_values.Mark] = []
    for i, up in enumerate(rows):
        for j, down in enumerate(cols):
            ax = axes[i, j]
            cell = frame[(frame["up"] == up) & (frame["down"] == down)]
            if cell.empty:
                empty_panel(ax, "pending")
            else:
                drawn_cells += 1
                sns.barplot(
                    data=cell,
                    x="direction",
                    y="utilisation_pct",
                    hue="direction",
                    order=["Up", "Down"],
                    palette=palette,
                    errorbar="sd" if n_reps > 1 else None,
                    capsize=0.2,
                    err_kws={"linewidth": 1.0},
                    ax=ax,
                    legend=False,
                )
                for x, direction in enumerate(("up", "down")):
                    for mark in paper_values.stated_for(
                        figure, f"utilisation_{direction}_pct", up=up, down=down
                    ):
                        paper_values.draw(ax, x, mark)
                        stated.append(mark)
            ax.set_ylim(0, 110)
            ax.set_yticks([0, 40, 80])
            ax.set_xlabel("")
            ax.set_ylabel(up if j == 0 else "")
            if i == 0:
                ax.set_title(down)
    return drawn_cells, stated


def _rtt_maps(
    right: SubFigure,
    rtt: xr.DataArray,
    rtt_range_ms: tuple[float, float],
    row_label: str,
    col_label: str,
) -> None:
    """The mean RTT of the download and upload flows per cell, with one colour bar."""
    from matplotlib.colors import LogNorm

    rtt_axes = right.subplots(2, 1)
    norm = LogNorm(*rtt_range_ms)
    for ax, flow in zip(rtt_axes, ["down", "up"], strict=True):
        values = rtt.sel(flow=flow).to_pandas()
        values.index.name, values.columns.name = "up", "down"
        sns.heatmap(
            values.clip(lower=rtt_range_ms[0], upper=rtt_range_ms[1]),
            annot=values,
            annot_kws={"fontsize": FONT_PT - 1.5},
            fmt=".0f",
            cmap="Blues",
            norm=norm,
            cbar=False,  # one colour bar for both maps, below
            ax=ax,
            mask=values.isna(),
        )
        ax.set_title(f"{flow}load flow")  # the colour bar says: mean RTT (ms)
        ax.set_xlabel(col_label)
        ax.set_ylabel(row_label)
        ax.tick_params(axis="y", labelrotation=0)
        ax.tick_params(axis="x", labelrotation=90)
        for y, up in enumerate(values.index):
            for x, down in enumerate(values.columns):
                if not np.isfinite(values.loc[up, down]):
                    ax.text(x + 0.5, y + 0.5, "—", ha="center", va="center")
    # both maps share the norm: one colour bar as tall as both, its ticks readable
    colour_bar = right.colorbar(
        rtt_axes[0].collections[0], ax=list(rtt_axes), label="mean RTT (ms)", shrink=0.9
    )
    ticks = _ticks_125(*rtt_range_ms)
    colour_bar.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
    colour_bar.minorticks_off()


def _stated_rtts(figure: str) -> str:
    """The RTTs the paper states in its text for ``figure`` (it draws none), as a sentence."""
    stated = paper_values.stated(figure, "rtt_ms")
    if not stated:
        return ""
    parts = [f"{m.text} ms ({m.cell_text})" for m in stated]
    claims = ", ".join(sorted({m.claim for m in stated}))
    return f"The paper states the RTTs in its text only: {'; '.join(parts)} ({claims})."


def _bytes_label(value: float, _position: object = None) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def response_time_curves(
    ds: xr.Dataset, title: str = "", per_decade: int = 4, min_transfers: int = 3
) -> Figure:
    """Study A3/A4: mean download response time conditioned on transfer size.

    One panel per upload variant (columns) and offered load (rows); one curve per
    download variant, with its Student-t 95 % confidence band. Transfers of all
    repetitions are pooled; size bins with fewer than ``min_transfers`` completed
    transfers are not drawn; censored transfers (still running at the end) are
    counted in each panel's corner, never averaged. The colour key, above the panels,
    shows each download variant drawn in its curves' style.

    A strip below shows what was drawn (:func:`traffic_strip`): the histogram of the
    transfer sizes, in the same bins, against the count the size law expects, and the
    offered load each run's transfers measured, against its target.
    """
    table = metrics.transfer_table(ds)
    edges = metrics.size_bins(table["size_bytes"], per_decade)
    loads = [float(v) for v in ds["load"].values] if "load" in ds.dims else [None]
    ups = [str(v) for v in ds["up"].values]
    downs = [str(v) for v in ds["down"].values]
    by = ["up", "down"] + (["load"] if "load" in ds.dims else [])
    summary = metrics.conditional_response(table, by=by, edges=edges)
    palette = dict(zip(downs, sns.color_palette("colorblind", len(downs)), strict=True))
    shown = summary[summary["n"] >= min_transfers]
    x_range, y_range = _response_ranges(shown, edges)
    width = min(max(1.65 * len(ups), _STRIP_MIN_WIDTH_IN), TEXT_WIDTH_IN)
    top_height = min(1.9 * len(loads) + 0.7, MAX_HEIGHT_IN - _STRIP_HEIGHT_IN)
    fig = plt.figure(figsize=(width, top_height + _STRIP_HEIGHT_IN), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[top_height, _STRIP_HEIGHT_IN])
    axes = top.subplots(len(loads), len(ups), sharex=True, sharey=True, squeeze=False)
    n_drawn = 0
    measured = analysis_a.measured_offered_load(ds, "web") if len(table) else pd.DataFrame()
    for i, load in enumerate(loads):
        for j, up in enumerate(ups):
            ax = axes[i, j]
            panel = summary[summary["up"] == up]
            if load is not None:
                panel = panel[np.isclose(panel["load"], load)]
            drawn_here, censored_text = _response_curves(ax, panel, downs, palette, min_transfers)
            if drawn_here:
                n_drawn += 1
                if censored_text:  # one short line in the corner: panels sit side by side
                    ax.text(
                        0.97,
                        0.03,
                        f"censored: {sum(censored_text)}",
                        transform=ax.transAxes,
                        ha="right",
                        va="bottom",
                        fontsize=FONT_PT - 2,
                    )
            else:
                few = not panel.empty and panel["n"].sum() > 0
                empty = f"fewer than {min_transfers}\ntransfers per size bin" if few else "pending"
                empty_panel(ax, empty)
            _response_axes(ax, up, load, j, x_range, y_range, measured)
    for ax in axes.flat:
        ax.tick_params(axis="x", labelrotation=45)
    top.supxlabel("transfer size (bytes)")
    # the key of each download variant drawn, in its style (markers only for one or two bins)
    keys: dict[str, Any] = {}
    for ax in axes.flat:
        for line in ax.lines:
            keys.setdefault(line.get_label(), line)
    drawn_downs = [d for d in downs if d in keys]
    if drawn_downs:
        top.legend(
            [keys[d] for d in drawn_downs],
            drawn_downs,
            title="download variant",
            loc="outside upper center",
            ncols=4,
        )
    if title:
        suptitle(fig, title)
    n_reps = int(ds.sizes.get("rep", 1))
    pooled = f"the {n_reps} repetitions pooled" if n_reps > 1 else "one repetition"
    facts = Drawn(panels=axes.size + 2, panels_drawn=n_drawn).say(
        f"Bands and error bars: 95 % confidence interval of the mean over the transfers of "
        f"{pooled}; size bins with fewer than {min_transfers} completed transfers are not drawn.",
        "Censored transfers (still running at the end, never averaged) are counted in each "
        "panel's lower right corner, all download variants together."
        if (summary["censored"] > 0).any()
        else "",
    )
    traffic_strip(bottom, ds, edges, facts)
    fig.draw_without_rendering()  # lay out, then space the log ticks on the panels' sizes
    for ax in [*axes.flat, *bottom.axes[:1]]:
        _log_ticks(ax)
    return record(fig, facts)


#: height of the strip under the A3/A4 response-time panels, and the narrowest figure that
#: leaves its two panels readable, inches
_STRIP_HEIGHT_IN = 2.0
_STRIP_MIN_WIDTH_IN = 4.8


def _response_ranges(
    shown: pd.DataFrame, edges: np.ndarray
) -> tuple[tuple[float, float], tuple[float, float] | None]:
    """The panels' common x range and y range (None when no curve is drawn)."""
    # x: the size bins drawn and one on each side (a short run fills few of the law's bins)
    x_range = (edges[0], edges[-1])
    if not shown.empty:
        low = np.searchsorted(edges, float(shown["size_center_bytes"].min())) - 2
        high = np.searchsorted(edges, float(shown["size_center_bytes"].max())) + 1
        x_range = (edges[max(low, 0)], edges[min(high, len(edges) - 1)])
    y_range = None
    if not shown.empty:  # common y range: every drawn mean and band, with a margin
        floor = np.minimum(shown["mean_s"], shown["ci_low_s"].clip(lower=shown["mean_s"] / 10))
        y_low = float(np.nanmin(floor)) / 1.5
        y_high = float(np.nanmax(shown["ci_high_s"].fillna(shown["mean_s"]))) * 1.5
        y_range = (y_low, y_high)
    return x_range, y_range


def _response_curves(
    ax: plt.Axes,
    panel: pd.DataFrame,
    downs: list[str],
    palette: dict[str, Any],
    min_transfers: int,
) -> tuple[bool, list[int]]:
    """One panel's curves, one per download variant, with their confidence bands.

    Returns whether any curve was drawn, and the censored transfers of each variant.
    """
    drawn_here = False
    censored_text: list[int] = []
    for down in downs:
        curve = panel[(panel["down"] == down) & (panel["n"] >= min_transfers)]
        censored = int(panel.loc[panel["down"] == down, "censored"].sum())
        if censored:
            censored_text.append(censored)
        if curve.empty:
            continue
        drawn_here = True
        low = curve["ci_low_s"].clip(lower=curve["mean_s"] / 10)
        ax.plot(
            curve["size_center_bytes"],
            curve["mean_s"],
            marker="o",
            color=palette[down],
            markersize=3,
            label=down,
            **points_style(len(curve)),
        )
        ax.errorbar(
            curve["size_center_bytes"],
            curve["mean_s"],
            yerr=[
                (curve["mean_s"] - low).fillna(0),
                (curve["ci_high_s"] - curve["mean_s"]).fillna(0),
            ],
            fmt="none",
            ecolor=palette[down],
            elinewidth=0.8,
            capsize=2,
        )
        ax.fill_between(
            curve["size_center_bytes"],
            low,
            curve["ci_high_s"],
            color=palette[down],
            alpha=0.15,
            linewidth=0,
        )
    return drawn_here, censored_text


def _response_axes(
    ax: plt.Axes,
    up: str,
    load: float | None,
    column: int,
    x_range: tuple[float, float],
    y_range: tuple[float, float] | None,
    measured: pd.DataFrame,
) -> None:
    """One panel's scales, ranges, label and title (the load, measured beside its target)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*x_range)
    if y_range is not None:
        ax.set_ylim(*y_range)
    ax.set_ylabel("mean response time (s)" if column == 0 else "")
    # three lines: four panels side by side leave no room for one; the load the
    # transfers measured beside the target, which a short run can miss widely
    load_text = ""
    if load is not None:
        load_text = f"\nload {_pct(load)}"
        if not measured.empty:
            at = measured[(measured["up"] == up) & np.isclose(measured["load"], load)]
            if len(at):  # the repetitions' range: a median of two hides 8 % and 146 %
                low, high = 100 * at["offered_load"].min(), 100 * at["offered_load"].max()
                load_text += f"\nmeasured {span(low, high, '{:.0f}', '–', ' %')}"
    ax.set_title(f"upload {up}{load_text}")


def _log_ticks(ax: plt.Axes) -> None:
    """1-2-5 ticks on both log axes of ``ax``, sizes in bytes on x, plain numbers on y.

    Sparser where labels would touch (:func:`_mantissas`): call it once the figure is
    laid out.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter

    for which, axis, limits, label in (
        ("x", ax.xaxis, ax.get_xlim(), _bytes_label),
        ("y", ax.yaxis, ax.get_ylim(), lambda v, _=None: f"{v:g}"),
    ):
        ticks = _ticks_125(*limits, _mantissas(ax, which))
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_major_formatter(FuncFormatter(label))
        axis.set_minor_formatter(FuncFormatter(lambda *_: ""))


def _bytes_text(value: float) -> str:
    """A size in bytes to three significant digits: ``41.5 kB``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} B"


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %"


def _load_text(values: pd.Series, one: str) -> str:
    """The measured loads of one target: their median and range, or the one value."""
    if len(values) == 1:
        return f"{_pct(float(values.iloc[0]))} in the one {one}"
    return (
        f"median {_pct(float(values.median()))} (range {_pct(float(values.min()))}–"
        f"{_pct(float(values.max()))}) over {len(values)} {one}s"
    )


def _law_text(ds: xr.Dataset, generator: str, loads: pd.DataFrame) -> str:
    """The size law of ``generator`` in words, with the scale each target load solved for."""
    law = first_scenario(ds).traffic[generator].size
    scales = loads.drop_duplicates("target_load").sort_values("target_load")
    solved = [
        f"{_bytes_text(row.pareto_min_bytes)} for the {_pct(row.target_load)} target load"
        for row in scales.itertuples()
        if np.isfinite(row.pareto_min_bytes)
    ]
    bound = "" if law.max is None else f", {_bytes_text(float(law.max))}"
    if law.law == "zipf":
        words = (
            f"Zipf's rank-size law of exponent {law.alpha:g} (a Pareto law of index "
            f"1/{law.alpha:g})"
        )
    elif law.law == "pareto":
        words = f"the Pareto law of index {law.alpha:g}"
    else:
        return f"the {law.law} size law"
    low = _bytes_text(float(law.min)) if law.min is not None else "s_min"
    scale = f", s_min = {' and '.join(solved)}" if solved else ""
    return f"{words} on [{low}{bound or ', no bound'}]{scale}"


def traffic_strip(
    sub: Figure, ds: xr.Dataset, edges: np.ndarray, facts: Drawn, generator: str = "web"
) -> None:
    """The strip of what the A3/A4 runs drew, on (sub)figure ``sub``; caption facts into ``facts``.

    Left: the histogram of the sizes of the distinct transfers drawn
    (:func:`tcprepro.analysis.study_a.size_histogram`, bins ``edges``, counts on a log
    axis) with the count the size law expects per bin as a step line. Right: the
    offered load each distinct draw measured over the measurement window
    (:func:`tcprepro.analysis.study_a.measured_offered_load`), one point per repetition
    (and cell, when cells drew different transfers), with the target load marked.
    """
    hist_ax, load_ax = sub.subplots(1, 2, width_ratios=[1.7, 1])
    histogram = analysis_a.size_histogram(ds, edges, generator)
    sizes = analysis_a.drawn_size_summary(ds, generator)
    loads = analysis_a.measured_offered_load(ds, generator)
    if not sizes["transfers"] or loads.empty:
        for ax in (hist_ax, load_ax):
            empty_panel(ax, "no transfers drawn")
        facts.say("Bottom: no transfers were drawn.")
        return
    facts.panels_drawn += 2
    colour, line = "0.6", "black"
    _size_histogram(hist_ax, histogram, edges, colour, line)

    points = loads.drop_duplicates("draw")
    shared = len(points) < len(loads)
    levels = sorted(points["target_load"].unique())
    # one style for the measured points and their legend key
    point_style = {
        "marker": "o",
        "markersize": 3,
        "linestyle": "none",
        "color": colour,
        "markeredgecolor": "0.3",
        "markeredgewidth": 0.5,
    }
    _offered_loads(load_ax, points, levels, point_style, line)
    one = "repetition" if shared else "run"
    sub.legend(
        [
            plt.Rectangle((0, 0), 1, 1, color=colour),
            plt.Line2D([], [], color=line, linewidth=1.0),
            plt.Line2D([], [], **point_style),
            plt.Line2D([], [], color=line, linewidth=1.0, linestyle="--"),
        ],
        [
            "sizes drawn",
            "expected by the size law",
            f"offered load measured, per {one}",
            "target load",
        ],
        loc="outside lower center",
        ncols=2,
    )

    window = float(loads["window_s"].iloc[0])
    capacity = float(loads["capacity_bps"].iloc[0])
    sharing = (
        " (every cell of a repetition draws the same transfers, so each draw counts once)"
        if shared
        else ""
    )
    per_level = "; ".join(
        _load_text(points.loc[np.isclose(points["target_load"], level), "offered_load"], one)
        + f" for a target of {_pct(level)}"
        for level in levels
    )
    facts.say(
        f"Bottom left: the sizes of the {sizes['transfers']} transfers drawn{sharing}, "
        f"{_pct(sizes['share_small'])} below {_bytes_text(analysis_a.SIZE_CLASSES[0][1])}, "
        f"median {_bytes_text(sizes['median_bytes'])}; the line is the count per bin expected "
        f"from {_law_text(ds, generator, loads)}, times the transfers drawn.",
        f"Bottom right: the offered load the transfers measured, the bytes of those that "
        f"arrived in the {window:g}-s measurement window over the window times "
        f"{capacity / 1e6:.2f} Mb/s (the downlink goodput capacity the load is calibrated "
        f"to): {per_level}.",
    )


def _size_histogram(
    hist_ax: plt.Axes, histogram: pd.DataFrame, edges: np.ndarray, colour: str, line: str
) -> None:
    """The sizes drawn per bin, and the count the size law expects as a step line."""
    expected = histogram["expected"].to_numpy()
    counts = histogram["count"].to_numpy()
    positive = np.concatenate([counts[counts > 0], expected[expected > 0]])
    y_low = max(min(0.5, float(positive.min()) / 1.5), 1e-2)
    y_high = float(positive.max()) * 2.0
    hist_ax.stairs(counts, edges, fill=True, color=colour, baseline=y_low)
    hist_ax.stairs(expected, edges, color=line, linewidth=1.0, baseline=None)
    hist_ax.set_xscale("log")
    hist_ax.set_yscale("log")
    hist_ax.set_xlim(edges[0], edges[-1])
    hist_ax.set_ylim(y_low, y_high)
    hist_ax.tick_params(axis="x", labelrotation=45)
    hist_ax.set_xlabel("transfer size (bytes)")
    hist_ax.set_ylabel("transfers")


def _offered_loads(
    load_ax: plt.Axes,
    points: pd.DataFrame,
    levels: list[float],
    point_style: dict[str, Any],
    line: str,
) -> None:
    """The offered load each draw measured, beside its target (dashed), per target load."""
    for x, level in enumerate(levels):
        at = points[np.isclose(points["target_load"], level)]
        spread = np.linspace(-0.18, 0.18, len(at)) if len(at) > 1 else np.zeros(1)
        load_ax.plot(x + spread, 100 * at["offered_load"], **point_style)
        load_ax.plot(
            [x - 0.32, x + 0.32], [100 * level] * 2, color=line, linewidth=1.0, linestyle="--"
        )
    load_ax.set_xticks(range(len(levels)), [_pct(level) for level in levels])
    load_ax.set_xlim(-0.6, len(levels) - 0.4)
    load_ax.set_ylim(0, 100 * max(points["offered_load"].max(), max(levels)) * 1.15)
    load_ax.set_xlabel("target load")
    load_ax.set_ylabel("offered load (%)")


def _ticks_125(low: float, high: float, mantissas: tuple[float, ...] = (1, 2, 5)) -> list[float]:
    """1-2-5 sequence of tick positions within [low, high] (log axes).

    ``mantissas`` gives another sequence per decade, e.g. (1, 3).
    """
    ticks = [
        m * 10.0**k
        for k in range(int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 1)
        for m in mantissas
    ]
    return [t for t in ticks if low <= t <= high]


#: tick sequences of a log axis, densest first, and the smallest gap between the labels of
#: each on paper, inches: rotated size labels along x, plain numbers up y
_MANTISSAS = ((1, 2, 5), (1, 3), (1,))
_LABEL_GAP_IN = {"x": 0.28, "y": 0.16}


def _mantissas(ax: plt.Axes, which: str) -> tuple[float, ...]:
    """The densest tick sequence whose labels keep :data:`_LABEL_GAP_IN` apart on ``ax``."""
    box = ax.get_window_extent()
    length_in = (box.width if which == "x" else box.height) / ax.figure.dpi
    low, high = ax.get_xlim() if which == "x" else ax.get_ylim()
    inches_per_decade = length_in / max(np.log10(high / low), 1e-9)
    for mantissas in _MANTISSAS:
        gaps = np.diff(np.log10([*mantissas, 10 * mantissas[0]]))
        if gaps.min() * inches_per_decade >= _LABEL_GAP_IN[which]:
            return mantissas
    return _MANTISSAS[-1]


def trace_panels(
    ds: xr.Dataset,
    cells: list[dict[str, str]],
    rep: int = 0,
    window_s: float = 60.0,
    title: str = "",
) -> Figure:
    """Queue, window and RTT traces of chosen cells of a figure (the evidence behind it).

    One column per cell (e.g. ``{"up": "NewReno", "down": "NewReno"}``) of repetition
    ``rep``, over ``window_s`` seconds starting at the end of the warm-up (or to the
    end of the run, if sooner): the queue occupancy of each traced link direction
    (its buffer drawn dashed), the congestion window of each flow (packets of
    ``tcp.mss`` bytes) and the RTT of each flow. Cells the dataset lacks are left
    out and named in the record (:class:`~tcprepro.figures.common.Drawn`).
    """
    start = float(ds.attrs["warmup_s"])
    span = slice(start, start + window_s)
    present = [
        cell
        for cell in cells
        if all(value in [str(v) for v in ds[dim].values] for dim, value in cell.items())
        and bool(ds["goodput_bps"].sel(**cell).notnull().any())
    ]
    absent = [cell for cell in cells if cell not in present]
    columns = present or cells[:1]
    fig, axes = plt.subplots(
        3,
        len(columns),
        figsize=(min(2.2 * len(columns), TEXT_WIDTH_IN), 4.6),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    colours = dict(zip(["down", "up"], sns.color_palette("colorblind", 2), strict=True))
    shown_until = start
    for j, cell in enumerate(columns):
        axes[0, j].set_title(", ".join(f"{k}={v}" for k, v in cell.items()))
        if cell not in present:
            for ax in axes[:, j]:
                empty_panel(ax)
            continue
        run = ds.sel(**cell, rep=rep).sel(time=span)
        shown_until = max(shown_until, float(run["time"].max()))
        mss = json.loads(run["run_config"].item())["tcp"]["mss"] if "run_config" in run else None
        mss_bytes = int(str(mss).rstrip("B")) if mss else 1448
        for link in [str(v) for v in run["link"].values]:
            colour = colours.get(link)
            axes[0, j].plot(run["time"], run["queue_pkts"].sel(link=link), color=colour, lw=0.8)
            axes[0, j].axhline(
                float(run["link_buffer_pkts"].sel(link=link)),
                color=colour,
                linestyle="--",
                linewidth=0.7,
            )
        for flow in [str(v) for v in run["flow"].values]:
            colour = colours.get(flow)
            axes[1, j].plot(
                run["time"], run["cwnd_bytes"].sel(flow=flow) / mss_bytes, color=colour, lw=0.8
            )
            axes[2, j].plot(run["time"], run["rtt_s"].sel(flow=flow) * 1000, color=colour, lw=0.8)
        axes[0, j].set_ylabel("queue (packets)" if j == 0 else "")
        axes[1, j].set_ylabel("cwnd (packets)" if j == 0 else "")
        axes[2, j].set_ylabel("RTT (ms)" if j == 0 else "")
        axes[2, j].set_xlabel("time (s)")
    handles = [
        plt.Line2D([], [], color=colours["down"]),
        plt.Line2D([], [], color=colours["up"]),
        plt.Line2D([], [], color="0.3", ls="--", lw=0.7),
    ]
    labels = ["download (its queue: downlink)", "upload (its queue: uplink)", "buffer size"]
    legend_below(fig, handles, labels, ncols=3)
    if title:
        suptitle(fig, title)
    n_reps = int(ds.sizes.get("rep", 1))
    which = "first repetition" if rep == 0 else f"repetition {rep + 1}"
    facts = Drawn(
        panels=3 * len(cells),
        panels_drawn=3 * len(present),
        cells_total=len(cells),
        cells_drawn=len(present),
        not_run=[", ".join(f"{k} {v}" for k, v in cell.items()) for cell in absent],
    ).say(
        f"Shown: {which}{f' of {n_reps}' if n_reps > 1 else ''}, t = {start:g}–"
        f"{shown_until:g} s (the {shown_until - start:g} s after the warm-up)."
    )
    return record(fig, facts)


def title(ds: xr.Dataset, figure_id: str) -> str:
    """A study-A figure's title from its data: uplink buffer and the two link rates.

    E.g. ``A1: uplink buffer 40 packets, 10/2 Mb/s``, read from the resolved scenario the
    runs carry, so a changed scenario changes the title.
    """
    topo = first_scenario(ds).topology
    down_mbps, up_mbps = topo.downlink.rate / 1e6, topo.uplink.rate / 1e6
    return (
        f"{figure_id}: uplink buffer {topo.uplink.buffer_pkts} packets, "
        f"{down_mbps:g}/{up_mbps:g} Mb/s"
    )
