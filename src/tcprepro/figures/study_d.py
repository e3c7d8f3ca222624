"""Study D figures (Makassikis 2006): socket-buffer windows, loss models, volumes.

Each function takes the per-cell tables of :mod:`tcprepro.analysis.study_d` (one
frame, possibly stacked over backends) and the thesis's reference tables; model
curves are computed from :mod:`tcprepro.models.throughput` with each cell's
parameters, never hard-coded. A series of one or two points is drawn as markers
only; keys sit outside the panels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from tcprepro.claims.glossary import plural
from tcprepro.figures.common import (
    MAX_HEIGHT_IN,
    TEXT_WIDTH_IN,
    Drawn,
    legend_below,
    points_style,
    record,
    spread_statement,
    suptitle,
)

__all__ = ["buffer_model_figure", "buffer_windows_figure", "loss_models_figure", "volume_figure"]


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


def _mark_left_out(
    ax: plt.Axes, cells: pd.DataFrame, y: pd.Series, x: pd.Series | None = None
) -> None:
    """Mark the cells the claims leave out.

    White markers for the runs the fidelity gate flagged (``fidelity_ok == 0``), black
    squares around the cells whose sender the kernel did not hold to its send buffer
    (``send_buffer_held`` false).
    """
    xs = cells["send_buffer_bytes"] if x is None else x
    if "fidelity_ok" in cells:
        flagged = cells["fidelity_ok"] == 0
        if flagged.any():
            style = {"marker": "o", "mfc": "white", "mec": "0.2", "ms": 5}
            ax.plot(xs[flagged], y[flagged], ls="none", zorder=5, **style)
    if "send_buffer_held" in cells:
        unheld = ~cells["send_buffer_held"].astype(bool)
        if unheld.any():
            style = {"marker": "s", "mfc": "none", "mec": "k", "ms": 11, "mew": 1.2}
            ax.plot(xs[unheld], y[unheld], ls="none", zorder=6, **style)


def _outside_legend(fig: Figure, axes: Sequence[plt.Axes]) -> None:
    """One key for every panel, under them (never on the data)."""
    entries: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        legend_below(fig, list(entries.values()), list(entries), ncols=2)


def _backends_statement(table: pd.DataFrame) -> str:
    names = [_BACKEND_LABELS.get(b, b) for b in table["backend"].unique()]
    flagged = int((table["fidelity_ok"] == 0).sum()) if "fidelity_ok" in table else 0
    text = f"Backend: {', '.join(names)}."
    if flagged:
        text += f" Hollow markers: {plural(flagged, 'run')} the fidelity gate flagged."
    if "send_buffer_held" in table:
        unheld = table[~table["send_buffer_held"].astype(bool)]
        if len(unheld):
            times = unheld["peak_window_bytes"] / unheld["sndbuf_granted_bytes"]
            text += (
                f" Framed in black: {plural(len(unheld))} where the kernel did not hold the"
                " sender to its send buffer (peak bytes in flight up to"
                f" {float(times.max()):.0f} times the buffer it granted), which the claims"
                " leave out."
            )
    if "write_bytes" in table and table["write_bytes"].notna().any():
        sizes = sorted(table["write_bytes"].dropna().unique())
        text += (
            " Linux's sender wrote "
            + " and ".join(f"{size / 1024:g} KiB" for size in sizes)
            + " per call"
            + (" (ns-3's keeps its buffer full)." if "ns3" in set(table["backend"]) else ".")
        )
    return text


def _log_span(values: list[float]) -> tuple[float, float]:
    """A log axis's limits holding ``values`` and the thesis's C_e, two decades' ticks at least.

    The bottom goes down to the decade under the top's when the values span less, so the
    axis labels two powers of ten.
    """
    from tcprepro.models.throughput import THESIS_C_E

    found = np.asarray([v for v in (*values, THESIS_C_E) if np.isfinite(v) and v > 0])
    low, high = float(found.min()) / 1.5, float(found.max()) * 2.0
    return min(low, 10.0 ** (np.floor(np.log10(high)) - 1)), high


def _thesis_windows(ax: plt.Axes, rows: pd.DataFrame, label: str) -> int:
    """The thesis's windows (FE/BE against BE) on ``ax``; how many lie above it.

    A window above the panel's top is drawn as a triangle at the top edge with its value
    written under it: the thesis's Linux 2.6.12 held some windows many times BE (its
    Table 3.2), and a panel scaled to them would flatten every other window.
    """
    be_bytes = rows["be_kib"] * 1024
    edge = ax.get_ylim()[1]
    inside = rows["fe_over_be"] <= edge
    ax.plot(be_bytes[inside], rows["fe_over_be"][inside], label=label, **_REFERENCE_STYLE)
    over = rows["fe_over_be"] > edge
    style = {**_REFERENCE_STYLE, "marker": "^"}
    for be, value in zip(be_bytes[over], rows["fe_over_be"][over], strict=True):
        # x in data, y in axes units: at the top edge whatever the panel's scale
        ax.plot([be], [0.97], transform=ax.get_xaxis_transform(), clip_on=False, **style)
        ax.annotate(
            f"{value:.3g}",
            (be, 0.97),
            xycoords=ax.get_xaxis_transform(),
            xytext=(0, -5),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize="small",
            color=style["color"],
            gid="thesis-above",
        )
    return int(over.sum())


def buffer_windows_figure(
    table: pd.DataFrame, thesis_windows: pd.DataFrame, figure_id: str = "D1"
) -> Figure:
    """D1: throughput and send window against the send buffer, per RTT and receive buffer.

    Parameters
    ----------
    table
        :func:`tcprepro.analysis.study_d.buffer_table` (one or more backends).
    thesis_windows
        The thesis's Tables 3.1-3.3 (``tcprepro.reference.load("makassikis2006_windows")``).
    figure_id
        The catalogue id the title names: D1 (ns-3) or D1.1 (the same cells emulated).
    """
    from tcprepro.models.throughput import THESIS_C_E, application_throughput_bps

    rtts = sorted(table["rtt_s"].unique())
    buffers = sorted(table["recv_buffer_bytes"].unique())
    palette = dict(zip(buffers, sns.color_palette("deep", len(buffers)), strict=True))
    fig, axes = plt.subplots(
        2,
        len(rtts),
        figsize=(min(3.1 * len(rtts) + 0.5, TEXT_WIDTH_IN), 4.8),
        squeeze=False,
        sharex="col",  # throughput and window at the same send buffer, one above the other
        layout="constrained",
    )
    thesis_drawn = False
    above = 0  # thesis windows above their panel, marked at its top edge
    sizes = [*table["send_buffer_bytes"]]
    for col, rtt in enumerate(rtts):
        top, bottom = axes[0, col], axes[1, col]
        at_rtt = table[table["rtt_s"] == rtt]
        for (backend, br), cells in at_rtt.groupby(["backend", "recv_buffer_bytes"]):
            cells = cells.sort_values("send_buffer_bytes")
            label = f"BR {_size_label(br)} ({_BACKEND_LABELS.get(backend, backend)})"
            style = {
                "color": palette[br],
                "marker": _BACKEND_MARKERS.get(backend, "^"),
                **points_style(len(cells)),
            }
            top.plot(cells["send_buffer_bytes"], cells["measured_bps"] / 1e6, label=label, **style)
            model = application_throughput_bps(
                cells["send_buffer_bytes"],
                cells["recv_buffer_bytes"],
                rtt,
                cells["c_e"],
                cells["c_r"],
                cells["capacity_bps"],
            )
            top.plot(
                cells["send_buffer_bytes"],
                model / 1e6,
                color=palette[br],
                ls="--" if len(cells) > 2 else "none",
                marker=None if len(cells) > 2 else "_",
                ms=10,
                lw=1,
            )
            bottom.plot(cells["send_buffer_bytes"], cells["fe_over_be"], label=label, **style)
            _mark_left_out(top, cells, cells["measured_bps"] / 1e6)
            _mark_left_out(bottom, cells, cells["fe_over_be"])
        # a time-scaled emulation meets the thesis's rows at the same BDP (equivalent RTT)
        thesis_rtt_s = float(at_rtt["thesis_rtt_s"].iloc[0]) if "thesis_rtt_s" in at_rtt else rtt
        thesis_rtt_ms = thesis_rtt_s * 1000
        capacity = float(at_rtt["capacity_bps"].max())
        top.axhline(capacity / 1e6, color="0.3", lw=0.8, ls=":")
        top.set_yscale("log")
        top.set_ylabel("throughput (Mb/s)")
        top.set_title(_rtt_label(rtt))
        highest = float(table["fe_over_be"].max())
        reference = thesis_windows[np.isclose(thesis_windows["rtt_ms"], thesis_rtt_ms)]
        if highest > 1.5:  # a sender beyond its buffer: all of it, the thesis's and C_e too
            bottom.set_yscale("log")
            bottom.set_ylim(*_log_span([*table["fe_over_be"], *reference["fe_over_be"]]))
        else:
            bottom.set_ylim(0, 1.5)
        for br_kib, rows in reference.groupby("br_kib"):
            thesis_drawn = True
            sizes += [*(rows["be_kib"] * 1024)]
            label = f"thesis, BR {_size_label(br_kib * 1024)} (Linux 2.6.12)"
            above += _thesis_windows(bottom, rows, label)
        bottom.axhline(
            THESIS_C_E, color="0.55", lw=0.8, ls=":", label=f"thesis $C_e$ = {THESIS_C_E:g}"
        )
        bottom.set_ylabel("mean send window FE / BE")
        bottom.set_xlabel("send buffer BE (bytes)")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
    for ax in axes.flat:  # one send-buffer axis for the runs and the thesis's rows
        _size_axis(ax, sizes)
        ax.tick_params(labelbottom=True)
    _outside_legend(fig, list(axes.flat))
    suptitle(fig, f"{figure_id}: throughput and send window against the send buffer")
    few = len(table) <= 2 * len(rtts) * len(buffers)
    facts = Drawn(panels=axes.size, panels_drawn=axes.size, cells_drawn=len(table)).say(
        "Top: dashed, the model"
        + (" (short bars: one or two buffers, model values)" if few else "")
        + "; dotted, the link's goodput capacity.",
        "Grey crosses: the thesis's Linux 2.6.12 windows for the same RTT."
        if thesis_drawn
        else "The thesis has no row for this RTT.",
        f"Grey triangles at the top edge: {plural(above, 'thesis window')} above the axis, "
        "each with its FE/BE written under it."
        if above
        else "",
        _backends_statement(table),
    )
    return record(fig, facts)


def buffer_model_figure(
    table: pd.DataFrame, thesis_throughput: pd.DataFrame, figure_id: str = "D2"
) -> Figure:
    """D2: measured against predicted throughput of the buffer-limited cells, and the error.

    Parameters
    ----------
    table
        :func:`tcprepro.analysis.study_d.buffer_table` (one or more backends).
    thesis_throughput
        The thesis's Tables 3.4-3.5 (``reference.load("makassikis2006_throughput")``).
    figure_id
        ``D2`` (ns-3) or ``D2.1`` (emulated), for the title.
    """
    limited = table[table["buffer_limited"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(TEXT_WIDTH_IN, 3.2), layout="constrained")
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
        right.plot(
            cells["send_buffer_bytes"],
            cells["error_pct"],
            label=label,
            **style,
            **points_style(len(cells)),
        )
        _mark_left_out(left, cells, cells["measured_bps"] / 1e6, cells["predicted_bps"] / 1e6)
        _mark_left_out(right, cells, cells["error_pct"])
    left.plot(
        thesis_throughput["dp_mbps"],
        thesis_throughput["dm_mbps"],
        label="thesis (Linux 2.6.12)",
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
    left.set_xlabel("predicted $\\min(BE\\,C_e, BR\\,C_r)/RTT$ (Mb/s)")
    left.set_ylabel("measured (Mb/s)")
    right.axhspan(-30, 30, color="0.9", zorder=0)
    right.axhline(0, color="0.2", lw=0.8)
    _size_axis(
        right, np.concatenate([limited["send_buffer_bytes"], thesis_throughput["be_kib"] * 1024])
    )
    right.set_xlabel("send buffer BE (bytes)")
    right.set_ylabel("relative error $(D_p - D_m)/D_m$ (%)")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    _outside_legend(fig, [left, right])
    suptitle(fig, f"{figure_id}: measured against predicted throughput of the buffer-limited runs")
    facts = Drawn(panels=2, panels_drawn=2, cells_drawn=len(limited)).say(
        f"{plural(len(limited), 'buffer-limited run')} of {len(table)}.",
        _backends_statement(table),
    )
    return record(fig, facts)


def loss_models_figure(table: pd.DataFrame, repetitions: int = 1) -> Figure:
    """D3: throughput against the loss rate with the Mathis and Padhye curves.

    One column per (SACK, b) combination; rows: throughput with both models
    (drawn over a fine grid of p from each RTT's parameters), measured over
    predicted, and the share of time spent waiting for timeouts.

    Parameters
    ----------
    table
        :func:`tcprepro.analysis.study_d.loss_table`.
    repetitions
        Repetitions behind each measured point (error bars only with several).
    """
    pairs = zip(table["sack"], table["acked_per_ack"], strict=True)
    combos = sorted({(bool(s), int(b)) for s, b in pairs}, key=lambda c: (not c[0], c[1]))
    rtts = sorted(table["rtt_s"].unique())
    palette = dict(zip(rtts, sns.color_palette("viridis", len(rtts)), strict=True))
    fig, axes = plt.subplots(
        3,
        len(combos),
        figsize=(min(1.75 * len(combos) + 1.6, TEXT_WIDTH_IN), min(5.6, MAX_HEIGHT_IN)),
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
        _loss_curves(top, ratio, share, cells, palette, p_grid, b)
        top.set(xscale="log", yscale="log")
        top.set_title(f"SACK {'on' if sack else 'off'}, b = {b}")
        ratio.set_yscale("log")
        ratio.axhspan(0.7, 1.3, color="0.9", zorder=0)
        ratio.axhline(1.0, color="0.3", lw=0.8)
        share.set_ylim(0, 100)
        share.set_xlabel("packet loss probability p")
        for ax in (top, ratio, share):
            ax.grid(alpha=0.3, which="both")
    # one line each: the rows are short, two-line labels ran into one another
    axes[0, 0].set_ylabel("throughput (Mb/s)")
    axes[1, 0].set_ylabel("measured / model")
    axes[2, 0].set_ylabel("RTO wait (%)")
    _outside_legend(fig, [axes[0, 0]])
    suptitle(fig, "D3: throughput against the loss rate, Mathis and Padhye models")
    facts = Drawn(panels=axes.size, panels_drawn=axes.size, cells_drawn=len(table)).say(
        "Columns: " + "; ".join(f"SACK {'on' if s else 'off'}, b = {b}" for s, b in combos) + ".",
        spread_statement(repetitions, "Measured points: mean over repetitions; error bars"),
        "Top: Mathis dashed, Padhye solid.",
        "Middle: measured over model, open markers Mathis, filled Padhye; the grey band is ±30 %.",
        "Bottom: share of the time spent waiting for retransmission timeouts (a lower bound).",
    )
    return record(fig, facts)


def _loss_curves(
    top: plt.Axes,
    ratio: plt.Axes,
    share: plt.Axes,
    cells: pd.DataFrame,
    palette: dict[float, Any],
    p_grid: np.ndarray,
    b: int,
) -> None:
    """One (SACK, b) column's curves and points, per backend and RTT.

    Both models and the measured points on top, measured over model in the middle, the
    share of time spent waiting for timeouts at the bottom.
    """
    from tcprepro.models.throughput import mathis_throughput_bps, padhye_throughput_bps

    for (backend, rtt), rows in cells.groupby(["backend", "rtt_s"]):
        rows = rows.sort_values("loss_rate")
        colour = palette[rtt]
        marker = _BACKEND_MARKERS.get(backend, "^")
        solid = "none" if len(rows) <= 2 else "-"  # markers only for one or two points
        dashed = "none" if len(rows) <= 2 else "--"
        first = rows.iloc[0]
        t0 = max(float(first["min_rto_s"]), rtt)
        mathis = mathis_throughput_bps(first["mss_bytes"], rtt, p_grid, acked_per_ack=b)
        padhye = padhye_throughput_bps(first["mss_bytes"], rtt, p_grid, t0, first["w_m_pkts"], b)
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
            ls=dashed,
            lw=0.8,
        )
        ratio.plot(
            rows["loss_rate"],
            rows["padhye_ratio"],
            color=colour,
            marker=marker,
            ls=solid,
            lw=0.8,
        )
        share.plot(
            rows["loss_rate"],
            rows["timeout_share"] * 100,
            color=colour,
            marker=marker,
            ls=solid,
            lw=0.8,
        )


def volume_figure(
    table: pd.DataFrame,
    reliable: pd.DataFrame,
    thesis_volumes: pd.DataFrame,
    tolerance: float | None = None,
) -> Figure:
    """D4: throughput of one transfer against its volume, with the slow-start model.

    Parameters
    ----------
    table
        :func:`tcprepro.analysis.study_d.volume_table`.
    reliable
        :func:`tcprepro.analysis.study_d.reliable_volumes` of that table.
    thesis_volumes
        The thesis's Table 2.3 (``reference.load("makassikis2006_volumes")``).
    tolerance
        The tolerance ``reliable`` was computed with (quoted in the record).
    """
    buffers = sorted(table["recv_buffer_bytes"].unique())
    palette = dict(zip(buffers, sns.color_palette("deep", len(buffers)), strict=True))
    fig, (left, right) = plt.subplots(1, 2, figsize=(TEXT_WIDTH_IN, 3.2), layout="constrained")
    series = []
    marks = []
    for (backend, br), rows in table.groupby(["backend", "recv_buffer_bytes"]):
        rows = rows.sort_values("size_bytes")
        colour = palette[br]
        marker = _BACKEND_MARKERS.get(backend, "^")
        line = points_style(len(rows))
        label = f"window {_size_label(br)} ({_BACKEND_LABELS.get(backend, backend)})"
        series.append(f"{_size_label(br)}B window ({len(rows)} volumes)")
        left.plot(
            rows["size_bytes"],
            rows["measured_bps"] / 1e6,
            color=colour,
            marker=marker,
            label=label,
            **line,
        )
        left.plot(
            rows["size_bytes"],
            rows["model_bps"] / 1e6,
            color=colour,
            ls=":" if len(rows) > 2 else "none",
            marker=None if len(rows) > 2 else "_",
            ms=10,
            lw=1.2,
        )
        reference = float(rows["measured_bps"].iloc[-1])
        right.plot(
            rows["size_bytes"],
            rows["measured_bps"] / reference,
            color=colour,
            marker=marker,
            label=label,
            **line,
        )
        mark = reliable[(reliable["backend"] == backend) & (reliable["recv_buffer_bytes"] == br)]
        if len(mark) and np.isfinite(mark["reliable_from_bytes"].iloc[0]):
            volume = float(mark["reliable_from_bytes"].iloc[0])
            marks.append(f"{_size_label(volume)}B ({_size_label(br)}B window)")
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
        **_REFERENCE_STYLE,
    )
    right.axhspan(0.9, 1.1, color="0.9", zorder=0)
    left.set_yscale("log")
    # 1-2-5 ticks labelled as plain numbers: a range under a decade still shows a scale
    left.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    left.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    left.yaxis.set_minor_formatter(NullFormatter())
    left.set_ylabel("throughput (Mb/s)")
    right.set_ylabel("throughput / that of the largest volume")
    for ax in (left, right):
        _size_axis(ax, np.concatenate([table["size_bytes"], thesis_volumes["volume_kib"] * 1024]))
        ax.set_xlabel("volume (bytes)")
        ax.grid(alpha=0.3)
    _outside_legend(fig, [left])
    suptitle(fig, "D4: throughput of one transfer against its volume")
    within = f"within {tolerance:.0%} of" if tolerance is not None else "close to"
    facts = Drawn(panels=2, panels_drawn=2, cells_drawn=len(table)).say(
        f"Series: {'; '.join(series)}.",
        "Dotted: the loss-free slow-start model"
        + (" (short bars: its values)" if len(table) <= 2 * len(buffers) else "")
        + "; grey crosses: the thesis's iperf-server measurements.",
        f"Vertical dash-dot marks: the smallest volume from which the throughput stays {within} "
        f"the largest volume's: {'; '.join(marks)}."
        if marks
        else f"No volume run in this tier keeps the throughput {within} the largest volume's "
        "over every larger volume: no mark.",
    )
    return record(fig, facts)
