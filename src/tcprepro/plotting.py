"""Figures drawn from combined datasets (seaborn + matplotlib).

This module owns the drawing of each catalogue figure from its combined
dataset (study A) or from the per-cell tables computed from it (study D).
It never runs a simulation and never hard-codes a number: every
bar, error bar and annotation comes from the data passed in (the papers'
own values, drawn as grey reference marks, come from :mod:`tcprepro.reference`). Cells
without runs (e.g. a variant whose model is pending) are drawn as a visible
"pending" box.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.figure import Figure

from tcprepro import metrics

__all__ = [
    "buffer_model_figure",
    "buffer_windows_figure",
    "crosscheck_scatter",
    "empty_panel",
    "loss_models_figure",
    "response_time_curves",
    "save_figure",
    "trace_panels",
    "utilisation_grid",
    "volume_figure",
]

_DIRECTION_LABELS = {"up": "Up", "down": "Down"}


def _tidy_utilisation(ds: xr.Dataset) -> pd.DataFrame:
    util = (metrics.utilisation(ds) * 100.0).rename("utilisation_pct")
    frame = util.to_dataframe().reset_index()
    frame["direction"] = frame["flow"].map(_DIRECTION_LABELS)
    return frame.dropna(subset=["utilisation_pct"])


def utilisation_grid(
    ds: xr.Dataset, title: str = "", row_label: str = "Upload", col_label: str = "Download"
) -> Figure:
    """Study A's grid: one panel per (upload, download) variant pair with Up/Down bars.

    Bars are means over repetitions with ±1 standard deviation error bars, in
    percent of each direction's goodput capacity. A side panel shows the mean
    RTT (ms) of the download and upload flows for each cell.
    """
    rows = [str(v) for v in ds["up"].values]
    cols = [str(v) for v in ds["down"].values]
    frame = _tidy_utilisation(ds)
    rtt = (metrics.mean_rtt_s(ds) * 1000.0).mean("rep")

    fig = plt.figure(figsize=(2.0 * len(cols) + 3.8, 1.7 * len(rows) + 1.2), layout="constrained")
    left, right = fig.subfigures(1, 2, width_ratios=[2.0 * len(cols), 3.6])
    axes = left.subplots(len(rows), len(cols), sharex=True, sharey=True, squeeze=False)
    palette = {"Up": "#4c72b0", "Down": "#dd8452"}
    for i, up in enumerate(rows):
        for j, down in enumerate(cols):
            ax = axes[i, j]
            cell = frame[(frame["up"] == up) & (frame["down"] == down)]
            if cell.empty:
                ax.text(
                    0.5,
                    0.5,
                    "pending",
                    ha="center",
                    va="center",
                    color="0.4",
                    transform=ax.transAxes,
                    fontsize=10,
                    style="italic",
                )
                ax.set_facecolor("0.93")
            else:
                sns.barplot(
                    data=cell,
                    x="direction",
                    y="utilisation_pct",
                    hue="direction",
                    order=["Up", "Down"],
                    palette=palette,
                    errorbar="sd",
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
                ax.set_title(down, fontsize=10)
    left.supylabel(f"{row_label} variant (rows)  —  utilisation %")
    left.supxlabel(f"{col_label} variant (columns)")
    if title:
        left.suptitle(title, fontsize=11)

    rtt_axes = right.subplots(2, 1)
    finite = rtt.values[np.isfinite(rtt.values)]
    rtt_max = float(finite.max()) if finite.size else 1.0
    for ax, flow in zip(rtt_axes, ["down", "up"], strict=True):
        values = rtt.sel(flow=flow).to_pandas()
        values.index.name, values.columns.name = "up", "down"
        sns.heatmap(
            values,
            annot=True,
            fmt=".0f",
            cmap="Blues",
            vmin=0,
            vmax=rtt_max * 1.3,
            cbar=False,
            ax=ax,
            annot_kws={"fontsize": 8},
            mask=values.isna(),
        )
        ax.set_title(f"mean RTT of the {flow}load flow (ms)", fontsize=9)
        ax.set_xlabel(col_label, fontsize=8)
        ax.set_ylabel(row_label, fontsize=8)
        ax.tick_params(labelsize=7)
        for y, up in enumerate(values.index):
            for x, down in enumerate(values.columns):
                if not np.isfinite(values.loc[up, down]):
                    ax.text(x + 0.5, y + 0.5, "—", ha="center", va="center", fontsize=8)
    missing = json.loads(ds.attrs.get("missing_cells", "[]"))
    if missing:
        fig.text(
            0.01,
            0.005,
            f"{len(missing)} cell(s) pending: model not built yet",
            fontsize=7,
            color="0.4",
        )
    return fig


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
    counted in each panel's legend, never averaged.
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
    fig, axes = plt.subplots(
        len(loads),
        len(ups),
        figsize=(3.2 * len(ups), 3.0 * len(loads)),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for i, load in enumerate(loads):
        for j, up in enumerate(ups):
            ax = axes[i, j]
            panel = summary[summary["up"] == up]
            if load is not None:
                panel = panel[np.isclose(panel["load"], load)]
            drawn = False
            for down in downs:
                curve = panel[(panel["down"] == down) & (panel["n"] >= min_transfers)]
                if curve.empty:
                    continue
                drawn = True
                censored = int(panel.loc[panel["down"] == down, "censored"].sum())
                label = f"{down} ({censored} censored)" if censored else down
                sns.lineplot(
                    data=curve,
                    x="size_center_bytes",
                    y="mean_s",
                    marker="o",
                    color=palette[down],
                    label=label,
                    ax=ax,
                    markersize=4,
                )
                low = curve["ci_low_s"].clip(lower=curve["mean_s"] / 10)
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
                    curve["ci_low_s"].clip(lower=curve["mean_s"] / 10),
                    curve["ci_high_s"],
                    color=palette[down],
                    alpha=0.15,
                    linewidth=0,
                )
            if not drawn:
                few = not panel.empty and panel["n"].sum() > 0
                empty = f"fewer than {min_transfers}\ntransfers per size bin" if few else "pending"
                empty_panel(ax, empty)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(edges[0], edges[-1])
            if not shown.empty:
                ax.set_ylim(y_low, y_high)
            ax.tick_params(axis="x", labelsize=7)
            ax.set_xlabel("transfer size (bytes)")
            ax.set_ylabel("mean response time (s)" if j == 0 else "")
            load_text = f", load {load:.0%}" if load is not None else ""
            ax.set_title(f"upload {up}{load_text}", fontsize=9)
            if ax.get_legend() is not None:
                ax.legend(title="download", fontsize=7, title_fontsize=7)
    for ax in axes.flat:  # 1-2-5 ticks on both log axes, labelled in plain units
        for axis, limits, label in (
            (ax.xaxis, ax.get_xlim(), _bytes_label),
            (ax.yaxis, ax.get_ylim(), lambda v, _=None: f"{v:g}"),
        ):
            axis.set_major_locator(FixedLocator(_ticks_125(*limits)))
            axis.set_major_formatter(FuncFormatter(label))
            axis.set_minor_formatter(FuncFormatter(lambda *_: ""))
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


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
    ``rep``, over ``window_s`` seconds starting at the end of the warm-up: the queue
    occupancy of each traced link direction (its buffer drawn dashed), the congestion
    window of each flow (packets of ``tcp.mss`` bytes) and the RTT of each flow.
    """
    start = float(ds.attrs["warmup_s"])
    span = slice(start, start + window_s)
    fig, axes = plt.subplots(
        3,
        len(cells),
        figsize=(4.0 * len(cells), 7.0),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    colours = dict(zip(["down", "up"], sns.color_palette("colorblind", 2), strict=True))
    for j, cell in enumerate(cells):
        run = ds.sel(**cell, rep=rep).sel(time=span)
        mss = json.loads(run["run_config"].item())["tcp"]["mss"] if "run_config" in run else None
        mss_bytes = int(str(mss).rstrip("B")) if mss else 1448
        for link in [str(v) for v in run["link"].values]:
            colour = colours.get(link)
            axes[0, j].plot(
                run["time"],
                run["queue_pkts"].sel(link=link),
                color=colour,
                label=f"{link} queue",
                linewidth=0.8,
            )
            axes[0, j].axhline(
                float(run["link_buffer_pkts"].sel(link=link)),
                color=colour,
                linestyle="--",
                linewidth=0.7,
            )
        for flow in [str(v) for v in run["flow"].values]:
            colour = colours.get(flow)
            axes[1, j].plot(
                run["time"],
                run["cwnd_bytes"].sel(flow=flow) / mss_bytes,
                color=colour,
                label=f"{flow} cwnd",
                linewidth=0.8,
            )
            axes[2, j].plot(
                run["time"],
                run["rtt_s"].sel(flow=flow) * 1000,
                color=colour,
                label=f"{flow} RTT",
                linewidth=0.8,
            )
        axes[0, j].set_title(", ".join(f"{k}={v}" for k, v in cell.items()), fontsize=9)
        axes[0, j].set_ylabel("queue (packets)" if j == 0 else "")
        axes[1, j].set_ylabel("cwnd (packets)" if j == 0 else "")
        axes[2, j].set_ylabel("RTT (ms)" if j == 0 else "")
        axes[2, j].set_xlabel("time (s)")
        for ax in axes[:, j]:
            ax.legend(fontsize=7, loc="upper right")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def empty_panel(ax: plt.Axes, text: str = "not run in this tier") -> None:
    """Grey a panel that has nothing to draw and say why, in its middle."""
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        color="0.4",
        transform=ax.transAxes,
        style="italic",
    )
    ax.set_facecolor("0.93")


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Save a figure atomically (format from the suffix), creating the folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        fig.savefig(tmp, bbox_inches="tight", format=path.suffix.lstrip(".") or "pdf")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path


