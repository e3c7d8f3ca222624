"""The cross-check of ns-3 against the emulation (tcprepro.analysis.crosscheck, and its
figure in tcprepro.figures.crosscheck): synthetic datasets with known answers."""

import json

import numpy as np
import pytest

from conftest import ACCESS, scenario_dict
from tcprepro.scenario_io import load_scenario_dict


def _combined(cells, fidelity=None):
    from synthetic import synthetic_run
    from tcprepro.store import combine_runs

    values = {"up": ["NewReno", "Cubic", "Vegas"]}
    runs = []
    for up, goodput in cells.items():
        ds = synthetic_run(
            goodput_bps=goodput,
            attrs={
                "figure": "X9",
                "sweep": json.dumps({"up": up}),
                "sweep_values": json.dumps(values),
            },
        )
        if fidelity is not None:
            ds["fidelity_ok"] = ((), fidelity[up])
        runs.append(ds)
    return combine_runs(runs)


def test_crosscheck_marks_disagreements_flags_and_cells_not_emulated(tmp_path):
    from tcprepro.analysis import crosscheck
    from tcprepro.figures.crosscheck import crosscheck_scatter

    ns3 = _combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6), "Vegas": (2e6, 1.5e6)})
    # NewReno agrees (+1.0 pp down), Cubic's download is 31 pp lower, Vegas not emulated
    emulated = _combined(
        {"NewReno": (8.096e6, 1e6), "Cubic": (5e6, 1e6)}, fidelity={"NewReno": 1, "Cubic": 1}
    )
    table = crosscheck.compare(ns3, emulated, utilisation_pp=10, rtt_rel=0.2)
    row = table.set_index(["up", "flow"])
    assert row.loc[("NewReno", "down"), "diff_pp"] == pytest.approx(1.0)
    assert bool(row.loc[("NewReno", "down"), "util_ok"])
    assert row.loc[("Cubic", "down"), "diff_pp"] == pytest.approx(-31.25)
    assert not bool(row.loc[("Cubic", "down"), "util_ok"])
    assert row.loc[("Vegas", "down"), "fidelity"] == "not run"
    assert crosscheck.summary(table) == {
        "rows": 6,
        "compared": 4,
        "rtt_compared": 4,
        "util_within": 3,
        "rtt_within": 4,
        "flagged": 0,
        "not_run": 2,
    }
    tex = crosscheck.write_tex(table, tmp_path / "x.tex", "X9").read_text()
    assert tex.count(r"$^\ast$") == 1 + 1  # the Cubic download row, and the footnote
    assert "not run" in tex
    flagged = _combined(
        {"NewReno": (8.096e6, 1e6), "Cubic": (5e6, 1e6)}, fidelity={"NewReno": 1, "Cubic": 0}
    )
    table = crosscheck.compare(ns3, flagged, utilisation_pp=10, rtt_rel=0.2)
    assert crosscheck.summary(table)["flagged"] == 2  # never counted as (dis)agreeing
    assert (
        r"$^\ast$"
        not in crosscheck.write_tex(table, tmp_path / "y.tex", "X9")
        .read_text()
        .split(r"\bottomrule")[0]
    )
    fig = crosscheck_scatter(table)
    assert len(fig.axes) == 2


def test_the_table_caption_says_its_ns3_column_is_the_twins_own_runs(tmp_path):
    """X10's ns-3 column is X10's runs, not B5.20's (other runs of the same cells, whose
    values differ): the caption says so, and no number of the figure's is implied."""
    from tcprepro.analysis import crosscheck

    cells = {"NewReno": (8e6, 1e6)}
    table = crosscheck.compare(_combined(cells), _combined(cells), utilisation_pp=10, rtt_rel=0.2)
    tex = crosscheck.write_tex(table, tmp_path / "x.tex", "X10").read_text()
    caption = tex.split(r"\caption{", 1)[1].split(r"\label", 1)[0]
    assert "The ns-3 column: X10's own ns-3 runs" in caption
    assert "not the runs of the figure it cross-checks" in caption


