"""Study C's figures (YeAH-TCP, PFLDnet 2007), drawn from combined datasets.

This module owns the drawing of C1 (Fig. 1: congestion windows and queue) and of
the metric suite C3.1-C3.6 (one compact figure per metric). Every number comes
from :mod:`tcprepro.analysis.study_c`; nothing is simulated or hard-coded here. Points
are means over repetitions with ±1 standard deviation bars (when there are
several repetitions); a cell without runs is simply absent from its curve; a curve
of one or two points is drawn as markers only. Protocol keys sit right of the panels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcprepro.analysis import study_c as analysis_c
from tcprepro.analysis.common import run_configs, run_scenario
from tcprepro.figures.common import (
    TEXT_WIDTH_IN,
    Drawn,
    drawn,
    points_style,
    record,
    spread_statement,
    suptitle,
)

__all__ = ["cwnd_panels", "loss_table_figure", "metric_figure", "values_drawn"]

_COLOURS = {
    "Cubic": "#4c72b0",
    "HighSpeed": "#dd8452",
    "Htcp": "#55a868",
    "Compound": "#8172b3",
    "YeahPaper": "#c44e52",
    "Yeah": "#da8bc3",
    "NewReno": "#333333",
}
#: the later flow of C1, told apart from the first YeAH flow
_SECOND_COLOURS = {"YeahPaper": "#4c72b0", "NewReno": "#333333"}
_MARKERS = {"Cubic": "o", "HighSpeed": "s", "Htcp": "^", "Compound": "D", "YeahPaper": "*"}


def _style(protocol: str) -> dict[str, object]:
    return {
        "color": _COLOURS.get(protocol, "0.5"),
        "marker": _MARKERS.get(protocol, "v"),
        "label": analysis_c.LABELS.get(protocol, protocol),
        "linewidth": 1.8 if protocol == "YeahPaper" else 1.1,
        "markersize": 7 if protocol == "YeahPaper" else 4,
    }


def _protocols(ds: xr.Dataset) -> list[str]:
    return [str(p) for p in ds["protocol"].values]


def _curve(ax: Axes, x: np.ndarray, values: xr.DataArray, protocol: str, **extra: object) -> None:
    """Mean over ``rep`` against ``x``, with ±1 std bars when there are repetitions."""
    mean = values.mean("rep").values
    spread = values.std("rep", ddof=1).values if values.sizes.get("rep", 1) > 1 else None
    keep = np.isfinite(mean)
    style = {**_style(protocol), **extra, **points_style(int(keep.sum()))}
    if spread is None:
        ax.plot(x[keep], mean[keep], **style)
    else:
        ax.errorbar(x[keep], mean[keep], yerr=spread[keep], capsize=2, **style)


def _rtt_axis(ax: Axes, rtt_ms: np.ndarray, label: str = "RTT (ms)") -> None:
    ax.set_xscale("log")
    ax.set_xticks(rtt_ms)
    ax.set_xticklabels([f"{v:g}" for v in rtt_ms])
    ax.minorticks_off()
    ax.set_xlabel(label)


def _with_capacity(title: str, ds: xr.Dataset) -> str:
    """``title`` with the bottleneck capacity the runs had (a tier may scale it down)."""
    rate = ds["link_rate_bps"].sel(link="bottleneck").values
    rates = sorted({float(r) / 1e6 for r in np.ravel(rate) if np.isfinite(r)})
    if not title or not rates:
        return title
    return f"{title}, C = {' or '.join(f'{r:g}' for r in rates)} Mb/s"


def _flow_rtt_text(ds: xr.Dataset, flow: str = "f1") -> str:
    """The round-trip propagation time of ``flow``'s path in the runs, e.g. ``"40 ms"``.

    Read from each run's resolved scenario (a tier may change it): the RTT of the sender
    group the flow starts from.
    """
    rtts_ms = set()
    for config in {str(c) for c in np.ravel(run_configs(ds).values) if str(c)}:
        scenario = run_scenario(config)
        topology = scenario.topology
        source = scenario.flows[flow].src
        for group, hosts in topology.sender_groups.items():
            if source == group or source in hosts:
                rtts_ms.add(round(topology.path_rtt_s(group) * 1000.0, 3))
    return " or ".join(f"{v:g} ms" for v in sorted(rtts_ms)) or "not recorded"


def _facts(ds: xr.Dataset, panels: int, *sentences: str) -> Drawn:
    """The record of a metric figure: panels, cells with data, error bars."""
    n_reps = int(ds.sizes.get("rep", 1))
    return Drawn(panels=panels, panels_drawn=panels).say(
        *sentences,
        f"Points: mean over {n_reps} repetitions." if n_reps > 1 else "",
        spread_statement(n_reps),
    )


def _protocol_legend(fig: Figure, ax: Axes) -> None:
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center")


def _per_buffer(ds: xr.Dataset, variable: str, ylabel: str, title: str, scale: float) -> Figure:
    """C3.1 / C3.2: one panel per buffer, the variable against the RTT, a curve per protocol."""
    table = analysis_c.pair_metrics(ds)[variable] * scale
    rtt_ms = analysis_c.ms(ds["rtt"].values)
    buffers = list(ds["buffer"].values)
    width = min(2.1 * len(buffers) + 1.2, TEXT_WIDTH_IN)
    fig, axes = plt.subplots(
        1, len(buffers), figsize=(width, 2.4), sharey=True, squeeze=False, layout="constrained"
    )
    for ax, buffer in zip(axes[0], buffers, strict=True):
        for protocol in _protocols(ds):
            _curve(ax, rtt_ms, table.sel(buffer=buffer, protocol=protocol), protocol)
        _rtt_axis(ax, rtt_ms)
        ax.set_title(f"buffer {float(buffer):g} BDP")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(ylabel)
    _protocol_legend(fig, axes[0, 0])
    suptitle(fig, _with_capacity(title, ds))
    return record(fig, _facts(ds, len(buffers)))


def _stress(ds: xr.Dataset, title: str) -> Figure:
    """C3.5: loss probability (log, zero at the floor) and mean queue / buffer vs RTT."""
    table = analysis_c.pair_metrics(ds)
    rtt_ms = analysis_c.ms(ds["rtt"].values)
    buffers = list(ds["buffer"].values)
    styles = ["-", "--", ":", "-."]
    fig, (loss_ax, queue_ax) = plt.subplots(
        1, 2, figsize=(TEXT_WIDTH_IN, 2.5), layout="constrained"
    )
    loss = table["loss_probability"].mean("rep")
    positive = loss.where(loss > 0)
    floor = float(positive.min()) / 10 if np.isfinite(positive.min()) else 1e-7
    zeros = 0
    lined: set[int] = set()  # the buffers (by index) of which some curve is a line
    for i, buffer in enumerate(buffers):
        for protocol in _protocols(ds):
            line = {"linestyle": styles[i % len(styles)]}
            if i:
                line["label"] = None
            values = loss.sel(buffer=buffer, protocol=protocol).values
            shown = np.where(values > 0, values, floor)
            keep = np.isfinite(values)
            style = {**_style(protocol), **line}
            if int(keep.sum()) <= 2:
                style["linestyle"] = "none"
            else:
                lined.add(i)
            loss_ax.plot(rtt_ms[keep], shown[keep], **style)
            zero = keep & (values == 0)
            zeros += int(zero.sum())
            loss_ax.plot(
                rtt_ms[zero],
                shown[zero],
                linestyle="none",
                marker="o",
                markerfacecolor="white",
                color=_COLOURS.get(protocol, "0.5"),
            )
            queue = table["queue_fraction"].sel(buffer=buffer, protocol=protocol)
            if int(np.isfinite(queue.mean("rep").values).sum()) > 2:
                lined.add(i)
            _curve(queue_ax, rtt_ms, queue, protocol, **line)
    loss_ax.set_yscale("log")
    loss_ax.axhline(floor, color="0.6", linewidth=0.8)
    loss_ax.set_ylabel("loss probability (buffer overflow)")
    queue_ax.set_ylabel("mean queue / buffer")
    queue_ax.set_ylim(0, 1.05)
    for ax in (loss_ax, queue_ax):
        _rtt_axis(ax, rtt_ms)
        ax.grid(alpha=0.3)
    # a line style per buffer, keyed only where some curve of that buffer is a line: a
    # curve of one or two RTTs is markers only
    keyed = sorted(lined) if len(buffers) > 1 else []
    handles = [plt.Line2D([], [], color="0.3", linestyle=styles[i % len(styles)]) for i in keyed]
    fig.legend(
        [*queue_ax.get_legend_handles_labels()[0], *handles],
        [
            *queue_ax.get_legend_handles_labels()[1],
            *(f"{float(buffers[i]):g} BDP" for i in keyed),
        ],
        loc="outside right center",
    )
    if len(buffers) == 1:
        title = f"{title}, buffer {float(buffers[0]):g} BDP"
    suptitle(fig, _with_capacity(title, ds))
    names = ["solid", "dashed", "dotted", "dash-dot"]
    styles_text = ", ".join(f"{float(buffers[i]):g} BDP {names[i % len(names)]}" for i in keyed)
    return record(
        fig,
        _facts(
            ds,
            2,
            f"Line styles: {styles_text}." if keyed else "",
            f"Left: open circles on the grey line mark no loss (drawn at {floor:.2g}, a tenth "
            "of the smallest loss)."
            if zeros
            else "",
        ),
    )


def _single_panel(
    ds: xr.Dataset,
    values: xr.DataArray,
    dim: str,
    xlabel: str,
    ylabel: str,
    title: str,
    reference: float | None,
    log_x: bool,
) -> Figure:
    """C3.3 / C3.4 / C3.6: one panel, the value against a swept dimension, per protocol."""
    labels = list(ds[dim].values)
    x = analysis_c.ms(labels) if isinstance(labels[0], str) else np.asarray(labels, dtype=float)
    fig, ax = plt.subplots(figsize=(4.6, 2.5), layout="constrained")
    for protocol in _protocols(ds):
        _curve(ax, x, values.sel(protocol=protocol), protocol)
    if log_x and isinstance(labels[0], str):
        _rtt_axis(ax, x, xlabel)
    elif log_x:
        ax.set_xscale("log")
    if len(x) == 1:
        ax.set_xlim(x[0] / 2, x[0] * 2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if reference is not None:
        ax.axhline(reference, color="0.5", linestyle="--", linewidth=1)
    ax.grid(alpha=0.3)
    _protocol_legend(fig, ax)
    ax.set_title(_with_capacity(title, ds), wrap=True)
    return record(fig, _facts(ds, 1))


#: the swept dimension along each metric figure's x axis: its name in the caption (one
#: value, several) and its unit
_X_DIMENSION = {
    "C3.1": ("rtt", "RTT", "RTTs", "ms"),
    "C3.2": ("rtt", "RTT", "RTTs", "ms"),
    "C3.5": ("rtt", "RTT", "RTTs", "ms"),
    "C3.3": ("rtt2", "RTT2", "RTT2 values", "ms"),
    "C3.4": ("rtt", "RTT", "RTTs", "ms"),
    "C3.6": ("loss", "loss probability", "loss probabilities", ""),
}


def _along_x(labels: Sequence[Any], unit: str) -> list[float]:
    """Sweep labels as numbers: ``"100ms"`` in ms, a probability as it is."""
    if unit == "ms":
        return [float(v) for v in analysis_c.ms(labels)]
    return [float(v) for v in labels]


def _values_text(values: Sequence[float], unit: str) -> str:
    words = [f"{v:g}" for v in values]
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return f"{listed} {unit}".strip()


def values_drawn(
    figure_id: str, ds: xr.Dataset, paper_values: Mapping[str, Sequence[Any]] | None
) -> str:
    """The caption sentence naming the x-axis values this build drew, when the paper drew more.

    ``"This build drew the RTT 100 ms only, of the paper's 20, 100 and 480 ms."`` for a
    tier that ran fewer of the swept values along the figure's x axis than the paper
    (``paper_values``: the paper's values of each swept dimension); ``""`` when it ran
    them all, or when the paper's are not given.
    """
    dim, one, several, unit = _X_DIMENSION[figure_id]
    if not paper_values or dim not in paper_values or dim not in ds.dims:
        return ""
    here = sorted(set(_along_x(list(ds[dim].values), unit)))
    paper = sorted(set(_along_x(list(paper_values[dim]), unit)))
    if set(paper) <= set(here):
        return ""
    return (
        f"This build drew the {several if len(here) > 1 else one} {_values_text(here, unit)} "
        f"only, of the paper's {_values_text(paper, unit)}."
    )


def metric_figure(
    figure_id: str, ds: xr.Dataset, paper_values: Mapping[str, Sequence[Any]] | None = None
) -> Figure:
    """The figure of one metric of the suite (C3.1-C3.6) from its combined dataset.

    C3.1, C3.2 and C3.5 read the runs of C3.1 (two flows of one protocol, equal RTTs).
    ``paper_values``: the values of each swept dimension the paper drew (the workflow's
    ``sweep:``); with them, the record names the x-axis values this build drew when it
    drew fewer (:func:`values_drawn`).
    """
    fig = _metric_figure(figure_id, ds)
    facts = drawn(fig)
    if facts is not None:
        facts.say(values_drawn(figure_id, ds, paper_values))
    return fig


def _metric_figure(figure_id: str, ds: xr.Dataset) -> Figure:
    """:func:`metric_figure` without the values-drawn sentence."""
    if figure_id == "C3.1":
        return _per_buffer(
            ds, "utilisation", "utilisation (%)", "C3.1: efficiency, two flows", 100.0
        )
    if figure_id == "C3.2":
        return _per_buffer(
            ds, "jain", "Jain index", "C3.2: internal fairness, two flows, equal RTTs", 1.0
        )
    if figure_id == "C3.5":
        return _stress(ds, "C3.5: network stress, two flows")
    if figure_id == "C3.3":
        return _single_panel(
            ds,
            analysis_c.rtt_fairness(ds),
            "rtt2",
            "RTT2 (ms)",
            "goodput RTT2 flow / RTT1 flow",
            f"C3.3: RTT fairness (RTT1 = {_flow_rtt_text(ds, 'f1')})",
            1.0,
            True,
        )
    if figure_id == "C3.4":
        return _single_panel(
            ds,
            analysis_c.reno_share(ds),
            "rtt",
            "RTT (ms)",
            "share of the goodput",
            "C3.4: friendliness, one flow vs one Reno flow",
            0.5,
            True,
        )
    if figure_id == "C3.6":
        return _single_panel(
            ds,
            analysis_c.robustness(ds)["utilisation"] * 100.0,
            "loss",
            "random packet-loss probability",
            "utilisation (%)",
            "C3.6: robustness to random losses, one flow",
            None,
            True,
        )
    raise ValueError(f"{figure_id!r} is not a figure of the C3 metric suite")


def cwnd_panels(ds: xr.Dataset, rep: int = 0, title: str | None = None) -> Figure:
    """C1 (Fig. 1): one panel per second-flow variant, windows and queue against time.

    ``title``: None gives C1's, with the RTT and capacity the runs had; ``""`` none.

    Congestion windows of f1 (YeAH) and f2 in segments (left axis), YeAH's count_reno
    estimate (dotted, when sampled) and the bottleneck queue in packets (right axis);
    each panel's key sits above it.
    """
    cwnd = analysis_c.cwnd_pkts(ds)
    seconds = ds["second"].values
    fig, axes = plt.subplots(
        len(seconds),
        1,
        figsize=(TEXT_WIDTH_IN, 2.3 * len(seconds) + 0.4),
        sharex=True,
        layout="constrained",
    )
    axes = np.atleast_1d(axes)
    sampled_reno = False
    for ax, second in zip(axes, seconds, strict=True):
        run = ds.sel(second=second).isel(rep=rep)
        time = run["time"].values
        window = cwnd.sel(second=second).isel(rep=rep)
        ax.plot(time, window.sel(flow="f1"), color=_COLOURS["YeahPaper"], label="cwnd YeAH 1")
        second_label = f"cwnd {analysis_c.LABELS.get(str(second), str(second))} 2"
        ax.plot(
            time,
            window.sel(flow="f2"),
            color=_SECOND_COLOURS.get(str(second), "0.3"),
            label=second_label,
            alpha=0.85,
        )
        if "cc_RenoCount" in run and bool(run["cc_RenoCount"].sel(flow="f1").notnull().any()):
            sampled_reno = True
            ax.plot(
                time,
                run["cc_RenoCount"].sel(flow="f1"),
                color=_COLOURS["YeahPaper"],
                linestyle=":",
                linewidth=1,
                label="count_reno YeAH 1",
            )
        queue_ax = ax.twinx()
        queue_ax.plot(time, run["queue_pkts"].sel(link="bottleneck"), color="0.55", linewidth=0.6)
        queue_ax.set_ylabel("queue (packets)", color="0.45")
        queue_ax.set_ylim(bottom=0)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("cwnd (segments)")
        ax.set_zorder(queue_ax.get_zorder() + 1)
        ax.patch.set_visible(False)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(plt.Line2D([], [], color="0.55", linewidth=0.8))
        labels.append("queue (right axis)")
        ax.legend(
            handles,
            labels,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncols=len(labels),
            frameon=False,
            borderaxespad=0.2,
        )
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("Time (s)")
    if title is None:
        later = " or ".join(analysis_c.LABELS.get(str(v), str(v)) for v in seconds)
        order = " (top to bottom)" if len(seconds) > 1 else ""
        title = f"C1: YeAH against a later {later} flow{order}, RTT {_flow_rtt_text(ds)}"
    if title:
        suptitle(fig, _with_capacity(title, ds))
    n_reps = int(ds.sizes.get("rep", 1))
    which = "first" if rep == 0 else f"number {rep + 1}"
    facts = Drawn(panels=len(seconds), panels_drawn=len(seconds), cells_drawn=len(seconds)).say(
        f"Shown: repetition {which} of {n_reps}." if n_reps > 1 else "",
        "Dotted: YeAH's count_reno estimate." if sampled_reno else "",
    )
    return record(fig, facts)


def loss_table_figure(frame: pd.DataFrame, title: str = "") -> Figure:
    """Table C2 as a chart: loss probability per protocol at the two RTTs (log scale).

    Bars are this reproduction's values (a zero is drawn as an empty slot and
    labelled "0"); black diamonds are the values legible in the paper's Table I.
    """
    rtts = [c.removesuffix(", here") for c in frame.columns if c.endswith(", here")]
    fig, axes = plt.subplots(
        1, len(rtts), figsize=(min(3.2 * len(rtts), TEXT_WIDTH_IN), 2.6), sharey=True
    )
    axes = np.atleast_1d(axes)
    x = np.arange(len(frame))
    for ax, rtt in zip(axes, rtts, strict=True):
        here = frame[f"{rtt}, here"].to_numpy(dtype=float)
        paper = frame[f"{rtt}, paper"].to_numpy(dtype=float)
        ax.bar(x, np.where(here > 0, here, np.nan), color="#c44e52", alpha=0.8, label="here")
        for i in np.flatnonzero(here == 0):
            ax.annotate(
                "0",
                (x[i], 0),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="bottom",
            )
        ax.plot(x, paper, "kD", label="paper (Table I)")
        ax.set_xticks(x)
        ax.set_xticklabels(frame["Protocol"], rotation=30)
        ax.set_title(rtt)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("loss probability")
    axes[-1].legend()
    if title:
        suptitle(fig, title)
    fig.tight_layout()
    return fig
