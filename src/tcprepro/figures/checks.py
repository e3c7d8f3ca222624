"""Checks a figure's Matplotlib objects before it is saved, and fails on a defect.

:func:`~tcprepro.figures.common.save_figure` runs :func:`check_figure` on every figure
it saves (the workflow's figures, the claims' trace figures, a notebook's), so a
figure with one of these defects is never written:

``legend``
    A legend entry that names nothing drawn: no artist of the figure with data
    inside its axes carries the entry's label or the entry's style (colour, line style and
    marker of a line; face colour of a patch or a collection). A line lying on an edge of its
    panel (zeros on an axis from zero) is hidden by the spine. A grey or black key stands for
    a style in any colour (e.g. "buffer" dashed), without a marker for any marker.
``colour bar``
    A colour mapping without a colour bar: an artist whose colours encode values
    through a colormap (a :class:`~matplotlib.cm.ScalarMappable` with an array) and
    no colour bar of the same colormap and normalisation.
``title``
    A plot title (the figure's suptitle, or a panel's title when there is no
    suptitle) without its catalogue id: the figure's own id (``A1``, ``B5.10``, ``C3.5``,
    ``D4``...) when it is named by one (then no title at all, if it drew data), else any.
``text over data``
    A text drawn in a panel (an annotation or label, not a title, tick or axis
    label) whose box contains a data point or crosses a drawn line.
``axis range``
    An axis whose range leaves the data (the span of every artist drawn in data
    coordinates, clipped to the panel) in less than a tenth of it. A direction in
    which the data is one value has no span to scale, and is not checked.
``overlapping text``
    Two texts of the figure (tick labels, axis labels, titles, annotations) whose
    boxes overlap: crammed ticks, stacked labels colliding.
``title placement``
    A title (a panel's, the figure's suptitle, or a subfigure's title, axis labels and
    texts: A1's and A3's row and column labels) whose box leaves the figure's, clipped
    by its edge (saved cut to its contents, the file would grow past the width the
    figure was made for, and the report would shrink it), or meets a colour bar's axes.
``legend placement``
    A legend (a panel's, the figure's or a subfigure's) whose box leaves the figure's by
    more than the slack, clipped by its edge (saved cut to its contents, the file would
    grow past the width the figure was made for, and the report would shrink it), or
    covers the axes of a panel other than its own or its twin (a figure legend: of any
    panel), colour bars included.
``ticks``
    A numeric axis of a panel with data that labels fewer than two ticks (a log
    axis with one tick gives no scale); an axis whose ticks the figure places
    itself (categories, the one value of a sweep) names values rather than a scale.

The checks read the objects after a layout pass
(:meth:`~matplotlib.figure.Figure.draw_without_rendering`), in display coordinates,
so a log axis, a blended transform (``axhline``, ``axvspan``) or a constrained
layout is measured as printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from matplotlib import colors as mcolors
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.collections import Collection, LineCollection
from matplotlib.figure import Figure, SubFigure
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.ticker import FixedLocator
from matplotlib.transforms import Bbox

__all__ = [
    "CATALOGUE_ID",
    "CHECKS",
    "DATA_SHARE",
    "Defect",
    "FigureDefectError",
    "check_figure",
    "data_digest",
    "defects",
]

#: a catalogue id (../figure-catalogue.md): a study letter and a number, with an optional
#: dotted sub-number (A1, B5.10, C3.5, D4, X1)
CATALOGUE_ID = re.compile(r"(?<![A-Za-z0-9.])([A-DX]\d+(?:\.\d+)?)(?![0-9])")
#: the checks :func:`check_figure` runs, by name (a saved figure's record lists them)
CHECKS = (
    "legend",
    "colour bar",
    "title",
    "text over data",
    "axis range",
    "overlapping text",
    "title placement",
    "legend placement",
    "ticks",
)
#: the least share of an axis's range the data must span
DATA_SHARE = 0.1
#: overlap below this many display pixels (at the figure's dpi) is a touch, not a defect
_SLACK_PX = 1.0


@dataclass(frozen=True)
class Defect:
    """One defect: its check's name and what is wrong, naming the panel and artist."""

    check: str
    text: str

    def __str__(self) -> str:
        return f"{self.check}: {self.text}"


