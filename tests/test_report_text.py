"""The report's generated text: what to run next, the glossary, wording that reads as a bug."""

import re
import shlex

import pytest
import yaml

from conftest import ROOT
from tcprepro.campaign import WorkflowConfig
from tcprepro.campaign.plan import Cost, duration_text, tier_emulation
from tcprepro.claims import VERDICTS, ClaimResult, Margin, load_registry, write_tex
from tcprepro.claims.cells import Coverage
from tcprepro.claims.glossary import (
    GLOSSARY,
    count,
    glossary_tex,
    plural,
    ratio,
    span,
    undefined_terms,
    wording_problems,
)
from tcprepro.paper import _decide_table, _glance, _glossary, _tier_table, read_verdicts

#: generated strings of earlier builds that read as bugs: the check must reject each
BAD_FIXTURES = [
    "D1 (ns3): 2 cells with window >= BDP reach 100.0-100.0 % of the goodput capacity",
    "(a) rare timeouts: 1/1 cells with Mathis within ±30 % (measured/Mathis 0.91-0.91, "
    "measured/Padhye 0.95-0.95)",
    "Westwood+ >= Reno in 0% of 1 cells",
    "ran 1 of 1 cells",
    "B-c1: 1/1 cells",
    "fragile: 3 of 4 resamples agree; phi (%) 19 (95 % interval 19 to 19)",
    "rep 0: cwnd < count_reno never; Slow mode nan% of the time after",
    "1 repetition(s)",  # C-c1's coverage
    "14 variant(s) drawn.",  # B5.12's caption
    "fewer than 1 loss events in the measured window",  # C-c4's why
]
GOOD_STRINGS = [
    "fewer than 3 loss events in the measured window; time (s) on the x axis",
    "reach 99.5-100.0 % of the goodput capacity",
    "measured/Mathis 0.85-0.91",
    "Westwood+ >= Reno in 3 of 4 cells (75%)",
    "ran 1 cell",
    "1 of 2 cells; 2/3 parts",
    "RTT 10-20 ms, a 2-1 vote",
]


def _config():
    return WorkflowConfig(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))


def _cost(runs: int) -> Cost:
    """A synthetic cost: the tables print what they are given."""
    return Cost(runs, 300.0 * runs, 40.0 * runs, 20.0 * runs + 5, 45.0, 2, 64)


def _untex(text: str) -> str:
    r"""A \texttt command as the shell reads it (the report's escapes undone)."""
    for latex, plain in (
        (r"\spaceskip=0.525em plus 0.5em minus 0.1em\relax ", ""),  # spaces that stretch
        (r"\allowbreak{}", ""),
        ("-{}-", "--"),
        (r"\_", "_"),
        (r"\textquotedbl{}", '"'),
        (r"\textquotesingle{}", "'"),
        (r"\{", "{"),
        (r"\}", "}"),
    ):
        text = text.replace(latex, plain)
    return text


def _commands(row: str) -> str:
    """The command of a row of the decide table: its \\texttt pieces joined."""
    return " ".join(_untex(piece) for piece in re.findall(r"\\texttt\{(.*?)\}(?=\\| \\\\)", row))


def test_every_claim_has_a_decide_command_tcprepro_plan_accepts():
    from tcprepro.campaign.plan import plan_report
    from tcprepro.cli import build_parser

    ids = [claim.id for claim in load_registry()]
    table = _decide_table({claim: _cost(3) for claim in ids}, dict.fromkeys(ids, "inconclusive"))
    rows = {line.split(" & ")[0]: line for line in table.splitlines() if " & " in line}
    parser = build_parser()
    named = []
    for claim in ids:
        assert claim in rows, f"{claim}: no decide-command line"
        command = shlex.split(_commands(rows[claim]))
        assert command[:3] == ["snakemake", "--profile", "workflow/profiles/verify"], command
        settings = dict(item.split("=", 1) for item in command[command.index("--config") + 1 :][:2])
        assert settings["tier"] == "verify"
        claims = yaml.safe_load(settings["verify_claims"])
        assert claims == [claim]
        # the same runs as tcprepro plan counts them: its parser takes the command's claims
        args = parser.parse_args(["plan", "--tier", settings["tier"], "--claim", *claims])
        assert args.func.__name__ == "_cmd_plan"
        assert args.claim == [claim]
        named += claims
    # and its plan function knows every claim they name (on one small figure: cheap)
    config = _config()
    config = WorkflowConfig({**config.data, "figures": {"B5.1": config.data["figures"]["B5.1"]}})
    text = plan_report(config, "verify", 2, ROOT, named)
    assert re.search(r"B5\.1: \d+ cells read by the claims", text), text
    # a command naming a claim the registry lacks is refused by the plan
    with pytest.raises(Exception, match="no claim X-c9"):
        plan_report(config, "verify", 2, ROOT, ["X-c9"])