def test_a_cells_total_row_follows_its_own_flows():
    """The table reads cell by cell: each cell's flows, then its total."""
    from tcprepro.analysis import crosscheck

    cells = {"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6), "Vegas": (2e6, 1.5e6)}
    table = crosscheck.compare(_combined(cells), _combined(cells), 10, 0.2, total=True)
    rows = list(zip(table["up"], table["flow"], strict=True))
    assert rows == [
        (up, flow) for up in ("NewReno", "Cubic", "Vegas") for flow in ("down", "up", "total")
    ]


def test_a_transfer_generator_is_compared_by_the_load_its_transfers_carried():
    """X12's background row: the bytes of the transfers whose last byte arrived in the
    window, over the window and the goodput capacity of the generator's calibration, the
    same function for both backends' transfer_* variables."""
    from synthetic import synthetic_run
    from tcprepro.analysis import crosscheck
    from tcprepro.analysis.common import generator_calibration, transfers_carried_load
    from tcprepro.store import combine_runs

    web = {
        "kind": "poisson_transfers",
        "direction": "down",
        "variant": "Cubic",
        "arrival_rate": "1/s",
        "size": {"law": "fixed", "size": "1000B"},
    }
    config = load_scenario_dict(scenario_dict(ACCESS, traffic={"web": web})).to_json()
    capacity = generator_calibration(config, "web").capacity_bps

    def run(late):
        # 10 transfers of 1000 B, arriving at 0-9 s and ending 0.5 s later (the last
        # censored); ``late`` of them end after the run instead
        ds = synthetic_run(
            transfers=10,
            attrs={
                "config": config,
                "figure": "X12",
                "sweep": json.dumps({"up": "NewReno"}),
                "sweep_values": json.dumps({"up": ["NewReno"]}),
            },
        )
        ends = ds["transfer_end_s"].values.copy()
        ends[2 : 2 + late] = np.nan
        ds["transfer_end_s"] = ("transfer", ends)
        return ds

    # warm-up 2 s, 10-s run: the transfers ending at 2.5 ... 8.5 s, 7000 bytes in 8 s
    expected = 7000 * 8 / (8.0 * capacity)
    assert float(transfers_carried_load(run(0), "web", 2.0, 10.0)) == pytest.approx(expected)
    table = crosscheck.compare(
        combine_runs([run(0)]), combine_runs([run(2)]), 10, 0.2, transfers=True
    )
    row = table.set_index("flow").loc["web"]
    assert row["ns3_util_pct"] == pytest.approx(expected * 100)
    assert row["emu_util_pct"] == pytest.approx(expected * 100 * 5 / 7)
    assert np.isnan(row["emu_rtt_ms"])
    assert set(table["flow"]) == {"down", "up", "web"}
    without = crosscheck.compare(combine_runs([run(0)]), combine_runs([run(2)]), 10, 0.2)
    assert "web" not in set(without["flow"])


def test_a_difference_that_rounds_to_zero_is_written_without_a_minus_sign():
    """X4's table showed "-0%" for an RTT difference of -0.3 %."""
    from tcprepro.analysis.crosscheck import _fmt

    assert _fmt(-0.003 * 100, "+.0f", "%") == "+0%"
    assert _fmt(-0.6, "+.0f", "%") == "-1%"
    assert _fmt(-0.04, ".1f") == "0.0"
    assert _fmt(float("nan"), ".1f") == "--"


def test_a_crosscheck_mark_draws_each_value_of_a_sweep_dimension_with_its_own_shape():
    from tcprepro.analysis import crosscheck
    from tcprepro.figures.crosscheck import crosscheck_scatter

    ns3 = _combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6)})
    emulated = _combined(
        {"NewReno": (8e6, 1e6), "Cubic": (7e6, 1e6)}, fidelity={"NewReno": 1, "Cubic": 1}
    )
    tolerance = {"utilisation_pp": 10, "rtt_rel": 0.2, "mark": "up"}
    table = crosscheck.compare_figure(ns3, emulated, tolerance)
    fig = crosscheck_scatter(table)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert sorted(labels) == [
        "down, up Cubic",
        "down, up NewReno",
        "up, up Cubic",
        "up, up NewReno",
    ]
    shapes = {
        label: handle.get_paths()[0].vertices.shape[0]
        for handle, label in zip(*fig.axes[0].get_legend_handles_labels(), strict=True)
    }
    assert shapes["down, up Cubic"] != shapes["down, up NewReno"]  # a circle, a triangle
    with pytest.raises(ValueError, match=r"crosscheck\.mark: 'pacing'"):
        crosscheck.compare_figure(ns3, emulated, {**tolerance, "mark": "pacing"})


