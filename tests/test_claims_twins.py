"""Two verdicts per claim: on ns-3 and on the claim's emulated twin (real Linux TCP).

Synthetic datasets with known answers: an A2-like ns-3 dataset and an emulated twin
``X9`` running its cells; the twin's verdict is earned the same way as the first one.
"""

import csv
from dataclasses import replace

import pytest

from conftest import compile_report_inputs
from tcprepro.campaign import load_workflow_config
from tcprepro.claims import (
    check_claims,
    format_table,
    load_registry,
    twin_claim,
    write_csv,
    write_tex,
)
from tcprepro.errors import ConfigError
from test_claims import ROOT, a_figure, grid

TWIN = {"figure": "X9", "as": "A2", "reason": "X9 runs A2's cells with real Linux TCP"}


def registry():
    """A-c5 (A2, NewReno both ways: up 95 %, down 40 %) with a twin; A-c6 without one."""
    claims = {c.id: c for c in load_registry()}
    return [replace(claims["A-c5"], emulated=TWIN), replace(claims["A-c6"], emulated={})]


def emulated(utilisation, route="uml", **kwargs):
    """An emulated combined dataset of the twin X9 (A2's sweep, backend mininet)."""
    ds = a_figure("X9", utilisation, rtt_s=0.7, **kwargs)
    return ds.assign_attrs(backend="mininet", emulation_route=route, figure="X9")


@pytest.fixture(scope="module")
def ns3():
    return a_figure(
        "A2",
        grid((95, 40), Vegas_NewReno=(40, 95), Vegas_Cubic=(40, 96), Vegas_Vegas=(40, 30)),
        rtt_s=0.7,
    )


def judge(ns3, twin, **kwargs):
    results = check_claims({"A2": ns3}, registry=registry(), resamples=0, emulated=twin, **kwargs)
    return {r.claim.id: r for r in results}


def test_the_twin_disagrees_and_the_claim_gets_two_different_verdicts(ns3, tmp_path):
    results = judge(ns3, {"X9": emulated(grid((70, 70)))})
    first, second = results["A-c5"], results["A-c5"].emulated
    assert first.verdict == "reproduced"
    assert "up 95" in first.value
    assert second is not None
    assert second.verdict == "not reproduced"
    assert second.backend == "Linux (UML)"
    assert "up 70" in second.value
    assert second.cells == "1 cell"
    assert second.explanation  # a disagreement says why, on the twin's traces
    assert "X9" in second.explanation
    # the twin's verdict reads the twin: its claim names X9 where the first names A2
    assert second.claim.requires == ("X9",)
    assert second.claim.args["figure"] == "X9"
    # a claim without twin gets no second verdict
    assert results["A-c6"].emulated is None
    # the same twin agreeing: two equal verdicts
    agreeing = judge(ns3, {"X9": emulated(grid((95, 40)))})["A-c5"]
    assert agreeing.emulated.verdict == "reproduced"

    write_csv(list(results.values()), tmp_path / "T.csv")
    rows = {r["claim"]: r for r in csv.DictReader((tmp_path / "T.csv").open())}
    assert rows["A-c5"]["verdict"] == "reproduced"
    assert rows["A-c5"]["emulated_verdict"] == "not reproduced"
    assert rows["A-c5"]["emulated_backend"] == "Linux (UML)"
    assert rows["A-c5"]["emulated_cells"] == "1 cell"
    assert "up 70" in rows["A-c5"]["emulated_value"]
    assert rows["A-c6"]["emulated_verdict"] == ""
    assert rows["A-c6"]["emulated_value"] == ""

    write_tex(list(results.values()), tmp_path / "T.tex", caption="c")
    tex = (tmp_path / "T.tex").read_text()
    line = r"\newline{\footnotesize Linux (UML): \textcolor{BrickRed}{not reproduced}, 1 cell"
    assert line in tex
    assert tex.count("Linux (UML):") == 1  # A-c6 has no second line
    assert r"\item[A-c5] Linux (UML), X9's emulated runs of A2's cells: not reproduced" in tex
    text = format_table(list(results.values()))
    assert "Linux (UML): NOT REPRODUCED on 1 cell" in text


def test_the_twin_missing_the_regime_is_inconclusive(ns3):
    # 60 s at 0.7 s: about 80 RTTs measured, A-c5's regime asks 300
    short = emulated(grid((95, 40)), duration_s=60.0)
    result = judge(ns3, {"X9": short})["A-c5"]
    assert result.verdict == "reproduced"
    assert result.emulated.verdict == "inconclusive"
    assert "shorter than 300 RTTs" in result.emulated.explanation
    assert "X9" in result.emulated.explanation
    # the twin running part of the claim's cells: the coverage says so
    assert result.emulated.cells == "1 cell"
    partial = emulated({("Vegas", "Vegas"): (40, 30)})
    result = judge(ns3, {"X9": partial})["A-c5"]
    assert result.emulated.verdict == "not run"
    assert result.emulated.cells == "0 of 1 cell"


