"""Study A3/A4: what the runs drew (size histogram against the law, measured offered load)
and the strip of the response-time figure that shows it, on synthetic data with known
sizes and arrival times."""

from __future__ import annotations

import json
import re

import matplotlib
import numpy as np
import pytest

from conftest import ROOT
from synthetic import synthetic_run
from tcprepro.analysis import study_a as analysis_a
from tcprepro.analysis import study_b as analysis_b
from tcprepro.scenario_io import load_scenario
from tcprepro.store import combine_runs
from tcprepro.traffic import calibrate

matplotlib.use("Agg")

A3 = ROOT / "workflow/scenarios/A3.yaml"
WARMUP_S, DURATION_S = 20.0, 100.0
#: the A3 downlink's goodput capacity, by hand: 10 Mb/s x MSS 1448 B / 1500-B packets
CAPACITY_BPS = 10e6 * 1448 / 1500
#: the transfers of each (load, rep): arrival times (s) and sizes (bytes); one arrives
#: before the warm-up ends (not in the measured window), one exactly at its start (in it)
DRAWS = {
    (0.5, 0): ([10.0, 20.0, 35.0, 60.0, 99.0], [5_000, 60_000, 150_000, 2_000_000, 40_000]),
    (0.5, 1): ([19.99, 25.0, 50.0], [70_000, 90_000, 3_000_000]),
    (0.8, 0): ([21.0, 40.0, 80.0, 90.0], [200_000, 55_000, 8_000_000, 120_000]),
    (0.8, 1): ([30.0, 70.0], [45_000, 500_000]),
}


def _config(load):
    scenario = load_scenario(
        A3,
        [
            ("duration", f"{DURATION_S:g}s"),
            ("warmup", f"{WARMUP_S:g}s"),
            ("traffic.web.load", load),
        ],
    )
    return scenario.to_json()


def a3_like(ups=("NewReno", "Vegas"), loads=(0.5, 0.8), reps=(0, 1), cell_draws=None):
    """A combined A3-like dataset: every cell of a (load, rep) has the transfers of
    ``DRAWS`` (or, per (up, load, rep), those of ``cell_draws``)."""
    values = {"up": list(ups), "down": ["NewReno"], "load": list(loads)}
    runs = []
    for up in ups:
        for load in loads:
            for rep in reps:
                starts, sizes = (cell_draws or {}).get((up, load, rep), DRAWS[(load, rep)])
                ds = synthetic_run(
                    duration_s=DURATION_S,
                    interval_s=1.0,
                    warmup_s=WARMUP_S,
                    transfers=len(starts),
                    attrs={
                        "config": _config(load),
                        "figure": "A3",
                        "sweep": json.dumps({"up": up, "down": "NewReno", "load": load}),
                        "sweep_values": json.dumps(values),
                        "rep": rep,
                    },
                )
                n = len(starts)
                ds["transfer_start_s"][:] = starts
                ds["transfer_size_bytes"][:] = sizes
                ds["transfer_end_s"][:] = np.array(starts) + 0.5 + np.arange(n) * 0.1
                runs.append(ds)
    return combine_runs(runs)


def _law_cdf(s, s_min, alpha=1.7, high=1.2e9):
    """Zipf's law of exponent alpha: a Pareto law of index 1/alpha on [s_min, high]."""
    index = 1 / alpha
    s = np.clip(np.asarray(s, dtype=float), s_min, high)
    return (1 - (s_min / s) ** index) / (1 - (s_min / high) ** index)


def test_measured_offered_load_is_the_bytes_that_arrived_over_window_and_capacity():
    ds = a3_like()
    frame = analysis_a.measured_offered_load(ds)
    assert len(frame) == 2 * 2 * 2  # one row per run: ups x loads x reps
    window = DURATION_S - WARMUP_S
    hand = {  # arrivals in [20, 100): bytes x 8 / (80 s x capacity)
        (0.5, 0): (60_000 + 150_000 + 2_000_000 + 40_000) * 8 / (window * CAPACITY_BPS),
        (0.5, 1): (90_000 + 3_000_000) * 8 / (window * CAPACITY_BPS),
        (0.8, 0): (200_000 + 55_000 + 8_000_000 + 120_000) * 8 / (window * CAPACITY_BPS),
        (0.8, 1): (45_000 + 500_000) * 8 / (window * CAPACITY_BPS),
    }
    for row in frame.itertuples():
        assert row.offered_load == pytest.approx(hand[(row.load, row.rep)], rel=1e-12)
        assert row.target_load == row.load
        assert row.capacity_bps == pytest.approx(CAPACITY_BPS, rel=1e-12)
        assert row.window_s == window
    # every cell of a (load, rep) drew the same transfers: one draw each, four in all
    assert frame["draw"].nunique() == 4
    assert (frame.groupby(["load", "rep"])["draw"].nunique() == 1).all()
    # the solved scale is the calibration's (41.5 kB at 50 %: the A3 notes), larger at 80 %
    scales = frame.groupby("load")["pareto_min_bytes"].first()
    assert scales[0.5] == pytest.approx(41.5e3, rel=0.01)
    for load in (0.5, 0.8):
        scenario = load_scenario(A3, [("traffic.web.load", load)])
        assert scales[load] == pytest.approx(calibrate(scenario, "web").pareto_min_bytes)
    assert scales[0.8] > scales[0.5]


