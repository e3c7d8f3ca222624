"""The papers' stated values drawn on the figures that have them.

The values live in ``tcprepro.reference`` (``paper_marks.csv``, read by
:func:`tcprepro.reference.stated`): one row per value a paper states for a catalogue
figure, with the cell it belongs to, the quantity in the figure's unit, the value or the
stated range, the claim quoting the sentence and where in the paper the sentence is.
Figures look their marks up by catalogue id and cell; nothing here holds a number.

One style everywhere: a stated value is a black diamond, a stated range a black bar
between its ends, a bound a black triangle pointing away from the allowed side; the
caption sentence (:func:`caption`) says what the marks are and cites the claims.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from tcprepro.reference import Mark, stated, stated_for

__all__ = ["Mark", "caption", "draw", "stated", "stated_for"]

#: the marks' colour and marker size (points)
COLOUR = "black"
SIZE = 5.0


def draw(ax: Axes, x: float, mark: Mark, *, scale: float = 1.0) -> list[object]:
    """Draw ``mark`` at ``x`` on ``ax`` (values times ``scale``); the artists drawn."""
    if np.isfinite(mark.value):
        return ax.plot([x], [mark.value * scale], "D", color=COLOUR, ms=SIZE, zorder=5)
    low, high = mark.low * scale, mark.high * scale
    if np.isfinite(low) and np.isfinite(high):
        return [ax.vlines(x, low, high, color=COLOUR, lw=2.0, zorder=5)]
    if np.isfinite(low):
        return ax.plot([x], [low], "^", color=COLOUR, ms=SIZE, zorder=5)
    return ax.plot([x], [high], "v", color=COLOUR, ms=SIZE, zorder=5)


def caption(drawn: list[Mark]) -> str:
    """The caption sentence for the marks drawn on a figure ('' when none)."""
    if not drawn:
        return ""
    claims = sorted({m.claim for m in drawn})
    return (
        "Black marks: the values the paper states in its text (diamond: a value, bar: a "
        "range, triangle: a bound), quoted by "
        f"{', '.join(claims)} (src/tcprepro/reference/paper_marks.csv)."
    )
