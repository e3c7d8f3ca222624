"""The figure checks (tcprepro.figures.checks): each fails on a fixture of its defect, drawn
here as the report drew it, and passes the same figure drawn right."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.lines import Line2D

from tcprepro.figures.checks import FigureDefectError, check_figure, defects
from tcprepro.figures.common import legend_below, save_figure, suptitle, title_lines


def _checks(fig, name="B5.1", untitled_ok=True):
    """The checks a figure fails; a figure without any title passes unless ``untitled_ok``
    is False (the tests of the other checks draw untitled panels)."""
    found = defects(fig, name)
    if untitled_ok:
        found = [d for d in found if not d.text.startswith("no title")]
    plt.close(fig)
    return [d.check for d in found], [d.text for d in found]


def _time_series(ax, label="flow 1 (Reno)"):
    t = np.linspace(0, 10, 200)
    ax.plot(t, 20 + 10 * np.sin(t), label=label)
    return t


def test_a_legend_entry_matching_nothing_drawn_fails():
    """B5.1's "background" entry, dotted, where no dotted line is drawn."""
    fig, ax = plt.subplots()
    _time_series(ax)
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], color="C1", ls=":"))
    labels.append("background")
    ax.legend(handles, labels)
    checks, texts = _checks(fig)
    assert checks == ["legend"]
    assert "'background'" in texts[0]


def test_a_grey_line_style_key_stands_for_its_style_drawn_with_any_marker():
    """C3.5's buffer keys: a grey dashed line without a marker names the dashed curves,
    whose markers are their protocols'; where no curve is dashed the key still fails."""
    for dashed, expected in ((True, []), (False, ["legend"])):
        fig, ax = plt.subplots(layout="constrained")
        x = np.array([14.0, 120.0, 650.0])
        ax.plot(x, [0.1, 0.2, 0.3], color="C0", marker="o", label="CUBIC")
        ax.plot(x, [0.2, 0.3, 0.4], color="C0", marker="o", ls="--" if dashed else ":")
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], color="0.3", ls="--"))
        labels.append("1 BDP")
        fig.legend(handles, labels, loc="outside right center")
        checks, texts = _checks(fig, "C3.5")
        assert checks == expected, texts
        if expected:
            assert "'1 BDP'" in texts[0]


def test_a_legend_entry_whose_line_has_no_data_inside_the_axes_fails():
    """B5.3/C3.5/D4: a labelled line of NaNs (a variant not run) still listed."""
    fig, ax = plt.subplots()
    _time_series(ax)
    ax.plot([0, 1], [np.nan, np.nan], label="HSTCP")
    ax.legend()
    checks, texts = _checks(fig)
    assert checks == ["legend"]
    assert "'HSTCP'" in texts[0]
    assert "no data inside the axes" in texts[0]


def test_a_legend_entry_whose_line_hides_under_the_spine_fails():
    """B5.1's dotted "background" loss rate: zeros on an axis starting at zero."""
    fig, ax = plt.subplots()
    t = np.arange(7.0)
    ax.plot(t, [0, 0, 0.02, 0.13, 0.01, 0, 0], color="tab:red", label="bottlenecked")
    ax.plot(t, np.zeros_like(t), color="tab:blue", ls=":", label="background")
    ax.set_ylim(0, 0.15)
    ax.legend()
    checks, texts = _checks(fig)
    assert checks == ["legend"]
    assert "'background'" in texts[0]


def test_a_labelled_line_under_the_spine_fails_though_another_line_has_its_style():
    """A trace figure's "queue" (empty: zeros) in the colour of the flow's cwnd line."""
    fig, (left, right) = plt.subplots(1, 2)
    _time_series(left, label="f0 (NewReno)")
    right.plot([0, 5, 10], [0, 0, 0], color="C0", label="queue: bottleneck")
    right.set_ylim(0, 100)
    (h1, l1), (h2, l2) = (ax.get_legend_handles_labels() for ax in (left, right))
    fig.legend([*h1, *h2], [*l1, *l2])
    checks, texts = _checks(fig, "D-c3")
    assert checks == ["legend"]
    assert "'queue: bottleneck'" in texts[0]


def test_a_legend_entry_outside_the_axes_range_fails():
    fig, ax = plt.subplots()
    _time_series(ax)
    ax.plot([20, 30], [20, 25], label="late flow")
    ax.set_xlim(0, 10)
    ax.legend()
    assert _checks(fig)[0] == ["legend"]


