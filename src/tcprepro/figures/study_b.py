r"""Figures of study B (Augé, thesis ch. 5), drawn from combined datasets.

This module owns the drawing of figures B5.1-B5.20: which runs (sweep cells)
each figure shows and how. It never runs a simulation and never hard-codes a
result: every curve, bar and label comes from the dataset passed in (through
:mod:`tcprepro.analysis.study_b` and :mod:`tcprepro.models.bandwidth_sharing`). A cell the
current tier did not run is left out of the drawing and named in the figure's record
(:class:`~tcprepro.figures.common.Drawn`), which the report's caption quotes; a figure
with nothing run is a small "not run in this tier" panel the report does not include.

:func:`draw` maps a figure id to its drawing; the notebooks call it.
B5.10-B5.20 are drawn in :mod:`~tcprepro.figures.study_b_sharing`, with the labels and
run selection of :mod:`~tcprepro.figures.study_b_common`.

Datasets
--------
- B5.1-B5.9: the combined dataset of B5.1 (dimension ``case``: the bottlenecked
  flows, queue discipline and buffer, e.g. ``Reno+HSTCP.FQ.20``);
- B5.10-B5.13: B5.10's (``variant``, ``flows`` = i, ``buffer``, ``rate``);
- B5.14, B5.15: B5.14's (``variant``, ``rate``, ``load``, ``buffer``);
- B5.16-B5.19: B5.16's (``law`` = ``AIMD.<alpha>.<beta>`` or ``MIMD...``, ``buffer``);
- B5.20: B5.20's (``pacing``, ``buffer``).
"""

from __future__ import annotations

from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, LogNorm
from matplotlib.figure import Figure

from tcprepro import metrics
from tcprepro.analysis import study_b as analysis_b
from tcprepro.figures import paper_values
from tcprepro.figures.common import (
    FONT_PT,
    MAX_HEIGHT_IN,
    TEXT_WIDTH_IN,
    Drawn,
    drawn,
    empty_panel,
    fit_panel_titles,
    legend_below,
    record,
    suptitle,
)
from tcprepro.figures.study_b_common import (
    _QDISC_LABELS,
    _bulk_flows,
    _first_run,
    _flow_colours,
    _has_run,
    _load_text,
    _measured_load_text,
    _nothing_run,
    _row_cwnd,
    describe_case,
    fit_row_to_window,
)
from tcprepro.figures.study_b_sharing import (
    heat_maps,
    pacing,
    parameter_grid,
    phi_gamma,
    throughput_loss,
)

__all__ = ["TIME_SERIES", "describe_case", "draw"]

#: panels (cases of B5.1's sweep, left to right) and rows of each time-series figure
TIME_SERIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "B5.1": (
        ("Reno.FIFO.20", "Reno.FIFO.100", "Reno.FIFO.625"),
        ("cwnd", "queue", "loss", "transfers"),
    ),
    "B5.2": (
        ("HSTCP.FIFO.20", "HSTCP.FIFO.100", "HSTCP.FIFO.625"),
        ("cwnd", "queue", "loss", "transfers"),
    ),
    "B5.4": (("Reno.FIFO.20", "Reno.FIFO.100", "Reno.FIFO.625"), ("cwnd", "throughput")),
    "B5.5": (("Reno.FIFO.100", "HSTCP.FIFO.100", "HSTCP.FQ.100"), ("cwnd", "throughput")),
    "B5.6": (
        ("2Reno.FIFO.20", "2Reno.FIFO.625", "2HSTCP.FIFO.20", "2HSTCP.FIFO.625"),
        ("cwnd", "throughput"),
    ),
    "B5.7": (
        ("Reno+HSTCP.FIFO.20", "Reno+HSTCP.FIFO.625", "Reno+HSTCP.FQ.20", "Reno+HSTCP.FQ.625"),
        ("cwnd", "throughput"),
    ),
    "B5.8": (
        ("Reno.FIFO.20", "4Reno.FIFO.20", "Reno.FIFO.625", "4Reno.FIFO.625"),
        ("cwnd", "throughput"),
    ),
    "B5.9": (("HSTCP.FIFO.20", "4HSTCP.FIFO.20", "4HSTCP.FQ.20"), ("cwnd", "throughput")),
}

