"""Claims read as the papers wrote them: anchors, the reading guide, tiers, the history.

Every claim carries its sentence verbatim (found in the seed texts), the figure it reads
and the metric that figure shows, and a tolerance naming the guide's rules; the A3/A4
readings follow the size-conditional curves; at the papers' settings only a failed run
leaves a claim undecided; the docs' guide and history tables are generated.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from conftest import ROOT
from synthetic import synthetic_run
from tcprepro.claims import check_claims, history, load_registry, reading_rules, tier_regime, traces
from tcprepro.scenario_io import load_scenario
from tcprepro.store import combine_runs

SEEDS = ROOT.parent / "shared" / "seeds"


def _plain(text: str) -> str:
    return " ".join(text.split())


def test_every_claim_has_its_quote_translation_source_metric_and_rules():
    rules = reading_rules()
    for claim in load_registry():
        quotes = claim.quote if isinstance(claim.quote, tuple) else (claim.quote,)
        assert all(q.strip() for q in quotes), claim.id
        assert claim.translation, claim.id
        assert claim.source.strip(), claim.id
        assert claim.metric.strip(), claim.id
        assert claim.seed.endswith(".txt"), claim.id
        assert claim.rules, claim.id
        assert set(claim.rules) <= set(rules), claim.id
        # the tolerance names the rules it applies (R13 and R14 hold for every claim)
        for rule in set(claim.rules) - {"R13", "R14"}:
            assert re.search(rf"\b{rule}\b", claim.tolerance), (claim.id, rule)


def test_every_quote_is_found_word_for_word_in_its_seed():
    if not SEEDS.is_dir():
        pytest.skip(f"the seed texts are not here ({SEEDS}): quotes not checked against them")
    for claim in load_registry():
        seed = _plain((SEEDS / claim.seed).read_text())
        quotes = claim.quote if isinstance(claim.quote, tuple) else (claim.quote,)
        for quote in quotes:
            assert _plain(quote) in seed, (claim.id, quote[:60])


def test_a_registry_citing_a_rule_the_guide_lacks_is_refused(tmp_path):
    text = (ROOT / "src/tcprepro/claims/registry.yaml").read_text()
    bad = tmp_path / "registry.yaml"
    bad.write_text(text.replace("rules: [R5, R1, R13]", "rules: [R5, R99]", 1))
    with pytest.raises(ValueError, match=r"rules \['R99'\] are not in the reading guide"):
        load_registry(bad)


def test_the_docs_guide_and_history_are_generated_from_the_data():
    from tcprepro.claims.readings import GUIDE_BEGIN, GUIDE_END, render_guide

    page = (ROOT / "docs/claims.md").read_text()
    guide = page.split(GUIDE_BEGIN, 1)[1].split(GUIDE_END, 1)[0]
    assert guide.strip() == render_guide().strip(), "tcprepro readings --write docs/claims.md"
    table = page.split(history.DOC_BEGIN, 1)[1].split(history.DOC_END, 1)[0]
    records = history.read_records(ROOT / "records/verdicts.csv")
    assert records, "no verdict record"
    assert table.strip() == history.render_markdown(records).strip(), (
        "tcprepro verdicts table --write docs/claims.md"
    )
    imported = [r for r in records if r["source"] == "imported"]
    assert imported
    assert all(r["reading"] == history.IMPORTED_READING for r in imported)
    table = page.split(traces.DOC_BEGIN, 1)[1].split(traces.DOC_END, 1)[0]
    assert table.strip() == traces.render_markdown(traces.read(ROOT / "records/traces.csv")).strip()


def test_a_knob_traces_value_is_recorded_beside_the_claims_values_on_and_before_the_profile(
    tmp_path,
):
    from tcprepro.campaign.config import what_ifs

    entries = what_ifs(ROOT / "workflow" / "testbeds")
    history_rows = [
        {
            "claim": "A-c3",
            "backend": "ns-3",
            "tier": "verify",
            "source": "imported",
            "value": "44 %",
        },
        {"claim": "A-c3", "backend": "ns-3", "tier": "verify", "source": "a.csv", "value": "74 %"},
        {
            "claim": "A-c3",
            "backend": "mininet",
            "tier": "verify",
            "source": "a.csv",
            "value": "9 %",
        },
    ]
    folder = tmp_path / "knob-a-compound-min-rto"
    folder.mkdir()
    (folder / "A.csv").write_text(
        "claim,paper,reproduced,verdict,cells,confidence\n"
        "A-c3,30-40 %,largest drop 41 %,reproduced,2 of 8 cells,robust\n"
        "A-c4,,,not run,,\n"
    )
    [record] = traces.traces_from_csv(folder / "A.csv", entries, history_rows, "r", "j")
    assert record["trace"] == "knob-a-compound-min-rto"
    assert record["value"] == "largest drop 41 %"
    assert (record["profile_value"], record["before_value"]) == ("74 %", "44 %")
    assert "windows-7/minimum RTO" in record["knobs"]
    assert "1 s" in record["set_back_to"]
    path = tmp_path / "traces.csv"
    assert traces.append([record], path) == 1
    table = traces.render_markdown(traces.read(path))
    assert "| A-c3 | `knob-a-compound-min-rto` (1 s" in table
    # a what-if that is not a knob trace is refused
    other = tmp_path / "windows-receiver"
    other.mkdir()
    (other / "A.csv").write_text("claim,paper,reproduced,verdict,cells,confidence\n")
    with pytest.raises(ValueError, match="not a knob trace's claims"):
        traces.traces_from_csv(other / "A.csv", entries, history_rows, "r", "j")


def test_a_changed_verdict_names_what_changed(tmp_path):
    claims = {c.id: c for c in load_registry()}
    old = {
        "claim": "B-c1",
        "backend": "ns-3",
        "tier": "verify",
        "verdict": "not reproduced",
        "reading": "old",
        "profile": "ns2-tcp-linux@0",
    }
    csv_path = tmp_path / "B.csv"
    csv_path.write_text(
        "claim,paper,reproduced,verdict,cells,confidence,coverage,emulated_verdict\n"
        "B-c1,≈40 %,41 %,reproduced,1 of 1,robust,,pending\n"
    )
    profiles = {"B": "ns2-tcp-linux@0"}
    [record] = history.records_from_csv(csv_path, claims, "verify", profiles, "r", "j", [old])
    assert record["reading"] == history.reading_digest(claims["B-c1"])
    assert record["change"] == "not reproduced -> reproduced: new reading"
    again = history.records_from_csv(csv_path, claims, "verify", profiles, "r", "j", [record])
    assert again[0]["change"] == ""  # the same verdict: nothing to explain
    # the same runs judged by code older than the guide: recorded under the old reading, so
    # a verdict that differs from the old reading's on other runs is the profile's change
    [before] = history.records_from_csv(
        csv_path,
        claims,
        "verify",
        profiles,
        "r",
        "fd90743",
        [{**old, "reading": history.IMPORTED_READING, "profile": "x"}],
        before_guide=True,
    )
    assert before["reading"] == history.IMPORTED_READING
    assert before["rules"] == ""
    assert before["judged_commit"] == "fd90743"
    assert before["change"] == "not reproduced -> reproduced: new stack profile"
    path = tmp_path / "records.csv"
    assert history.append_records([old, record], path) == 2
    assert [r["claim"] for r in history.read_records(path)] == ["B-c1", "B-c1"]


def test_a_verdict_on_some_of_its_cells_is_not_recorded_at_a_deciding_tier(tmp_path):
    claims = {c.id: c for c in load_registry()}
    csv_path = tmp_path / "A.csv"
    csv_path.write_text(
        "claim,paper,reproduced,verdict,cells,confidence,coverage,emulated_verdict\n"
        "A-c1,≈100 %,min 93 %,reproduced,7 of 11 cells,robust,,not run\n"
        "A-c3,30-40 %,17 %,not reproduced,8 of 8 cells,robust,,not run\n"
    )
    profiles = {"A": "freebsd-9.2@0"}
    skipped: list[str] = []
    records = history.records_from_csv(
        csv_path, claims, "verify", profiles, "r", "j", skipped=skipped
    )
    assert [r["claim"] for r in records] == ["A-c3"]
    assert skipped == ["A-c1 ns-3: 7 of 11 cells"]
    # below the deciding tiers a partial verdict is what the tier can say: kept
    quick = history.records_from_csv(csv_path, claims, "quick", profiles, "r", "j")
    assert [r["claim"] for r in quick] == ["A-c1", "A-c3"]
    assert history.is_partial("4 of 12 cells (A1: 4/6, A2: 0/6)")
    assert not history.is_partial("1 cell")
    assert not history.is_partial("12 of 12 cells")


# ---------------------------------------------------------------------------
# A-c9 on the size-conditional curves


A3 = ROOT / "workflow/scenarios/A3.yaml"
#: per download variant: response time (s) of the 1-MB, 3-MB and 500-MB transfers; the two
#: 500-MB transfers (a bin too thin to read) make Vegas's pooled mean 5 times Compound's,
#: where its curve past slow start is half of Compound's and 0.8 of the others'
RESPONSE = {
    "Vegas": (1.0, 2.0, 1000.0),
    "Compound": (2.0, 4.0, 100.0),
    "NewReno": (1.25, 2.5, 100.0),
    "Cubic": (1.25, 2.5, 100.0),
}
SIZES = [1_000_000] * 30 + [3_000_000] * 30 + [500_000_000] * 2


def _a3_conditional():
    config = load_scenario(A3, [("duration", "1000s"), ("warmup", "20s")]).to_json()
    values = {"up": ["NewReno"], "down": list(RESPONSE), "load": [0.5]}
    runs = []
    for down, (one, three, huge) in RESPONSE.items():
        ds = synthetic_run(
            duration_s=1000.0,
            interval_s=10.0,
            warmup_s=20.0,
            transfers=len(SIZES),
            attrs={
                "config": config,
                "figure": "A3",
                "sweep": json.dumps({"up": "NewReno", "down": down, "load": 0.5}),
                "sweep_values": json.dumps(values),
                "rep": 0,
            },
        )
        starts = np.arange(len(SIZES), dtype=float) * 10.0
        times = np.array([one] * 30 + [three] * 30 + [huge] * 2)
        ds["transfer_start_s"][:] = starts
        ds["transfer_size_bytes"][:] = SIZES
        ds["transfer_end_s"][:] = starts + times
        runs.append(ds)
    return combine_runs(runs)


def test_a_c9_reads_the_size_conditional_curves_not_the_pooled_means():
    import tcprepro.claims.study_a  # noqa: F401  (registers the checks)
    from tcprepro.claims import CHECKS

    data = {"A3": _a3_conditional()}
    claim = next(c for c in load_registry() if c.id == "A-c9")
    result = CHECKS[claim.check](data, **claim.args)
    assert result.verdict == "reproduced", result.value
    assert "vs Compound: 0.50 over 2 bins" in result.value
    # the same data read as before (pooled means over every transfer) misses the claim
    pooled = CHECKS[claim.check](data, figure="A3", load=0.5)
    assert pooled.verdict == "not reproduced", pooled.value


# ---------------------------------------------------------------------------
# decided at the papers' settings (R14)


def test_the_papers_tiers_keep_only_the_criteria_that_catch_a_failed_run():
    regime = {"min_loss_events": 3, "min_rtts": 300, "past_slow_start": True, "reason": "x"}
    assert tier_regime(regime, "quick") == regime
    assert tier_regime(regime, None) == regime
    for tier in ("verify", "paper"):
        assert tier_regime(regime, tier) == {"past_slow_start": True, "reason": "x"}


def _two_loss_events_in_600_s():
    """An A1-like cell whose flows lost twice each in a 600-s window (past slow start)."""
    config = load_scenario(ROOT / "workflow/scenarios/A1.yaml").to_json()
    values = {"up": ["NewReno"], "down": ["NewReno"]}
    ds = synthetic_run(
        duration_s=800.0,
        interval_s=10.0,
        warmup_s=200.0,
        goodput_bps=(9.5e6, 1.5e6),
        attrs={
            "config": config,
            "figure": "A1",
            "sweep": json.dumps({"up": "NewReno", "down": "NewReno"}),
            "sweep_values": json.dumps(values),
        },
    )
    lost = np.zeros(ds["lost_data_pkts"].shape)
    lost[:, 5] = 1.0  # the first slow start ends in the warm-up
    lost[:, [30, 50]] = 1.0  # two loss events per flow in the measured window
    ds["lost_data_pkts"][:] = lost
    return combine_runs([ds])


def test_a_run_with_two_loss_events_is_decided_at_verify_and_inconclusive_at_quick():
    data = {"A1": _two_loss_events_in_600_s()}
    registry = [c for c in load_registry() if c.id == "A-c1"]
    decide = {"A-c1": "its verify runs (120 runs, about 25 min on 2 cores): snakemake ..."}
    quick = check_claims(data, registry=registry, resamples=0, tier="quick", decide=decide)[0]
    assert quick.verdict == "inconclusive"
    assert "fewer than 3 loss events" in quick.explanation
    assert "Decided by its verify runs" in quick.explanation
    verify = check_claims(data, registry=registry, resamples=0, tier="verify", decide=decide)[0]
    assert verify.verdict in ("reproduced", "not reproduced"), verify.explanation
    assert "Decided by" not in verify.explanation


def test_the_decide_command_is_one_tcprepro_plan_accepts():
    import yaml

    from tcprepro.campaign import WorkflowConfig
    from tcprepro.campaign.plan import decide_commands, plan_report

    config = WorkflowConfig(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))
    text = decide_commands(config, ["B-c1"])["B-c1"]
    assert 'verify_claims=["B-c1"]' in text
    assert "tcprepro plan --tier verify --claim B-c1" in text
    assert "B5.1" in plan_report(config, "verify", 2, ROOT, ["B-c1"])