def test_the_tier_table_prints_each_tiers_cost_and_command():
    table = _tier_table("smoke", {"smoke": _cost(46), "paper": _cost(3756)})
    rows = [line for line in table.splitlines() if line.startswith(("smoke", r"\textbf"))]
    assert len(rows) == 1
    assert rows[0].startswith(r"\textbf{smoke} & 46 & ")
    paper = next(line for line in table.splitlines() if line.startswith("paper &"))
    assert "& 3756 & 313.0 h &" in paper  # 300 s per run, as given
    assert r"\texttt{make figures PROFILE=paper}" in _untex(paper)
    assert "64 cluster cores" in table
    assert "run-costs" not in table
    # figures estimated on their measured verify runs are named
    recorded = _tier_table("smoke", {"paper": _cost(3756)}, recorded=["D1", "B5.1"])
    assert "at the verify and paper tiers, D1, B5.1 on their measured runs" in _untex(recorded)
    # the emulated twins: their own column, "none" for a tier without emulated runs, "left
    # out" for one whose profile excludes them; the local column is the whole build's
    costs = {"smoke": _cost(46), "quick": _cost(600), "verify": _cost(10)}
    table = _tier_table(
        "smoke",
        costs,
        {"smoke": None, "quick": (132, 2640.0), "verify": (0, 0.0)},
        {"quick": 5100.0},
    )
    assert "Emulated" in table
    rows = {line.split(" & ")[0]: line.split(" & ") for line in table.splitlines() if " & " in line}
    assert rows[r"\textbf{smoke}"][3] == "left out"
    assert rows["quick"][3:5] == ["132, 44 min", "1.4 h"]  # the build: both halves at once
    assert rows["verify"][3] == "none"
    assert rows["verify"][4] == duration_text(costs["verify"].local_s)  # no build: its runs


def test_each_tier_says_whether_its_command_emulates(tmp_path):
    # the committed profiles: the smoke and verify commands leave the twins out
    profiles = ROOT / "workflow/profiles"
    assert {t: tier_emulation(t, profiles) for t in ("smoke", "quick", "verify", "paper")} == {
        "smoke": "exclude",
        "quick": "auto",
        "verify": "exclude",
        "paper": "auto",
    }
    # what the smoke command builds: no cross-check, its ns-3 side neither
    from tcprepro.campaign.emulated import emulated_figures
    from tcprepro.campaign.plan import tier_cost

    config = _config()
    kept = [f for f in config.simulated_figures if f not in emulated_figures(config)]
    assert "X1" in config.simulated_figures
    assert "X1" not in kept
    counted = tier_cost(config, "smoke", figures=kept).runs
    assert counted == sum(len(config.runs(f, "smoke")) for f in kept)
    assert counted < tier_cost(config, "smoke").runs
    # a profile without the setting, or no profile: the workflow's default
    (tmp_path / "x").mkdir()
    (tmp_path / "x/config.yaml").write_text("config:\n  - tier=x\ncores: all\n")
    assert tier_emulation("x", tmp_path) == tier_emulation("nothing", tmp_path) == "auto"


#: the overview row of the inconclusive result of _results (the third claim of the registry)
VERDICT_ROW = load_registry()[2].id + " & "


def _results() -> list[ClaimResult]:
    """One synthetic result per verdict, with coverage, margin and reading."""
    claims = load_registry()
    return [
        ClaimResult(
            "19 % of (1-rho_b)C",
            verdict,
            coverage="2/3 parts",
            claim=claims[i],
            cells=Coverage(i % 2 + 1, 2).text(),
            confidence="fragile: 3 of 4 resamples of the repetitions agree" if i == 0 else "",
            statistic=("phi (%)", 19.0),
            bounds=(30.0, 50.0),
        )
        for i, verdict in enumerate(VERDICTS)
    ]


def test_the_glossary_defines_every_verdict_and_coverage_word_the_report_uses(tmp_path):
    results = _results()
    write_tex(results, tmp_path / "claims.tex", caption="Claims.")
    from tcprepro.claims import write_csv

    write_csv(results, tmp_path / "A.csv")
    verdicts = read_verdicts([tmp_path / "A.csv"])
    texts = [
        (tmp_path / "claims.tex").read_text(),
        _glance(_config(), "smoke", [], {}, {}, verdicts),
        _decide_table({r["claim"]: _cost(3) for r in verdicts}, {}),
    ]
    assert undefined_terms(texts, VERDICTS) == set()
    # the overview sets the reading beside the inconclusive verdict, and only there
    row = next(line for line in texts[1].splitlines() if line.startswith(VERDICT_ROW))
    assert r"\emph{reading, not a verdict: far from the tolerance}" in row
    assert texts[1].count("reading, not a verdict") == 2  # and beside the fragile one
    # the report prints every term, each once
    glossary = _glossary()
    assert all(glossary.count(rf"\item[{term}]") == 1 for term in GLOSSARY)
    assert "pending" in GLOSSARY
    assert "not run" in GLOSSARY
    assert GLOSSARY["pending"] != GLOSSARY["not run"]


