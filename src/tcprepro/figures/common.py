"""What every figure shares: style and print size, what was drawn, saving, empty panels.

Figures never run a simulation and never hard-code a number: they draw what the
analysis modules (:mod:`tcprepro.analysis`) compute from combined datasets.

Print size
----------
The report includes every figure at its natural size (scaled down only if it would
not fit), so a figure is made at most :data:`TEXT_WIDTH_IN` wide and
:data:`MAX_HEIGHT_IN` high, and its text is :data:`FONT_PT` points on paper: the
same size in every figure. Importing this module sets matplotlib's text sizes.
A figure's width follows the panels its tier drew, so its title (:func:`suptitle`)
takes the lines that width needs, broken between the title's phrases, and a key under
the panels (:func:`legend_below`) the columns that width holds.

What was drawn
--------------
A drawing function records on its figure what it actually drew (:class:`Drawn`:
panels drawn of panels laid out, cells drawn, and caption statements that depend
on the data, such as error bars, series, rows or marks). :func:`save_figure` writes
that record next to the PDF (``<figure>.json``); the report builds the figure's
caption ending and the at-a-glance status from it (:mod:`tcprepro.paper`), so a
caption never promises something the tier did not draw.

Checked before saving
---------------------
:func:`save_figure` runs :func:`tcprepro.figures.checks.check_figure` on the figure
first: a legend entry naming nothing drawn, a colour scale without its bar, a title
without the catalogue id, text over data, an axis leaving the data a sliver of its
range, colliding texts, a title clipped by the figure's edge or running into a colour
bar, a legend clipped by the figure's edge or covering another panel, or an axis with
one tick label stop the build, naming the figure and the defect, and nothing is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import cbook
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.textpath import TextToPath

from tcprepro.latex import write_tabular

__all__ = [
    "FONT_PT",
    "MAX_HEIGHT_IN",
    "TEXT_WIDTH_IN",
    "Drawn",
    "drawn",
    "empty_panel",
    "legend_below",
    "points_style",
    "record",
    "save_figure",
    "save_table",
    "spread_statement",
    "suptitle",
    "title_lines",
]

#: widest figure: the report's text width (A4, 2 cm margins: 17 cm) less the saved margin
TEXT_WIDTH_IN = 16.8 / 2.54
#: tallest figure the report places with its caption on a page, inches
MAX_HEIGHT_IN = 0.74 * 25.7 / 2.54
#: size of every figure's text on paper, points
FONT_PT = 8.0

mpl.rcParams.update(
    {
        "font.size": FONT_PT,
        "axes.titlesize": FONT_PT,
        "axes.labelsize": FONT_PT,
        "xtick.labelsize": FONT_PT - 1,
        "ytick.labelsize": FONT_PT - 1,
        "legend.fontsize": FONT_PT - 1,
        "legend.title_fontsize": FONT_PT - 1,
        "figure.titlesize": FONT_PT + 1,
        "figure.labelsize": FONT_PT,
        "pdf.fonttype": 42,
    }
)


@dataclass
class Drawn:
    """What a figure drew, recorded by its drawing function (see the module docstring).

    Attributes
    ----------
    panels, panels_drawn
        Panels laid out and panels with data.
    statements
        Caption sentences that depend on what was drawn (plain text; the report
        escapes them), e.g. "Error bars: ±1 standard deviation over 3 repetitions."
    cells_total, cells_drawn
        Cells (sweep points) the figure shows in full, and those drawn; None when
        the report should count them from the figure's dataset and config.
    selection
        Values of the source's sweep dimensions the figure shows (e.g.
        ``{"buffer": [20]}``; a value ``"re:<pattern>"`` matches every value the
        pattern fully matches), for the report's count of the paper's cells.
    not_run
        What the figure would show but this tier did not run (panel titles).
    """

    panels: int = 0
    panels_drawn: int = 0
    statements: list[str] = field(default_factory=list)
    cells_total: int | None = None
    cells_drawn: int | None = None
    selection: dict[str, list[Any]] | None = None
    not_run: list[str] = field(default_factory=list)

    def say(self, *sentences: str) -> Drawn:
        """Add caption sentences (empty ones are skipped)."""
        self.statements += [s for s in sentences if s]
        return self


def record(fig: Figure, facts: Drawn) -> Figure:
    """Attach ``facts`` to ``fig`` (written next to its PDF by :func:`save_figure`)."""
    fig._tcprepro_drawn = facts  # type: ignore[attr-defined]
    return fig


def drawn(fig: Figure) -> Drawn | None:
    """The facts a drawing function recorded on ``fig``, if any."""
    return getattr(fig, "_tcprepro_drawn", None)


def _text_width_pt(text: str, size_pt: float) -> float:
    """Width of one line of ``text`` printed at ``size_pt`` (mathtext between ``$``), points."""
    ismath = cbook.is_math_text(text)
    width, _, _ = TextToPath().get_text_width_height_descent(
        text, FontProperties(size=size_pt), ismath=ismath
    )
    return float(width)


def _phrases(line: str) -> list[str]:
    """A line split after each comma and before each parenthesis outside mathtext.

    The comma stays with its phrase; a parenthesis opens the next one, so that a
    bracketed aside ("(load 50 %, measured 42 %)") starts a line rather than ends one.
    """
    out, start, in_math = [], 0, False
    for i, char in enumerate(line):
        if char == "$" and (i == 0 or line[i - 1] != "\\"):
            in_math = not in_math
        elif in_math or line[i + 1 : i + 2] != " ":
            continue
        elif char == "," or line[i + 2 : i + 3] == "(":
            out.append(line[start : i + 1])
            start = i + 2
    return [*out, line[start:]]


def _words(line: str) -> list[str]:
    """A line split at its spaces outside mathtext."""
    out, start, in_math = [], 0, False
    for i, char in enumerate(line):
        if char == "$" and (i == 0 or line[i - 1] != "\\"):
            in_math = not in_math
        elif char == " " and not in_math:
            out.append(line[start:i])
            start = i + 1
    return [*out, line[start:]]


def _fill_lines(
    text: str, width_in: float, size_pt: float, pieces: Callable[[str], list[str]]
) -> str:
    """``text`` in as few lines as fit ``width_in`` inches, broken between its ``pieces``.

    Each line of ``text`` is split into pieces and joined again by spaces; a piece wider
    than ``width_in`` is a line of its own.
    """
    width_pt = width_in * 72
    lines = []
    for line in text.split("\n"):
        parts = pieces(line)
        current = parts[0]
        for part in parts[1:]:
            candidate = f"{current} {part}"
            if _text_width_pt(candidate, size_pt) <= width_pt:
                current = candidate
            else:
                lines.append(current)
                current = part
        lines.append(current)
    return "\n".join(lines)


def title_lines(text: str, width_in: float, size_pt: float) -> str:
    """``text`` broken into lines between its phrases so that each fits ``width_in`` inches.

    Lines break after a comma or before a parenthesis (outside mathtext), so that
    "C = 10 Mb/s" stays whole;
    each line of ``text`` is broken on its own. A phrase wider than ``width_in`` is a
    line of its own (matplotlib's ``wrap`` then breaks it at its spaces).
    """
    return _fill_lines(text, width_in, size_pt, _phrases)


def wrap_words(text: str, width_in: float, size_pt: float) -> str:
    """``text`` broken between its words so that each line fits ``width_in`` inches.

    For panel titles, which matplotlib never wraps to their panel: a word wider than the
    width is a line of its own; mathtext stays whole.
    """
    return _fill_lines(text, width_in, size_pt, _words)


def fit_panel_titles(fig: Figure, axes: Iterable[Axes], width_in: float) -> None:
    """Break every title of ``axes`` (centre, left, right) between words to ``width_in``."""
    for ax in axes:
        for loc in ("center", "left", "right"):
            title = {"center": ax.title, "left": ax._left_title, "right": ax._right_title}[loc]
            text = title.get_text()
            if text:
                title.set_text(wrap_words(text, width_in, title.get_fontsize()))


def suptitle(fig: Figure, text: str) -> Text:
    """Set the figure's title in the lines the figure's width needs (:func:`title_lines`)."""
    size = FontProperties(size=mpl.rcParams["figure.titlesize"]).get_size_in_points()
    return fig.suptitle(title_lines(text, fig.get_figwidth(), size), wrap=True)


def legend_below(
    fig: Figure, handles: Sequence[Artist], labels: Sequence[str], ncols: int = 5
) -> Legend:
    """A figure legend under the panels, in as many columns as the figure's width holds.

    At most ``ncols`` columns; fewer (more rows) when the legend would be wider than the
    figure, so that a narrow figure (one column of panels) keeps its key within its width.
    """
    renderer = fig._get_renderer()  # any canvas: a notebook's has no get_renderer
    columns = max(1, min(ncols, len(labels)))
    while True:
        legend = fig.legend(list(handles), list(labels), loc="outside lower center", ncols=columns)
        if columns == 1 or legend.get_window_extent(renderer).width <= fig.bbox.width:
            return legend
        legend.remove()  # laid out when made: fewer columns need a new legend
        columns -= 1


def spread_statement(repetitions: int, what: str = "Error bars") -> str:
    """The caption sentence on error bars: a standard deviation only with repetitions."""
    if repetitions > 1:
        return f"{what}: ±1 standard deviation over {repetitions} repetitions."
    return "One repetition: no error bars."


def points_style(n_points: int) -> dict[str, Any]:
    """Line style of a series of ``n_points``: markers only for one or two points."""
    return {"linestyle": "none"} if n_points <= 2 else {}


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
    """Save a figure atomically (format from the suffix), creating the folder.

    What the figure drew (:func:`record`) is written next to it as ``<stem>.json``,
    and a figure without a record gets one that says so
    (``"recorded": false``); the record lists the checks the figure passed
    (``"checked"``) and the digest of its data (``"data_digest"``,
    :func:`~tcprepro.figures.checks.data_digest`).

    Raises
    ------
    tcprepro.figures.checks.FigureDefectError
        When the figure has a defect (:mod:`tcprepro.figures.checks`; the figure's id
        is the file's stem); nothing is written and the figure is closed.
    """
    from tcprepro.figures.checks import CHECKS, check_figure, data_digest

    path = Path(path)
    try:
        check_figure(fig, path.stem)
    except Exception:
        plt.close(fig)
        raise
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    facts = drawn(fig)
    record_ = {
        "recorded": facts is not None,
        **asdict(facts or Drawn()),
        "checked": list(CHECKS),
        "data_digest": data_digest(fig),  # two figures drawing the same data: a repetition
    }
    try:
        fig.savefig(
            tmp, bbox_inches="tight", pad_inches=0.02, format=path.suffix.lstrip(".") or "pdf"
        )
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    sidecar = path.with_suffix(".json")
    sidecar_tmp = sidecar.with_name(f".{sidecar.name}.tmp-{os.getpid()}")
    sidecar_tmp.write_text(json.dumps(record_, indent=1, default=str) + "\n")
    os.replace(sidecar_tmp, sidecar)
    return path


def save_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a table the paper includes (a booktabs ``tabular``), atomically."""
    return write_tabular(frame, path)
