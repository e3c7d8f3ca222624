"""Study B's time series (B5.1-B5.9): y axes scaled to the measured window, the warm-up's
overshoot clipped and said so.

A bottlenecked flow's slow start overshoots far above what it does after the warm-up; an
axis scaled to the overshoot squashes the part the thesis discusses, and a fixed axis cuts
the measured lines. Drawn here from a small synthetic run with a warm-up spike.
"""

from __future__ import annotations

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from conftest import ROOT
from tcprepro.analysis import study_b as analysis_b
from tcprepro.figures import study_b
from tcprepro.figures.checks import defects
from tcprepro.figures.common import drawn
from tcprepro.figures.study_b_common import fit_row_to_window
from tcprepro.scenario_io import load_scenario

matplotlib.use("Agg")

WARMUP_S = 10.0
CASES = ["Reno.FIFO.20", "Reno.FIFO.100", "Reno.FIFO.625"]
#: the bottleneck's goodput capacity; the background (load 0.5) leaves half of it
CAPACITY_BPS = 50e6
#: the flow's slow-start overshoot (packets; times the capacity the background leaves)
CWND_SPIKE, GOODPUT_SPIKE = 2000.0, 3.0
#: the window's highest throughput, times the capacity the background leaves: above the
#: fixed 135 % the throughput axes once had
GOODPUT_HIGH = 1.4


def _run_with_a_warmup_spike() -> xr.Dataset:
    """B5.1's combined dataset: one Reno flow whose warm-up overshoots, and a background."""
    config = load_scenario(ROOT / "workflow" / "scenarios" / "B5.1.yaml").to_json()
    mss = float(str(json.loads(config)["tcp"]["mss"]).removesuffix("B"))
    time = np.round(np.arange(1, 301) * 0.1, 1)
    cwnd = np.where(time <= WARMUP_S, 50.0, 100 + 200 * (time - WARMUP_S) / 20)
    cwnd[(time > 4.0) & (time <= 5.0)] = CWND_SPIKE
    available = CAPACITY_BPS * 0.5
    goodput = np.full(time.size, 0.8 * available)
    goodput[(time > 5.0) & (time <= 7.0)] = GOODPUT_SPIKE * available
    goodput[(time > 20.0) & (time <= 21.0)] = GOODPUT_HIGH * available
    dims = ("case", "rep", "flow", "time")
    shape = (len(CASES), 1, 2, time.size)
    per_flow = np.zeros(shape)
    per_flow[:, :, 0] = 1.0  # segments sent each interval by the Reno flow
    flows = {
        "cwnd_bytes": np.broadcast_to(np.stack([cwnd * mss, cwnd * 0]), shape),
        "goodput_bps": np.broadcast_to(np.stack([goodput, goodput * 0]), shape),
        "tx_data_pkts": per_flow,
        "lost_data_pkts": np.zeros(shape),
        "retx_pkts": np.zeros(shape),
    }
    return xr.Dataset(
        {
            **{name: (dims, values.copy()) for name, values in flows.items()},
            "run_config": (("case", "rep"), np.full((len(CASES), 1), config, dtype=object)),
            "link_goodput_capacity_bps": (
                ("case", "rep", "link"),
                np.full((len(CASES), 1, 2), CAPACITY_BPS),
            ),
            "flow_kind": (("flow",), ["bulk", "transfers"]),
            "flow_variant": (("flow",), ["NewReno", "NewReno"]),
        },
        coords={
            "case": CASES,
            "rep": [0],
            "flow": ["reno0", "bg"],
            "link": ["bottleneck", "reverse"],
            "time": time,
        },
        attrs={"warmup_s": WARMUP_S, "figure": "B5.1"},
    )


@pytest.fixture
def b54(monkeypatch):
    monkeypatch.setattr(study_b, "_measured_load_text", lambda runs: "")
    ds = _run_with_a_warmup_spike()
    fig = study_b.draw("B5.4", ds)
    yield ds, fig
    plt.close(fig)


def _window(ds: xr.Dataset, row: str) -> np.ndarray:
    """What the B5.4 ``row`` draws after the warm-up, from the dataset (not the figure)."""
    run = ds.isel(case=0, rep=0).sel(flow="reno0")
    if row == "cwnd":
        mss = float(str(json.loads(str(run["run_config"].values))["tcp"]["mss"]).rstrip("B"))
        series = run["cwnd_bytes"] / mss
    else:
        series = analysis_b.binned(run["goodput_bps"], 1.0) / (CAPACITY_BPS * 0.5) * 100
    return series.where(series["time"] > WARMUP_S, drop=True).values