def test_a_style_key_in_grey_names_dashed_lines_of_any_colour():
    """why.py's "buffer" key: grey dashed, standing for each queue's coloured dashed line."""
    fig, ax = plt.subplots()
    _time_series(ax)
    ax.axhline(25, color="C0", ls="--")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend([*handles, Line2D([], [], color="0.3", ls="--")], [*labels, "buffer"])
    assert _checks(fig)[0] == []


@pytest.mark.parametrize("losses", [True, False])
def test_a_loss_tick_key_needs_loss_ticks(losses):
    """The trace figures' "loss / drop" key: ticks (vlines at the top) or no entry."""
    fig, ax = plt.subplots()
    _time_series(ax)
    if losses:
        ax.vlines([2.0, 5.0], 0.9, 0.98, transform=ax.get_xaxis_transform(), colors=["C0"])
    key = Line2D([], [], color="0.3", marker="|", ls="none")
    fig.legend([key], ["loss / drop"])
    assert _checks(fig, "B-c5")[0] == ([] if losses else ["legend"])


def test_a_colour_mapping_without_colour_bar_fails():
    """B5.1's per-flow loss picture: the colour is the loss rate, and no bar gives its scale."""
    fig, ax = plt.subplots()
    x = np.arange(10.0)
    ax.scatter(x, x**0.5, c=np.linspace(0.001, 0.02, 10), cmap="viridis")
    checks, texts = _checks(fig)
    assert checks == ["colour bar"]
    assert "'viridis'" in texts[0]

    fig, ax = plt.subplots()
    points = ax.scatter(x, x**0.5, c=np.linspace(0.001, 0.02, 10), cmap="viridis")
    fig.colorbar(points, ax=ax, label="loss rate")
    assert _checks(fig)[0] == []


def test_one_colour_bar_serves_every_mapping_of_its_scale():
    fig, axes = plt.subplots(1, 2)
    norm = matplotlib.colors.Normalize(0, 1)
    grid = np.random.default_rng(1).random((4, 4))
    images = [ax.imshow(grid, cmap="magma", norm=norm) for ax in axes]
    fig.colorbar(images[0], ax=axes)
    assert _checks(fig, "B5.16")[0] == []


@pytest.mark.parametrize(
    ("title", "suptitle", "fails"),
    [
        ("Throughput against loss rate", None, True),  # B5.12 today
        ("B5.12: throughput against loss rate", None, False),
        ("B = 20", "Reno vs Westwood+ over (ρ_b, B), C = 50 Mb/s", True),  # B5.14 today
        ("B = 20", "B5.14 — Reno vs Westwood+, C = 50 Mb/s", False),
        ("B = 20", "B5.15 — Reno vs Westwood+, C = 100 Mb/s", True),  # another figure's id
        ("", None, True),  # no title at all (D2, D2.1, D4 today)
        ("", "B5.14: Reno vs Westwood+", False),
    ],
)
def test_a_title_without_the_figures_catalogue_id_fails(title, suptitle, fails):
    fig, ax = plt.subplots()
    _time_series(ax)
    if title:
        ax.set_title(title)
    if suptitle:
        fig.suptitle(suptitle)
    checks, _ = _checks(fig, "B5.12" if suptitle is None else "B5.14", untitled_ok=False)
    assert checks == (["title"] if fails else [])


def test_the_placeholder_of_a_figure_not_run_needs_no_title():
    """B5.2 at the smoke tier: none of its cases ran; its small stand-in draws no data."""
    from tcprepro.figures.study_b_common import _nothing_run

    assert _checks(_nothing_run("B5.2", 6), "B5.2", untitled_ok=False)[0] == []


def test_a_trace_figure_named_by_a_claim_needs_some_catalogue_id_in_its_title():
    fig, ax = plt.subplots()
    _time_series(ax)
    ax.set_title("Westwood+ at B = 20")
    assert _checks(fig, "B-c5")[0] == ["title"]
    fig, ax = plt.subplots()
    _time_series(ax)
    ax.set_title("B5.10: Westwood+ at B = 20")
    assert _checks(fig, "B-c5")[0] == []


B53_TITLE = "B5.3: background transfers in progress (load 50 %, measured 42 %)"