def test_study_b_offered_load_of_one_run_shares_the_definition():
    ds = a3_like(ups=("NewReno",), loads=(0.5,), reps=(0,))
    run = ds.isel(up=0, down=0, load=0, rep=0)
    run.attrs["config"] = str(run["run_config"].item())
    expected = (60_000 + 150_000 + 2_000_000 + 40_000) * 8 / (80.0 * CAPACITY_BPS)
    assert analysis_b.offered_load(run)["web"] == pytest.approx(expected, rel=1e-12)


def test_size_histogram_counts_each_draw_once_and_expects_what_the_law_gives():
    ds = a3_like()
    edges = np.array([1e3, 1e4, 1e5, 1e6, 1e7])
    hist = analysis_a.size_histogram(ds, edges)
    # every size of DRAWS once (not once per cell), by hand:
    #   [1 kB, 10 kB): 5 000;  [10 kB, 100 kB): 60k 40k 70k 90k 55k 45k;
    #   [100 kB, 1 MB): 150k 200k 120k 500k;  [1 MB, 10 MB): 2M 3M 8M
    assert hist["count"].tolist() == [1, 6, 4, 3]
    assert hist["bin_low"].tolist() == edges[:-1].tolist()
    # expected: per draw, its transfers x the probability of the bin under its law (the
    # sizes are whole bytes: a draw lands in [a, b) when in [ceil(a) - 0.5, ceil(b) - 0.5))
    expected = np.zeros(4)
    for (load, _rep), (starts, _sizes) in DRAWS.items():
        s_min = calibrate(load_scenario(A3, [("traffic.web.load", load)]), "web").pareto_min_bytes
        expected += len(starts) * np.diff(_law_cdf(edges - 0.5, s_min))
    assert hist["expected"].to_numpy() == pytest.approx(expected, rel=1e-9)
    assert hist["expected"].iloc[0] == 0  # no size below s_min (41.5 kB or more)
    # pooled over the whole range, the law expects every transfer drawn
    wide = analysis_a.size_histogram(ds, np.array([1.0, 2e9]))
    assert wide["expected"].iloc[0] == pytest.approx(14, rel=1e-9)
    summary = analysis_a.drawn_size_summary(ds)
    assert summary == {"transfers": 14, "share_small": 7 / 14, "median_bytes": 105_000.0}


def test_cells_that_drew_different_transfers_count_apart():
    other = ([22.0, 44.0], [66_000, 77_000])
    ds = a3_like(cell_draws={("Vegas", 0.5, 0): other})
    hist = analysis_a.size_histogram(ds, np.array([1e3, 1e4, 1e5, 1e6, 1e7]))
    assert hist["count"].tolist() == [1, 8, 4, 3]
    frame = analysis_a.measured_offered_load(ds)
    assert frame["draw"].nunique() == 5
    vegas = frame[(frame["up"] == "Vegas") & (frame["load"] == 0.5) & (frame["rep"] == 0)]
    assert vegas["offered_load"].item() == pytest.approx(
        (66_000 + 77_000) * 8 / (80.0 * CAPACITY_BPS), rel=1e-12
    )