class FigureDefectError(ValueError):
    """A figure has defects; the message names the figure and lists them."""

    def __init__(self, name: str, found: list[Defect]) -> None:
        self.name = name
        self.defects = found
        lines = "\n".join(f"  - {d}" for d in found)
        super().__init__(f"figure {name} has {len(found)} defect(s):\n{lines}")


def data_digest(fig: Figure) -> str:
    """A digest of the data a figure draws: equal for two figures that draw the same data.

    Over its panels in order (colour bars left out), each data artist's data: a line's
    points, a collection's offsets, paths and mapped array, a patch's outline in data
    units, an image's array; not its titles, labels or styles. ``""`` when it draws no
    data (a figure of panels that say nothing ran).
    """
    import hashlib

    digest = hashlib.sha256()
    drawn_any = False
    for ax in fig.axes:
        if not ax.get_visible() or _is_colourbar(ax):
            continue
        for artist in _data_artists(ax):
            arrays: list[np.ndarray] = []
            if isinstance(artist, Line2D):
                arrays.append(np.asarray(artist.get_xydata(), dtype=float))
            elif isinstance(artist, Collection):
                arrays.append(np.asarray(artist.get_offsets(), dtype=float))
                arrays += [np.asarray(p.vertices, dtype=float) for p in artist.get_paths()]
                mapped = artist.get_array()
                if mapped is not None:
                    arrays.append(np.ma.filled(np.asarray(mapped, dtype=float), np.nan))
            elif isinstance(artist, Patch):
                arrays.append(np.asarray(artist.get_path().vertices, dtype=float))
                arrays.append(np.asarray(artist.get_patch_transform().get_matrix(), dtype=float))
            elif isinstance(artist, AxesImage):
                arrays.append(np.ma.filled(np.asarray(artist.get_array(), dtype=float), np.nan))
            for array in arrays:
                if array.size:
                    drawn_any = True
                digest.update(type(artist).__name__.encode())
                digest.update(np.ascontiguousarray(np.round(array, 12)).tobytes())
        digest.update(b"|")
    return digest.hexdigest() if drawn_any else ""


def check_figure(fig: Figure, name: str) -> None:
    """Raise :class:`FigureDefectError` when ``fig`` (saved as ``name``) has a defect."""
    found = defects(fig, name)
    if found:
        raise FigureDefectError(name, found)


def defects(fig: Figure, name: str) -> list[Defect]:
    """Every defect of ``fig`` (see the module doc); ``name``: its file's stem."""
    fig.draw_without_rendering()
    renderer = fig._get_renderer()  # any canvas: a notebook's has no get_renderer
    panels = [ax for ax in fig.axes if ax.get_visible() and not _is_colourbar(ax)]
    found: list[Defect] = []
    found += _legend_defects(fig, panels)
    found += _colour_bar_defects(fig, panels)
    found += _title_defects(fig, panels, name)
    for ax in panels:
        found += _text_over_data(ax, renderer)
        found += _range_defects(ax)
        found += _tick_defects(ax, renderer)
    found += _overlapping_text(fig, renderer)
    found += _title_placement(fig, panels, renderer)
    found += _legend_placement(fig, panels, renderer)
    return found


# ---------------------------------------------------------------- what is drawn


def _is_colourbar(ax: Axes) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _panel_name(ax: Axes) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_ylabel()
    index = ax.figure.axes.index(ax) + 1 if ax.figure is not None else 0
    return f"panel {index}" + (f" ({title!r})" if title else "")


def _data_artists(ax: Axes) -> Iterator[Artist]:
    """The visible artists of a panel that draw data (lines, collections, patches, images)."""
    for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.images]:
        if artist.get_visible():
            yield artist


def _is_marker_collection(artist: Collection) -> bool:
    """A scatter-like collection: marker paths placed at offsets, the paths not in data units.

    (Lines and polygons, such as ``vlines`` or ``fill_between``, carry their data in their
    paths and no offsets.)
    """
    if artist.axes is None or isinstance(artist, LineCollection):
        return False
    offsets = np.asarray(artist.get_offsets(), dtype=float)
    if offsets.size == 0 or not np.any(offsets):
        return False
    try:
        in_data = artist.get_transform().contains_branch_seperately(artist.axes.transData)
    except ValueError:
        in_data = (artist.get_transform().contains_branch(artist.axes.transData),) * 2
    return not any(in_data)


