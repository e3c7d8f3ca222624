"""Every claim whose check holds one value to its tolerance's bounds has a margin, and it is
the check's own comparison.

Each fixture below gives one claim's check the values it reduces its runs to (the analysis
step replaced by a table), with every other part of the claim holding: the headline value
inside the tolerance must give ``reproduced`` and a margin of at least 0, the value outside
``not reproduced`` and a negative margin. A claim without margin is named, with why, in
:data:`tcprepro.claims.verdicts.WITHOUT_MARGIN`.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from tcprepro.claims import CHECKS, load_registry, study_a, study_b, study_c, study_d
from tcprepro.claims.verdicts import WITHOUT_MARGIN
from test_study_b import _pacing_dataset

A_VARIANTS = ["NewReno", "Cubic", "Compound", "Vegas"]
EMPTY = xr.Dataset()


def _claim(claim_id):
    [claim] = [c for c in load_registry() if c.id == claim_id]
    return claim


def _check(claim_id, data):
    claim = _claim(claim_id)
    return CHECKS[claim.check](data, **claim.args)


# ---- study A: the analysis tables, replaced ------------------------------------------------


def _cell_table(up_pct=95.0, down_pct=95.0, cells=None):
    """A1/A2's per-cell table: every cell at ``up_pct``/``down_pct`` but ``cells``."""
    shape = (len(A_VARIANTS), len(A_VARIANTS))
    table = xr.Dataset(
        {
            name: (("up", "down"), np.full(shape, value))
            for name, value in (
                ("up_pct", up_pct),
                ("down_pct", down_pct),
                ("up_std", 1.0),
                ("down_std", 1.0),
                ("rtt_ms", 250.0),
            )
        },
        coords={"up": A_VARIANTS, "down": A_VARIANTS},
    )
    for (name, up, down), value in (cells or {}).items():
        table[name].loc[{"up": up, "down": down}] = value
    return table


def _patch_cell_table(monkeypatch, table):
    monkeypatch.setattr(study_a, "cell_table", lambda ds: table)


def a_c1(monkeypatch, value):
    _patch_cell_table(monkeypatch, _cell_table(cells={("down_pct", "NewReno", "NewReno"): value}))
    return {"A1": EMPTY}


def a_c3(monkeypatch, drop_pct):
    table = _cell_table(up_pct=100.0)
    table["up_pct"].loc[{"down": "Cubic"}] = 100.0 - drop_pct
    _patch_cell_table(monkeypatch, table)
    return {"A1": EMPTY}


def a_c5(monkeypatch, down_pct):
    cells = {("down_pct", "NewReno", "NewReno"): down_pct}
    _patch_cell_table(monkeypatch, _cell_table(cells=cells))
    return {"A2": EMPTY}


def _response_times(down_means, vegas_up_factor=0.5):
    """Response times (s) per (up, down) cell, three transfers each: a Vegas upload faster."""
    ups = ["NewReno", "Vegas"]
    downs = list(down_means)
    factor = {u: vegas_up_factor if u == "Vegas" else 1.0 for u in ups}
    values = np.array([[[down_means[d] * factor[u]] * 3 for d in downs] for u in ups])
    return xr.DataArray(values, dims=("up", "down", "transfer"), coords={"up": ups, "down": downs})


def _patch_response(monkeypatch, times):
    """Every cell's transfers in one size bin, past slow start, with enough transfers."""
    monkeypatch.setattr(study_a, "response_times", lambda ds, load: times[ds.attrs["figure"]])
    monkeypatch.setattr(study_a, "_transfer_sizes", lambda ds, load: times[ds.attrs["figure"]])
    monkeypatch.setattr(study_a, "size_edges", lambda *datasets: np.array([0.0, np.inf]))
    monkeypatch.setattr(study_a, "slow_start_limit_bytes", lambda ds: 0.0)

    def binned_means(cells, sizes, edges):
        row = {name: float(np.nanmean(times.values)) for name, times in cells.items()}
        return pd.DataFrame([{**row, "n": 1000, "bin_low": 1e6}])

    monkeypatch.setattr(study_a, "binned_means", binned_means)