def crosscheck_scatter(table: pd.DataFrame, title: str = "") -> Figure:
    """Simulation vs emulation: ns-3 (x) against Mininet (y), utilisation and mean RTT.

    ``table`` comes from :func:`tcprepro.emulation.crosscheck.compare`. The
    diagonal band is the stated tolerance; hollow markers are emulated runs the
    fidelity gate flagged; cells that could not be emulated are counted in the
    footnote.
    """
    tol_pp, tol_rtt = table.attrs["utilisation_pp"], table.attrs["rtt_rel"]
    fig, (ax_util, ax_rtt) = plt.subplots(1, 2, figsize=(9.0, 4.2), layout="constrained")
    colours = {"up": "#4c72b0", "down": "#dd8452"}
    ran = table[table["fidelity"] != "not run"]
    for flow, group in ran.groupby("flow"):
        colour = colours.get(str(flow), "0.3")
        for flagged, part in group.groupby(group["fidelity"] == "flagged"):
            style = {"facecolors": "none", "edgecolors": colour} if flagged else {"color": colour}
            label = f"{flow}{' (flagged)' if flagged else ''}"
            ax_util.scatter(part["ns3_util_pct"], part["emu_util_pct"], label=label, **style)
            ax_rtt.scatter(part["ns3_rtt_ms"], part["emu_rtt_ms"], label=label, **style)
    grid = np.linspace(0, 110, 2)
    ax_util.plot(grid, grid, color="0.4", lw=0.8)
    ax_util.fill_between(grid, grid - tol_pp, grid + tol_pp, color="0.85", zorder=0)
    ax_util.set(xlim=(0, 110), ylim=(0, 110), xlabel="ns-3 utilisation (%)")
    ax_util.set(ylabel="emulation utilisation (%)", title=f"utilisation, band ±{tol_pp:g} pp")
    finite = ran[["ns3_rtt_ms", "emu_rtt_ms"]].to_numpy(dtype=float)
    top = float(np.nanmax(finite)) * 1.15 if np.isfinite(finite).any() else 1.0
    line = np.linspace(0, top, 2)
    ax_rtt.plot(line, line, color="0.4", lw=0.8)
    ax_rtt.fill_between(line, line * (1 - tol_rtt), line * (1 + tol_rtt), color="0.85", zorder=0)
    ax_rtt.set(xlim=(0, top), ylim=(0, top), xlabel="ns-3 mean RTT (ms)")
    ax_rtt.set(ylabel="emulation mean RTT (ms)", title=f"mean RTT, band ±{tol_rtt:.0%}")
    ax_util.legend(fontsize=8, loc="lower right")
    not_run = int((table["fidelity"] == "not run").sum())
    flagged = int((table["fidelity"] == "flagged").sum())
    note = f"{len(ran)} flows emulated; {flagged} flagged by the fidelity gate (hollow)"
    if not_run:
        note += f"; {not_run} not emulated (variant not offered by the kernel)"
    if ran.empty:
        note = "no emulated dataset: ns-3 side only"
    fig.text(0.01, -0.02, note, fontsize=7, color="0.3")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


