"""Study A figures (Kaminski et al.): utilisation grids, response-time curves, traces.

Drawn from combined datasets; every bar, error bar and annotation comes from the
data passed in. Cells without runs (e.g. a variant whose model is pending) are
drawn as a visible "pending" box.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.figure import Figure

from tcprepro import metrics
from tcprepro.analysis.common import first_scenario
from tcprepro.figures.common import (
    FONT_PT,
    MAX_HEIGHT_IN,
    TEXT_WIDTH_IN,
    Drawn,
    empty_panel,
    points_style,
    record,
    spread_statement,
)

__all__ = ["response_time_curves", "title", "trace_panels", "utilisation_grid"]

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
    from matplotlib.colors import LogNorm

    rows = [str(v) for v in ds["up"].values]
    cols = [str(v) for v in ds["down"].values]
    frame = _tidy_utilisation(ds)
    rtt = (metrics.mean_rtt_s(ds) * 1000.0).mean("rep")
    n_reps = int(ds.sizes.get("rep", 1))

    grid_width = min(1.05 * len(cols), 4.3)
    fig = plt.figure(
        figsize=(grid_width + 2.3, min(0.95 * len(rows) + 0.9, MAX_HEIGHT_IN)),
        layout="constrained",
    )
    left, right = fig.subfigures(1, 2, width_ratios=[grid_width, 2.3])
    axes = left.subplots(len(rows), len(cols), sharex=True, sharey=True, squeeze=False)
    palette = {"Up": "#4c72b0", "Down": "#dd8452"}
    drawn_cells = 0
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
            ax.set_ylim(0, 110)
            ax.set_yticks([0, 40, 80])
            ax.set_xlabel("")
            ax.set_ylabel(up if j == 0 else "")
            if i == 0:
                ax.set_title(down)
    left.supylabel(f"{row_label} variant (rows): utilisation %")
    left.supxlabel(f"{col_label} variant (columns)")
    if title:
        fig.suptitle(title)

    rtt_axes = right.subplots(2, 1)
    norm = LogNorm(*rtt_range_ms)
    for ax, flow in zip(rtt_axes, ["down", "up"], strict=True):
        values = rtt.sel(flow=flow).to_pandas()
        values.index.name, values.columns.name = "up", "down"
        sns.heatmap(
            values.clip(lower=rtt_range_ms[0], upper=rtt_range_ms[1]),
            annot=values,
            fmt=".0f",
            cmap="Blues",
            norm=norm,
            cbar=True,
            cbar_kws={"label": "ms", "shrink": 0.9},
            ax=ax,
            mask=values.isna(),
        )
        ticks = _ticks_125(*rtt_range_ms)
        colour_bar = ax.collections[0].colorbar
        colour_bar.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
        colour_bar.minorticks_off()
        ax.set_title(f"mean RTT of the {flow}load flow")
        ax.set_xlabel(col_label)
        ax.set_ylabel(row_label)
        ax.tick_params(axis="y", labelrotation=0)
        for y, up in enumerate(values.index):
            for x, down in enumerate(values.columns):
                if not np.isfinite(values.loc[up, down]):
                    ax.text(x + 0.5, y + 0.5, "—", ha="center", va="center")
    missing = json.loads(ds.attrs.get("missing_cells", "[]"))
    facts = Drawn(
        panels=len(rows) * len(cols),
        panels_drawn=drawn_cells,
        cells_drawn=drawn_cells,
    ).say(
        spread_statement(n_reps, "Bars: mean over repetitions; error bars"),
        f"RTT colour scale: logarithmic, fixed at {rtt_range_ms[0]:g}–{rtt_range_ms[1]:g} ms "
        "(values beyond it take the end colours).",
    )
    if missing:
        facts.say(f"{len(missing)} cell(s) pending (model not built yet): grey boxes.")
    return record(fig, facts)


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
    counted in each panel's corner, never averaged. The colour key sits below the
    panels.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter

    table = metrics.transfer_table(ds)
    edges = metrics.size_bins(table["size_bytes"], per_decade)
    loads = [float(v) for v in ds["load"].values] if "load" in ds.dims else [None]
    ups = [str(v) for v in ds["up"].values]
    downs = [str(v) for v in ds["down"].values]
    by = ["up", "down"] + (["load"] if "load" in ds.dims else [])
    summary = metrics.conditional_response(table, by=by, edges=edges)
    palette = dict(zip(downs, sns.color_palette("colorblind", len(downs)), strict=True))
    shown = summary[summary["n"] >= min_transfers]
    if not shown.empty:  # common y range: every drawn mean and band, with a margin
        floor = np.minimum(shown["mean_s"], shown["ci_low_s"].clip(lower=shown["mean_s"] / 10))
        y_low = float(np.nanmin(floor)) / 1.5
        y_high = float(np.nanmax(shown["ci_high_s"].fillna(shown["mean_s"]))) * 1.5
    width = min(1.65 * len(ups), TEXT_WIDTH_IN)
    fig, axes = plt.subplots(
        len(loads),
        len(ups),
        figsize=(width, min(1.9 * len(loads) + 0.7, MAX_HEIGHT_IN)),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    n_drawn = 0
    for i, load in enumerate(loads):
        for j, up in enumerate(ups):
            ax = axes[i, j]
            panel = summary[summary["up"] == up]
            if load is not None:
                panel = panel[np.isclose(panel["load"], load)]
            drawn_here = False
            censored_text = []
            for down in downs:
                curve = panel[(panel["down"] == down) & (panel["n"] >= min_transfers)]
                censored = int(panel.loc[panel["down"] == down, "censored"].sum())
                if censored:
                    censored_text.append(f"{down} {censored}")
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
            if drawn_here:
                n_drawn += 1
                if censored_text:
                    ax.set_xlabel("censored: " + ", ".join(censored_text), fontsize=FONT_PT - 2)
            else:
                few = not panel.empty and panel["n"].sum() > 0
                empty = f"fewer than {min_transfers}\ntransfers per size bin" if few else "pending"
                empty_panel(ax, empty)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(edges[0], edges[-1])
            if not shown.empty:
                ax.set_ylim(y_low, y_high)
            ax.set_ylabel("mean response time (s)" if j == 0 else "")
            load_text = f", load {load:.0%}" if load is not None else ""
            ax.set_title(f"upload {up}{load_text}")
    for ax in axes.flat:  # 1-2-5 ticks on both log axes, labelled in plain units
        for axis, limits, label in (
            (ax.xaxis, ax.get_xlim(), _bytes_label),
            (ax.yaxis, ax.get_ylim(), lambda v, _=None: f"{v:g}"),
        ):
            axis.set_major_locator(FixedLocator(_ticks_125(*limits)))
            axis.set_major_formatter(FuncFormatter(label))
            axis.set_minor_formatter(FuncFormatter(lambda *_: ""))
        ax.tick_params(axis="x", labelrotation=45)
    fig.supxlabel("transfer size (bytes)")
    handles = [plt.Line2D([], [], color=palette[d], marker="o", markersize=3) for d in downs]
    fig.legend(handles, downs, title="download variant", loc="outside lower center", ncols=4)
    if title:
        fig.suptitle(title)
    n_reps = int(ds.sizes.get("rep", 1))
    pooled = f"the {n_reps} repetitions pooled" if n_reps > 1 else "one repetition"
    facts = Drawn(panels=axes.size, panels_drawn=n_drawn).say(
        f"Bands and error bars: 95 % confidence interval of the mean over the transfers of "
        f"{pooled}; size bins with fewer than {min_transfers} completed transfers are not drawn.",
        "Censored transfers (still running at the end, never averaged) are counted under each "
        "panel."
        if (summary["censored"] > 0).any()
        else "",
    )
    return record(fig, facts)


def _ticks_125(low: float, high: float) -> list[float]:
    """1-2-5 sequence of tick positions within [low, high] (log axes)."""
    ticks = [
        m * 10.0**k
        for k in range(int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 1)
        for m in (1, 2, 5)
    ]
    return [t for t in ticks if low <= t <= high]


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
    fig.legend(handles, labels, loc="outside lower center", ncols=3)
    if title:
        fig.suptitle(title)
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