def test_crosscheck_compares_a_cells_total_and_bounds_relative_differences(tmp_path):
    """X2 compares each cell's total utilisation (C3.1's efficiency); X3 also bounds the
    relative difference, which a window-limited flow doubling its throughput exceeds
    while staying within the tolerance in percentage points."""
    from tcprepro.analysis import crosscheck

    # NewReno's upload doubles: 5.2 % of its link in ns-3, 10.4 % emulated
    ns3 = _combined({"NewReno": (8e6, 0.1e6), "Cubic": (8e6, 1e6)})
    emulated = _combined(
        {"NewReno": (8e6, 0.2e6), "Cubic": (7.5e6, 1e6)}, fidelity={"NewReno": 1, "Cubic": 1}
    )
    table = crosscheck.compare_figure(
        ns3, emulated, {"utilisation_pp": 10, "rtt_rel": 0.2, "total_utilisation": True}
    )
    rows = table.set_index(["up", "flow"])
    for up in ("NewReno", "Cubic"):
        flows = rows.loc[(up, ["down", "up"]), "ns3_util_pct"].sum()
        assert rows.loc[(up, crosscheck.TOTAL), "ns3_util_pct"] == pytest.approx(flows)
        assert np.isnan(rows.loc[(up, crosscheck.TOTAL), "ns3_rtt_ms"])
        assert np.isnan(rows.loc[(up, crosscheck.TOTAL), "rtt_ok"])  # no RTT: not judged
    assert bool(rows.loc[("NewReno", "up"), "util_ok"])  # doubled, but a few points only
    counts = crosscheck.summary(table)
    assert counts["compared"] == 6
    assert counts["rtt_compared"] == 4
    strict = crosscheck.compare_figure(
        ns3, emulated, {"utilisation_pp": 10, "utilisation_rel": 0.2, "rtt_rel": 0.2}
    )
    rows = strict.set_index(["up", "flow"])
    assert rows.loc[("NewReno", "up"), "util_rel"] == pytest.approx(1.0)
    assert not bool(rows.loc[("NewReno", "up"), "util_ok"])
    assert bool(rows.loc[("NewReno", "down"), "util_ok"])
    tex = crosscheck.write_tex(strict, tmp_path / "x.tex", "X9").read_text()
    assert "20\\% of the ns-3 value" in tex


def test_crosscheck_leaves_generated_traffic_out_of_the_rows_and_the_total():
    """X6: ns-3 records the Poisson background as a flow, the emulation as counts; the
    table compares the scenario's own flows and totals them without the background."""
    from tcprepro.analysis import crosscheck

    ns3 = _combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6)})
    ns3 = ns3.assign(flow_kind=ns3["flow_kind"].where(ns3["flow"] != "down", "packets"))
    emulated = _combined({"NewReno": (8e6, 1.1e6), "Cubic": (8e6, 0.9e6)}).sel(flow=["up"])
    table = crosscheck.compare_figure(
        ns3, emulated, {"utilisation_pp": 10, "rtt_rel": 0.2, "total_utilisation": True}
    )
    assert set(table["flow"]) == {"up", crosscheck.TOTAL}
    rows = table.set_index(["up", "flow"])
    for up in ("NewReno", "Cubic"):
        assert rows.loc[(up, crosscheck.TOTAL), "ns3_util_pct"] == pytest.approx(
            rows.loc[(up, "up"), "ns3_util_pct"]
        )
    ran = table[table["up"] != "Vegas"]  # the sweep's third cell has no run
    assert ran["emu_util_pct"].notna().all()
    assert ran["ns3_util_pct"].notna().all()


def test_crosscheck_has_no_row_for_a_flow_its_cell_does_not_have():
    """X6 sweeps the flow count i: its 1-flow cells carry the 2-flow cells' second flow
    name with no data, which is no flow to compare (not a flow "not run")."""
    from tcprepro.analysis import crosscheck

    def one_flow_in_cubic(ds):
        cubic = (ds["up"] == "Cubic") & (ds["flow"] == "down")
        kind = ds["flow_kind"].where(~cubic, "")
        return ds.assign(flow_kind=kind, goodput_bps=ds["goodput_bps"].where(~cubic))

    ns3 = one_flow_in_cubic(_combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6)}))
    emulated = one_flow_in_cubic(
        _combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6)}, fidelity={"NewReno": 1, "Cubic": 1})
    )
    table = crosscheck.compare(ns3, emulated, utilisation_pp=10, rtt_rel=0.2)
    cells = set(zip(table["up"], table["flow"], strict=True))
    assert ("Cubic", "down") not in cells
    assert {("Cubic", "up"), ("NewReno", "down"), ("NewReno", "up")} <= cells
    ran = table[table["up"] != "Vegas"]
    assert (ran["fidelity"] == "ok").all()