def test_a_build_without_emulation_says_so(ns3, tmp_path):
    results = judge(ns3, None, emulation_note="excluded by the profile (emulation: exclude)")
    second = results["A-c5"].emulated
    assert second.verdict == "not run"
    assert second.coverage == "not emulated in this build"
    assert second.explanation == "excluded by the profile (emulation: exclude)"
    assert results["A-c6"].emulated is None
    write_tex(list(results.values()), tmp_path / "T.tex", caption="c")
    tex = (tmp_path / "T.tex").read_text()
    assert r"\textcolor{gray}{not run}, not emulated in this build}" in tex
    # emulation in the build, but not this twin
    assert judge(ns3, {})["A-c5"].emulated.explanation == "X9 has no emulated dataset in this build"


def test_a_twin_dataset_that_cannot_judge_the_claim_is_an_error(ns3):
    with pytest.raises(ValueError, match="is ns-3's"):
        judge(ns3, {"X9": emulated(grid((95, 40))).assign_attrs(backend="ns3")})
    with pytest.raises(ValueError, match="is A1's"):
        judge(ns3, {"X9": emulated(grid((95, 40))).assign_attrs(figure="A1")})
    without_up = emulated(grid((95, 40))).isel(up=0, drop=True)
    with pytest.raises(ValueError, match="has no dimension up"):
        judge(ns3, {"X9": without_up})


def test_registry_twins_are_validated(tmp_path):
    base = (ROOT / "src/tcprepro/claims/registry.yaml").read_text()

    def load(block):
        entry = base.split("- id: D-c2")[0].split("- id: D-c1")[1]
        entry = "- id: D-c1" + entry.split("  emulated:")[0] + f"  emulated: {block}\n"
        path = tmp_path / "r.yaml"
        path.write_text(entry)
        return load_registry(path)

    assert load("{figure: X3, as: D1, reason: r}")[0].twin == ("X3", "D1")
    assert load("{reason: no twin}")[0].twin is None
    with pytest.raises(ValueError, match="states its reason"):
        load("{figure: X3, as: D1}")
    with pytest.raises(ValueError, match="a figure the claim requires"):
        load("{figure: X3, as: D3, reason: r}")
    with pytest.raises(ValueError, match=r"need emulated\.figure"):
        load("{as: D1, reason: r}")
    with pytest.raises(ValueError, match=r"need emulated\.figure"):
        load("{absent: {send_buffer: [32MiB]}, reason: r}")
    with pytest.raises(ValueError, match="absent must map a dimension to a list"):
        load("{figure: X3, as: D1, absent: {send_buffer: 32MiB}, reason: r}")
    with pytest.raises(ValueError, match="unknown emulated keys"):
        load("{figure: X3, as: D1, reason: r, tier: smoke}")


def claims_absent(claim_id):
    return next(c for c in load_registry() if c.id == claim_id).emulated["absent"]


def test_the_config_checks_each_twin_against_its_figures(monkeypatch):
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    assert config.twins("D") == {"X3": "D1", "X4": "D3"}
    assert config.twins("C") == {"X7": "C1", "X2": "C3.1", "X5": "C3.6"}  # C-c1, C-c3, C-c4
    # B-c1 and B-c3 on X12 (B-c3's fair-queueing B = 625 case stated absent), B-c7 on X13
    # (its B = 200 and 625 cells stated absent), B-c10 on X10; B-c2, B-c4, B-c5 and B-c6
    # state why no twin can judge them
    assert config.twins("B") == {"X12": "B5.1", "X13": "B5.14", "X10": "B5.20"}
    assert claims_absent("B-c3") == {"case": ["Reno+HSTCP.FQ.625"]}
    assert claims_absent("B-c7") == {"buffer": [200, 625]}
    claims = {c.id: c for c in load_registry()}
    assert claims["C-c3"].twin == ("X2", "C3.1")
    assert claims["C-c4"].twin == ("X5", "C3.6")
    assert claims["C-c2"].twin is None  # count_reno is not reported by Linux's tcp_yeah
    assert claims["C-c2"].emulated["reason"].startswith("no twin can judge it")
    for claim in ("B-c5", "B-c6"):
        assert "X6" in claims[claim].emulated["reason"]
    for claim in ("B-c8", "B-c9"):  # X14 runs only the pairs Linux has: a table, no verdict
        assert claims[claim].twin is None
        assert "X14" in claims[claim].emulated["reason"]
    for claim in ("B-c2", "B-c4"):  # they read drops per flow, which Linux does not count
        assert claims[claim].twin is None
        assert "per queue" in claims[claim].emulated["reason"]
    d_c1 = claims["D-c1"]

    def twins_with(**block):
        claim = replace(d_c1, emulated={"reason": "r", **block})
        monkeypatch.setattr("tcprepro.claims.load_registry", lambda: [claim])
        return load_workflow_config(ROOT / "workflow/config.yaml").twins("D")

    with pytest.raises(ConfigError, match="X99 is no figure"):
        twins_with(figure="X99", **{"as": "D1"})
    with pytest.raises(ConfigError, match="is a figure of study C"):
        twins_with(figure="X2", **{"as": "D1"})
    with pytest.raises(ConfigError, match="not run by both backends"):
        twins_with(figure="D1.1", **{"as": "D1"})
    # a claim reading a cell its twin does not sweep (a 32-MiB send buffer)
    narrow = replace(
        d_c1,
        cells=({**d_c1.cells[0], "send_buffer": ["64KiB", "32MiB"]},),
        emulated={"figure": "X3", "as": "D1", "reason": "r"},
    )
    monkeypatch.setattr("tcprepro.claims.load_registry", lambda: [narrow])
    with pytest.raises(ConfigError, match="X3 has no cell with send_buffer = '32MiB'"):
        load_workflow_config(ROOT / "workflow/config.yaml").twins("D")
    # the same cell stated absent (the twin cannot run it): accepted, and the twin's claim
    # keeps it, so its coverage counts it as not run
    stated = replace(narrow, emulated={**narrow.emulated, "absent": {"send_buffer": ["32MiB"]}})
    monkeypatch.setattr("tcprepro.claims.load_registry", lambda: [stated])
    assert load_workflow_config(ROOT / "workflow/config.yaml").twins("D") == {"X3": "D1"}
    assert "32MiB" in twin_claim(stated).cells[0]["send_buffer"]