def test_a_title_wider_than_its_figure_fails():
    """B5.3 at the smoke tier: one column of panels, 2.6 in wide, under a one-line title."""
    fig, ax = plt.subplots(figsize=(2.6, 2.5), layout="constrained")
    _time_series(ax)
    fig.suptitle(B53_TITLE)
    checks, texts = _checks(fig, "B5.3")
    assert checks == ["title placement", "title placement"]
    assert "suptitle" in texts[0]
    assert {t.split(" by its ")[1].split()[0] for t in texts} == {"left", "right"}

    fig, ax = plt.subplots(figsize=(2.6, 2.5), layout="constrained")
    _time_series(ax)
    suptitle(fig, B53_TITLE)
    assert _checks(fig, "B5.3")[0] == []


def test_a_panel_title_past_the_figures_edge_fails():
    """B5.12: one 3.4-in panel, its title past the figure's right edge."""
    title = "B5.12: B = 20 packets, C = 50 Mb/s, PFQ/LQD, $\\rho_b$ = 50 %"
    fig, ax = plt.subplots(figsize=(3.4, 2.5), layout="constrained")
    _time_series(ax)
    ax.set_ylabel("loss rate of the flow")
    ax.set_title(title)
    checks, texts = _checks(fig, "B5.12")
    assert checks == ["title placement"]
    assert texts[0].startswith("title of panel 1: ")
    assert "by its right edge" in texts[0]

    fig, ax = plt.subplots(figsize=(3.4, 2.5), layout="constrained")
    _time_series(ax)
    ax.set_ylabel("loss rate of the flow")
    suptitle(fig, title)
    assert _checks(fig, "B5.12")[0] == []


def test_a_subfigures_label_past_the_figures_edge_fails():
    """A1's and A3's row and column labels are their subfigures' axis labels: a long one
    set past the figure's left edge is found as a panel title would be."""
    fig = plt.figure(figsize=(4.0, 2.5), layout="constrained")
    left, right = fig.subfigures(1, 2)
    for sub in (left, right):
        _time_series(sub.subplots())
    suptitle(fig, "A1: utilisation")
    right.supxlabel("download variant (columns)")
    assert _checks(fig, "A1")[0] == []
    left.supylabel("upload variant (rows): utilisation %", x=-0.4)
    checks, texts = _checks(fig, "A1")
    assert checks == ["title placement"]
    assert texts[0].startswith("subfigure 1's y label: ")
    assert "by its left edge" in texts[0]
    # and a subfigure's label is one of the figure's texts: over another, it is found
    fig = plt.figure(figsize=(4.0, 2.5), layout="constrained")
    left, right = fig.subfigures(1, 2)
    for sub in (left, right):
        _time_series(sub.subplots())
    left.supxlabel("upload variant (rows)", x=0.9)
    right.supxlabel("download variant (columns)", x=0.1)
    checks, texts = _checks(fig, "A1")
    assert checks == ["overlapping text"]
    assert "'upload variant (rows)' overlaps 'download variant (columns)'" in texts[0]


def test_a_title_under_a_colour_bar_fails():
    """A colour bar placed by hand over the panel's top: the title is drawn under it."""
    grid = np.random.default_rng(1).random((4, 4))
    fig, ax = plt.subplots(figsize=(3, 3))
    fig.subplots_adjust(top=0.85)
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    fig.colorbar(image, cax=fig.add_axes((0.3, 0.86, 0.4, 0.04)), orientation="horizontal")
    ax.set_title("B5.14: Reno")
    checks, texts = _checks(fig, "B5.14")
    assert checks == ["title placement"]
    assert "runs into the colour bar" in texts[0]

    fig, ax = plt.subplots(figsize=(3, 3), layout="constrained")
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax, location="top")  # the layout puts the title above it
    ax.set_title("B5.14: Reno")
    assert _checks(fig, "B5.14")[0] == []


def _b53_like(width_in, legend):
    """B5.3 at the smoke tier: one column of two panels, three keys under them."""
    fig, axes = plt.subplots(2, 1, figsize=(width_in, 3.9), squeeze=False, layout="constrained")
    for ax in axes.flat:
        for label, ls in (("Reno, FIFO", "-"), ("Reno, PFQ/LQD", "--"), ("Poisson(25.1)", ":")):
            ax.plot(np.arange(10.0), np.arange(10.0) + len(ls), ls=ls, label=label)
    suptitle(fig, "B5.3: background transfers in progress")
    legend(fig, axes)
    return fig