#: the cases a time-series figure compares against the ones another figure already draws:
#: without one of them run, the figure would repeat that figure's panels (B5.8 without
#: four Reno flows is B5.4), so it is not drawn in the tier
COMPARED: dict[str, tuple[str, ...]] = {
    "B5.5": ("HSTCP.FIFO.100", "HSTCP.FQ.100"),
    "B5.8": ("4Reno.FIFO.20", "4Reno.FIFO.625"),
    "B5.9": ("4HSTCP.FIFO.20", "4HSTCP.FQ.20"),
}

_ROW_LABELS = {
    "cwnd": "cwnd (packets)",
    "queue": "queue (packets)",
    "loss": "loss rate",
    "transfers": "background transfers",
    "throughput": "throughput (% of\n$(1-\\rho_b)C$)",
}


def _row_queue(ax: Axes, run: xr.Dataset) -> None:
    queue = run["queue_pkts"].sel(link=analysis_b.BOTTLENECK)
    ax.plot(run["time"], queue, color="0.3", lw=0.6)
    buffer = float(run["link_buffer_pkts"].sel(link=analysis_b.BOTTLENECK))
    ax.axhline(buffer, color="0.5", ls="--", lw=0.8)
    ax.set_ylim(0, buffer * 1.1)


def _row_loss(ax: Axes, run: xr.Dataset) -> None:
    rates = analysis_b.class_loss_rate(run, bin_s=1.0)
    ax.plot(rates["time"], rates["bottlenecked"], color="tab:red", lw=1.0, label="bottlenecked")
    ax.plot(
        rates["time"], rates["background"], color="tab:blue", ls=":", lw=1.2, label="background"
    )


_LOSS_CMAP = LinearSegmentedColormap.from_list("loss", ["#ff3030", "#000000"]).with_extremes(
    bad=(0.75, 0.75, 0.75, 1.0)
)
#: the transfers' loss-rate colour scale (B5.1, B5.2): 0.1 % to 100 %
_LOSS_NORM = LogNorm(1e-3, 1.0)