def test_the_cross_check_caption_names_the_tool_that_sent_the_probe():
    """A combined emulated dataset keeps only the attributes its runs share: the per-run
    stage times go, so the caption reads the runs' ``probe_tool`` (or a shared ``stage_``
    attribute) to know iperf 2 sent the gate's probe; older runs had iperf3 send it."""
    import xarray as xr

    from tcprepro.analysis.crosscheck import _provenance

    def combined(**attrs):
        ds = xr.Dataset({"run_kernel": ("run", ["6.1.192"])})
        ds.attrs.update(route="uml", traffic_tool="iperf2", traffic_tool_version="2.1.8")
        ds.attrs.update(iperf3_version="3.12", **attrs)
        return ds

    now = "uml route, kernel 6.1.192, iperf2 2.1.8"
    assert _provenance(combined(probe_tool="iperf2")) == now
    assert _provenance(combined(stage_traffic_guest_s=75.0)) == now  # runs before probe_tool
    assert _provenance(combined()) == f"{now} (probe: iperf3 3.12)"  # before iperf 2 probed


@pytest.mark.parametrize(
    ("route", "named"),
    [
        ("uml", "Mininet on the UML route, real Linux TCP"),
        ("vm", "Mininet on the VM route, real Linux TCP"),
        ("native", "Mininet on the native route, real Linux TCP"),
        (None, "Mininet, real Linux TCP, route not recorded"),
    ],
)
def test_the_figures_title_and_the_tables_caption_name_the_route_the_runs_came_by(
    tmp_path, route, named
):
    """Issue 34: X1..X14's titles said "ns-3 vs Mininet (real Linux TCP)" and their tables
    "ns-3 vs emulation (Mininet, real Linux TCP)" for runs made on the UML route."""
    from tcprepro.analysis import crosscheck
    from tcprepro.figures.common import drawn
    from tcprepro.figures.crosscheck import crosscheck_scatter, crosscheck_title

    ns3 = _combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6)})
    emulated = _combined({"NewReno": (8e6, 1e6), "Cubic": (8e6, 1e6)})
    emulated.attrs.pop("route", None)
    if route is not None:
        emulated.attrs["route"] = route
    table = crosscheck.compare(ns3, emulated, utilisation_pp=10, rtt_rel=0.2)
    title = crosscheck_title("X9", table)
    assert title == f"X9: ns-3 vs {named}"
    fig = crosscheck_scatter(table, title=title)
    assert " ".join(fig.get_suptitle().split()) == title  # in the lines the width needs
    assert drawn(fig).cells_drawn > 0
    # the caption's generated sentence names it too (the catalogue's text cannot know it)
    assert f"4 flows emulated ({named}); " in " ".join(drawn(fig).statements)
    tex = crosscheck.write_tex(table, tmp_path / "x.tex", "X9").read_text()
    assert rf"\textbf{{X9.}} ns-3 vs emulation ({named}):" in tex
    # the ns-3 side alone names no emulation
    alone = crosscheck.compare(ns3, None, utilisation_pp=10, rtt_rel=0.2)
    assert crosscheck_title("X9", alone) == "X9: ns-3 (no emulated runs)"