def _in_data(artist: Artist, ax: Axes) -> tuple[bool, bool]:
    """Whether the artist's x and its y are data coordinates of ``ax``."""
    transform = artist.get_transform()
    if isinstance(artist, Collection) and _is_marker_collection(artist):
        transform = artist.get_offset_transform()
    try:
        x, y = transform.contains_branch_seperately(ax.transData)
    except ValueError:
        x = y = transform.contains_branch(ax.transData)
    return bool(x), bool(y)


def _display_points(artist: Artist) -> np.ndarray:
    """The artist's data points in display coordinates, an (n, 2) array (finite only)."""
    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float)
        if xy.size == 0:
            return np.empty((0, 2))
        points = artist.get_transform().transform(xy)
    elif isinstance(artist, Collection):
        if _is_marker_collection(artist):
            offsets = np.asarray(artist.get_offsets(), dtype=float)
            points = artist.get_offset_transform().transform(offsets)
        else:
            transform = artist.get_transform()
            chunks = [
                transform.transform(np.asarray(p.vertices, dtype=float))
                for p in artist.get_paths()
                if len(p.vertices)
            ]
            points = np.concatenate(chunks) if chunks else np.empty((0, 2))
    elif isinstance(artist, Patch):
        path = artist.get_path()
        points = artist.get_transform().transform(np.asarray(path.vertices, dtype=float))
    elif isinstance(artist, AxesImage):
        if artist.get_array() is None:
            return np.empty((0, 2))
        x0, x1, y0, y1 = artist.get_extent()
        points = artist.axes.transData.transform([[x0, y0], [x1, y1]])
    else:
        return np.empty((0, 2))
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    return points[np.isfinite(points).all(axis=1)]


def _inside(points: np.ndarray, box: Bbox, slack: float = _SLACK_PX) -> np.ndarray:
    return (
        (points[:, 0] >= box.x0 - slack)
        & (points[:, 0] <= box.x1 + slack)
        & (points[:, 1] >= box.y0 - slack)
        & (points[:, 1] <= box.y1 + slack)
    )


def _has_data_inside(artist: Artist, ax: Axes) -> bool:
    """Whether the artist draws data a reader can see inside the panel.

    A line every point of which lies on one edge of the panel (a series of zeros on an
    axis starting at zero) hides under the spine: it is not seen.
    """
    points = _display_points(artist)
    if isinstance(artist, AxesImage):
        return points.size > 0
    if not points.size:
        return False
    points = points[_inside(points, ax.bbox)]
    if not points.size:
        return False
    if isinstance(artist, Line2D) and _no(str(artist.get_marker())):
        box, edge = ax.bbox, 1.5
        for d, low, high in ((0, box.x0, box.x1), (1, box.y0, box.y1)):
            if (np.abs(points[:, d] - low) <= edge).all() or (
                np.abs(points[:, d] - high) <= edge
            ).all():
                return False
    return True


# ---------------------------------------------------------------- legend


def _figure_legends(fig: Figure | SubFigure) -> list[Legend]:
    """The legends of the figure and of its subfigures (``fig.legends`` holds only its own)."""
    return [*fig.legends, *(leg for sub in fig.subfigs for leg in _figure_legends(sub))]


def _legends(fig: Figure, panels: Iterable[Axes]) -> Iterator[Legend]:
    for legend in [*_figure_legends(fig), *(ax.get_legend() for ax in panels)]:
        if legend is not None and legend.get_visible():
            yield legend


def _rgba(colour: object) -> tuple[float, ...] | None:
    try:
        return tuple(np.round(mcolors.to_rgba(colour), 3))  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return None


def _grey(rgba: tuple[float, ...] | None) -> bool:
    return rgba is not None and max(rgba[:3]) - min(rgba[:3]) < 0.02


def _artist_colours(artist: Artist) -> list[tuple[float, ...] | None]:
    if isinstance(artist, Line2D):
        return [_rgba(artist.get_color()), _rgba(artist.get_markerfacecolor())]
    if isinstance(artist, Collection):
        out = [_rgba(c) for c in np.atleast_2d(artist.get_facecolor())]
        out += [_rgba(c) for c in np.atleast_2d(artist.get_edgecolor())]
        return [c for c in out if c is not None and c[3] > 0]
    if isinstance(artist, Patch):
        return [_rgba(artist.get_facecolor()), _rgba(artist.get_edgecolor())]
    return []