# ---------------------------------------------------------------------------
# Study D: throughput models (Makassikis 2006). Each function takes the per-cell
# tables of tcprepro.throughput_analysis (one frame, possibly stacked over
# backends) and the thesis's reference tables; model curves are computed here from
# tcprepro.throughput_models with each cell's parameters, never hard-coded.

_BACKEND_MARKERS = {"ns3": "o", "mininet": "s"}
_BACKEND_LABELS = {"ns3": "ns-3", "mininet": "emulated (Linux)"}
_REFERENCE_STYLE = {"color": "0.55", "marker": "x", "linestyle": "none", "markersize": 5}


def _size_label(n_bytes: float) -> str:
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:g}{unit}"
    return f"{n_bytes:g}"


def _size_axis(ax: plt.Axes, sizes_bytes: Sequence[float]) -> None:
    ax.set_xscale("log", base=2)
    ticks = sorted({float(s) for s in sizes_bytes})
    if len(ticks) > 9:
        ticks = ticks[:: int(np.ceil(len(ticks) / 9))]
    ax.set_xticks(ticks, [_size_label(t) for t in ticks])
    ax.minorticks_off()


def _rtt_label(rtt_s: float) -> str:
    return f"RTT {rtt_s * 1000:g} ms"


def _hollow_flagged(
    ax: plt.Axes, cells: pd.DataFrame, y: pd.Series, x: pd.Series | None = None
) -> None:
    """Draw the runs the fidelity gate flagged (``fidelity_ok == 0``) as white markers."""
    if "fidelity_ok" not in cells:
        return
    flagged = cells["fidelity_ok"] == 0
    if not flagged.any():
        return
    xs = cells["send_buffer_bytes"] if x is None else x
    ax.plot(xs[flagged], y[flagged], ls="none", marker="o", mfc="white", mec="0.2", ms=5, zorder=5)