def _one_row(fig, axes):
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=3)


def test_a_figure_legend_wider_than_its_figure_fails():
    """B5.3 at the smoke tier: a one-row key under a 2.6-in column runs past both edges."""
    checks, texts = _checks(_b53_like(2.6, _one_row), "B5.3")
    assert checks == ["legend placement", "legend placement"]
    assert all(t.startswith("figure legend leaves the figure by its ") for t in texts)
    assert {t.split(" by its ")[1].split()[0] for t in texts} == {"left", "right"}
    assert _checks(_b53_like(5.0, _one_row), "B5.3")[0] == []


def test_the_flow_key_under_the_panels_takes_the_columns_the_width_holds():
    """Study B's key (B5.1-B5.9): fewer columns under one column of panels, one row if wide."""
    from tcprepro.figures.study_b import _flow_legend

    fig = _b53_like(2.6, _flow_legend)
    assert len(fig.legends) == 1
    assert fig.legends[0]._ncols < 3
    assert _checks(fig, "B5.3")[0] == []
    fig = _b53_like(5.0, _flow_legend)
    assert fig.legends[0]._ncols == 3
    assert _checks(fig, "B5.3")[0] == []
    # the same for any key drawn under the panels
    handles = [Line2D([], [], color=f"C{i}") for i in range(6)]
    fig, ax = plt.subplots(figsize=(2.0, 2.0), layout="constrained")
    _time_series(ax)
    legend = legend_below(fig, handles, [f"a long label {i}" for i in range(6)], ncols=6)
    fig.draw_without_rendering()
    assert legend.get_window_extent().width <= fig.bbox.width
    plt.close(fig)


def test_a_panel_legend_past_the_figures_edge_fails():
    """A key anchored right of its panel, in a figure laid out without room for it."""
    fig, ax = plt.subplots(figsize=(3, 2.5))
    _time_series(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    checks, texts = _checks(fig, "B5.4")
    assert checks == ["legend placement"]
    assert texts[0].startswith("legend of panel 1 leaves the figure by its right edge")

    fig, ax = plt.subplots(figsize=(3, 2.5), layout="constrained")
    _time_series(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))  # the layout makes room for it
    assert _checks(fig, "B5.4")[0] == []


def test_a_legend_over_another_panel_fails():
    """A key placed under its panel, over the panel below; or a figure legend on a panel."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3, 4))
    _time_series(top)
    _time_series(bottom, label="flow 2 (Cubic)")
    top.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1))
    checks, texts = _checks(fig, "B5.4")
    assert checks == ["legend placement"]
    assert texts[0] == "legend of panel 1 covers panel 2"

    fig, (left, right) = plt.subplots(1, 2, figsize=(5, 2.5))
    _time_series(left)
    _time_series(right)
    fig.legend(*left.get_legend_handles_labels(), loc="center")  # over the gap: both panels
    checks, texts = _checks(fig, "B5.4")
    assert checks == ["legend placement", "legend placement"]
    assert texts == ["figure legend covers panel 1", "figure legend covers panel 2"]

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3, 4), layout="constrained")
    _time_series(top)
    _time_series(bottom, label="flow 2 (Cubic)")
    top.legend(loc="lower right")  # inside its own panel
    assert _checks(fig, "B5.4")[0] == []
    # a panel's second y axis (C1's queue) is the same panel
    fig, ax = plt.subplots(figsize=(3, 2.5), layout="constrained")
    _time_series(ax)
    ax.twinx().plot([0, 10], [0, 50], color="0.5")
    ax.legend(loc="lower right")
    assert _checks(fig, "C1")[0] == []


def test_a_subfigures_legend_is_checked():
    """A3's key over its panels is a subfigure's legend (not in the figure's legends)."""
    fig = plt.figure(figsize=(3, 3), layout="constrained")
    top, bottom = fig.subfigures(2, 1)
    ax = top.subplots()
    _time_series(ax)
    bottom.subplots().plot([0, 1], [0, 1])
    top.legend(*ax.get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(0.9, 1.0))
    assert "legend placement" in _checks(fig, "A3")[0]


def test_title_lines_break_between_phrases_and_each_line_fits():
    from tcprepro.figures.common import _text_width_pt

    title = "B5.12: B = 20 packets, C = 50 Mb/s, PFQ/LQD, $\\rho_b$ = 50 %"
    assert title_lines(title, 6.0, 9.0) == title  # fits: one line
    lines = title_lines(title, 2.6, 9.0).split("\n")
    assert len(lines) > 1
    assert " ".join(lines) == title  # only spaces after commas became line breaks
    assert all(line.endswith(",") for line in lines[:-1])
    assert all(_text_width_pt(line, 9.0) <= 2.6 * 72 for line in lines)
    # a comma inside mathtext is no phrase break; a given line break stays
    assert title_lines("$\\phi(i, j)$ of each variant, B = 20", 1.0, 9.0) == (
        "$\\phi(i, j)$ of each variant,\nB = 20"
    )
    assert title_lines("B5.1: one, two\nthree", 6.0, 9.0) == "B5.1: one, two\nthree"
    # a bracketed aside starts a line (B5.3's narrow figure), it does not end one
    aside = "B5.3: background transfers in progress (load 50 %, measured 42 %)"
    assert title_lines(aside, 2.8, 9.0) == (
        "B5.3: background transfers in progress\n(load 50 %, measured 42 %)"
    )


def test_a_label_over_the_data_fails():
    """D1's "C_e = 0.55" label drawn on top of the measured points."""
    fig, ax = plt.subplots()
    x = np.linspace(0, 1, 30)
    ax.plot(x, x, "o", label="measured")
    ax.text(0.5, 0.5, "C_e = 0.55", ha="center", va="center")
    checks, texts = _checks(fig, "D1")
    assert checks == ["text over data"]
    assert "'C_e = 0.55'" in texts[0]

    fig, ax = plt.subplots()
    ax.plot(x, x, "o", label="measured")
    ax.text(0.05, 0.95, "$C_e = 0.55$", transform=ax.transAxes, va="top")
    assert _checks(fig, "D1")[0] == []


def test_a_label_crossing_a_line_between_its_points_fails():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "diagonal", ha="center", va="center")
    assert _checks(fig, "D1")[0] == ["text over data"]


