"""The trace of one run behind a claim's "why": windows, bottleneck queue and losses.

The claims report (:mod:`tcprepro.claims`) explains every claim it cannot confirm, and
backs the explanation with the traces of the run it rests on. :func:`run_trace` draws
that run from its figure's combined dataset (no simulation): on the left the congestion
window of each flow that has one, in segments of the run's MSS, with a tick at the top
for every sampling interval in which the flow lost data segments; on the right the
queue of every traced link direction the run's flows cross (``flow_link``: their
bottleneck), in packets, in a colour no flow has, its buffer dashed, with a tick for every
interval with drops there. The warm-up is shaded: the claim is measured on the rest of the run.
:func:`write_why_figures` draws it for every claim whose "why" rests on a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcprepro.analysis import regime as measures
from tcprepro.analysis.crosscheck import flow_names
from tcprepro.claims.tables import WhyFigure
from tcprepro.claims.verdicts import ClaimResult
from tcprepro.figures.common import FONT_PT, TEXT_WIDTH_IN, Drawn, drawn, record, save_figure
from tcprepro.variants import variant_label

__all__ = ["HEIGHT_IN", "WIDTH_IN", "run_trace", "select_run", "write_why_figures"]

#: print size of a trace figure: the claims list's width (the text width less the list's
#: indent) and a short strip
WIDTH_IN = TEXT_WIDTH_IN - 0.4
HEIGHT_IN = 1.8
#: share of a panel's height above the data, where the loss ticks go
_TICK_BAND = 0.28


def select_run(ds: xr.Dataset, cell: Mapping[str, Any], rep: int = 0) -> xr.Dataset:
    """One run of a combined dataset: the cell's sweep values and the repetition.

    Raises
    ------
    KeyError
        When the dataset lacks a sweep value, the repetition, or a dimension of the
        cell, naming it.
    """
    selection: dict[str, Any] = {}
    for dim, value in {**cell, "rep": rep}.items():
        if dim == "rep" and "rep" not in ds.dims:
            continue
        if dim not in ds.dims:
            raise KeyError(f"figure {ds.attrs.get('figure', '?')} has no dimension {dim!r}")
        labels = list(ds[dim].values)
        if value not in labels:
            raise KeyError(f"figure {ds.attrs.get('figure', '?')} has no {dim}={value!r}")
        selection[dim] = value
    run = ds.sel(selection)
    if not bool(run["link_goodput_capacity_bps"].notnull().any()):
        raise KeyError(f"figure {ds.attrs.get('figure', '?')}: {selection} did not run")
    return run


def _text(values: xr.DataArray) -> str:
    return str(np.ravel(values.values)[0])


def _ticks(ax: Axes, times: np.ndarray, row: int, colour: Any) -> bool:
    """Short vertical ticks at ``times`` in the ``row``-th line of the band above the data.

    Returns whether any tick was drawn.
    """
    if times.size == 0:
        return False
    height = _TICK_BAND / 4
    top = 0.98 - row * height
    ax.vlines(
        times,
        top - 0.8 * height,
        top,
        transform=ax.get_xaxis_transform(),
        colors=[colour],
        linewidth=0.7,
    )
    return True


def run_trace(
    ds: xr.Dataset,
    cell: Mapping[str, Any],
    rep: int = 0,
    flow: str | None = None,
) -> Figure:
    """Windows, bottleneck queue and losses of one run against time (see the module doc).

    Parameters
    ----------
    ds
        A figure's combined dataset.
    cell
        The run's sweep values (coordinate labels of ``ds``).
    rep
        Its repetition.
    flow
        A flow to draw thick (the flow a regime criterion names), if any.

    Returns
    -------
    Figure
        With its record (:class:`~tcprepro.figures.common.Drawn`): the caption
        sentences stating what is drawn and the run's duration and warm-up.
    """
    run = select_run(ds, cell, rep)
    figure_id = str(ds.attrs.get("figure", "?"))
    duration = float(ds.attrs["duration_s"])
    warmup = float(ds.attrs["warmup_s"])
    interval = measures.interval_s(ds)
    mss = measures.mss_bytes(run)
    time = run["time"].values

    flows = [str(f) for f in run["flow"].values]
    with_window = [f for f in flows if bool(run["cwnd_bytes"].sel(flow=f).notnull().any())]
    if flow is not None and flow not in flows:
        raise KeyError(f"figure {figure_id} has no flow {flow!r}")
    kinds = {f: _text(run["flow_kind"].sel(flow=f)) for f in flows}
    crossed = {f: _text(run["flow_link"].sel(flow=f)) for f in flows if kinds[f]}
    links = [
        str(link)
        for link in run["link"].values
        if str(link) in crossed.values() and bool(run["queue_pkts"].sel(link=link).notnull().any())
    ]

    fig, (ax_cwnd, ax_queue) = plt.subplots(
        1, 2, figsize=(WIDTH_IN, HEIGHT_IN), sharex=True, layout="constrained"
    )
    colours, queue_colours = _colours(with_window, links)
    for ax in (ax_cwnd, ax_queue):
        ax.axvspan(0.0, warmup, color="0.9", linewidth=0, zorder=0)
        ax.set_xlim(0.0, duration)
        ax.set_xlabel("time (s)")

    numbers = {name: about.get("number") for name, about in flow_names(ds).items()}
    ticked = _window_panel(ax_cwnd, run, time, with_window, colours, flow, mss, numbers)
    dropped, above = _queue_panel(ax_queue, run, time, links, queue_colours)
    ticked = ticked or dropped
    _legend(fig, ax_cwnd, queue_colours, len(above) < len(links), ticked)

    cell_text = ", ".join(f"{k}={v}" for k, v in cell.items())
    size = f"segments of {mss:g} B" if np.isfinite(mss) else "kB (the run records no MSS)"
    named = f"; the flow the criterion names ({flow}) drawn thick" if flow else ""
    queues = ", ".join(links) if links else "none traced"
    facts = Drawn(panels=2, panels_drawn=int(bool(with_window)) + int(bool(links))).say(
        f"Run: {figure_id}, {cell_text}, repetition {rep}.",
        f"Left: congestion window of each flow in {size}{named}; ticks at the top mark the "
        f"{interval:g} s sampling intervals in which the flow lost data segments.",
        f"Right: queue of each link direction the run's flows cross ({queues}), in packets, "
        f"{_buffer_text(links, above)}; ticks mark intervals with drops there.",
        f"The run lasts {duration:g} s; its first {warmup:g} s are warm-up (shaded), the "
        f"claim is measured on the remaining {duration - warmup:g} s.",
    )
    return record(fig, facts)


#: the colour-blind palette's colours the queues take, in order (green, pink, brown, grey):
#: none close to the flows' first ones (blue, orange)
_QUEUE_COLOURS = (2, 4, 5, 7)


def _colours(with_window: list[str], links: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A colour for each flow, and for each queue one no flow has.

    A queue and a flow share names (the ``down`` flow crosses the ``down`` link
    direction): in one colour the key could not tell the flow's window from the queue.
    The flows take the colour-blind palette in its order, the queues
    :data:`_QUEUE_COLOURS`, each left out of the flows' (more than ten lines: a
    palette of as many hues).
    """
    palette = sns.color_palette("colorblind")
    if len(links) > len(_QUEUE_COLOURS) or len(with_window) + len(links) > len(palette):
        many = sns.color_palette("husl", len(with_window) + len(links))
        return dict(zip(with_window, many, strict=False)), dict(
            zip(links, many[len(with_window) :], strict=False)
        )
    taken = _QUEUE_COLOURS[: len(links)]
    queues = {link: palette[i] for link, i in zip(links, taken, strict=False)}
    rest = [colour for i, colour in enumerate(palette) if i not in taken]
    return dict(zip(with_window, rest, strict=False)), queues


