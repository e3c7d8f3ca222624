"""The claims checker on synthetic combined datasets with known answers: checks can fail."""

import csv
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from synthetic import synthetic_run
from tcprepro import claims
from tcprepro.campaign import load_workflow_config
from tcprepro.claims import (
    Claim,
    ClaimResult,
    check_claims,
    explainer,
    format_table,
    load_registry,
    write_csv,
    write_tex,
)
from tcprepro.claims.cells import claim_cells
from tcprepro.store import combine_runs
from tcprepro.variants import get_variant

ROOT = Path(__file__).resolve().parents[1]

VARIANTS = ["NewReno", "Cubic", "Vegas"]


def a_figure(figure, utilisation, rtt_s=0.25, reps=2, duration_s=250.0, interval_s=2.0, **kwargs):
    """A combined A1/A2-like dataset; utilisation[(up, down)] = (up %, down %).

    The runs last long enough for the claims' regime (300 RTTs measured) and lose
    segments in every interval; ``kwargs`` go to :func:`synthetic_run`. A value may
    also be a list of (up %, down %), one per repetition.
    """
    values = {"up": VARIANTS, "down": VARIANTS}
    runs = []
    for (up, down), pct in utilisation.items():
        for rep in range(reps):
            up_pct, down_pct = pct[rep] if isinstance(pct, list) else pct
            jitter = 1 + 0.01 * rep
            runs.append(
                synthetic_run(
                    goodput_bps=(9.6e6 * down_pct / 100 * jitter, 1.92e6 * up_pct / 100 * jitter),
                    rtt_s=(rtt_s, rtt_s),
                    duration_s=duration_s,
                    interval_s=interval_s,
                    **kwargs,
                    attrs={
                        "figure": figure,
                        "sweep": json.dumps({"up": up, "down": down}),
                        "sweep_values": json.dumps(values),
                        "rep": rep,
                    },
                )
            )
    return combine_runs(runs)


def grid(default, **cells):
    out = {(u, d): default for u in VARIANTS for d in VARIANTS}
    for key, value in cells.items():
        up, down = key.split("_")
        out[(up, down)] = value
    return out


def by_id(results):
    return {r.claim.id: r for r in results}


def test_a_claims_reproduced_and_not_reproduced_on_known_data():
    sized = a_figure(
        "A1",
        grid(
            (60, 98),
            Vegas_Vegas=(60, 30),
            NewReno_Vegas=(80, 20),
            Cubic_Vegas=(80, 20),
            NewReno_Cubic=(38, 99),
            Cubic_Cubic=(40, 99),
            Vegas_Cubic=(40, 99),
        ),
    )
    oversized = a_figure(
        "A2",
        grid(
            (95, 40),
            NewReno_Vegas=(95, 10),
            Cubic_Vegas=(95, 10),
            Vegas_NewReno=(40, 95),
            Vegas_Cubic=(40, 96),
            Vegas_Vegas=(40, 30),
        ),
        rtt_s=0.7,
    )
    results = by_id(check_claims({"A1": sized, "A2": oversized}, study="A"))
    assert results["A-c1"].verdict == "reproduced"
    assert results["A-c3"].verdict == "reproduced"  # 60 % -> 38-40 %: a 33-37 % drop
    assert results["A-c4"].verdict == "reproduced"
    assert results["A-c5"].verdict == "reproduced"
    assert results["A-c6"].verdict == "reproduced"
    assert results["A-c2"].verdict == "not run"  # no Compound in this data
    assert results["A-c8"].verdict == "not run"  # no A3/A4

    # the same checks fail when the data disagrees
    bad = a_figure("A2", grid((70, 70)), rtt_s=0.7)
    results = by_id(check_claims({"A1": sized, "A2": bad}, study="A"))
    assert results["A-c5"].verdict == "not reproduced"
    assert results["A-c6"].verdict == "not reproduced"
    assert "up 70" in results["A-c5"].value
    low = a_figure("A1", grid((60, 80)))
    assert by_id(check_claims({"A1": low}, study="A"))["A-c1"].verdict == "not reproduced"


def test_rtt_claim_parts_are_checked_and_reported():
    sized = a_figure("A1", grid((60, 98)), rtt_s=0.33)
    oversized = a_figure("A2", grid((95, 40)), rtt_s=0.7)
    result = by_id(check_claims({"A1": sized, "A2": oversized}, study="A"))["A-c7"]
    assert result.verdict == "not reproduced"
    assert "(a) A1 non-Vegas 330 ms (0 of " in result.value  # 330 ms: outside 200-312.5


