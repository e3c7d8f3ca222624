"""The papers' stated values: read from the reference file, drawn on their figures.

Each mark's number is the one its claim quotes (nothing read off a plot); the figures
draw a mark on its own cell and nowhere else, and their captions say what the marks are.
"""

import re

import matplotlib
import numpy as np
import pytest
import xarray as xr

from conftest import ROOT
from tcprepro import reference
from tcprepro.analysis import study_c
from tcprepro.claims import load_registry
from tcprepro.figures import study_b, study_b_sharing
from tcprepro.figures.common import drawn
from tcprepro.figures.study_a import utilisation_grid
from tcprepro.scenario_io import load_scenario
from test_claims import a_figure, grid

matplotlib.use("Agg")


#: numbers a quote states in words ("deux fois plus élevé": twice as high)
NUMBER_WORDS = {"deux": 2.0}


def _numbers(text: str) -> set[float]:
    numbers = {float(n.replace(",", ".")) for n in re.findall(r"\d+(?:[.,]\d+)?", text)}
    words = set(re.findall(r"\w+", text.lower()))
    return numbers | {v for w, v in NUMBER_WORDS.items() if w in words}


def test_every_mark_is_a_number_its_claim_quotes():
    claims = {c.id: c for c in load_registry()}
    rows = reference.stated("A1") + reference.stated("A2") + reference.stated("B5.4")
    rows += reference.stated("B5.10") + reference.stated("B5.16") + reference.stated("B5.20")
    rows += reference.stated("C2")
    assert len(rows) == len(reference.load("paper_marks"))  # no figure left out here
    for mark in rows:
        assert mark.claim in claims, mark
        assert mark.source, mark
        stated = [v for v in (mark.value, mark.low, mark.high) if np.isfinite(v)]
        assert stated, f"{mark.figure} {mark.quantity}: neither a value nor a range"
        if "Table" in mark.source:  # a table's value: its digits are in the source's table
            continue
        quote = claims[mark.claim].quote
        quoted = _numbers(quote if isinstance(quote, str) else " ".join(quote))
        for v in stated:
            # the quote may state a fraction where the figure draws a percentage
            assert v in quoted or v / 100 in quoted, (mark, sorted(quoted))


def test_a_mark_matches_only_its_own_cell():
    (mark,) = reference.stated_for("A2", "utilisation_up_pct", up="NewReno", down="NewReno")
    assert mark.value == 95
    assert mark.claim == "A-c5"
    assert not reference.stated_for("A2", "utilisation_up_pct", up="Cubic", down="NewReno")
    # a cell that does not say its value of a key the mark names is not the mark's cell
    assert not reference.stated_for("A2", "utilisation_up_pct", up="NewReno")
    (rtt,) = reference.stated("A2", "rtt_ms")
    assert rtt.text == "600-800"
    assert not rtt.matches(up="Vegas", down="NewReno")


def _diamonds(ax):
    return [
        (float(line.get_xdata()[0]), float(line.get_ydata()[0]))
        for line in ax.get_lines()
        if line.get_marker() == "D"
    ]


def test_a2_draws_the_paper_values_on_the_newreno_cell_only():
    fig = utilisation_grid(a_figure("A2", grid((90, 45)), rtt_s=0.7), title="A2")
    panels = [ax for ax in fig.axes if ax.get_ylim() == (0.0, 110.0)]
    assert len(panels) == 9  # 3 x 3 variants
    marked = {i: _diamonds(ax) for i, ax in enumerate(panels) if _diamonds(ax)}
    # rows are the upload variants, columns the download ones, in the dataset's order
    assert marked == {0: [(0.0, 95.0), (1.0, 40.0)]}  # up NewReno, down NewReno
    caption = " ".join(drawn(fig).statements)
    assert "A-c5" in caption
    assert "paper_marks.csv" in caption
    assert "600-800 ms (up = NewReno or Cubic or Compound)" in caption