def test_an_axis_leaving_the_data_in_a_sliver_fails():
    """B5.1's loss panel: losses near 0.01 on a 0-1 axis."""
    fig, ax = plt.subplots()
    t = np.linspace(0, 10, 100)
    ax.plot(t, 0.01 + 0.005 * np.sin(t))
    ax.set_ylim(0, 1)
    checks, texts = _checks(fig)
    assert checks == ["axis range"]
    assert "y axis" in texts[0]

    fig, ax = plt.subplots()
    ax.plot(t, 0.01 + 0.005 * np.sin(t))
    ax.set_ylim(0, None)
    assert _checks(fig)[0] == []


def test_an_axis_range_check_reads_log_axes_as_printed():
    fig, ax = plt.subplots()
    ax.loglog([1e3, 1e4], [1, 2])
    ax.set_xlim(1, 1e9)  # two of nine decades: 11 %
    assert _checks(fig, "D4")[0] == []
    fig, ax = plt.subplots()
    ax.loglog([1e3, 2e3], [1, 2])
    ax.set_xlim(1, 1e9)
    assert _checks(fig, "D4")[0] == ["axis range"]


def test_a_constant_series_and_reference_lines_are_not_a_sliver():
    fig, ax = plt.subplots()
    t = np.linspace(0, 10, 50)
    ax.plot(t, np.full_like(t, 3.0))  # one value: nothing to scale
    ax.axhline(40, ls="--", color="k")  # axes coordinates in x
    ax.set_ylim(0, 50)
    assert _checks(fig)[0] == []


def test_colliding_stacked_labels_fail():
    """D3's two-line y labels of short stacked rows, running into one another."""
    fig, axes = plt.subplots(2, 1, figsize=(3, 1.6), sharex=True, layout="constrained")
    for ax in axes:
        _time_series(ax)
    axes[0].set_ylabel("measured / model\n(open: Mathis, filled: Padhye)")
    axes[1].set_ylabel("time waiting for\nRTOs (%, lower bound)")
    checks, texts = _checks(fig, "D3")
    assert "overlapping text" in checks
    assert any("Mathis" in t and "RTOs" in t for t in texts)

    fig, axes = plt.subplots(2, 1, figsize=(3, 3), sharex=True, layout="constrained")
    for ax in axes:
        _time_series(ax)
    axes[0].set_ylabel("model ratio")
    axes[1].set_ylabel("RTO wait (%)")
    assert _checks(fig, "D3")[0] == []