def buffer_windows_figure(table: pd.DataFrame, thesis_windows: pd.DataFrame) -> Figure:
    """D1: throughput and send window against the send buffer, per RTT and receive buffer.

    Parameters
    ----------
    table
        :func:`tcprepro.throughput_analysis.buffer_table` (one or more backends).
    thesis_windows
        The thesis's Tables 3.1-3.3 (``tcprepro.reference.load("makassikis2006_windows")``).
    """
    from tcprepro.throughput_models import THESIS_C_E, application_throughput_bps

    rtts = sorted(table["rtt_s"].unique())
    buffers = sorted(table["recv_buffer_bytes"].unique())
    palette = dict(zip(buffers, sns.color_palette("deep", len(buffers)), strict=True))
    fig, axes = plt.subplots(
        2, len(rtts), figsize=(5.2 * len(rtts), 7.0), squeeze=False, layout="constrained"
    )
    for col, rtt in enumerate(rtts):
        top, bottom = axes[0, col], axes[1, col]
        at_rtt = table[table["rtt_s"] == rtt]
        for (backend, br), cells in at_rtt.groupby(["backend", "recv_buffer_bytes"]):
            cells = cells.sort_values("send_buffer_bytes")
            label = f"BR {_size_label(br)} ({_BACKEND_LABELS.get(backend, backend)})"
            style = {"color": palette[br], "marker": _BACKEND_MARKERS.get(backend, "^")}
            top.plot(cells["send_buffer_bytes"], cells["measured_bps"] / 1e6, label=label, **style)
            model = application_throughput_bps(
                cells["send_buffer_bytes"],
                cells["recv_buffer_bytes"],
                rtt,
                cells["c_e"],
                cells["c_r"],
                cells["capacity_bps"],
            )
            top.plot(cells["send_buffer_bytes"], model / 1e6, color=palette[br], ls="--", lw=1)
            bottom.plot(cells["send_buffer_bytes"], cells["fe_over_be"], label=label, **style)
            _hollow_flagged(top, cells, cells["measured_bps"] / 1e6)
            _hollow_flagged(bottom, cells, cells["fe_over_be"])
        # a time-scaled emulation meets the thesis's rows at the same BDP (equivalent RTT)
        thesis_rtt_s = float(at_rtt["thesis_rtt_s"].iloc[0]) if "thesis_rtt_s" in at_rtt else rtt
        thesis_rtt_ms = thesis_rtt_s * 1000
        reference = thesis_windows[np.isclose(thesis_windows["rtt_ms"], thesis_rtt_ms)]
        for br_kib, rows in reference.groupby("br_kib"):
            bottom.plot(
                rows["be_kib"] * 1024,
                rows["fe_over_be"].clip(upper=1.45),
                label=f"thesis, BR {_size_label(br_kib * 1024)} (Linux 2.6.12)",
                **_REFERENCE_STYLE,
            )
        bottom.axhline(THESIS_C_E, color="0.55", lw=0.8, ls=":")
        bottom.text(
            table["send_buffer_bytes"].min(), THESIS_C_E + 0.02, "thesis C_e = 0.55", fontsize=7
        )
        capacity = float(at_rtt["capacity_bps"].max())
        top.axhline(capacity / 1e6, color="0.3", lw=0.8, ls=":")
        top.set_yscale("log")
        top.set_ylabel("throughput (Mb/s)")
        top.set_title(f"{_rtt_label(rtt)}; dashed: model, dotted: link capacity", fontsize=9)
        bottom.set_ylim(0, 1.5)
        bottom.set_ylabel("mean send window FE / BE")
        bottom.set_xlabel("send buffer BE (bytes)")
        for ax in (top, bottom):
            _size_axis(ax, table["send_buffer_bytes"])
            ax.grid(alpha=0.3)
        bottom.legend(fontsize=7, loc="lower left")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    return fig


