r"""Figures of study B (Augé, thesis ch. 5), drawn from combined datasets.

This module owns the drawing of figures B5.1-B5.20: which runs (sweep cells)
each figure shows and how. It never runs a simulation and never hard-codes a
result: every curve, bar and label comes from the dataset passed in (through
:mod:`tcprepro.analysis.study_b` and :mod:`tcprepro.models.bandwidth_sharing`). A cell the
current tier did not run is left out of the drawing and named in the figure's record
(:class:`~tcprepro.figures.common.Drawn`), which the report's caption quotes; a figure
with nothing run is a small "not run in this tier" panel the report does not include.

:func:`draw` maps a figure id to its drawing; the notebooks call it.

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

import json
import re
from collections.abc import Callable, Sequence
from fractions import Fraction

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
    points_style,
    record,
    spread_statement,
)
from tcprepro.models import bandwidth_sharing

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

_QDISC_LABELS = {"FIFO": "FIFO", "FQ": "PFQ/LQD"}
_VARIANT_LABELS = {
    "NewReno": "Reno",
    "HighSpeed": "HSTCP",
    "WestwoodPlus": "Westwood+",
    "Bic": "BIC",
    "Cubic": "CUBIC",
    "Htcp": "H-TCP",
    "Fast": "FAST",
    "YeahPaper": "YeAH",
}
_ROW_LABELS = {
    "cwnd": "cwnd (packets)",
    "queue": "queue (packets)",
    "loss": "loss rate",
    "transfers": "background transfers",
    "throughput": "throughput (% of\n$(1-\\rho_b)C$)",
}


def describe_case(case: str) -> str:
    """Readable title of a B5.1 case: ``2Reno.FIFO.20`` -> ``2 Reno, FIFO, B = 20``."""
    match = re.fullmatch(r"(.+)\.(FIFO|FQ)\.(\d+)", case)
    if not match:
        return case
    mix, qdisc, buffer = match.groups()
    mix = re.sub(r"^(\d)", r"\1 ", mix).replace("+", " + ")
    return f"{mix}, {_QDISC_LABELS[qdisc]}, B = {buffer}"


def _label(variant: str) -> str:
    return _VARIANT_LABELS.get(variant, variant)


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
    variant = _label(str(run["flow_variant"].sel(flow=flow).values))
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
    peak = float(np.nanmax([rates["bottlenecked"].max(), rates["background"].max(), 0.0]))
    top = peak * 1.15 if peak > 0 else 0.01  # no loss: a small scale, the zeros visible
    ax.set_ylim(-0.06 * top, top)


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
    ax.set_ylim(0, 135)


_ROWS: dict[str, Callable[[Axes, xr.Dataset], None]] = {
    "cwnd": _row_cwnd,
    "queue": _row_queue,
    "loss": _row_loss,
    "transfers": _row_transfers,
    "throughput": _row_throughput,
}


def _nothing_run(what: str, panels: int) -> Figure:
    """A small figure for a figure with nothing run in this tier (the report leaves it out)."""
    fig, ax = plt.subplots(figsize=(3.0, 1.0), layout="constrained")
    empty_panel(ax, f"{what}: not run in this tier")
    ax.set_xticks([])
    ax.set_yticks([])
    return record(fig, Drawn(panels=panels, panels_drawn=0, cells_drawn=0))


def _flow_legend(fig: Figure, axes: np.ndarray) -> None:
    """One legend for the flows of every panel, under the panels (never on the data)."""
    entries: dict[str, object] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        fig.legend(
            list(entries.values()),
            list(entries),
            loc="outside lower center",
            ncols=min(len(entries), 5),
        )


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
    for j, case in enumerate(shown):
        run = runs[case]
        assert run is not None
        for i, row in enumerate(rows):
            ax = axes[i, j]
            _ROWS[row](ax, run)
            ax.axvline(run.attrs["warmup_s"], color="0.7", lw=0.6, ls=":")
            if i == 0:
                ax.set_title(describe_case(case))
            if j == 0:
                ax.set_ylabel(_ROW_LABELS[row])
            if i == len(rows) - 1:
                ax.set_xlabel("time (s)")
    if "transfers" in rows:  # the transfers' colour is their loss rate: its scale
        row = axes[rows.index("transfers")]
        mappables = [c for ax in row for c in ax.collections if c.get_array() is not None]
        if mappables:
            fig.colorbar(mappables[0], ax=row.tolist(), label="loss rate\n(grey: none)", aspect=12)
    _flow_legend(fig, axes)
    load = _load_text(ds.sel(case=shown))
    fig.suptitle(f"{figure_id}: background of TCP transfers at $\\rho_b$ = {load}")
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
        "Dotted vertical line: end of the warm-up.",
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
    fig.suptitle(f"B5.3: background transfers in progress (load {_load_text(ds.sel(case=ran))})")
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


def _variant_colours(variants: Sequence[str]) -> dict[str, object]:
    """Distinct colours: the dark shades of tab20 first, then the light ones."""
    cmap = plt.get_cmap("tab20")
    order = [*range(0, 20, 2), *range(1, 20, 2)]
    return {v: cmap(order[k % 20]) for k, v in enumerate(variants)}


def phi_gamma(
    ds: xr.Dataset, figure_id: str, buffer: int, rhos: Sequence[Fraction] | None = None
) -> Figure:
    """Figures B5.10/B5.11: φ(i) (log i) and γ(ρ) for every variant; one row per capacity run.

    The variants' colour key sits right of the panels.
    """
    rates = [str(r) for r in ds["rate"].values]
    variants = [str(v) for v in ds["variant"].values]
    colours = _variant_colours(variants)
    if rhos is None:
        rhos = [Fraction(k, 40) for k in range(0, 39)]
    if buffer not in ds["buffer"].values:
        return _nothing_run(f"B = {buffer} packets", 2)
    table = analysis_b.phi_table(ds)["phi"]
    shown = [r for r in rates if bool(table.sel(buffer=buffer, rate=r).notnull().any())]
    if not shown:
        return _nothing_run(f"B = {buffer} packets", 2 * len(rates))
    fig, axes = plt.subplots(
        len(shown),
        2,
        figsize=(TEXT_WIDTH_IN, min(2.5 * len(shown) + 0.3, MAX_HEIGHT_IN)),
        squeeze=False,
        layout="constrained",
    )
    drawn_variants: dict[str, object] = {}
    stated: list[paper_values.Mark] = []
    n_points = 0
    for r, rate in enumerate(shown):
        ax_phi, ax_gamma = axes[r]
        cell = table.sel(buffer=buffer, rate=rate)
        for variant in variants:
            series = cell.sel(variant=variant).to_series().dropna()
            if series.empty:
                continue
            n_points += len(series)
            (line,) = ax_phi.plot(
                series.index,
                series.values * 100,
                marker="o",
                ms=3,
                color=colours[variant],
                **points_style(len(series)),
            )
            drawn_variants.setdefault(_label(variant), line)
            for mark in paper_values.stated(ds.attrs.get("figure", ""), "phi_pct"):
                flows = mark.where.get("flows", ())
                if mark.matches(variant=variant, buffer=buffer) and len(flows) == 1:
                    paper_values.draw(ax_phi, float(flows[0]), mark)
                    stated.append(mark)
            phi = bandwidth_sharing.phi_sequence(
                dict(zip(series.index, series.values, strict=True))
            )
            curve = bandwidth_sharing.gamma_curve(rhos, phi)
            ax_gamma.plot(
                [float(x) for x in rhos], [float(g) for g in curve], color=colours[variant]
            )
        ps = [float(bandwidth_sharing.processor_sharing_gamma(x)) for x in rhos]
        (ps_line,) = ax_gamma.plot([float(x) for x in rhos], ps, color="black", lw=1.6)
        ax_phi.set_xscale("log")
        ticks = sorted({int(i) for i in ds["flows"].values})
        ax_phi.set_xticks(ticks)
        ax_phi.set_xticklabels([str(t) for t in ticks])
        ax_phi.minorticks_off()
        ax_phi.set_ylim(0, 105)
        ax_phi.set_xlabel("bottlenecked flows i")
        ax_phi.set_ylabel(r"$\phi(i)$, % of $(1-\rho_b)C$")
        ax_gamma.set_xlim(0, 1)
        ax_gamma.set_ylim(0, 1.02)
        ax_gamma.set_xlabel(r"load of the bottlenecked flows $\rho$")
        ax_gamma.set_ylabel(r"$\gamma(\rho)$")
        ax_phi.set_title(f"B = {buffer} packets, C = {_rate_text(rate)}")
    fig.legend(
        [*drawn_variants.values(), ps_line],
        [*drawn_variants, "processor sharing"],
        loc="outside right center",
    )
    load = _load_text(ds.sel(buffer=buffer))
    fig.suptitle(
        rf"{figure_id}: $\phi(i)$ and $\gamma(\rho)$ of each TCP variant, PFQ/LQD, "
        rf"$\rho_b$ = {load}"
    )
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(
        panels=2 * len(rates),
        panels_drawn=2 * len(shown),
        selection={"buffer": [buffer]},
    ).say(
        f"One row per capacity run: C = {', '.join(shown)}.",
        f"φ: mean over {n_reps} repetitions." if n_reps > 1 else "",
        paper_values.caption(stated),
    )
    return record(fig, facts)


def throughput_loss(ds: xr.Dataset, figure_id: str, buffer: int) -> Figure:
    """Figures B5.12/B5.13: φ(1) against the loss rate of one flow, every variant."""
    rate = str(ds["rate"].values[0])
    if buffer not in ds["buffer"].values or 1 not in ds["flows"].values:
        return _nothing_run(f"B = {buffer} packets, one flow", 1)
    cell = ds.sel(buffer=buffer, rate=rate, flows=1)
    values = analysis_b.phi(cell) * 100
    loss = analysis_b.loss_rate(cell, "bottlenecked")
    variants = [str(v) for v in ds["variant"].values]
    colours = _variant_colours(variants)
    fig, ax = plt.subplots(figsize=(3.4, 2.5), layout="constrained")
    drawn = 0
    for variant in variants:
        x = values.sel(variant=variant)
        y = loss.sel(variant=variant)
        if not bool(x.notnull().any()):
            continue
        drawn += 1
        x_mean, y_mean = float(x.mean()), float(y.mean())
        xerr = float(x.std(ddof=1)) if int(x.count()) > 1 else 0.0
        ax.errorbar(x_mean, max(y_mean, 1e-5), xerr=xerr, fmt="o", ms=4, color=colours[variant])
        ax.annotate(
            _label(variant),
            (x_mean, max(y_mean, 1e-5)),
            xytext=(3, 3),
            textcoords="offset points",
            fontsize=FONT_PT - 1,
        )
    if not drawn:
        plt.close(fig)
        return _nothing_run(f"B = {buffer} packets, one flow", 1)
    ax.set_yscale("log")
    ax.set_xlabel(r"throughput of one flow, $\phi(1)$ (% of $(1-\rho_b)C$)")
    ax.set_ylabel("loss rate of the flow")
    ax.set_title(
        f"{figure_id}: B = {buffer} packets, C = {_rate_text(rate)}, PFQ/LQD, "
        f"$\\rho_b$ = {_load_text(cell)}"
    )
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(
        panels=1,
        panels_drawn=1,
        cells_drawn=drawn,
        selection={"buffer": [buffer], "flows": [1]},
    ).say(
        f"{drawn} variant(s) drawn.",
        spread_statement(n_reps, "Points: mean over repetitions; horizontal bars"),
    )
    return record(fig, facts)


def heat_maps(ds: xr.Dataset, figure_id: str, rate: str) -> Figure:
    """Figures B5.14/B5.15: φ of one Reno / Westwood+ flow over (ρ_b, B) at capacity ``rate``.

    The colour scale is fixed at 0-100 % for both figures, with its colour bar.
    """
    variants = [str(v) for v in ds["variant"].values]
    if rate not in ds["rate"].values:
        return _nothing_run(f"C = {rate}", len(variants))
    table = analysis_b.phi_table(ds.sel(rate=rate))["phi"] * 100
    shown = [
        v
        for v in variants
        if not table.sel(variant=v).transpose("buffer", "load").to_pandas().isna().all().all()
    ]
    if not shown:
        return _nothing_run(f"C = {rate}", len(variants))
    loads = len(ds["load"])
    fig, axes = plt.subplots(
        1,
        len(shown),
        figsize=(min((0.45 * loads + 1.6) * len(shown) + 0.8, TEXT_WIDTH_IN), 2.6),
        squeeze=False,
        layout="constrained",
    )
    image = None
    dashes = 0
    for ax, variant in zip(axes[0], shown, strict=True):
        grid = table.sel(variant=variant).transpose("buffer", "load").to_pandas()
        image = ax.imshow(
            grid.values, origin="lower", cmap="RdYlGn", vmin=0, vmax=100, aspect="auto"
        )
        for y, buffer in enumerate(grid.index):
            for x, load in enumerate(grid.columns):
                value = grid.loc[buffer, load]
                text = "—" if not np.isfinite(value) else f"{value:.0f}"
                dashes += not np.isfinite(value)
                ax.text(x, y, text, ha="center", va="center", fontsize=FONT_PT - 1)
        ax.set_xticks(range(len(grid.columns)), [f"{v:g}" for v in grid.columns])
        ax.set_yticks(range(len(grid.index)), [str(int(v)) for v in grid.index])
        ax.set_xlabel(r"background load $\rho_b$")
        ax.set_ylabel("buffer B (packets)")
        ax.set_title(_label(variant))
    fig.colorbar(image, ax=axes[0].tolist(), label=r"% of $(1-\rho_b)C$", shrink=0.9)
    fig.suptitle(
        f"{figure_id}: one Reno or Westwood+ flow over ($\\rho_b$, B), C = {_rate_text(rate)}"
    )
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(panels=len(variants), panels_drawn=len(shown), selection={"rate": [rate]}).say(
        "Colour scale fixed at 0–100 % of (1 − ρ_b)C"
        + ("; a dash marks a cell not run." if dashes else "."),
        f"Values: mean over {n_reps} repetitions." if n_reps > 1 else "",
    )
    return record(fig, facts)


def _law_parts(law: str) -> tuple[str, str]:
    family, alpha, beta = law.split(".", 2)
    return family, f"{alpha}/{beta}"


def parameter_grid(ds: xr.Dataset, figure_id: str, buffer: int, quantity: str) -> Figure:
    """Figures B5.16-B5.19: AIMD (left) and MIMD (right) throughput or loss rate per α/β.

    Reference lines (the fair target, the 1 % loss rate) are named in the record's
    caption sentences, not in a legend over the bars.
    """
    if buffer not in ds["buffer"].values:
        return _nothing_run(f"B = {buffer} packets", 2)
    cell = ds.sel(buffer=buffer)
    if quantity == "throughput":
        values = analysis_b.throughput_bps(cell) / 1e6
        ylabel = "throughput (Mb/s)"
    else:
        values = analysis_b.loss_rate(cell, "bottlenecked")
        ylabel = "loss rate"
    frame = values.to_dataframe(name="value").reset_index().dropna(subset=["value"])
    if frame.empty:
        return _nothing_run(f"B = {buffer} packets", 2)
    target = float(analysis_b.available_capacity_bps(cell).mean()) / 1e6
    fig, axes = plt.subplots(1, 2, figsize=(TEXT_WIDTH_IN, 2.6), layout="constrained")
    n_drawn = 0
    n_cells = 0
    n_reps = int(ds.sizes.get("rep", 1))
    stated: list[paper_values.Mark] = []
    for ax, family in zip(axes, ("AIMD", "MIMD"), strict=True):
        rows = frame[frame["law"].str.startswith(family + ".")]
        if rows.empty:
            empty_panel(ax)
            continue
        n_drawn += 1
        order = [str(v) for v in ds["law"].values if str(v).startswith(family + ".")]
        order = [law for law in order if law in set(rows["law"])]
        n_cells += len(order)
        summary = rows.groupby("law")["value"].agg(["mean", "std", "count"]).reindex(order)
        labels = [_law_parts(law)[1] for law in order]
        colour = "tab:blue" if family == "AIMD" else "tab:green"
        # no caps drawn at zero length when a single repetition gives no spread
        spread = summary["std"].where(summary["count"] > 1).fillna(0) if n_reps > 1 else None
        if quantity == "throughput":
            ax.bar(
                range(len(order)), summary["mean"], yerr=spread, color=colour, capsize=2, width=0.6
            )
        else:  # a bar's length means nothing on a log axis: a point per law
            ax.errorbar(
                range(len(order)), summary["mean"], yerr=spread, fmt="o", color=colour, capsize=2
            )
        if quantity == "throughput":
            for x, law in enumerate(order):
                for mark in paper_values.stated_for(
                    ds.attrs.get("figure", ""), "throughput_mbps", law=law, buffer=buffer
                ):
                    paper_values.draw(ax, x, mark)
                    stated.append(mark)
        ax.set_xticks(range(len(order)), labels, rotation=60)
        ax.set_xlim(-0.8, max(len(order), 4) - 0.2)
        ax.set_xlabel(r"$\alpha/\beta$")
        ax.set_title(family)
        if quantity == "throughput":
            ax.axhline(target, color="0.3", ls="--", lw=0.8)
            ax.set_ylim(0, target * 1.15)
        else:
            ax.set_yscale("log")
            ax.axhline(0.01, color="0.3", ls=":", lw=0.8)
        ax.set_ylabel(ylabel)
    fig.suptitle(
        f"{figure_id}: {quantity} of one flow per AIMD/MIMD law, B = {buffer} packets, "
        f"$\\rho_b$ = {_load_text(cell)}"
    )
    shape = "Bars" if quantity == "throughput" else "Points"
    reference = (
        f"Dashed: the fair target, the capacity the background leaves ({target:.1f} Mb/s)."
        if quantity == "throughput"
        else "Dotted: a loss rate of 1 %."
    )
    facts = Drawn(
        panels=2, panels_drawn=n_drawn, cells_drawn=n_cells, selection={"buffer": [buffer]}
    ).say(
        reference,
        spread_statement(n_reps, f"{shape}: mean over repetitions; error bars"),
        paper_values.caption(stated),
    )
    return record(fig, facts)


def pacing(ds: xr.Dataset, figure_id: str) -> Figure:
    """Figure B5.20: cwnd of one Reno flow with (left) and without (right) pacing, per B.

    One row per buffer this tier ran.
    """
    buffers = [int(b) for b in ds["buffer"].values]
    fig, axes = plt.subplots(
        len(buffers),
        2,
        figsize=(TEXT_WIDTH_IN, min(1.9 * len(buffers) + 0.4, MAX_HEIGHT_IN)),
        squeeze=False,
        sharex=True,
        sharey="row",  # paced and not paced on one scale, per buffer
        layout="constrained",
    )
    throughput = analysis_b.throughput_bps(ds) / 1e6
    n_drawn = 0
    for i, buffer in enumerate(buffers):
        for j, paced in enumerate((True, False)):
            ax = axes[i, j]
            name = f"{'paced' if paced else 'not paced'}, B = {buffer}"
            ax.set_title(name)
            run = _first_run(ds, buffer=buffer, pacing=paced)
            if run is None:
                empty_panel(ax)
                continue
            n_drawn += 1
            _row_cwnd(ax, run)
            mean = float(throughput.sel(buffer=buffer, pacing=paced).mean())
            ax.set_title(f"{name}: mean throughput {mean:.1f} Mb/s")
            ax.set_ylabel("cwnd (packets)" if j == 0 else "")
            if i == len(buffers) - 1:
                ax.set_xlabel("time (s)")
    capacity = float(ds["link_rate_bps"].sel(link=analysis_b.BOTTLENECK).max()) / 1e6
    fig.suptitle(
        f"{figure_id}: one Reno flow with and without pacing, C = {capacity:g} Mb/s, "
        f"$\\rho_b$ = {_load_text(ds)}"
    )
    rows = ", ".join(str(b) for b in buffers)
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(panels=2 * len(buffers), panels_drawn=n_drawn, cells_drawn=n_drawn).say(
        f"Rows: B = {rows} packets" + (" (top to bottom)." if len(buffers) > 1 else "."),
        "Traces: first repetition; mean throughput over every repetition." if n_reps > 1 else "",
    )
    return record(fig, facts)


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