def _line_style(artist: Artist) -> tuple[str, str]:
    if isinstance(artist, Line2D):
        return str(artist.get_linestyle()), str(artist.get_marker())
    return "", ""


def _no(style: str) -> bool:
    return style in ("None", "none", "", " ")


def _matches_key(handle: Artist, artist: Artist) -> bool:
    """Whether a drawn artist has the style of a legend key (see the module doc)."""
    key_colours = [c for c in _artist_colours(handle) if c is not None and c[3] > 0]
    if not key_colours:
        return False
    if isinstance(handle, Line2D):
        style, marker = _line_style(handle)
        if isinstance(artist, Line2D):
            drawn_style, drawn_marker = _line_style(artist)  # a grey key: see the module doc
            style_only = _no(marker) and not _no(style) and all(map(_grey, key_colours))
            if style != drawn_style or (marker != drawn_marker and not style_only):
                return False
        elif isinstance(artist, LineCollection):
            if not (_no(marker) or marker == "|"):
                return False
        elif isinstance(artist, Collection):
            if _no(marker):
                return False
        else:
            return False
    elif isinstance(handle, Patch):
        if not isinstance(artist, Patch | Collection) or isinstance(artist, LineCollection):
            return False
    elif not isinstance(artist, Collection):
        return False
    colours = _artist_colours(artist)
    if all(_grey(c) for c in key_colours):
        return True
    return any(k == c for k in key_colours for c in colours)


def _legend_defects(fig: Figure, panels: list[Axes]) -> list[Defect]:
    drawn = [(a, ax) for ax in panels for a in _data_artists(ax)]
    with_data = [(a, ax) for a, ax in drawn if _has_data_inside(a, ax)]
    out = []
    for legend in _legends(fig, panels):
        where = "legend" if legend.axes is not None else "figure legend"
        for text, handle in zip(legend.texts, legend.legend_handles, strict=False):
            label = text.get_text()
            if not label or not text.get_visible():
                continue
            named = [a for a, _ in drawn if a.get_label() == label]
            if any(a for a, ax in with_data if a.get_label() == label):
                continue
            # a key's style stands for drawn artists only when no artist carries its label
            if (
                not named
                and handle is not None
                and any(_matches_key(handle, a) for a, _ in with_data)
            ):
                continue
            why = (
                "its artist has no data inside the axes"
                if named
                else "no drawn artist has its label or its style"
            )
            out.append(Defect("legend", f"{where} entry {label!r}: {why}"))
    return out


# ---------------------------------------------------------------- colour bar


def _mappables(ax: Axes) -> Iterator[ScalarMappable]:
    for artist in [*ax.collections, *ax.images]:
        array = artist.get_array() if isinstance(artist, ScalarMappable) else None
        if array is not None and np.asarray(array).size and artist.get_visible():
            yield artist


def _colour_bar_defects(fig: Figure, panels: list[Axes]) -> list[Defect]:
    bars = [ax._colorbar for ax in fig.axes if _is_colourbar(ax)]
    keys = {(id(bar.cmap), id(bar.norm)) for bar in bars}
    named = {(bar.cmap.name, _norm_key(bar.norm)) for bar in bars}
    out = []
    for ax in panels:
        for mappable in _mappables(ax):
            if getattr(mappable, "colorbar", None) is not None:
                continue
            if (id(mappable.cmap), id(mappable.norm)) in keys:
                continue
            if (mappable.cmap.name, _norm_key(mappable.norm)) in named:
                continue
            label = mappable.get_label() if isinstance(mappable, Artist) else ""
            what = f" {label!r}" if label and not label.startswith("_") else ""
            out.append(
                Defect(
                    "colour bar",
                    f"{_panel_name(ax)}: colours{what} encode values with colormap "
                    f"{mappable.cmap.name!r} and no colour bar shows the scale",
                )
            )
    return out


def _norm_key(norm: mcolors.Normalize) -> tuple[object, ...]:
    return (type(norm).__name__, _round(norm.vmin), _round(norm.vmax))