def buffer_model_figure(table: pd.DataFrame, thesis_throughput: pd.DataFrame) -> Figure:
    """D2: measured against predicted throughput of the buffer-limited cells, and the error.

    Parameters
    ----------
    table
        :func:`tcprepro.throughput_analysis.buffer_table` (one or more backends).
    thesis_throughput
        The thesis's Tables 3.4-3.5 (``reference.load("makassikis2006_throughput")``).
    """
    limited = table[table["buffer_limited"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.6), layout="constrained")
    groups = sorted(set(zip(limited["rtt_s"], limited["recv_buffer_bytes"], strict=True)))
    palette = dict(zip(groups, sns.color_palette("deep", len(groups)), strict=True))
    for (backend, rtt, br), cells in limited.groupby(["backend", "rtt_s", "recv_buffer_bytes"]):
        cells = cells.sort_values("send_buffer_bytes")
        style = {"color": palette[(rtt, br)], "marker": _BACKEND_MARKERS.get(backend, "^")}
        label = f"{_rtt_label(rtt)}, BR {_size_label(br)} ({_BACKEND_LABELS.get(backend, backend)})"
        left.plot(
            cells["predicted_bps"] / 1e6,
            cells["measured_bps"] / 1e6,
            ls="none",
            label=label,
            **style,
        )
        right.plot(cells["send_buffer_bytes"], cells["error_pct"], label=label, **style)
        _hollow_flagged(left, cells, cells["measured_bps"] / 1e6, cells["predicted_bps"] / 1e6)
        _hollow_flagged(right, cells, cells["error_pct"])
    left.plot(
        thesis_throughput["dp_mbps"],
        thesis_throughput["dm_mbps"],
        label="thesis",
        **_REFERENCE_STYLE,
    )
    right.plot(
        thesis_throughput["be_kib"] * 1024,
        thesis_throughput["err_pct"],
        label="thesis (Linux 2.6.12)",
        **_REFERENCE_STYLE,
    )
    finite = np.concatenate(
        [
            limited["predicted_bps"] / 1e6,
            limited["measured_bps"] / 1e6,
            thesis_throughput["dp_mbps"],
        ]
    )
    low, high = float(np.nanmin(finite)) / 1.5, float(np.nanmax(finite)) * 1.5
    line = np.array([low, high])
    left.plot(line, line, color="0.2", lw=0.8)
    left.fill_between(line, line / 1.3, line / 0.7, color="0.85", zorder=0, label="±30 %")
    left.set(xscale="log", yscale="log", xlim=(low, high), ylim=(low, high))
    left.set_xlabel("predicted min(BE C_e, BR C_r) / RTT (Mb/s)")
    left.set_ylabel("measured (Mb/s)")
    left.legend(fontsize=7)
    right.axhspan(-30, 30, color="0.9", zorder=0)
    right.axhline(0, color="0.2", lw=0.8)
    _size_axis(
        right, np.concatenate([limited["send_buffer_bytes"], thesis_throughput["be_kib"] * 1024])
    )
    right.set_xlabel("send buffer BE (bytes)")
    right.set_ylabel("relative error (D_p - D_m) / D_m (%)")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    return fig