def test_crammed_colour_bar_ticks_fail():
    """A sliver of a colour bar with five tick labels on top of one another."""
    fig, ax = plt.subplots(figsize=(4, 3))
    image = ax.imshow(np.random.default_rng(2).random((3, 3)) * 500, cmap="viridis")
    bar = fig.colorbar(image, ax=ax, fraction=0.01, shrink=0.08)
    bar.set_ticks([0, 100, 200, 300, 400])
    checks, _ = _checks(fig, "A1")
    assert "overlapping text" in checks


def test_a_log_axis_with_one_labelled_tick_fails():
    """D4's transfer-volume axis: one decade label for the whole range."""
    fig, ax = plt.subplots()
    ax.semilogy([0, 1, 2], [1.5e6, 3e6, 6e6])
    ax.set_ylim(1.2e6, 8e6)
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    checks, texts = _checks(fig, "D4")
    assert checks == ["ticks"]
    assert "log y axis" in texts[0]


def test_a_clean_multi_panel_figure_passes():
    fig, axes = plt.subplots(2, 1, sharex=True, layout="constrained")
    for ax in axes:
        _time_series(ax)
    axes[0].legend()
    fig.suptitle("B5.4 — Reno, B = 20")
    assert _checks(fig, "B5.4")[0] == []


def test_save_figure_refuses_a_defective_figure_and_writes_nothing(tmp_path):
    fig, ax = plt.subplots()
    _time_series(ax)
    ax.set_title("throughput")
    with pytest.raises(FigureDefectError, match=r"(?s)figure B5\.20 has 1 defect.*title"):
        save_figure(fig, tmp_path / "B5.20.pdf")
    assert list(tmp_path.iterdir()) == []


def test_the_checks_run_on_a_figure_without_a_renderer_of_its_own():
    """A notebook's figure (papermill's kernel): its canvas is the base class."""
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasBase(fig)
    ax = fig.subplots()
    _time_series(ax)
    ax.set_title("throughput")
    assert [d.check for d in defects(fig, "B5.20")] == ["title"]


def test_check_figure_names_every_defect():
    fig, ax = plt.subplots()
    ax.plot(np.linspace(0, 1, 20), np.linspace(0, 0.01, 20), label="loss")
    ax.plot([0], [np.nan], label="reno0")
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("loss rate")
    with pytest.raises(FigureDefectError) as error:
        check_figure(fig, "B5.1")
    plt.close(fig)
    assert {d.check for d in error.value.defects} == {"legend", "title", "axis range"}
    assert str(error.value).startswith("figure B5.1 has 3 defect(s):")


def test_panel_titles_are_broken_between_words_to_their_width():
    """B5.4-B5.9 at the quick tier: four cases a row leave 1.2-in columns; the throughput
    row's statistics title is broken between words (never inside mathtext) to fit one, so
    that neighbouring titles neither overlap nor leave the figure."""
    from tcprepro.figures.common import _text_width_pt, fit_panel_titles, wrap_words

    text = r"mean 109% of $(1-\rho_b)C$, Jain 0.94; background loss 0.17%"
    wrapped = wrap_words(text, 1.2, 7.0)
    assert wrapped.replace("\n", " ") == text
    assert all(_text_width_pt(line, 7.0) <= 1.2 * 72 for line in wrapped.split("\n"))
    assert r"$(1-\rho_b)C$" in wrapped  # mathtext whole
    fig, axes = plt.subplots(2, 4, figsize=(6.2, 3.4), layout="constrained")
    for top, bottom in axes.T:
        for ax in (top, bottom):
            ax.plot([0, 1], [0, 1])
        top.set_title("Reno + HSTCP, PFQ/LQD, B = 625")
        bottom.set_title(text, loc="left", fontsize=7)
    suptitle(fig, "B5.7: background of TCP transfers")
    before, _ = _checks_kept(fig)
    assert "overlapping text" in before
    fit_panel_titles(fig, axes.flat, (6.2 - 0.8) / 4 - 0.25)
    checks, texts = _checks(fig, "B5.7")
    assert checks == [], texts


def _checks_kept(fig, name="B5.7"):
    found = defects(fig, name)
    return [d.check for d in found], [d.text for d in found]