def _round(value: float | None) -> float | None:
    return None if value is None else float(f"{float(value):.6g}")


# ---------------------------------------------------------------- title


def _title_texts(fig: Figure, panels: list[Axes]) -> list[tuple[str, str]]:
    suptitle = fig._suptitle
    if suptitle is not None and suptitle.get_text().strip():
        return [("suptitle", suptitle.get_text())]
    out = []
    for ax in panels:
        for loc in ("center", "left", "right"):
            title = ax.get_title(loc).strip()
            if title:
                out.append((f"title of panel {fig.axes.index(ax) + 1}", title))
    return out


def _title_defects(fig: Figure, panels: list[Axes], name: str) -> list[Defect]:
    titles, own = _title_texts(fig, panels), CATALOGUE_ID.fullmatch(name)
    if not titles:  # a placeholder of a figure not run (no data drawn) needs none
        drew = any(next(_data_artists(ax), None) is not None for ax in panels)
        return [Defect("title", f"no title names the figure's id {name}")] if own and drew else []
    if any(t[0] == "suptitle" for t in titles):
        checked = titles
    else:  # panel titles: the figure's id in one of them (the first panel's, usually)
        if any(_has_id(text, own) for _, text in titles):
            return []
        checked = titles[:1]
    wanted = f"the figure's id {name}" if own else "a catalogue id"
    return [
        Defect("title", f"{where} {text!r} lacks {wanted}")
        for where, text in checked
        if not _has_id(text, own)
    ]


def _has_id(text: str, own: re.Match[str] | None) -> bool:
    ids = CATALOGUE_ID.findall(text)
    return own.group(0) in ids if own else bool(ids)


# ---------------------------------------------------------------- title placement


def _titles(fig: Figure, panels: list[Axes]) -> Iterator[tuple[str, Text]]:
    """Every title the figure prints, with where it is (its subfigures' labels included)."""
    suptitle = fig._suptitle
    if suptitle is not None:
        yield "suptitle", suptitle
    for ax in panels:
        for title in (ax.title, ax._left_title, ax._right_title):
            yield f"title of panel {fig.axes.index(ax) + 1}", title
    yield from _subfigure_texts(fig)


#: a figure's (or subfigure's) own title and shared axis labels, and what each is
_FIGURE_LABELS = (("_suptitle", "title"), ("_supxlabel", "x label"), ("_supylabel", "y label"))


def _subfigure_texts(fig: Figure | SubFigure, where: str = "") -> Iterator[tuple[str, Text]]:
    """Subfigures' titles, axis labels (A1's rows and columns) and texts, named by place."""
    for k, sub in enumerate(fig.subfigs, start=1):
        name = f"{where}.{k}" if where else str(k)
        named = []
        for attr, what in _FIGURE_LABELS:
            text = getattr(sub, attr, None)
            if text is not None:
                named.append(text)
                yield f"subfigure {name}'s {what}", text
        for text in sub.texts:  # which hold the labels too
            if not any(text is label for label in named):
                yield f"subfigure {name}'s text", text
        yield from _subfigure_texts(sub, name)


def _beyond(box: Bbox, page: Bbox) -> Iterator[tuple[str, float]]:
    """Each edge of ``page`` that ``box`` crosses by more than the slack, and by how much (px)."""
    beyond = {
        "left": page.x0 - box.x0,
        "right": box.x1 - page.x1,
        "bottom": page.y0 - box.y0,
        "top": box.y1 - page.y1,
    }
    for edge, pixels in beyond.items():
        if pixels > _SLACK_PX:
            yield edge, pixels


def _title_placement(fig: Figure, panels: list[Axes], renderer: object) -> list[Defect]:
    """Titles past the figure's edges (by more than the slack) or over a colour bar."""
    page = fig.bbox
    bars = [ax for ax in fig.axes if ax.get_visible() and _is_colourbar(ax)]
    out = []
    for where, title in _titles(fig, panels):
        text = title.get_text().strip()
        if not text or not title.get_visible():
            continue
        box = title.get_window_extent(renderer)
        if box.width <= 0 or box.height <= 0:
            continue
        for edge, pixels in _beyond(box, page):
            out.append(
                Defect(
                    "title placement",
                    f"{where}: {text!r} leaves the figure by its {edge} edge "
                    f"({pixels:.0f} px clipped)",
                )
            )
        for bar in bars:
            overlap = Bbox.intersection(box, bar.get_window_extent(renderer))
            if overlap is None or min(overlap.width, overlap.height) <= _SLACK_PX:
                continue
            label = bar.get_ylabel() or bar.get_xlabel()
            named = f" ({label!r})" if label else ""
            out.append(
                Defect("title placement", f"{where}: {text!r} runs into the colour bar{named}")
            )
    return out


