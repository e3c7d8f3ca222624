"""The explorer's figure: an explored cell drawn on top of the latest build's cells.

Two panels, utilisation (% of goodput capacity) and mean RTT, one column per flow.
Grey dots are every cell of the workflow's latest build of the figure (whichever tier
made it); the explored cell is drawn over them: ns-3 as a filled circle, real Linux
(when it ran) as a hollow square with the cross-check tolerance around ns-3's value
as a grey band, and the paper's own value, where the figure has one, as a black cross.
The numbers come from :func:`tcprepro.analysis.crosscheck.cell_metrics` and
:func:`~tcprepro.analysis.crosscheck.compare`; nothing is simulated here.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcprepro.figures.common import TEXT_WIDTH_IN, legend_below, suptitle

__all__ = ["explored_figure", "png_bytes"]

#: the explored cell's colours: ns-3, Linux
NS3_COLOUR, LINUX_COLOUR = "tab:blue", "tab:orange"
#: the latest build's cells
BUILD_COLOUR = "0.6"


def _flows(explored: pd.DataFrame | None, build: pd.DataFrame | None) -> list[str]:
    flows: list[str] = []
    for frame in (explored, build):
        if frame is not None and "flow" in frame:
            flows += [str(f) for f in frame["flow"] if str(f) not in flows]
    return flows


def explored_figure(
    explored: pd.DataFrame | None,
    build: pd.DataFrame | None,
    *,
    title: str,
    build_label: str,
    tolerance: Mapping[str, Any] | None = None,
    paper: pd.DataFrame | None = None,
) -> Figure:
    """Draw the explored cell over the latest build.

    Parameters
    ----------
    explored
        The explored cell's rows of :func:`tcprepro.analysis.crosscheck.compare`
        (``flow``, ``ns3_util_pct``, ``ns3_rtt_ms`` and, when Linux ran, ``emu_*``);
        None while nothing has finished.
    build
        The latest build's rows of :func:`~tcprepro.analysis.crosscheck.cell_metrics`
        (every cell), or None without a build.
    build_label
        What the grey dots are (``latest build (smoke tier): 4 cells``).
    tolerance
        The cross-check block (``utilisation_pp``, ``rtt_rel``) drawn around ns-3's value
        when Linux ran.
    paper
        The paper's values for the cell: ``flow``, ``util_pct``, ``label``.
    """
    fig = Figure(figsize=(TEXT_WIDTH_IN, 2.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    flows = _flows(explored, build)
    metrics = (("util_pct", "utilisation (% of capacity)"), ("rtt_ms", "mean RTT (ms)"))
    rng = np.random.default_rng(0)  # the jitter of the grey dots, the same every time
    linux_ran = explored is not None and explored.get("emu_util_pct", pd.Series()).notna().any()
    for ax, (metric, label) in zip(axes, metrics, strict=True):
        ax.set_ylabel(label)
        ax.set_xticks(range(len(flows)), flows)
        ax.set_xlim(-0.6, max(len(flows), 1) - 0.4)
        ax.grid(axis="y", linewidth=0.3)
        if build is not None and len(build):
            _build_dots(ax, build, flows, metric, rng, build_label)
        if explored is None:
            continue
        _explored_marks(ax, explored, flows, metric, linux_ran, tolerance)
        if paper is not None and metric == "util_pct":
            _paper_marks(ax, paper, flows)
    for ax in axes:  # from zero, with room above the highest point
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        legend_below(fig, handles, labels, ncols=4)
    suptitle(fig, title)
    return fig


def _build_dots(
    ax: Axes,
    build: pd.DataFrame,
    flows: list[str],
    metric: str,
    rng: np.random.Generator,
    build_label: str,
) -> None:
    """The latest build's value of every cell, grey dots jittered left of each flow."""
    for i, flow in enumerate(flows):
        values = build.loc[build["flow"].astype(str) == flow, f"ns3_{metric}"].dropna()
        jitter = rng.uniform(-0.12, 0.12, len(values))
        ax.scatter(
            i - 0.2 + jitter,
            values,
            s=9,
            color=BUILD_COLOUR,
            label=build_label if i == 0 else None,
            zorder=2,
        )


def _explored_marks(
    ax: Axes,
    explored: pd.DataFrame,
    flows: list[str],
    metric: str,
    linux_ran: bool,
    tolerance: Mapping[str, Any] | None,
) -> None:
    """The explored cell: ns-3's value, and Linux's beside it within the tolerance band."""
    for i, flow in enumerate(flows):
        row = explored[explored["flow"].astype(str) == flow]
        if row.empty:
            continue
        ns3 = float(row[f"ns3_{metric}"].iloc[0])
        ax.scatter([i], [ns3], s=40, color=NS3_COLOUR, label="ns-3" if i == 0 else None, zorder=4)
        emu = float(row[f"emu_{metric}"].iloc[0]) if f"emu_{metric}" in row else np.nan
        if linux_ran and np.isfinite(emu):
            if tolerance and np.isfinite(ns3):
                if metric == "util_pct":
                    low, high = (
                        ns3 - tolerance["utilisation_pp"],
                        ns3 + tolerance["utilisation_pp"],
                    )
                else:
                    low, high = (
                        ns3 * (1 - tolerance["rtt_rel"]),
                        ns3 * (1 + tolerance["rtt_rel"]),
                    )
                ax.fill_between(
                    [i + 0.05, i + 0.3],
                    low,
                    high,
                    color="0.85",
                    zorder=1,
                    label="cross-check tolerance" if i == 0 else None,
                )
            ax.scatter(
                [i + 0.18],
                [emu],
                s=40,
                marker="s",
                facecolors="none",
                edgecolors=LINUX_COLOUR,
                label="Linux (UML)" if i == 0 else None,
                zorder=4,
            )


def _paper_marks(ax: Axes, paper: pd.DataFrame, flows: list[str]) -> None:
    """The paper's values for the cell, one legend entry per label."""
    labelled: set[str] = set()  # one legend entry per label, whatever the flows
    for i, flow in enumerate(flows):
        row = paper[paper["flow"].astype(str) == flow]
        if not row.empty:
            label = str(row["label"].iloc[0])
            ax.scatter(
                [i] * len(row),
                row["util_pct"],
                s=40,
                marker="x",
                color="black",
                label=None if label in labelled else label,
                zorder=5,
            )
            labelled.add(label)


def png_bytes(fig: Figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes (what the explorer's image shows)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