def test_a_figure_without_stated_values_says_nothing_of_marks():
    fig = utilisation_grid(a_figure("X1", grid((90, 45))), title="X1")
    assert not any(_diamonds(ax) for ax in fig.axes)
    assert "Black marks" not in " ".join(drawn(fig).statements)


def test_table_c2_reads_its_paper_column_from_the_reference_file():
    table = study_c.paper_table_i()
    assert table == {
        "14ms": {"Cubic": pytest.approx(1.8499e-05), "HighSpeed": pytest.approx(2.93257e-05)},
        "650ms": {"Cubic": pytest.approx(2.96627e-05), "HighSpeed": pytest.approx(4.1152e-06)},
    }


def _study_b(scenario, dims, coords, goodput_bps=10e6):
    """A combined study-B dataset over ``dims`` (one bulk flow, constant rates)."""
    config = load_scenario(ROOT / "workflow" / "scenarios" / f"{scenario}.yaml").to_json()
    shape = tuple(len(coords[d]) for d in dims)
    times = np.arange(1.0, 11.0)
    return xr.Dataset(
        {
            "run_config": (dims, np.full(shape, config, dtype=object)),
            "link_goodput_capacity_bps": ((*dims, "link"), np.full((*shape, 2), 50e6)),
            "link_rate_bps": ((*dims, "link"), np.full((*shape, 2), 50e6)),
            "flow_kind": (("flow",), ["bulk"]),
            "goodput_bps": (
                (*dims, "flow", "time"),
                np.full((*shape, 1, times.size), goodput_bps),
            ),
        },
        coords={**coords, "flow": ["bn0"], "link": ["bottleneck", "reverse"], "time": times},
        attrs={"warmup_s": 2.0, "figure": scenario},
    )


def test_b54_draws_b_c1s_share_on_the_b_20_case_only(monkeypatch):
    cases = ["Reno.FIFO.20", "Reno.FIFO.100", "Reno.FIFO.625"]
    ds = _study_b("B5.1", ("case", "rep"), {"case": cases, "rep": [0]})
    for row in ("cwnd", "throughput"):  # the rows' own drawing is not what is tested here
        monkeypatch.setitem(study_b._ROWS, row, lambda ax, run: ax.plot(run["time"], run["time"]))
    monkeypatch.setattr(study_b, "_measured_load_text", lambda runs: "")
    fig = study_b.draw("B5.4", ds)
    marked = {i: _diamonds(ax) for i, ax in enumerate(fig.axes) if _diamonds(ax)}
    # rows cwnd, throughput; columns the cases (axes row by row): the B = 20 throughput
    # panel, mid-window (warm-up 2 s, end 10 s)
    assert marked == {3: [(6.0, 40.0)]}, marked
    caption = " ".join(drawn(fig).statements)
    assert "B-c1" in caption
    assert "paper_marks.csv" in caption


def test_b520_sets_b_c10s_ratio_beside_this_builds_on_the_b_20_paced_panel(monkeypatch):
    ds = _study_b(
        "B5.20",
        ("buffer", "pacing", "rep"),
        {"buffer": [20, 100], "pacing": [False, True], "rep": [0]},
    )
    ds["goodput_bps"].loc[{"pacing": True, "buffer": 20}] = 15e6  # 1.5x the unpaced
    monkeypatch.setattr(study_b_sharing, "_row_cwnd", lambda ax, run: ax.plot([0, 1], [0, 1]))
    fig = study_b.draw("B5.20", ds)
    titles = {ax.get_title() for ax in fig.axes}
    assert "paced, B = 20: mean throughput 15.0 Mb/s\n1.50x, paper ≈ 2x the unpaced" in titles
    assert "paced, B = 100: mean throughput 10.0 Mb/s\n1.00x the unpaced" in titles
    caption = " ".join(drawn(fig).statements)
    assert "quoted by B-c10" in caption