def test_explanations_accompany_disagreements_only(tmp_path):
    registry = [
        Claim(
            id="T-1",
            study="T",
            text="t",
            paper="p",
            tolerance="tol",
            check="always_fails",
            explain="why_it_fails",
            explain_args={"queue": 42},
        ),
        Claim(
            id="T-2",
            study="T",
            text="t",
            paper="p",
            tolerance="tol",
            check="always_passes",
            explain="why_it_fails",
        ),
    ]

    @claims.check
    def always_fails(data):
        return ClaimResult("1", "not reproduced")

    @claims.check
    def always_passes(data):
        return ClaimResult("2", "reproduced")

    @explainer
    def why_it_fails(data, queue):
        return f"the queue held {queue} packets"

    results = check_claims({}, study="T", registry=registry)
    assert results[0].explanation == "the queue held 42 packets"
    assert results[1].explanation == ""
    text = format_table(results)
    assert "why: the queue held 42 packets" in text
    write_tex(results, tmp_path / "c.tex", caption="x")
    tex = (tmp_path / "c.tex").read_text()
    assert r"\item[T-1] the queue held 42 packets" in tex
    assert r"\item[T-2]" not in tex


def test_verdict_values_are_restricted():
    with pytest.raises(ValueError, match="verdict must be one of"):
        ClaimResult("x", "sort of")


def _losses_only_in_warmup(warmup_s=2.0):
    """Cumulative lost-segment counters with losses during the warm-up only."""

    def make(times):
        per_interval = np.tile([1.0, 2.0], (times.size, 1)) * (times <= warmup_s)[:, None]
        return np.cumsum(per_interval, axis=0)

    return {"lost_data_pkts": make}


def test_a_run_without_loss_in_its_window_cannot_decide_a_loss_driven_claim():
    # A-c5 (oversized buffer, NewReno both ways: up 95 %, down 40 %) is loss-driven: its
    # regime asks 3 loss events per flow in the measured window
    cells = grid((95, 40))
    quiet = a_figure("A2", cells, rtt_s=0.7, extra_flow_series=_losses_only_in_warmup())
    result = by_id(check_claims({"A2": quiet}, study="A", resamples=0))["A-c5"]
    assert result.verdict == "inconclusive"
    assert "fewer than 3 loss events in the measured window" in result.explanation
    assert "fewest 0" in result.explanation
    assert "up 95" in result.value  # the value is still reported
    # the same runs, losing segments in every interval, decide it
    lossy = a_figure("A2", cells, rtt_s=0.7)
    assert by_id(check_claims({"A2": lossy}, study="A", resamples=0))["A-c5"].verdict == (
        "reproduced"
    )
    # and a run too short for 300 RTTs cannot decide it either
    short = a_figure("A2", cells, rtt_s=0.7, duration_s=60.0)
    result = by_id(check_claims({"A2": short}, study="A", resamples=0))["A-c5"]
    assert result.verdict == "inconclusive"
    assert "shorter than 300 RTTs" in result.explanation


def test_a_flow_still_in_its_first_slow_start_makes_the_claim_inconclusive():
    # no loss and a growing window before the window starts: still in the first slow start
    def growing(times):
        return np.column_stack([times * 1e4, times * 1e3])

    def late_losses(times):
        return np.cumsum(np.tile([1.0, 2.0], (times.size, 1)) * (times > 2.0)[:, None], axis=0)

    ds = a_figure(
        "A2",
        grid((95, 40)),
        rtt_s=0.7,
        extra_flow_series={"cwnd_bytes": growing, "lost_data_pkts": late_losses},
    )
    result = by_id(check_claims({"A2": ds}, study="A", resamples=0))["A-c5"]
    assert result.verdict == "inconclusive"
    assert "still in their first slow start" in result.explanation


def test_every_verdict_carries_its_coverage_and_confidence():
    sized = a_figure("A1", grid((60, 98)))
    result = by_id(check_claims({"A1": sized}, study="A"))["A-c1"]
    # A-c1 reads 4 upload x 3 download variants but the cell it excepts (up=Compound,
    # down=Cubic); this build has no Compound
    assert result.verdict == "reproduced"
    assert result.cells == "6 of 11 cells"
    assert result.confidence.startswith("robust: 4 of 4 resamples")
    assert "lowest download utilisation (%)" in result.confidence
    # two repetitions that straddle the tolerance: the verdict holds on their mean only
    straddling = grid((95, 40), NewReno_NewReno=[(95, 36), (95, 57)])
    result = by_id(check_claims({"A2": a_figure("A2", straddling, rtt_s=0.7)}, study="A"))["A-c5"]
    assert result.verdict == "reproduced"  # mean 47 % is within 10 points of 40 %
    assert result.confidence.startswith("fragile")
    assert "95 % interval" in result.confidence
    text = format_table([result])
    assert "REPRODUCED on 1 cell" in text
    assert "confidence: fragile" in text


def test_a_claim_not_reproduced_always_says_why(tmp_path):
    bad = a_figure("A2", grid((70, 70)), rtt_s=0.7)
    results = by_id(check_claims({"A2": bad}, study="A", resamples=0))
    for claim_id in ("A-c5", "A-c6"):
        assert results[claim_id].verdict == "not reproduced"
        assert results[claim_id].explanation
    # a claim with no explainer of its own still gets the traces of its cells
    registry = [replace(c, explain="", explain_args={}) for c in load_registry() if c.id == "A-c5"]
    (result,) = check_claims({"A2": bad}, registry=registry, resamples=0)
    assert result.verdict == "not reproduced"
    assert result.explanation.startswith("Means over the measurement window")
    assert "A2 (up=NewReno, down=NewReno)" in result.explanation
    write_csv([result], tmp_path / "c.csv")
    row = next(csv.DictReader((tmp_path / "c.csv").open()))
    assert row["verdict"] == "not reproduced"
    assert row["cells"] == "1 cell"
    assert row["explanation"] == result.explanation