# ---------------------------------------------------------------- legend placement


def _legend_placement(fig: Figure, panels: list[Axes], renderer: object) -> list[Defect]:
    """Legends past the figure's edges (by more than the slack) or over another panel."""
    page = fig.bbox
    others = [ax for ax in fig.axes if ax.get_visible()]
    out = []
    for legend in _legends(fig, panels):
        own = legend.axes  # None: a figure's (or a subfigure's) legend
        where = "figure legend" if own is None else f"legend of {_panel_name(own)}"
        box = legend.get_window_extent(renderer)
        if box.width <= 0 or box.height <= 0:
            continue
        for edge, pixels in _beyond(box, page):
            out.append(
                Defect(
                    "legend placement",
                    f"{where} leaves the figure by its {edge} edge "
                    f"({pixels / fig.dpi:.2f} in clipped)",
                )
            )
        for ax in others:
            if own is not None and np.allclose(ax.bbox.bounds, own.bbox.bounds):
                continue  # its own panel, or a twin of it (a second y axis)
            overlap = Bbox.intersection(box, ax.bbox)
            if overlap is None or min(overlap.width, overlap.height) <= _SLACK_PX:
                continue
            label = ax.get_ylabel() or ax.get_xlabel()
            bar = "the colour bar" + (f" ({label!r})" if label else "")
            what = bar if _is_colourbar(ax) else _panel_name(ax)
            out.append(Defect("legend placement", f"{where} covers {what}"))
    return out


# ---------------------------------------------------------------- text over data


def _panel_texts(ax: Axes) -> Iterator[Text]:
    for text in ax.texts:
        if text.get_visible() and text.get_text().strip():
            yield text


def _text_over_data(ax: Axes, renderer: object) -> list[Defect]:
    artists = [a for a in _data_artists(ax) if not isinstance(a, AxesImage | Patch)]
    out = []
    for text in _panel_texts(ax):
        box = text.get_window_extent(renderer).shrunk(0.98, 0.9)
        for artist in artists:
            if _crosses(artist, box):
                label = artist.get_label()
                what = f" of {label!r}" if label and not label.startswith("_") else ""
                out.append(
                    Defect(
                        "text over data",
                        f"{_panel_name(ax)}: text {text.get_text()!r} covers data{what}",
                    )
                )
                break
    return out


def _marker_radius_px(artist: Artist) -> float:
    """Half a marker's size in display pixels (0 for a line without markers)."""
    figure = artist.get_figure()
    dpi = figure.dpi if figure is not None else 72.0
    if isinstance(artist, Line2D):
        if _no(str(artist.get_marker())):
            return 0.0
        return float(artist.get_markersize()) * dpi / 72.0 / 2
    if isinstance(artist, Collection) and _is_marker_collection(artist):
        sizes = np.asarray(artist.get_sizes(), dtype=float)
        return float(np.sqrt(sizes.max())) * dpi / 72.0 / 2 if sizes.size else 0.0
    return 0.0


def _crosses(artist: Artist, box: Bbox) -> bool:
    points = _display_points(artist)
    if points.size == 0:
        return False
    if _inside(points, box, slack=_marker_radius_px(artist)).any():
        return True
    if isinstance(artist, Line2D) and not _no(str(artist.get_linestyle())):
        path = artist.get_transform().transform_path(artist.get_path())
        return bool(path.intersects_bbox(box, filled=False))
    return False


# ---------------------------------------------------------------- axis range