def test_a_sized_flow_is_compared_by_its_own_throughput_and_a_relative_band_is_drawn_on_log_axes():
    """X11: a sized flow's compared utilisation is its volume over handshake-to-last-byte
    (D4's measure) over the goodput capacity, not its mean goodput over the window (which
    depends on the window's length); a bulk flow beside it keeps its window mean. With a
    relative bound, the figure's utilisation panel is on log axes and its band is where
    both bounds hold."""
    from synthetic import synthetic_run
    from tcprepro.analysis import crosscheck
    from tcprepro.figures.crosscheck import crosscheck_scatter
    from tcprepro.store import combine_runs

    def sized(end_s):  # the download: 1 MB from its handshake (0.1 s) to end_s
        ds = synthetic_run(
            attrs={
                "figure": "X11",
                "sweep": json.dumps({"size": "1MB"}),
                "sweep_values": json.dumps({"size": ["1MB"]}),
            }
        )
        ds["flow_size_bytes"] = ("flow", [1_000_000, 0])
        ds["flow_end_s"] = ("flow", [end_s, np.nan])
        ds["fidelity_ok"] = ((), 1)
        return combine_runs([ds])

    ns3, emulated = sized(1.1), sized(1.3)  # 8.0 and 6.67 Mb/s
    table = crosscheck.compare_figure(
        ns3, emulated, {"utilisation_pp": 10, "utilisation_rel": 0.2, "rtt_rel": 0.2}
    ).set_index("flow")
    assert list(table.index) == ["down", "up"]
    assert table.loc["down", "ns3_util_pct"] == pytest.approx(100 * 8e6 / 9.6e6)
    assert table.loc["down", "emu_util_pct"] == pytest.approx(100 * 8e6 / 1.2 / 9.6e6)
    assert table.loc["down", "util_rel"] == pytest.approx(1 / 1.2 - 1)
    assert not bool(table.loc["down", "util_ok"])  # -16.7 %: within 20 %, not 10 points
    assert table.loc["up", "ns3_util_pct"] == pytest.approx(100 * 1e6 / 1.92e6)  # the window
    fig = crosscheck_scatter(table.reset_index())
    util = fig.axes[0]
    assert (util.get_xscale(), util.get_yscale()) == ("log", "log")
    band = util.collections[-1].get_paths()[0].vertices  # the band: lower then upper edge
    for x, bound in ((20.0, 24.0), (80.0, 90.0)):  # the relative bound binds, then the points
        near = band[(np.abs(band[:, 0] / x - 1) < 0.03) & (band[:, 1] > x)][:, 1]
        assert near.min() == pytest.approx(bound, rel=0.04), x


def test_the_legend_names_counted_flows_by_variant_and_number_never_by_instance_name(tmp_path):
    """X12 runs B5.1's ``reno: {count: n}`` flows, named ``reno0``, ``reno1`` inside:
    the legend and the table say ``Reno, flow 1``; a flow the scenario names itself keeps its name;
    the total and a transfer generator's rows say what they are."""
    from tcprepro.analysis import crosscheck
    from tcprepro.figures.crosscheck import crosscheck_scatter, flow_label

    scenario = {"flows": {"reno": {"count": 2, "variant": {"name": "NewReno"}}}}
    counted = _combined({"NewReno": (8e6, 1e6)}).assign_coords(flow=["reno0", "reno1"])
    shape = counted["run_config"].shape
    counted["run_config"] = counted["run_config"].copy(
        data=np.full(shape, json.dumps(scenario), dtype=object)
    )
    counted["flow_variant"] = ("flow", ["NewReno", "NewReno"])
    named = _combined({"NewReno": (8e6, 1e6)})
    assert crosscheck.flow_names(counted) == {
        "reno0": {"variant": "NewReno", "group": "reno", "number": 1},
        "reno1": {"variant": "NewReno", "group": "reno", "number": 2},
    }
    table = crosscheck.compare(counted, counted, 10, 0.2, total=True)
    table.attrs["generators"] = ["bg"]
    labels = [flow_label(table, f) for f in ("reno0", "reno1", "total", "bg")]
    assert labels == [
        "Reno, flow 1",
        "Reno, flow 2",
        "all flows together",
        "bg transfers, load carried",
    ]
    fig = crosscheck_scatter(table)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not [text for text in legend if "reno0" in text or "reno1" in text]
    assert [t.split(" (")[0] for t in legend] == [
        "Reno, flow 1",
        "Reno, flow 2",
        "all flows together",
    ]
    rows = crosscheck.write_tex(table, tmp_path / "x.tex", "X12").read_text()
    assert "Reno, flow 2 &" in rows
    assert "reno1" not in rows
    plain = crosscheck.compare(named, named, 10, 0.2)
    assert [flow_label(plain, f) for f in ("down", "up")] == ["down", "up"]
    # the other sweep values as the report prints them (X2's "YeahPaper", "14ms")
    assert [
        crosscheck.cell_text(plain, dim, value)
        for dim, value in [
            ("protocol", "YeahPaper"),
            ("protocol", "Htcp"),
            ("rtt", "14ms"),
            ("recv_buffer", "16MiB"),
            ("buffer", 1.0),
            ("sack", True),
        ]
    ] == ["YeAH", "H-TCP", "14 ms", "16 MiB", "1.0", "True"]