def test_the_report_counts_second_verdicts_apart(ns3, tmp_path):
    """The at-a-glance totals stay those of the first verdicts; the second are counted apart."""
    import re

    from tcprepro.paper import _glance, read_verdicts

    results = list(judge(ns3, {"X9": emulated(grid((70, 70)))}).values())
    write_csv(results, tmp_path / "A.csv")
    verdicts = read_verdicts([tmp_path / "A.csv"])
    text = _glance(
        load_workflow_config(ROOT / "workflow/config.yaml"), "smoke", [], {}, {}, verdicts
    )
    totals = re.search(r"^total & (.*) \\\\$", text, re.M)[1].split(" & ")
    assert totals == ["2", "2"]  # both reproduced on ns-3: the twin's disagreement not counted
    assert (
        r"1 of them are also judged on real Linux TCP (their emulated twins, a second verdict "
        r"counted apart): 1 \textcolor{BrickRed}{not reproduced}" in text
    )
    row = next(line for line in text.splitlines() if line.startswith("A-c5 &"))
    assert r"Linux (UML): \textcolor{BrickRed}{not reproduced}" in row
    assert "not in this build" not in row
    # a build without the twin's runs says so next to its pending second verdict
    write_csv(list(judge(ns3, None).values()), tmp_path / "A.csv")
    text = _glance(
        load_workflow_config(ROOT / "workflow/config.yaml"),
        "smoke",
        [],
        {},
        {},
        read_verdicts([tmp_path / "A.csv"]),
    )
    row = next(line for line in text.splitlines() if line.startswith("A-c5 &"))
    assert "not run} (not in this build)" in row, row


def test_the_second_verdict_keeps_the_claims_table_within_the_page(ns3, tmp_path):
    import shutil

    from tcprepro.paper import OVERFULL_LIMIT_PT, overfull_boxes

    if shutil.which("pdflatex") is None:
        pytest.skip("no pdflatex")
    disagreeing = judge(ns3, {"X9": emulated(grid((70, 70)))})
    excluded = judge(ns3, None, emulation_note="emulation skipped: excluded by the profile")
    results = [*disagreeing.values(), *excluded.values()]
    (tmp_path / "generated").mkdir()
    write_tex(results, tmp_path / "generated/claims_T.tex", caption="Claims of study T.")
    log = compile_report_inputs(tmp_path, ["generated/claims_T.tex"])
    boxes = [b for b in overfull_boxes(log) if "claims_T" in b[0]]
    assert all(width <= OVERFULL_LIMIT_PT for _, width, _ in boxes), boxes
    assert "<<generated generated/claims_T.tex>>" in log  # the boxes were attributed


def test_a_twin_deciding_where_ns3_is_inconclusive_says_its_runs_met_the_regime():
    """Both verdicts apply the claim's regime to their own runs (C-c4: inconclusive in
    ns-3, where a flow lost nothing in its window; reproduced on Linux, whose runs lost):
    the twin's verdict says that its runs met the criteria the ns-3 runs missed."""
    short = a_figure("A2", grid((95, 40)), rtt_s=0.7, duration_s=60.0)  # about 80 RTTs
    result = judge(short, {"X9": emulated(grid((95, 40)))})["A-c5"]
    assert result.verdict == "inconclusive"
    assert result.emulated.verdict == "reproduced"
    assert result.emulated.explanation.startswith(
        "its runs meet the claim's regime criteria at this tier (at least 3 loss events per "
        "flow in the measured window, every flow past its first slow start, 300 RTTs measured)"
        ", which the ns-3 runs miss"
    )
    # a twin whose verdict agrees with a decided ns-3 verdict says nothing of the kind
    long = a_figure("A2", grid((95, 40)), rtt_s=0.7)
    assert judge(long, {"X9": emulated(grid((95, 40)))})["A-c5"].emulated.explanation == ""
