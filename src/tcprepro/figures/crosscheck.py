"""The cross-check figure: ns-3 against the emulation (real Linux TCP), per flow.

Its title names the route the emulated runs came by (:func:`crosscheck_title`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcprepro.analysis.crosscheck import emulation_name, flow_label
from tcprepro.figures.common import TEXT_WIDTH_IN, Drawn, record, suptitle

__all__ = ["crosscheck_scatter", "crosscheck_title"]


def crosscheck_title(figure_id: str, table: pd.DataFrame) -> str:
    """The figure's title, naming the route its emulated runs came by.

    ``X1: ns-3 vs Mininet on the UML route, real Linux TCP``
    (:func:`tcprepro.analysis.crosscheck.emulation_name`).
    """
    if "route" not in table.attrs:
        return f"{figure_id}: ns-3 ({emulation_name(table)})"
    return f"{figure_id}: ns-3 vs {emulation_name(table)}"


def _utilisation_band(ax, ran: pd.DataFrame, tol_pp: float, tol_rel: float | None) -> None:
    """The diagonal and the tolerance band of the utilisation panel.

    Without a relative bound: linear axes 0-110 % and the band of ``tol_pp`` points.
    With one (X3, X4, X11: window- or loss-limited flows using a few percent of the
    link), log axes from the smallest utilisation, and the band where both bounds hold
    (``tol_pp`` points and ``tol_rel`` of the ns-3 value), the region a cell must lie in.
    """
    ax.set(xlabel="ns-3 utilisation (%)", ylabel="emulation utilisation (%)")
    if tol_rel is None:
        grid = np.linspace(0, 110, 2)
        ax.plot(grid, grid, color="0.4", lw=0.8)
        ax.fill_between(grid, grid - tol_pp, grid + tol_pp, color="0.85", zorder=0)
        ax.set(xlim=(0, 110), ylim=(0, 110), title=f"utilisation, band ±{tol_pp:g} pp")
        return
    values = ran[["ns3_util_pct", "emu_util_pct"]].to_numpy(dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    low = min(1.0, float(positive.min()) / 1.5) if positive.size else 1.0
    grid = np.geomspace(low, 110, 200)
    lower = np.maximum(grid - tol_pp, grid * (1 - tol_rel))
    upper = np.minimum(grid + tol_pp, grid * (1 + tol_rel))
    ax.plot(grid, grid, color="0.4", lw=0.8)
    ax.fill_between(grid, lower, upper, color="0.85", zorder=0)
    ax.set(xscale="log", yscale="log", xlim=(low, 110), ylim=(low, 110))
    ax.set(title=f"utilisation, band ±{tol_pp:g} pp and ±{tol_rel:.0%}")


def crosscheck_scatter(table: pd.DataFrame, title: str = "") -> Figure:
    """Simulation vs emulation: ns-3 (x) against Mininet (y), utilisation and mean RTT.

    ``table`` comes from :func:`tcprepro.analysis.crosscheck.compare`. The
    diagonal band is the stated tolerance; hollow markers are emulated runs the
    fidelity gate flagged; cells that could not be emulated are counted in the
    footnote. A table whose ``attrs["mark"]`` names a sweep dimension (the figure's
    ``crosscheck.mark``) draws each of its values with its own marker shape.
    """
    tol_pp, tol_rtt = table.attrs["utilisation_pp"], table.attrs["rtt_rel"]
    fig, (ax_util, ax_rtt) = plt.subplots(1, 2, figsize=(TEXT_WIDTH_IN, 3.2), layout="constrained")
    colours = {"up": "#4c72b0", "down": "#dd8452", "total": "black"}
    others = iter(plt.get_cmap("tab10").colors[2:])
    ran = table[table["fidelity"] != "not run"]
    mark = table.attrs.get("mark")
    shapes = dict(zip(sorted(ran[mark].unique(), key=str), "o^sv<>P", strict=False)) if mark else {}
    for flow, group in ran.groupby("flow"):
        colour = colours.get(str(flow)) or next(others, "0.3")
        marked = group.groupby(mark) if mark else [(None, group)]
        for value, cells in marked:
            for flagged, part in cells.groupby(cells["fidelity"] == "flagged"):
                style = (
                    {"facecolors": "none", "edgecolors": colour} if flagged else {"color": colour}
                )
                # a cell's flows together (efficiency): diamonds
                style["marker"] = "D" if str(flow) == "total" else shapes.get(value, "o")
                label = f"{flow_label(table, str(flow))}{f', {mark} {value}' if mark else ''}"
                label += " (flagged)" if flagged else ""
                ax_util.scatter(part["ns3_util_pct"], part["emu_util_pct"], label=label, **style)
                ax_rtt.scatter(part["ns3_rtt_ms"], part["emu_rtt_ms"], label=label, **style)
    _utilisation_band(ax_util, ran, tol_pp, table.attrs.get("utilisation_rel"))
    finite = ran[["ns3_rtt_ms", "emu_rtt_ms"]].to_numpy(dtype=float)
    top = float(np.nanmax(finite)) * 1.15 if np.isfinite(finite).any() else 1.0
    line = np.linspace(0, top, 2)
    ax_rtt.plot(line, line, color="0.4", lw=0.8)
    ax_rtt.fill_between(line, line * (1 - tol_rtt), line * (1 + tol_rtt), color="0.85", zorder=0)
    ax_rtt.set(xlim=(0, top), ylim=(0, top), xlabel="ns-3 mean RTT (ms)")
    ax_rtt.set(ylabel="emulation mean RTT (ms)", title=f"mean RTT, band ±{tol_rtt:.0%}")
    handles, labels = ax_util.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right center")
    not_run = int(((table["fidelity"] == "not run") & (table["flow"] != "total")).sum())
    flagged = int(((table["fidelity"] == "flagged") & (table["flow"] != "total")).sum())
    flows = ran[ran["flow"] != "total"]
    note = f"{len(flows)} flows emulated ({emulation_name(table)}); {flagged} flagged by the "
    note += "fidelity gate (hollow)"
    if not_run:
        note += f"; {not_run} not emulated (variant not offered by the kernel)"
    if ran.empty:
        note = "no emulated dataset: ns-3 side only"
    if title:
        suptitle(fig, title)
    facts = Drawn(panels=2, panels_drawn=2 if len(ran) else 0, cells_drawn=len(ran)).say(note + ".")
    return record(fig, facts)