def _window_panel(
    ax_cwnd: Axes,
    run: xr.Dataset,
    time: np.ndarray,
    with_window: list[str],
    colours: Mapping[str, Any],
    flow: str | None,
    mss: float,
    numbers: Mapping[str, int | None],
) -> bool:
    """Each flow's congestion window, its losses ticked above; whether any tick was drawn.

    A counted flow's legend entry is its variant's report name and number, its run name
    (which the "why" text cites) after it: ``Reno, flow 1 (reno0)``; ``numbers``: each counted
    flow's (:func:`tcprepro.analysis.crosscheck.flow_names`).
    """
    unit = mss if np.isfinite(mss) else 1e3
    peak = 0.0
    ticked = False
    for k, name in enumerate(with_window):
        window = run["cwnd_bytes"].sel(flow=name).values / unit
        peak = max(peak, float(np.nanmax(window)))
        named = name == flow
        variant = variant_label(_text(run["flow_variant"].sel(flow=name)))
        ax_cwnd.plot(
            time,
            window,
            color=colours[name],
            lw=1.4 if named else 0.8,
            label=f"{variant}, flow {numbers[name]} ({name})"
            if numbers.get(name)
            else f"{name} ({variant})",
            gid=f"cwnd:{name}",
        )
        lost = run["lost_data_pkts"].sel(flow=name).fillna(0.0)
        if "random_lost_pkts" in run:
            lost = lost + run["random_lost_pkts"].sel(flow=name).fillna(0.0)
        ticked |= _ticks(ax_cwnd, time[lost.values > 0], k, colours[name])
    ax_cwnd.set_ylim(-0.03 * max(peak, 1.0), max(peak, 1.0) / (1 - _TICK_BAND))
    ax_cwnd.set_ylabel("cwnd (segments)" if np.isfinite(mss) else "cwnd (kB)")
    if not with_window:
        ax_cwnd.text(0.5, 0.5, "no flow traces a window", ha="center", transform=ax_cwnd.transAxes)
    return ticked