def loss_models_figure(table: pd.DataFrame) -> Figure:
    """D3: throughput against the loss rate with the Mathis and Padhye curves.

    One column per (SACK, b) combination; rows: throughput with both models
    (drawn over a fine grid of p from each RTT's parameters), measured over
    predicted, and the share of time spent waiting for timeouts.

    Parameters
    ----------
    table
        :func:`tcprepro.throughput_analysis.loss_table`.
    """
    from tcprepro.throughput_models import mathis_throughput_bps, padhye_throughput_bps

    pairs = zip(table["sack"], table["acked_per_ack"], strict=True)
    combos = sorted({(bool(s), int(b)) for s, b in pairs}, key=lambda c: (not c[0], c[1]))
    rtts = sorted(table["rtt_s"].unique())
    palette = dict(zip(rtts, sns.color_palette("viridis", len(rtts)), strict=True))
    fig, axes = plt.subplots(
        3,
        len(combos),
        figsize=(3.7 * len(combos) + 0.8, 9.0),
        sharex=True,
        squeeze=False,
        layout="constrained",
        gridspec_kw={"height_ratios": [2.2, 1.2, 1.0]},
    )
    p_grid = np.logspace(
        np.log10(table["loss_rate"].min()) - 0.2, np.log10(table["loss_rate"].max()) + 0.1, 120
    )
    for col, (sack, b) in enumerate(combos):
        top, ratio, share = axes[:, col]
        cells = table[(table["sack"] == sack) & (table["acked_per_ack"] == b)]
        for (backend, rtt), rows in cells.groupby(["backend", "rtt_s"]):
            rows = rows.sort_values("loss_rate")
            colour = palette[rtt]
            marker = _BACKEND_MARKERS.get(backend, "^")
            first = rows.iloc[0]
            t0 = max(float(first["min_rto_s"]), rtt)
            mathis = mathis_throughput_bps(first["mss_bytes"], rtt, p_grid, acked_per_ack=b)
            padhye = padhye_throughput_bps(
                first["mss_bytes"], rtt, p_grid, t0, first["w_m_pkts"], b
            )
            top.plot(p_grid, mathis / 1e6, color=colour, ls="--", lw=1)
            top.plot(p_grid, padhye / 1e6, color=colour, ls="-", lw=1)
            top.errorbar(
                rows["loss_rate"],
                rows["measured_bps"] / 1e6,
                yerr=rows["measured_bps_std"].fillna(0) / 1e6,
                color=colour,
                marker=marker,
                ls="none",
                capsize=2,
                label=f"{_rtt_label(rtt)} ({_BACKEND_LABELS.get(backend, backend)})",
            )
            ratio.plot(
                rows["loss_rate"],
                rows["mathis_ratio"],
                color=colour,
                marker=marker,
                mfc="none",
                ls="--",
                lw=0.8,
            )
            ratio.plot(
                rows["loss_rate"], rows["padhye_ratio"], color=colour, marker=marker, ls="-", lw=0.8
            )
            share.plot(
                rows["loss_rate"], rows["timeout_share"] * 100, color=colour, marker=marker, lw=0.8
            )
        top.set(xscale="log", yscale="log")
        top.set_title(f"SACK {'on' if sack else 'off'}, b = {b}", fontsize=10)
        ratio.set_yscale("log")
        ratio.axhspan(0.7, 1.3, color="0.9", zorder=0)
        ratio.axhline(1.0, color="0.3", lw=0.8)
        share.set_ylim(0, 100)
        share.set_xlabel("packet loss probability p")
        for ax in (top, ratio, share):
            ax.grid(alpha=0.3, which="both")
    axes[0, 0].set_ylabel("throughput (Mb/s)\nMathis dashed, Padhye solid")
    axes[1, 0].set_ylabel("measured / model\n(open: Mathis, filled: Padhye)")
    axes[2, 0].set_ylabel("time waiting for\nRTOs (%, lower bound)")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    return fig