def test_the_figure_draws_the_strip_and_states_the_numbers_it_drew():
    from tcprepro.figures.common import MAX_HEIGHT_IN, TEXT_WIDTH_IN, drawn
    from tcprepro.figures.study_a import response_time_curves

    ds = a3_like()
    fig = response_time_curves(ds, title="A3", min_transfers=1)
    by_label = {ax.get_ylabel(): ax for ax in fig.axes}
    hist_ax, load_ax = by_label["transfers"], by_label["offered load (%)"]
    response_axes = [ax for ax in fig.axes if ax not in (hist_ax, load_ax)]
    assert len(response_axes) == 2 * 2  # loads x uploads
    # the strip has its own y axes: counts on a log axis, loads on a linear one
    assert hist_ax.get_yscale() == "log"
    assert load_ax.get_yscale() == "linear"
    for ax in response_axes:
        assert hist_ax not in ax.get_shared_y_axes().get_siblings(ax)
    # the bars are the counts of the distinct draws in the response curves' bins
    from tcprepro import metrics

    edges = metrics.size_bins(metrics.transfer_table(ds)["size_bytes"])
    counts, expected = (patch.get_data().values for patch in hist_ax.patches[:2])
    hist = analysis_a.size_histogram(ds, edges)
    assert counts.tolist() == hist["count"].tolist()
    assert counts.sum() == 14
    assert expected == pytest.approx(hist["expected"].to_numpy())
    # one point per repetition and load (cells share their draws), target marked
    points = [line for line in load_ax.lines if line.get_marker() == "o"]
    measured = sorted(y for line in points for y in line.get_ydata())
    loads = analysis_a.measured_offered_load(ds).drop_duplicates("draw")
    assert measured == pytest.approx(sorted(100 * loads["offered_load"]))
    targets = sorted(
        {y for line in load_ax.lines if line.get_linestyle() == "--" for y in line.get_ydata()}
    )
    assert targets == pytest.approx([50.0, 80.0])
    assert fig.get_figwidth() <= TEXT_WIDTH_IN + 1e-9
    assert fig.get_figheight() <= MAX_HEIGHT_IN + 1e-9

    text = " ".join(drawn(fig).statements)
    assert "the sizes of the 14 transfers drawn" in text
    assert "every cell of a repetition draws the same transfers" in text
    assert "50 % below 100 kB, median 105 kB" in text
    assert "s_min = 41.5 kB for the 50 % target load" in text
    low = loads[loads["target_load"] == 0.5]["offered_load"] * 100
    assert (
        f"median {low.median():.0f} % (range {low.min():.0f} %–{low.max():.0f} %) "
        "over 2 repetitions for a target of 50 %" in text
    )
    assert "80-s measurement window" in text
    # each panel's title: the target and the repetitions' measured range, not a median
    # that no run measured
    titles = {ax.get_title() for ax in response_axes}
    assert f"load 50 %\nmeasured {low.min():.0f}–{low.max():.0f} %" in " ".join(titles)
    assert f"{CAPACITY_BPS / 1e6:.2f} Mb/s" in text
    # nothing in a statement is a number the data did not give: the percentages are these
    stated = {int(p) for p in re.findall(r"(\d+) %", text)}
    high = loads[loads["target_load"] == 0.8]["offered_load"] * 100
    allowed = {95, 50, 80} | {round(v) for v in (*low, *high, low.median(), high.median())}
    assert stated <= allowed, stated - allowed


def test_the_response_key_shows_each_variant_as_its_curves_are_drawn():
    """One or two size bins per curve (the smoke tier's): markers only, and so is the key."""
    from tcprepro.figures.checks import defects
    from tcprepro.figures.study_a import response_time_curves

    narrow = {
        key: (starts, [60_000 + 1_000 * i for i in range(len(starts))])
        for key, (starts, _) in DRAWS.items()
    }
    ds = a3_like(
        cell_draws={
            (up, load, rep): narrow[(load, rep)]
            for up in ("NewReno", "Vegas")
            for load, rep in narrow
        }
    )
    fig = response_time_curves(ds, title="A3", min_transfers=1)
    curves = [line for ax in fig.axes for line in ax.lines if line.get_label() == "NewReno"]
    assert curves
    assert all(line.get_linestyle() == "None" for line in curves)
    (key,) = [
        leg
        for sub in fig.subfigs
        for leg in sub.legends
        if leg.get_title().get_text() == "download variant"
    ]
    assert [t.get_text() for t in key.texts] == ["NewReno"]
    (handle,) = key.legend_handles
    assert (handle.get_linestyle(), handle.get_marker()) == ("None", "o")
    assert defects(fig, "A3") == []


def test_the_strip_follows_the_data():
    from tcprepro.figures.common import drawn
    from tcprepro.figures.study_a import response_time_curves

    small = {
        key: ([s + 0.0 for s in starts], [1_000 + size // 100 for size in sizes])
        for key, (starts, sizes) in DRAWS.items()
    }
    ds = a3_like(
        cell_draws={
            (up, load, rep): small[(load, rep)]
            for up in ("NewReno", "Vegas")
            for load, rep in small
        }
    )
    text = " ".join(drawn(response_time_curves(ds, min_transfers=1)).statements)
    # sizes a hundredth (plus 1 kB): all below 100 kB now, median (1.9 + 2.2) / 2 kB
    assert "100 % below 100 kB" in text
    assert "median 2.05 kB" in text