def test_a_what_if_that_ran_some_cells_only_is_judged_and_explained_on_those(tmp_path):
    """A knob trace of A-c3 runs one upload's cells only (its Compound upload's): the
    explainer's cells (NewReno uploads) are in the sweep but did not run, and are passed
    over."""
    cells = {("Cubic", "NewReno"): (90, 90), ("Cubic", "Cubic"): (20, 99)}
    data = {"A1": a_figure("A1", cells)}
    result = by_id(check_claims(data, study="A", resamples=0))["A-c3"]
    assert result.verdict == "not reproduced"  # a 78 % drop, above 50 %
    assert "largest drop 78 % (up=Cubic)" in result.value
    assert "A1 (up=NewReno" not in result.explanation


def test_a_model_caveat_is_shown_with_every_verdict_of_its_claim(tmp_path):
    """Reproduced or not, a claim's model caveat is in the terminal table, the CSV and the
    report's row."""
    registry = [
        Claim("T-1", "T", "t", "p", "tol", "always_passes_too", model_caveat="rho stays 1"),
        Claim("T-2", "T", "t", "p", "tol", "always_passes_too"),
    ]

    @claims.check
    def always_passes_too(data):
        return ClaimResult("2", "reproduced")

    results = check_claims({}, study="T", registry=registry)
    assert "model caveat: rho stays 1" in format_table(results)
    write_csv(results, tmp_path / "c.csv")
    rows = list(csv.DictReader((tmp_path / "c.csv").open()))
    assert [row["model_caveat"] for row in rows] == ["rho stays 1", ""]
    write_tex(results, tmp_path / "c.tex", caption="x")
    assert r"\emph{Model caveat:} rho stays 1" in (tmp_path / "c.tex").read_text()
    # the Hybla runs are tcprepro's model (rho adapts), not ns-3's TcpHybla (rho stays 1):
    # no claim may still carry the caveat of ns-3's model
    assert get_variant("Hybla").model == "tcprepro"
    hybla_readers = [
        c for c in load_registry() if any("Hybla" in x.get("variant", []) for x in c.cells)
    ]
    assert {"B-c5", "B-c6"} <= {claim.id for claim in hybla_readers}
    assert not [claim.id for claim in hybla_readers if "TcpHybla" in claim.model_caveat]


def test_registry_cells_are_cells_of_the_paper_tier():
    """Every claim names the cells it reads: real sweep values of its figures' paper tier."""
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    for claim in load_registry():
        assert claim.cells, f"{claim.id} names no cells"
        assert claim.regime.get("reason"), f"{claim.id} states no reason for its regime"
        for figure, cells in claim_cells(claim.cells).items():
            assert figure in claim.requires, (claim.id, figure)
            values = config.sweep_values(figure, "paper")
            for cell in cells:
                assert list(cell) == list(values), (claim.id, figure, cell)
                for dim, value in cell.items():
                    assert value in values[dim], (claim.id, figure, dim, value)


def test_one_repetition_states_no_standard_deviation():
    """A1's '93 ± nan %' at the smoke tier: with one repetition only the mean is given."""
    from tcprepro.claims import CHECKS, _load_checks

    _load_checks()
    check = CHECKS["a_cell_utilisation"]
    args = {"figure": "A2", "up": "NewReno", "down": "NewReno"}
    args |= {"expected_up_pct": 95, "expected_down_pct": 40, "tolerance_pct": 10}
    one = check({"A2": a_figure("A2", grid((95, 40)), reps=1)}, **args)
    assert one.value == "up 95 %, down 40 %"
    two = check({"A2": a_figure("A2", grid((95, 40)), reps=2)}, **args)
    assert re.fullmatch(r"up 95 ± \d+ %, down 40 ± \d+ %", two.value)


def test_figures_with_as_many_repetitions_share_their_bootstrap_draws():
    """Repetition r of every figure runs with seed r (A3 and A4: the same planned
    transfers), so a resample keeps the pairs a check matches transfer by transfer;
    a figure with another count of repetitions draws its own."""
    from tcprepro.claims import _resamples

    data = {
        "A3": xr.Dataset(coords={"rep": range(10)}),
        "A4": xr.Dataset(coords={"rep": range(10)}),
        "A1": xr.Dataset(coords={"rep": range(3)}),
    }
    draws = list(_resamples(data, ["A3", "A4", "A1"], 100))
    assert len(draws) == 100
    assert all(d["A3"] == d["A4"] for d in draws)
    assert any(d["A3"] != list(range(10)) for d in draws)
    assert {len(d["A1"]) for d in draws} == {3}
    small = list(_resamples({k: data[k] for k in ("A1",)} | {"B": data["A1"]}, ["A1", "B"], 100))
    assert len(small) == 27  # every ordered resample of 3, shared
    assert all(d["A1"] == d["B"] for d in small)