def test_b54_axes_fit_the_measured_window_and_not_the_warm_up_spike(b54):
    ds, fig = b54
    panels = [ax for ax in fig.axes if ax.get_lines()]
    assert len(panels) == 6  # rows cwnd, throughput; a column per case
    for k, ax in enumerate(panels):
        row = ("cwnd", "throughput")[k // len(CASES)]
        window = _window(ds, row)
        low, high = ax.get_ylim()
        # every value of the window inside the axis (the throughput's 140 % too) ...
        assert low <= window.min(), (row, ax.get_ylim())
        assert window.max() < high, (row, ax.get_ylim())
        # ... and the axis scaled to it, not to the warm-up's overshoot
        assert high <= 1.5 * window.max(), (row, ax.get_ylim())


def test_b54_says_what_its_axes_clip_of_the_warm_up(b54):
    _, fig = b54
    panels = [ax for ax in fig.axes if ax.get_lines()]
    notes = [" ".join(t.get_text() for t in ax.texts) for ax in panels]
    spike = GOODPUT_SPIKE * 100  # the throughput's 1 s bins hold the spike whole
    assert notes == [f"warm-up max\n{CWND_SPIKE:.0f}"] * 3 + [f"warm-up max\n{spike:.0f} %"] * 3
    for ax in panels:  # a triangle on the top edge, at the overshoot
        (triangle,) = [line for line in ax.get_lines() if line.get_marker() == "^"]
        assert float(triangle.get_ydata()[0]) == ax.get_ylim()[1]
        assert float(triangle.get_xdata()[0]) < WARMUP_S
        assert not triangle.get_clip_on()
    caption = " ".join(drawn(fig).statements)
    assert "the cwnd and throughput axes are scaled to what follows it" in caption
    assert "A triangle in a line's colour on a panel's top edge" in caption
    assert defects(fig, "B5.4") == []  # the note covers no data, among other checks


def test_a_warm_up_a_little_above_the_window_is_drawn_whole():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3, 4], [0, 12, 10, 8])  # warm-up up to 12, window up to 10
    assert fit_row_to_window([ax], 2.0) == [None]
    assert ax.get_ylim()[1] >= 12
    assert not ax.texts
    plt.close(fig)


def test_the_loss_rate_axis_keeps_its_zeros_visible_and_clips_its_warm_up():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3, 4, 5], [0.0, 0.2, 0.0, 0.01, 0.0])
    ax.axhline(5.0)  # a reference line in axes coordinates: not data to scale to
    assert fit_row_to_window([ax], 2.0, "{:.2g}", below=0.06) == [pytest.approx(0.2)]
    low, high = ax.get_ylim()
    assert low < 0 < 0.01 < high < 0.2
    assert [t.get_text() for t in ax.texts] == ["warm-up max\n0.2"]
    plt.close(fig)


def test_a_rows_panels_share_one_scale_and_each_says_what_it_clips():
    """Issue 34: B5.x's throughput panels of one row had their own scales, so a case at
    40 % looked like one at 90 %. One scale a row, holding every panel's window; a
    warm-up is clipped, and its panel says so, against that shared scale."""
    fig, (left, middle, right) = plt.subplots(1, 3)
    left.plot([1, 2, 3, 4], [0, 200, 40, 40])  # window at 40, warm-up spike 200
    middle.plot([1, 2, 3, 4], [0, 100, 90, 90])  # window at 90, warm-up 100
    right.plot([1, 2, 3, 4], [0, 150, 80, 80])  # window at 80, warm-up 150
    peaks = fit_row_to_window([left, middle, right], 2.0, "{:.0f} %")
    assert left.get_ylim() == middle.get_ylim() == right.get_ylim()
    low, high = left.get_ylim()
    assert low == 0
    assert 90 < high <= 1.5 * 90  # every window inside, scaled to the highest
    # 200 and 150 lie above the shared top (135): both clipped and said; 100 is inside
    assert high == pytest.approx(135)
    assert peaks == [200, None, 150]
    assert [t.get_text() for t in left.texts] == ["warm-up max\n200 %"]
    assert not middle.texts
    assert [t.get_text() for t in right.texts] == ["warm-up max\n150 %"]
    plt.close(fig)


def test_a_window_without_data_above_zero_keeps_a_small_scale():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3, 4], [0.0, 0.0, 0.0, 0.0])
    assert fit_row_to_window([ax], 2.0, below=0.06, empty_top=0.01) == [None]
    assert ax.get_ylim() == pytest.approx((-0.0006, 0.01))
    plt.close(fig)