def a_c8(monkeypatch, ratio):
    sized = _response_times({"NewReno": 1.0, "Vegas": 2.0})
    _patch_response(monkeypatch, {"A3": sized, "A4": sized * ratio})
    return {"A3": xr.Dataset(attrs={"figure": "A3"}), "A4": xr.Dataset(attrs={"figure": "A4"})}


def a_c9(monkeypatch, ratio):
    # Vegas/Compound is the headline (``ratio``); Vegas/NewReno and Vegas/Cubic stay at 0.8
    means = {"Vegas": ratio, "Compound": 1.0, "NewReno": ratio / 0.8, "Cubic": ratio / 0.8}
    _patch_response(monkeypatch, {"A3": _response_times(means, vegas_up_factor=1.0)})
    return {"A3": xr.Dataset(attrs={"figure": "A3"})}


# ---- study B ----------------------------------------------------------------------------------


def b_c1(monkeypatch, phi_pct):
    phi = xr.DataArray(
        [[phi_pct / 100.0] * 2], dims=("case", "rep"), coords={"case": ["Reno.FIFO.20"]}
    )
    monkeypatch.setattr(study_b.analysis_b, "phi", lambda ds: phi)
    return {"B5.1": EMPTY}


def _grid(monkeypatch, cells):
    """B5.16's grid at B = 20: ``{law: (Mb/s, loss rate)}``."""
    laws = list(cells)

    def per_law(index):
        values = [[[cells[law][index]] * 2 for law in laws]]
        return xr.DataArray(
            values, dims=("buffer", "law", "rep"), coords={"buffer": [20], "law": laws}
        )

    monkeypatch.setattr(study_b.analysis_b, "throughput_bps", lambda ds: per_law(0) * 1e6)
    monkeypatch.setattr(study_b.analysis_b, "loss_rate", lambda ds, cls: per_law(1))
    return {"B5.16": xr.Dataset(coords={"law": laws})}


def b_c8(monkeypatch, reno_mbps):
    # 5/10 above 19 Mb/s, beta's range (alpha 1) above alpha's (beta 10), and the largest
    # alpha at beta 10 losing twice the smallest's for 2.5 % more throughput
    return _grid(
        monkeypatch,
        {
            "AIMD.1.2": (reno_mbps, 0.001),
            "AIMD.1.10": (19.5, 0.01),
            "AIMD.5.10": (20.0, 0.015),
            "AIMD.10.10": (20.5, 0.02),
        },
    )


def b_c9(monkeypatch, scalable_mbps):
    # the best pair above 15.2 Mb/s, the most aggressive (10/8) losing more than 1 %
    return _grid(monkeypatch, {"MIMD.50.3": (scalable_mbps, 0.001), "MIMD.10.8": (19.0, 0.02)})


def b_c10(monkeypatch, ratio):
    """A B5.20-shaped dataset: paced over unpaced ``ratio`` at B = 20, 1 at B = 100."""
    return {"B5.20": _pacing_dataset(ratio, 1.0)}


# ---- study C ----------------------------------------------------------------------------------


def _c1(second):
    cwnd = np.full((1, 1, 2, 30), 100_000.0)  # second, rep, flow, time: equal windows
    return xr.Dataset(
        {
            "cwnd_bytes": (("second", "rep", "flow", "time"), cwnd),
            "run_config": (("second", "rep"), [["{}"]]),
            "cc_RenoCount": (("second", "rep", "flow", "time"), cwnd),
        },
        coords={
            "second": [second],
            "rep": [0],
            "flow": ["f1", "f2"],
            "time": np.arange(30.0),
        },
    )