def _buffer_text(links: list[str], above: Mapping[str, float]) -> str:
    """What the caption says of the buffers: dashed, or named where not drawn."""
    named = ", ".join(f"{buffer:g} packets ({link})" for link, buffer in above.items())
    if not above:
        return "buffer dashed"
    off = f"more than {_BUFFER_SCALE:g} times the highest queue, not drawn"
    if len(above) == len(links):
        return f"buffer {named}: {off}"
    return f"buffer dashed, except {named}: {off}"


#: a buffer this many times above the highest queue is named in the caption, not drawn
_BUFFER_SCALE = 10.0


def _queue_panel(
    ax_queue: Axes,
    run: xr.Dataset,
    time: np.ndarray,
    links: list[str],
    queue_colours: Mapping[str, Any],
) -> tuple[bool, dict[str, float]]:
    """The queue of each link direction the flows cross, its buffer and drops.

    Each in its queue's colour (``queue_colours``). Returns whether any drop tick was
    drawn, and the buffers not drawn: those more than :data:`_BUFFER_SCALE` times the
    highest queue, which would flatten the queues to the axis.
    """
    ticked = False
    above: dict[str, float] = {}
    peak = float(run["queue_pkts"].sel(link=links).max()) if links else 0.0
    top = max(1.0, peak)
    for k, link in enumerate(links):
        colour = queue_colours[link]
        ax_queue.plot(
            time,
            run["queue_pkts"].sel(link=link).values,
            color=colour,
            lw=0.8,
            label=f"queue: {link}",
        )
        buffer = float(run["link_buffer_pkts"].sel(link=link))
        if buffer > _BUFFER_SCALE * max(peak, 1.0):
            above[link] = buffer
        else:
            ax_queue.axhline(buffer, color=colour, ls="--", lw=0.7)
            top = max(top, buffer)
        drops = run["drops_pkts"].sel(link=link).fillna(0.0).values
        ticked |= _ticks(ax_queue, time[drops > 0], k, colour)
    # a little below zero: an empty queue is a line above the axis, not under it
    ax_queue.set_ylim(-0.03 * top, top / (1 - _TICK_BAND))
    ax_queue.set_ylabel("queue (packets)")
    return ticked, above


def _legend(
    fig: Figure, ax_cwnd: Axes, queue_colours: Mapping[str, Any], links: bool, ticked: bool
) -> None:
    """One key right of both panels, naming only what is drawn."""
    handles, labels = ax_cwnd.get_legend_handles_labels()
    for link, colour in queue_colours.items():
        handles.append(plt.Line2D([], [], color=colour, lw=0.8))
        labels.append(f"queue: {link}")
    # the key names only what is drawn: no loss tick in a run without losses
    if links:
        handles.append(plt.Line2D([], [], color="0.3", ls="--", lw=0.7))
        labels.append("buffer")
    if ticked:
        handles.append(plt.Line2D([], [], color="0.3", marker="|", ls="none", markersize=6))
        labels.append("loss / drop")
    handles.append(plt.Rectangle((0, 0), 1, 1, color="0.9"))
    labels.append("warm-up")
    fig.legend(handles, labels, loc="outside right upper", fontsize=FONT_PT - 1)


def write_why_figures(
    results: Iterable[ClaimResult],
    datasets: Mapping[str, xr.Dataset],
    directory: str | Path,
    include_root: str | Path | None = None,
) -> dict[str, WhyFigure]:
    """Draw the run behind the "why" of each claim not reproduced or inconclusive.

    One PDF per such claim whose run is in ``datasets`` (``<directory>/<claim>.pdf``,
    with what it drew beside it as ``<claim>.json``). The directory is written afresh:
    the figures are drawn into a temporary sibling that then replaces it, so a figure
    of a claim now reproduced does not linger, and a failed drawing leaves the old
    directory whole.

    Parameters
    ----------
    include_root
        The directory LaTeX resolves graphics paths from (the report's, ``paper``):
        each figure's include path is relative to it (else the path as given).

    Returns
    -------
    dict
        The figures by claim id.
    """
    import os
    import shutil

    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.with_name(f".{directory.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    out = {}
    try:
        for result in results:
            claim, run = result.claim, result.trace
            if claim is None or run is None or run.figure not in datasets:
                continue
            if result.verdict not in ("not reproduced", "inconclusive"):
                continue
            fig = run_trace(datasets[run.figure], run.cell, run.rep, run.flow)
            facts = drawn(fig)
            statements = " ".join(facts.statements) if facts else ""
            save_figure(fig, staging / f"{claim.id}.pdf")
            path = directory / f"{claim.id}.pdf"
            include = Path(os.path.relpath(path, include_root)) if include_root else path
            caption = f"The traces of {run.reason}. {statements}"
            out[claim.id] = WhyFigure(claim.id, path, include.as_posix(), caption, HEIGHT_IN)
        old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
        if directory.exists():
            os.replace(directory, old)
        os.replace(staging, directory)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out
