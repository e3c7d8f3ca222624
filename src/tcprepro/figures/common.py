"""What every figure shares: saving, the "nothing to draw" panel, styles and sizes.

Figures never run a simulation and never hard-code a number: they draw what the
analysis modules (:mod:`tcprepro.analysis`) compute from combined datasets.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from tcprepro.latex import write_tabular

__all__ = ["empty_panel", "save_figure", "save_table"]


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


def save_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a table the paper includes (a booktabs ``tabular``), atomically."""
    return write_tabular(frame, path)