def c_c1(monkeypatch, rtts):
    monkeypatch.setattr(study_c.analysis_c, "path_rtt_s", lambda config: 0.1)
    monkeypatch.setattr(study_c.analysis_c, "convergence_time_s", lambda run, **kw: rtts * 0.1)
    monkeypatch.setattr(study_c.analysis_c, "cwnd_pkts", lambda run: run["cwnd_bytes"])
    return {"C1": _c1("YeahPaper")}


def c_c2(monkeypatch, share):
    seen = {"detected_s": 1.0, "slow_fraction": 0.9, "share": share}
    monkeypatch.setattr(study_c.analysis_c, "reno_detection", lambda run: seen)
    return {"C1": _c1("NewReno")}


def c_c3(monkeypatch, queue_share):
    """C3.1's six (RTT, buffer) cells: YeAH's loss always the lowest, its utilisation 95 %,
    its queue the lowest in ``queue_share`` of the cells (the smallest share of the three)."""
    rtts, buffers = ["14ms", "60ms", "650ms"], [0.1, 1.0]
    lowest = round(queue_share * 6)
    queue = np.array([[1.0 if i * 2 + j < lowest else 9.0 for j in range(2)] for i in range(3)])

    def values(yeah, other):
        return (("protocol", "rtt", "buffer", "rep"), np.stack([yeah, other])[..., None])

    table = xr.Dataset(
        {
            "queue_pkts": values(queue, np.full((3, 2), 5.0)),
            "loss_probability": values(np.full((3, 2), 1e-4), np.full((3, 2), 1e-3)),
            "utilisation": values(np.full((3, 2), 0.95), np.full((3, 2), 0.95)),
        },
        coords={"protocol": ["YeahPaper", "Cubic"], "rtt": rtts, "buffer": buffers, "rep": [0]},
    )
    monkeypatch.setattr(study_c.analysis_c, "pair_metrics", lambda ds: table)
    return {"C3.1": EMPTY}


def c_c4(monkeypatch, utilisation):
    table = xr.Dataset(
        {"utilisation": (("protocol", "loss", "rep"), [[[utilisation]] * 2])},
        coords={"protocol": ["YeahPaper"], "loss": [1e-6, 1e-5], "rep": [0]},
    )
    monkeypatch.setattr(study_c.analysis_c, "robustness", lambda ds: table)
    return {"C3.6": EMPTY}


# ---- study D ----------------------------------------------------------------------------------


def _buffer_table(monkeypatch, error_pct=5.0, share=1.0):
    """D1's cells: three buffer-limited (errors ``error_pct``, 5 and 5 %) and one whose
    window reaches the BDP, carrying ``share`` of the capacity."""
    table = pd.DataFrame(
        {
            "backend": "ns3",
            "fidelity_ok": 1,
            "send_buffer_held": True,
            "peak_window_bytes": 1e5,
            "sndbuf_granted_bytes": 1e5,
            "buffer_limited": [True, True, True, False],
            "measured_bps": [1e8, 1e8, 1e8, share * 1e9],
            "capacity_bps": 1e9,
            "error_pct": [error_pct, 5.0, 5.0, 0.0],
            "c_e": 1.0,
            "c_r": 1.0,
            "rtt_s": 0.012,
            "send_buffer_bytes": [65536, 65536, 65536, 2**24],
            "recv_buffer_bytes": 2**24,
            "bdp_bytes": 1.5e6,
        }
    )
    monkeypatch.setattr(study_d, "buffer_table", lambda ds: table)
    monkeypatch.setattr(study_d, "refit_buffer_coefficients", lambda table: (1.0, 1.0, None))
    return {"D1": EMPTY}


def d_c1(monkeypatch, error_pct):
    return _buffer_table(monkeypatch, error_pct=error_pct)


def d_c2(monkeypatch, share):
    return _buffer_table(monkeypatch, share=share)


