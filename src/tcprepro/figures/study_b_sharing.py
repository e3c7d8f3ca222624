r"""Figures B5.10-B5.20 of study B: how flows share the bottleneck, and what it costs.

phi and gamma against the load (B5.10, B5.11), throughput against loss (B5.12, B5.13),
the heat maps of B5.14 and B5.15, the AIMD/MIMD parameter grids (B5.16-B5.19) and
pacing (B5.20). :func:`tcprepro.figures.study_b.draw` maps each figure id to its
drawing here; the conventions are those of :mod:`tcprepro.figures.study_b`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from tcprepro.analysis import study_b as analysis_b
from tcprepro.claims.glossary import plural
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
from tcprepro.figures.study_b_common import (
    _first_run,
    _load_text,
    _nothing_run,
    _rate_text,
    _row_cwnd,
)
from tcprepro.models import bandwidth_sharing
from tcprepro.variants import variant_label


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
            drawn_variants.setdefault(variant_label(variant), line)
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
    suptitle(
        fig,
        rf"{figure_id}: $\phi(i)$ and $\gamma(\rho)$ of each TCP variant, PFQ/LQD, "
        rf"$\rho_b$ = {load}",
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


#: marker shapes of the variants' points in B5.12/B5.13 (cycled), on top of their colours
VARIANT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*", "d")


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
    fig, ax = plt.subplots(figsize=(4.2, 3.6), layout="constrained")
    # a key under the panel, one marker shape per variant on top of its colour: variants
    # with close throughput and loss fall on one another, where labels beside the points
    # would cover each other and the data
    handles, labels = [], []
    for variant in variants:
        x = values.sel(variant=variant)
        y = loss.sel(variant=variant)
        if not bool(x.notnull().any()):
            continue
        x_mean, y_mean = float(x.mean()), float(y.mean())
        xerr = float(x.std(ddof=1)) if int(x.count()) > 1 else 0.0
        marker = VARIANT_MARKERS[len(handles) % len(VARIANT_MARKERS)]
        handle = ax.errorbar(
            x_mean, max(y_mean, 1e-5), xerr=xerr, fmt=marker, ms=5, color=colours[variant]
        )
        handles.append(handle)
        labels.append(variant_label(variant))
    drawn = len(handles)
    if not drawn:
        plt.close(fig)
        return _nothing_run(f"B = {buffer} packets, one flow", 1)
    legend_below(fig, handles, labels, ncols=4)
    ax.set_yscale("log")
    ax.set_xlabel(r"throughput of one flow, $\phi(1)$ (% of $(1-\rho_b)C$)")
    ax.set_ylabel("loss rate of the flow")
    suptitle(
        fig,
        f"{figure_id}: B = {buffer} packets, C = {_rate_text(rate)}, PFQ/LQD, "
        f"$\\rho_b$ = {_load_text(cell)}",
    )
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(
        panels=1,
        panels_drawn=1,
        cells_drawn=drawn,
        selection={"buffer": [buffer], "flows": [1]},
    ).say(
        f"{plural(drawn, 'variant')} drawn.",
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
        ax.set_title(variant_label(variant))
    fig.colorbar(image, ax=axes[0].tolist(), label=r"% of $(1-\rho_b)C$", shrink=0.9)
    suptitle(
        fig,
        f"{figure_id}: one Reno or Westwood+ flow over ($\\rho_b$, B), C = {_rate_text(rate)}",
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
    target = analysis_b.fair_target_mbps(cell)
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
    suptitle(
        fig,
        f"{figure_id}: {quantity} of one flow per AIMD/MIMD law, B = {buffer} packets, "
        f"$\\rho_b$ = {_load_text(cell)}",
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
    stated: list[paper_values.Mark] = []
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
            title = f"{name}: mean throughput {mean:.1f} Mb/s"
            unpaced = float(throughput.sel(buffer=buffer, pacing=False).mean())
            marks = paper_values.stated_for(figure_id, "paced_over_unpaced", buffer=buffer)
            if paced:  # this build's ratio beside the one the paper states in its text
                ratio = [f"{mean / unpaced:.2f}x"] if np.isfinite(unpaced) and unpaced else []
                ratio += [f"paper {m.text}x" for m in marks]
                title += f"\n{', '.join(ratio)} the unpaced" if ratio else ""
                stated += marks
            ax.set_title(title)
            ax.set_ylabel("cwnd (packets)" if j == 0 else "")
            if i == len(buffers) - 1:
                ax.set_xlabel("time (s)")
    capacity = float(ds["link_rate_bps"].sel(link=analysis_b.BOTTLENECK).max()) / 1e6
    suptitle(
        fig,
        f"{figure_id}: one Reno flow with and without pacing, C = {capacity:g} Mb/s, "
        f"$\\rho_b$ = {_load_text(ds)}",
    )
    rows = ", ".join(str(b) for b in buffers)
    n_reps = int(ds.sizes.get("rep", 1))
    facts = Drawn(panels=2 * len(buffers), panels_drawn=n_drawn, cells_drawn=n_drawn).say(
        f"Rows: B = {rows} packets" + (" (top to bottom)." if len(buffers) > 1 else "."),
        "Traces: first repetition; mean throughput over every repetition." if n_reps > 1 else "",
        "Paced panels: the paced over unpaced mean throughput of this build beside the ratio "
        f"the paper states in its text, quoted by {', '.join(sorted({m.claim for m in stated}))} "
        "(src/tcprepro/reference/paper_marks.csv)."
        if stated
        else "",
    )
    return record(fig, facts)