def volume_figure(
    table: pd.DataFrame, reliable: pd.DataFrame, thesis_volumes: pd.DataFrame
) -> Figure:
    """D4: throughput of one transfer against its volume, with the slow-start model.

    Parameters
    ----------
    table
        :func:`tcprepro.throughput_analysis.volume_table`.
    reliable
        :func:`tcprepro.throughput_analysis.reliable_volumes` of that table.
    thesis_volumes
        The thesis's Table 2.3 (``reference.load("makassikis2006_volumes")``).
    """
    buffers = sorted(table["recv_buffer_bytes"].unique())
    palette = dict(zip(buffers, sns.color_palette("deep", len(buffers)), strict=True))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.5, 4.6), layout="constrained")
    for (backend, br), rows in table.groupby(["backend", "recv_buffer_bytes"]):
        rows = rows.sort_values("size_bytes")
        colour = palette[br]
        marker = _BACKEND_MARKERS.get(backend, "^")
        label = f"window {_size_label(br)} ({_BACKEND_LABELS.get(backend, backend)})"
        left.plot(
            rows["size_bytes"], rows["measured_bps"] / 1e6, color=colour, marker=marker, label=label
        )
        left.plot(rows["size_bytes"], rows["model_bps"] / 1e6, color=colour, ls=":", lw=1.2)
        reference = float(rows["measured_bps"].iloc[-1])
        right.plot(
            rows["size_bytes"],
            rows["measured_bps"] / reference,
            color=colour,
            marker=marker,
            label=label,
        )
        mark = reliable[(reliable["backend"] == backend) & (reliable["recv_buffer_bytes"] == br)]
        if len(mark) and np.isfinite(mark["reliable_from_bytes"].iloc[0]):
            volume = float(mark["reliable_from_bytes"].iloc[0])
            for ax in (left, right):
                ax.axvline(volume, color=colour, lw=0.8, ls="-.")
    left.plot(
        thesis_volumes["volume_kib"] * 1024,
        thesis_volumes["iperfs_mbps"],
        label="thesis, iperf server (Table 2.3)",
        **_REFERENCE_STYLE,
    )
    right.plot(
        thesis_volumes["volume_kib"] * 1024,
        thesis_volumes["iperfs_mbps"] / thesis_volumes["iperfs_mbps"].iloc[-1],
        label="thesis, iperf server",
        **_REFERENCE_STYLE,
    )
    right.axhspan(0.9, 1.1, color="0.9", zorder=0)
    left.set_yscale("log")
    left.set_ylabel("throughput (Mb/s); dotted: slow-start model")
    right.set_ylabel("throughput / throughput of the largest volume")
    for ax in (left, right):
        _size_axis(ax, np.concatenate([table["size_bytes"], thesis_volumes["volume_kib"] * 1024]))
        ax.set_xlabel("volume (bytes)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return fig