def d_c3(monkeypatch, padhye_ratio):
    # a SACK cell with rare timeouts (part (a): measured/Padhye ``padhye_ratio``) and one
    # where they dominate, Mathis twice too high and Padhye closer (part (b) holds)
    table = pd.DataFrame(
        {
            "measured_bps": [1e6, 1e5],
            "timeout_share": [0.01, 0.6],
            "window_capped": [False, False],
            "sack": [True, True],
            "mathis_ratio": [1.0, 0.5],
            "padhye_ratio": [padhye_ratio, 0.9],
            "loss_rate": [0.001, 0.1],
            "rtt_s": [0.02, 0.02],
            "acked_per_ack": [2, 2],
            "rto_count": [0, 40],
        }
    )
    monkeypatch.setattr(study_d, "loss_table", lambda ds: table)
    return {"D3": EMPTY}


#: per claim with a margin: its fixture, a headline value inside its tolerance, one outside
MARGIN_FIXTURES = {
    "A-c1": (a_c1, 92.0, 85.0),
    "A-c3": (a_c3, 30.0, 60.0),
    "A-c5": (a_c5, 45.0, 55.0),
    "A-c8": (a_c8, 2.0, 1.2),
    "A-c9": (a_c9, 0.5, 0.3),
    "B-c1": (b_c1, 45.0, 25.0),
    "B-c8": (b_c8, 12.0, 8.0),
    "B-c9": (b_c9, 17.0, 10.0),
    "B-c10": (b_c10, 2.0, 1.2),
    "C-c1": (c_c1, 500.0, 2000.0),
    "C-c2": (c_c2, 0.5, 0.2),
    "C-c3": (c_c3, 5 / 6, 3 / 6),
    "C-c4": (c_c4, 0.9, 0.5),
    "D-c1": (d_c1, 25.0, 40.0),
    "D-c2": (d_c2, 0.95, 0.5),
    "D-c3": (d_c3, 1.1, 1.5),
}


def test_every_claim_has_a_margin_fixture_or_says_why_it_has_none():
    ids = {c.id for c in load_registry()}
    assert not set(MARGIN_FIXTURES) & set(WITHOUT_MARGIN)
    assert set(MARGIN_FIXTURES) | set(WITHOUT_MARGIN) == ids
    assert all(why.strip() for why in WITHOUT_MARGIN.values())


@pytest.mark.parametrize("claim_id", sorted(MARGIN_FIXTURES))
def test_a_claim_with_a_scalar_check_has_its_margin_and_it_is_the_checks(claim_id, monkeypatch):
    fixture, inside, outside = MARGIN_FIXTURES[claim_id]
    for value, verdict in ((inside, "reproduced"), (outside, "not reproduced")):
        result = _check(claim_id, fixture(monkeypatch, value))
        assert result.verdict == verdict, (value, result.value)
        margin = result.margin
        assert margin is not None, (claim_id, value, result.value)
        assert (margin.distance >= 0) == (verdict == "reproduced"), margin.text()
        assert margin.reading in (("meets",) if verdict == "reproduced" else ("misses", "far from"))


def test_a_claim_without_margin_prints_none(monkeypatch):
    """A-c7 (four parts) returns no bounds even where every part is computed."""
    _patch_cell_table(monkeypatch, _cell_table())
    result = _check("A-c7", {"A1": EMPTY, "A2": EMPTY})
    assert result.verdict in ("reproduced", "not reproduced")
    assert result.margin is None


# ---- the reading of a claim in several parts ----------------------------------------------


def test_a_claim_meets_its_tolerance_in_its_reading_only_if_every_part_does(monkeypatch):
    """B-c8: Reno's pair inside 9.6-15 Mb/s (its margin's part), the (5, 10) pair below the
    19 Mb/s it must exceed: an inconclusive verdict's reading misses, naming that part."""
    cells = {"AIMD.1.2": (12.0, 0.001), "AIMD.1.10": (19.5, 0.01), "AIMD.5.10": (17.8, 0.015)}
    data = _grid(monkeypatch, {**cells, "AIMD.10.10": (18.2, 0.02)})
    result = _check("B-c8", data)
    assert result.verdict == "not reproduced"
    assert result.margin.reading == "meets"  # the headline part alone
    undecided = replace(result, verdict="inconclusive")
    assert undecided.reading == "misses"
    assert undecided.reading_text() == (
        "reading, not a verdict: misses the tolerance in 1 of 4 parts: 5/10: 17.8 Mb/s"
    )
    # every part inside: it meets, and names no part
    held = _check("B-c8", b_c8(monkeypatch, 12.0))
    assert replace(held, verdict="inconclusive").reading_text() == (
        "reading, not a verdict: meets the tolerance"
    )


