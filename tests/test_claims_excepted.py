"""A cell a claim excepts is none of its cells: neither its coverage nor its regime reads it.

A-c1 ("every download variant but Vegas reaches about 100 %") excepts the (up=Compound,
down=Cubic) cell, which the paper's next sentence singles out (A-c2): its ``cells:`` entry
names it in ``except:``, as its check's ``except_cells``.
"""

import json

import numpy as np
import pytest

from synthetic import synthetic_run
from tcprepro.claims import check_claims, load_registry
from tcprepro.claims.cells import claim_cells, validate_claim_cells
from tcprepro.claims.registry import _parsed_registry
from tcprepro.store import combine_runs

VARIANTS = ["NewReno", "Cubic", "Compound", "Vegas"]
EXCEPTED = ("Compound", "Cubic")


def _warmup_losses_only(times):
    """Cumulative lost segments: losses in the warm-up (2 s) only, none in the window."""
    return np.cumsum(np.tile([1.0, 2.0], (times.size, 1)) * (times <= 2.0)[:, None], axis=0)


def _a1(excepted_down_pct=60.0):
    """A1 at 95 % download utilisation in every cell, losing in every interval, but the
    excepted cell: ``excepted_down_pct`` and no loss in its measured window."""
    runs = []
    for up in VARIANTS:
        for down in VARIANTS:
            quiet = (up, down) == EXCEPTED
            down_pct = excepted_down_pct if quiet else 95.0
            for rep in range(2):
                runs.append(
                    synthetic_run(
                        goodput_bps=(9.6e6 * down_pct / 100, 1.92e6 * 0.6),
                        rtt_s=(0.25, 0.25),
                        duration_s=250.0,
                        interval_s=2.0,
                        extra_flow_series={"lost_data_pkts": _warmup_losses_only}
                        if quiet
                        else None,
                        attrs={
                            "figure": "A1",
                            "sweep": json.dumps({"up": up, "down": down}),
                            "sweep_values": json.dumps({"up": VARIANTS, "down": VARIANTS}),
                            "rep": rep,
                        },
                    )
                )
    return combine_runs(runs)


def _a_c1():
    [claim] = [c for c in load_registry() if c.id == "A-c1"]
    return claim


def test_the_excepted_cell_is_none_of_the_claims_cells():
    claim = _a_c1()
    cells = claim_cells(claim.cells)["A1"]
    assert {"up": "Compound", "down": "Cubic"} not in cells
    assert len(cells) == 4 * 3 - 1  # every upload x the non-Vegas downloads, but the one
    assert [dict(c) for c in claim.args["except_cells"]] == [{"up": "Compound", "down": "Cubic"}]


def test_the_regime_criteria_do_not_read_the_cell_the_claim_excepts():
    # the excepted cell has no loss in its measured window (and a low utilisation): the
    # claim's other cells meet every criterion, so the claim is decided, on 11 cells
    result = {
        r.claim.id: r for r in check_claims({"A1": _a1()}, study="A", resamples=0, tier="quick")
    }["A-c1"]
    assert result.verdict == "reproduced", result.explanation
    assert "Compound" not in result.explanation
    assert result.cells == "11 of 11 cells"
    assert result.coverage == "11 of 11 cells"  # the check's own count: no cell "missing"
    # the claim's own cells still answer to its regime: A-c2 reads the excepted cell
    a_c2 = {
        r.claim.id: r for r in check_claims({"A1": _a1()}, study="A", resamples=0, tier="quick")
    }["A-c2"]
    assert a_c2.verdict == "inconclusive"
    assert "up=Compound, down=Cubic" in a_c2.explanation


def test_an_excepted_cell_must_be_a_cell_of_its_entry_and_the_checks_own():
    with pytest.raises(ValueError, match="is no cell of it"):
        validate_claim_cells(
            "X",
            [
                {
                    "figure": "A1",
                    "up": ["NewReno"],
                    "down": ["Cubic"],
                    "except": [{"up": "Vegas", "down": "Cubic"}],
                }
            ],
        )
    text = """
- id: X-c1
  study: A
  check: a_download_utilisation_high
  args: {figure: A1, min_pct: 90, except_cells: [{up: Compound, down: Cubic}]}
  cells: [{figure: A1, up: [NewReno, Compound], down: [Cubic]}]
"""
    with pytest.raises(ValueError, match="except_cells must be the cells"):
        _parsed_registry(text)