def _range_defects(ax: Axes) -> list[Defect]:
    box = ax.bbox
    lows, highs = [np.inf, np.inf], [-np.inf, -np.inf]
    for artist in _data_artists(ax):
        in_data = _in_data(artist, ax)
        points = _display_points(artist)
        if points.size == 0:
            continue
        points = points[_inside(points, box)]
        for d in (0, 1):
            if in_data[d] and points.size:
                lows[d] = min(lows[d], float(points[:, d].min()))
                highs[d] = max(highs[d], float(points[:, d].max()))
    out = []
    for d, axis, size in ((0, "x", box.width), (1, "y", box.height)):
        span = highs[d] - lows[d]
        if not np.isfinite(span) or span <= _SLACK_PX or size <= 0:
            continue  # no data, or one value: nothing to scale
        share = span / size
        if share < DATA_SHARE:
            view = ax.get_xlim() if d == 0 else ax.get_ylim()
            out.append(
                Defect(
                    "axis range",
                    f"{_panel_name(ax)}: the data spans {share * 100:.1f} % of the {axis} axis "
                    f"({view[0]:.3g} to {view[1]:.3g}; at least {DATA_SHARE * 100:g} % wanted)",
                )
            )
    return out


# ---------------------------------------------------------------- ticks


def _tick_defects(ax: Axes, renderer: object) -> list[Defect]:
    if not any(_has_data_inside(a, ax) for a in _data_artists(ax)):
        return []
    out = []
    for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        if not axis.get_visible() or axis.get_scale() not in ("linear", "log", "symlog"):
            continue
        if _categorical(axis) or isinstance(axis.get_major_locator(), FixedLocator):
            continue  # labels naming the values drawn (categories, a swept value)
        ticks = [*axis.get_major_ticks(), *axis.get_minor_ticks()]
        if not any(t.label1.get_visible() for t in ticks):
            continue  # tick labels hidden (a shared axis): the neighbour labels it
        labelled = {
            text.get_text()
            for text in _tick_labels(axis)
            if text.get_visible() and text.get_text().strip()
        }
        if len(labelled) < 2:
            out.append(
                Defect(
                    "ticks",
                    f"{_panel_name(ax)}: the {axis.get_scale()} {name} axis labels "
                    f"{len(labelled)} tick(s); a scale needs two",
                )
            )
    return out


def _categorical(axis: object) -> bool:
    units = getattr(axis, "units", None)
    return units is not None and type(units).__name__ == "UnitData"


# ---------------------------------------------------------------- overlapping text


def _drawn_texts(fig: Figure) -> Iterator[Text]:
    """The texts a figure prints: its own, its subfigures', each panel's (titles, ticks...).

    A tick label counts only for a tick inside the view (matplotlib keeps labels of
    ticks outside it, never drawn); a legend lays out its own texts.
    """
    yield from fig.texts
    for attribute, _ in _FIGURE_LABELS:
        text = getattr(fig, attribute, None)
        if text is not None:
            yield text
    yield from (text for _, text in _subfigure_texts(fig))
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        yield from (ax.title, ax._left_title, ax._right_title)
        yield from ax.texts
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            yield axis.label
            yield axis.offsetText
            yield from _tick_labels(axis)


def _tick_labels(axis: object) -> Iterator[Text]:
    """The labels of an axis's ticks inside its view (both sides)."""
    low, high = sorted(axis.get_view_interval())  # type: ignore[attr-defined]
    slack = 1e-9 * max(abs(low), abs(high), 1e-300)
    for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:  # type: ignore[attr-defined]
        if low - slack <= tick.get_loc() <= high + slack:
            yield from (tick.label1, tick.label2)


def _figure_texts(fig: Figure, renderer: object) -> list[tuple[str, Bbox]]:
    out, seen = [], set()
    for text in _drawn_texts(fig):
        if id(text) in seen or not text.get_visible() or not text.get_text().strip():
            continue
        seen.add(id(text))
        box = text.get_window_extent(renderer)
        if box.width <= 0 or box.height <= 0:
            continue
        out.append((text.get_text(), box))
    return out


def _overlapping_text(fig: Figure, renderer: object) -> list[Defect]:
    texts = _figure_texts(fig, renderer)
    out = []
    seen = set()
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            overlap = Bbox.intersection(box_a, box_b)
            if overlap is None or min(overlap.width, overlap.height) <= _SLACK_PX:
                continue
            key = (a, b)
            if key in seen:
                continue
            seen.add(key)
            out.append(Defect("overlapping text", f"{a!r} overlaps {b!r}"))
    return out