def test_a_check_that_did_not_hold_never_reads_meets_under_an_inconclusive_verdict(monkeypatch):
    """The regime makes the verdict inconclusive; the check's own outcome (every part of the
    tolerance) is kept, and a headline inside the tolerance of a check that failed misses."""
    from tcprepro.claims import cells as cells_module
    from tcprepro.claims.cells import TracedRun, Unmet
    from tcprepro.claims.judge import _judge

    unmet = [Unmet("too few loss events", TracedRun("B5.16", {}))]
    monkeypatch.setattr(cells_module, "unmet_regime", lambda regime, cells, data: unmet)
    monkeypatch.setattr(cells_module, "cell_coverage", lambda cells, data: _Covered())
    claim = replace(_claim("B-c8"), regime={"min_loss_events": 3})
    data = _grid(monkeypatch, {"AIMD.1.2": (12.0, 0.001), "AIMD.5.10": (17.8, 0.015)})
    result = _judge(claim, data, resamples=0, tier="quick")
    assert result.verdict == "inconclusive"
    assert result.held is False
    assert result.reading == "misses"
    assert "5/10: 17.8 Mb/s" in result.reading_text()


class _Covered:
    present, total = 1, 1

    def text(self):
        return "1 cell"


def test_c_c3_has_a_reading_beside_its_inconclusive_verdict(monkeypatch):
    """C-c3 (three shares of cells) holds its smallest share to the tolerance's 2/3."""
    result = replace(_check("C-c3", c_c3(monkeypatch, 2 / 6)), verdict="inconclusive")
    assert result.margin is not None
    assert result.reading_text() == (
        "reading, not a verdict: far from the tolerance in 1 of 3 parts: lowest mean queue in "
        "2/6 cells"
    )


def test_the_grid_claims_quote_the_fair_target_the_figure_draws(monkeypatch):
    """B-c8/B-c9 quote the fair target from the function the figure's dashed line reads
    (the available capacity's mean at their buffer); no registry text states its own."""
    for claim_id, fixture in (("B-c8", b_c8), ("B-c9", b_c9)):
        data = fixture(monkeypatch, 12.0 if claim_id == "B-c8" else 17.0)
        data = {"B5.16": data["B5.16"].assign_coords(buffer=[20, 100])}
        capacity = xr.DataArray([[23.7e6, 23.7e6], [30e6, 30e6]], dims=("buffer", "rep"))
        capacity = capacity.assign_coords(buffer=[20, 100])
        monkeypatch.setattr(
            study_b.analysis_b,
            "available_capacity_bps",
            lambda ds, capacity=capacity: capacity.sel(buffer=ds["buffer"].values),
        )
        result = _check(claim_id, data)
        assert result.value.startswith("fair target 23.7 Mb/s; "), result.value
        claim = _claim(claim_id)
        for text in (claim.text, claim.tolerance, claim.metric):
            assert "fair target 2" not in text, text


def test_c_c3_counts_two_thirds_of_the_cells_exactly(monkeypatch):
    """ ">= 2/3 of the cells" holds at 4 of 6 cells (the registry's 0.6667 asked 4.0002)."""
    result = _check("C-c3", c_c3(monkeypatch, 4 / 6))
    assert result.verdict == "reproduced", result.value
    assert result.margin is not None
    assert result.margin.distance == pytest.approx(0)
    assert _check("C-c3", c_c3(monkeypatch, 3 / 6)).verdict == "not reproduced"