def test_the_glossary_check_fails_on_a_word_it_does_not_define():
    lacking = {k: v for k, v in GLOSSARY.items() if k != "k/n parts"}
    assert undefined_terms(["coverage: 2/3 parts"], glossary=lacking) == {"k/n parts"}
    assert undefined_terms(["ok"], ["undecided by coin"]) == {"undecided by coin"}
    assert undefined_terms(["the claim stays undecided"]) == {"undecided"}
    assert "k/n parts" in glossary_tex(["k/n parts"])


@pytest.mark.parametrize("bad", BAD_FIXTURES)
def test_the_wording_check_rejects_the_strings_earlier_builds_printed(bad):
    assert wording_problems(bad), bad


@pytest.mark.parametrize("good", GOOD_STRINGS)
def test_the_wording_check_accepts_ranges_and_counts_that_read_well(good):
    assert wording_problems(good) == []


def test_ranges_and_counts_are_worded_at_the_source():
    assert span(0.91, 0.9149) == "0.91"
    assert span(0.85, 0.91) == "0.85-0.91"
    assert span(100, 100, "{:.1f}", unit=" %") == "100.0 %"
    assert count(1, 1) == "1 cell"
    assert count(0, 1) == "0 of 1 cell"
    assert count(3, 4) == "3 of 4 cells"
    assert Coverage(1, 1).text() == "1 cell"
    assert plural(1) == "1 cell"
    assert plural(3) == "3 cells"
    assert ratio(1, 1) == "1/1 cell"
    assert ratio(2, 3) == "2/3 cells"
    assert not wording_problems(f"Westwood+ >= Reno in {count(0, 1)}")


def test_generated_claim_text_has_no_equal_range_nor_a_plural_of_one(tmp_path):
    results = _results()
    write_tex(results, tmp_path / "claims.tex", caption="Claims.")
    text = (tmp_path / "claims.tex").read_text()
    assert wording_problems(text) == []
    # the same table with a value of today's bad shape is caught
    bad = [ClaimResult(BAD_FIXTURES[0], "reproduced", claim=load_registry()[0])]
    write_tex(bad, tmp_path / "bad.tex", caption="Claims.")
    assert wording_problems((tmp_path / "bad.tex").read_text())


@pytest.mark.parametrize(
    ("value", "low", "high", "reading", "distance"),
    [
        (41.0, 30.0, 50.0, "meets", 9.0),
        (25.0, 30.0, 50.0, "misses", -5.0),  # outside by less than half the width (10)
        (19.0, 30.0, 50.0, "far from", -11.0),
        (85.0, 90.0, None, "misses", -5.0),  # outside by less than a quarter of 90
        (60.0, 90.0, None, "far from", -30.0),
        (12.0, None, 30.0, "meets", 18.0),
    ],
)
def test_the_margin_and_reading_place_a_value_against_its_tolerance(
    value, low, high, reading, distance
):
    margin = Margin("phi (%)", value, low, high)
    assert margin.distance == pytest.approx(distance)
    assert margin.reading == reading
    assert f"margin {distance:+.3g}" in margin.text()


def test_a_margins_value_and_bound_print_to_the_margins_precision():
    # D-c2: 99.99 % printed as 100 beside a margin of +9.99; a bound of 1000 as 1e+03
    assert Margin("share (%)", 99.99, 90.0, None).text() == (
        "share (%) = 99.99 against >= 90: margin +9.99"
    )
    assert Margin("RTTs", 50.8, None, 1000.0).text() == "RTTs = 51 against <= 1000: margin +949"
    # a name ending in a number stays apart from the value (C-c4's "at p <= 1e-5")
    assert Margin("lowest utilisation at p <= 1e-5", 1.0, 0.8, None).text() == (
        "lowest utilisation at p <= 1e-5 = 1.0 against >= 0.8: margin +0.2"
    )


def test_a_reading_stands_next_to_an_inconclusive_verdict_only_and_is_not_a_verdict(tmp_path):
    claim = load_registry()[0]
    kwargs = {"claim": claim, "statistic": ("phi (%)", 19.0), "bounds": (30.0, 50.0)}
    inconclusive = ClaimResult("19 %", "inconclusive", **kwargs)
    decided = ClaimResult("19 %", "not reproduced", **kwargs)
    assert inconclusive.reading_text() == "reading, not a verdict: far from the tolerance"
    assert decided.reading == ""  # a verdict needs no reading, its margin is printed
    assert decided.margin is not None
    assert decided.margin.distance == pytest.approx(-11)
    assert ClaimResult("—", "not run", claim=claim).margin is None
    write_tex([inconclusive, decided], tmp_path / "t.tex", caption="Claims.")
    text = (tmp_path / "t.tex").read_text()
    assert text.count("reading, not a verdict: far from the tolerance") == 1
    assert text.count("phi (\\%) = 19 against 30 to 50: margin -11") == 2