def _row_transfers(ax: Axes, run: xr.Dataset) -> None:
    """Each transfer: a rectangle from arrival to end, height its rate, colour its loss rate."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    frame = analysis_b.transfer_losses(run)
    if frame.empty:
        empty_panel(ax, "no background transfers")
        return
    rng = np.random.default_rng(0)  # vertical position only: random, as in the thesis
    heights = frame["rate_bps"].fillna(0).to_numpy() / 1e6 * 0.1
    bottoms = rng.uniform(0, 1 - heights.clip(max=0.5))
    patches = [
        Rectangle((s, y), e - s, h)
        for s, e, y, h in zip(frame["start_s"], frame["end_s"], bottoms, heights, strict=True)
    ]
    lossy = frame["loss_rate"].fillna(0).to_numpy() > 0
    # a transfer without loss has no place on the log scale: grey (the colour bar says so)
    rates = np.where(lossy, frame["loss_rate"].fillna(0).clip(_LOSS_NORM.vmin, 1.0), np.nan)
    collection = PatchCollection(
        patches, cmap=_LOSS_CMAP, norm=_LOSS_NORM, edgecolors="none", alpha=0.8
    )
    collection.set_array(rates)
    ax.add_collection(collection)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    share = lossy.mean() if lossy.size else 0.0
    ax.set_title(
        f"{lossy.sum()} of {lossy.size} transfers lost packets ({share:.0%})",
        loc="left",
        fontsize=FONT_PT - 1,
    )


def _row_throughput(ax: Axes, run: xr.Dataset) -> None:
    flows = _bulk_flows(run)
    colours = _flow_colours(flows, run)
    available = float(analysis_b.available_capacity_bps(run))
    goodput = analysis_b.binned(run["goodput_bps"], 1.0)
    for flow in flows:
        ax.plot(
            goodput["time"],
            goodput.sel(flow=flow) / available * 100,
            color=colours[flow],
            lw=0.8,
        )
    if len(flows) > 1:
        total = goodput.sel(flow=flows).sum("flow") / available * 100
        ax.plot(goodput["time"], total, color="0.2", lw=0.8, ls="--", label="total")
    util = analysis_b.phi(run)
    text = f"mean {float(util):.0%} of $(1-\\rho_b)C$"
    if len(flows) > 1:
        text += f", Jain {float(analysis_b.jain(run)):.2f}"
    background = float(analysis_b.loss_rate(run, "background"))
    text += f"; background loss {background:.2%}"
    ax.set_title(text, loc="left", fontsize=FONT_PT - 2)


#: the rows whose y axis is scaled to the measured windows, one scale a row
#: (:func:`fit_row_to_window`): their
#: name in the caption, the format of a clipped warm-up value, the share of the axis under
#: zero (loss: the zeros visible above the axis), the top when the window draws nothing
#: above zero
_FITTED: dict[str, tuple[str, str, float, float]] = {
    "cwnd": ("cwnd", "{:.0f}", 0.0, 1.0),
    "throughput": ("throughput", "{:.0f} %", 0.0, 1.0),
    "loss": ("loss rate", "{:.2g}", 0.06, 0.01),
}

_ROWS: dict[str, Callable[[Axes, xr.Dataset], None]] = {
    "cwnd": _row_cwnd,
    "queue": _row_queue,
    "loss": _row_loss,
    "transfers": _row_transfers,
    "throughput": _row_throughput,
}


def _flow_legend(fig: Figure, axes: np.ndarray) -> None:
    """One legend for the flows of every panel, under the panels (never on the data)."""
    entries: dict[str, object] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        legend_below(fig, list(entries.values()), list(entries))


def time_series(ds: xr.Dataset, figure_id: str) -> Figure:
    """Figures B5.1, B5.2, B5.4-B5.9: one column per case, one row per quantity (first rep).

    Cases this tier did not run are left out (and named in the figure's record); a figure
    none of whose compared cases ran (:data:`COMPARED`) is not drawn.
    """
    cases, rows = TIME_SERIES[figure_id]
    runs = {case: _first_run(ds, case=case) for case in cases}
    shown = [case for case in cases if runs[case] is not None]
    not_run = [describe_case(case) for case in cases if runs[case] is None]
    compared = COMPARED.get(figure_id, ())
    if not shown or (compared and not any(runs[case] is not None for case in compared)):
        nothing = _nothing_run(figure_id, len(rows) * len(cases))
        drawn(nothing).not_run = not_run  # type: ignore[union-attr]
        return nothing
    fig, axes = plt.subplots(
        len(rows),
        len(shown),
        figsize=(
            min(max(1.6 * len(shown), 3.4) + 0.5, TEXT_WIDTH_IN),
            min(1.25 * len(rows) + 1.0, MAX_HEIGHT_IN),
        ),
        sharex="col",
        squeeze=False,
        layout="constrained",
    )
    stated: list[paper_values.Mark] = []
    clipped = 0
    for j, case in enumerate(shown):
        run = runs[case]
        assert run is not None
        for i, row in enumerate(rows):
            ax = axes[i, j]
            _ROWS[row](ax, run)
            if row == "throughput":  # the paper's stated share, mid-window
                middle = (run.attrs["warmup_s"] + float(run["time"].max())) / 2
                for mark in paper_values.stated_for(figure_id, "phi_pct", case=case):
                    paper_values.draw(ax, middle, mark)
                    stated.append(mark)
            ax.axvline(run.attrs["warmup_s"], color="0.7", lw=0.6, ls=":")
            if i == 0:
                ax.set_title(describe_case(case))
            if j == 0:
                ax.set_ylabel(_ROW_LABELS[row])
            if i == len(rows) - 1:
                ax.set_xlabel("time (s)")
    warmup_s = max(float(runs[case].attrs["warmup_s"]) for case in shown)  # type: ignore[union-attr]
    for i, row in enumerate(rows):  # after the marks (in the window too): one scale a row
        if row in _FITTED:
            _, fmt, below, empty_top = _FITTED[row]
            peaks = fit_row_to_window(axes[i], warmup_s, fmt, below=below, empty_top=empty_top)
            clipped += sum(peak is not None for peak in peaks)
    if "transfers" in rows:  # the transfers' colour is their loss rate: its scale
        row = axes[rows.index("transfers")]
        mappables = [c for ax in row for c in ax.collections if c.get_array() is not None]
        if mappables:
            fig.colorbar(mappables[0], ax=row.tolist(), label="loss rate\n(grey: none)", aspect=12)
    # panel titles broken to their panel's width: a tier with many cases has narrow columns
    # (the labels on the left take about 0.8 in, the loss rate's colour bar 0.7 in on the
    # right, and a panel's tick labels and padding about 0.25 in of each column)
    colour_bar = 0.7 if "transfers" in rows else 0.0
    column = (fig.get_figwidth() - 0.8 - colour_bar) / len(shown)
    fit_panel_titles(fig, axes.flat, column - 0.25)
    _flow_legend(fig, axes)
    load = _load_text(ds.sel(case=shown))
    measured = _measured_load_text([runs[case] for case in shown])
    load += f", measured {measured}" if measured else ""
    suptitle(fig, f"{figure_id}: background of TCP transfers\nat $\\rho_b$ = {load}")
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(
        panels=len(rows) * len(cases),
        panels_drawn=len(rows) * len(shown),
        cells_total=len(cases),
        cells_drawn=len(shown),
        not_run=not_run,
    ).say(
        f"Columns: {'; '.join(describe_case(c) for c in shown)}.",
        "First repetition shown." if n_reps > 1 else "",
        "Dotted vertical line: end of the warm-up; the "
        f"{' and '.join(_FITTED[r][0] for r in rows if r in _FITTED)} axes are scaled to what "
        "follows it, one scale for a row's panels.",
        "A triangle in a line's colour on a panel's top edge: the line leaves the axis during "
        "the warm-up, up to the value the panel gives."
        if clipped
        else "",
        paper_values.caption(stated),
    )
    return record(fig, facts)


def flows_in_progress(ds: xr.Dataset) -> Figure:
    """Figure B5.3: background transfers in progress, over time and their distribution.

    One column per buffer this tier ran (FIFO and PFQ/LQD, Reno and HSTCP, where run).
    """
    from scipy import stats

    buffers = sorted({int(c.rsplit(".", 1)[1]) for c in map(str, ds["case"].values)})
    lines = [("Reno", "FIFO"), ("Reno", "FQ"), ("HSTCP", "FIFO"), ("HSTCP", "FQ")]
    colours = {"Reno": "tab:blue", "HSTCP": "tab:orange"}

    def run_cases(buffer: int) -> list[tuple[str, str, str]]:
        out = []
        for mix, qdisc in lines:
            case = f"{mix}.{qdisc}.{buffer}"
            if case in ds["case"].values and _has_run(ds.sel(case=case)):
                out.append((mix, qdisc, case))
        return out

    shown = [b for b in buffers if run_cases(b)]
    if not shown:
        return _nothing_run("B5.3", 2 * len(buffers))
    fig, axes = plt.subplots(
        2,
        len(shown),
        figsize=(min(2.2 * len(shown) + 0.4, TEXT_WIDTH_IN), 3.9),
        squeeze=False,
        layout="constrained",
    )
    for j, buffer in enumerate(shown):
        top, bottom = axes[0, j], axes[1, j]
        reference = None
        for mix, qdisc, case in run_cases(buffer):
            cell = ds.sel(case=case)
            style = {"color": colours[mix], "ls": "-" if qdisc == "FIFO" else "--"}
            label = f"{mix}, {_QDISC_LABELS[qdisc]}"
            counts = analysis_b.flows_in_progress(cell)
            first = counts.isel(rep=0)
            top.plot(first["time"], first, lw=0.7, label=label, **style)
            window = counts.where(metrics.window(cell, float(ds.attrs["warmup_s"])))
            values = window.values[np.isfinite(window.values)].astype(int)
            if values.size:
                grid = np.arange(0, values.max() + 2)
                density = np.bincount(values, minlength=grid.size)[: grid.size] / values.size
                bottom.step(grid, density, where="mid", lw=1.0, label=label, **style)
                bottom.axvline(np.median(values), lw=0.8, **style)
            if reference is None:
                reference = analysis_b.transfers_in_progress_mean(_first_run(ds, case=case))
        if reference is not None:
            grid = np.arange(0, int(reference * 3) + 1)
            bottom.plot(
                grid,
                stats.poisson(reference).pmf(grid),
                color="0.2",
                ls=":",
                lw=1.0,
                label=f"Poisson({reference:.1f})",
            )
        top.set_title(f"B = {buffer} packets")
        top.set_xlabel("time (s)")
        bottom.set_xlabel("transfers in progress")
        if j == 0:
            top.set_ylabel("transfers in progress")
            bottom.set_ylabel("probability")
    _flow_legend(fig, axes)
    ran = [case for b in shown for _, _, case in run_cases(b)]
    load = _load_text(ds.sel(case=ran))
    measured = _measured_load_text([r for c in ran if (r := _first_run(ds, case=c)) is not None])
    load += f", measured {measured}" if measured else ""
    suptitle(fig, f"B5.3: background transfers in progress (load {load})")
    drawn_cases = sum(len(run_cases(b)) for b in shown)
    return record(
        fig,
        Drawn(
            panels=2 * len(buffers),
            panels_drawn=2 * len(shown),
            cells_drawn=drawn_cases,
            selection={"case": [r"re:(Reno|HSTCP)\.(FIFO|FQ)\.\d+"]},
        ).say(f"Columns: B = {', '.join(str(b) for b in shown)} packets."),
    )


def draw(figure_id: str, ds: xr.Dataset) -> Figure:
    """The figure ``figure_id`` (B5.1 ... B5.20) drawn from its combined dataset."""
    if figure_id in TIME_SERIES:
        return time_series(ds, figure_id)
    drawings: dict[str, Callable[[], Figure]] = {
        "B5.3": lambda: flows_in_progress(ds),
        "B5.10": lambda: phi_gamma(ds, figure_id, 20),
        "B5.11": lambda: phi_gamma(ds, figure_id, 100),
        "B5.12": lambda: throughput_loss(ds, figure_id, 20),
        "B5.13": lambda: throughput_loss(ds, figure_id, 100),
        "B5.14": lambda: heat_maps(ds, figure_id, "50Mbps"),
        "B5.15": lambda: heat_maps(ds, figure_id, "100Mbps"),
        "B5.16": lambda: parameter_grid(ds, figure_id, 20, "throughput"),
        "B5.17": lambda: parameter_grid(ds, figure_id, 20, "loss"),
        "B5.18": lambda: parameter_grid(ds, figure_id, 100, "throughput"),
        "B5.19": lambda: parameter_grid(ds, figure_id, 100, "loss"),
        "B5.20": lambda: pacing(ds, figure_id),
    }
    if figure_id not in drawings:
        raise ValueError(f"no study-B drawing for {figure_id!r}")
    return drawings[figure_id]()


def summary_table(ds: xr.Dataset, figure_id: str) -> pd.DataFrame:
    """The numbers behind a figure, one row per cell (mean over repetitions)."""
    if figure_id in TIME_SERIES or figure_id == "B5.3":
        cases = TIME_SERIES.get(figure_id, (tuple(map(str, ds["case"].values)), ()))[0]
        rows = []
        for case in cases:
            if case not in ds["case"].values or not _has_run(ds.sel(case=case)):
                continue
            cell = ds.sel(case=case)
            rows.append(
                {
                    "case": case,
                    "phi": float(analysis_b.phi(cell).mean()),
                    "jain": float(analysis_b.jain(cell).mean()),
                    "bottlenecked_loss": float(analysis_b.loss_rate(cell, "bottlenecked").mean()),
                    "background_loss": float(analysis_b.loss_rate(cell, "background").mean()),
                    "transfers_in_progress": float(
                        analysis_b.flows_in_progress(cell)
                        .where(metrics.window(cell, float(ds.attrs["warmup_s"])))
                        .mean()
                    ),
                    "transfers_sharing_a_host": analysis_b.host_sharing(cell),
                }
            )
        return pd.DataFrame(rows)
    table = analysis_b.phi_table(ds)
    return table.to_dataframe().dropna(how="all").reset_index()
