"""The main deviations on the report's first pages, read from the data the tables read."""

import functools
import re

import pytest
import yaml

from conftest import ROOT
from tcprepro.campaign import TIERS, WorkflowConfig
from tcprepro.errors import ConfigError
from tcprepro.paper.inputs import _glance_tex
from tcprepro.paper.parameters import _deviations, _main_deviations, _noted
from tcprepro.scenario.model import Note

FIGURES = ["A1", "A3", "D1", "B5.1", "B5.20", "C1", "C3.1", "C3.3", "X1"]


def _config():
    return WorkflowConfig(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))


def _items(text):
    return re.findall(r"\\item (.*)", text)


def test_the_main_deviations_name_study_cs_tier_rate_and_its_models():
    text = _main_deviations(_config(), "smoke", FIGURES)
    items = _items(text)
    # the tier's changes, computed from the tier settings: study C at 10 Mb/s, C1 at 200 ms
    assert any(
        "C1, C3.1, C3.3: bottleneck rate is 10 Mb/s (paper tier: 500 Mb/s)" in i for i in items
    ), items
    # C1's senders as the paper names them (the scenario's label), not the group "s"
    assert any("C1: RTT of hosts 1 and 2 is 200 ms (paper tier: 25 ms)" in i for i in items), items
    assert items[0].startswith(r"Tier \texttt{smoke}: runs of")
    # the models' deviations: TCP Africa absent, YeAH (YeahPaper) tcprepro's own model
    [variants] = [i for i in items if "TCP Africa not compared" in i]
    assert "tcprepro's Compound and YeahPaper" in variants
    # a cross-check figure's notes stay in the full table only
    assert not any("X1" in i.split(":")[0] for i in items)


def test_every_model_deviation_listed_is_a_row_of_the_deviations_table():
    config = _config()
    brief = _main_deviations(config, "smoke", FIGURES)
    table = _deviations(config, "smoke", FIGURES)
    for item in _items(brief):
        if " --- " not in item:
            continue  # a tier change: the parameters table's
        _, rest = item.split(": ", 1)
        field, value = rest.rsplit(" --- ", 1)
        assert f"{field} (deviation) & {value.removesuffix('.')}" in table, item


def test_the_paper_tier_lists_no_tier_change():
    items = _items(_main_deviations(_config(), "paper", FIGURES))
    assert items
    assert not any("paper tier:" in i or i.startswith("Tier") for i in items)


def test_the_main_deviations_come_before_the_artefact_table_on_the_first_pages():
    text = _glance_tex(
        _config(), "smoke", [], {}, {}, [], [], {}, [], plan=False, simulated=FIGURES
    )
    start = text.index(r"\subsection{Main deviations}")
    assert start < text.index("Every catalogue artefact")
    assert start > text.index(r"\section{At a glance}")


def _quick_sweep_note_shown(config, tier):
    """Where the B5.10 note on the quick tier's sweep shows in the report of ``tier``."""
    table = _deviations(config, tier, ["B5.10"])
    brief = _main_deviations(config, tier, ["B5.10"])
    return ("sweep (quick tier)" in table, "sweep (quick tier)" in brief)


def test_a_note_on_one_tiers_settings_shows_in_that_tiers_report_only():
    """Issue 34: the smoke report listed B5.10's note on the quick tier's sweep."""
    config = _config()
    assert _quick_sweep_note_shown(config, "quick") == (True, True)
    assert _quick_sweep_note_shown(config, "smoke") == (False, False)
    assert _quick_sweep_note_shown(config, "paper") == (False, False)
    # a note without tiers shows in every tier's report
    for tier in ("smoke", "quick", "paper"):
        assert "50 Mb/s is the chapter's reference" in _deviations(config, tier, ["B5.10"])


def test_any_note_can_name_its_tiers_and_an_unknown_tier_is_refused(monkeypatch):
    config = _config()
    scenario = WorkflowConfig.figure_scenario
    extra = {"field": "trace.interval", "value": "1 s", "reason": "a test note"}

    def with_note(tiers):
        def figure_scenario(self, figure, tier=None):
            found = scenario(self, figure, tier)
            note = Note.model_validate({**extra, "tiers": tiers})
            return found.model_copy(update={"notes": [*found.notes, note]})

        monkeypatch.setattr(WorkflowConfig, "figure_scenario", figure_scenario)

    with_note(["smoke", "paper"])
    tiers = ("smoke", "quick", "paper")
    assert {t for t in tiers if "a test note" in _deviations(config, t, ["D3"])} == {
        "smoke",
        "paper",
    }
    with_note(["quik"])
    with pytest.raises(ConfigError, match=r"D3: note 'trace.interval': tiers quik unknown"):
        _deviations(config, "smoke", ["D3"])


def test_every_scenario_notes_tiers_are_tiers():
    config = _config()
    for tier in TIERS:
        _deviations(config, tier, config.simulated_figures)  # raises on an unknown tier


@functools.cache
def _quick_rows():
    """(field, value, figures) of each row of the quick report's deviations table."""
    config = _config()
    noted = _noted(config, "quick", config.simulated_figures)
    return [(field, value, figs) for (_, field, value), (_, figs) in noted.items()]


def _row(field, start):
    """The figures of the quick report's row on ``field`` whose value is (or begins) ``start``."""
    rows = [(value, figs) for f, value, figs in _quick_rows() if f == field]
    [figs] = [figs for value, figs in rows if value == start] or [
        figs for value, figs in rows if value.startswith(start)
    ]
    return figs


def test_a_row_lists_the_figures_whose_scenario_carries_the_note():
    """Issue 34: rows listed every figure whose scenario derives from the note's file."""
    # D1's warm-up: D4 (and X11, D4's twin) set their own (0 s); X3 keeps D1's
    assert _row("warmup", "1 s of 10 s") == ["D1", "X3"]
    # a sweep note lists the figure that sweeps so; the twins run other cells
    assert _row("sweep (quick tier)", "i = 1, 2, 4, 8") == ["B5.10"]
    assert _row("sweep", "paper tier") == ["B5.14"]
    assert _row("sweep (alpha/beta grid)", "AIMD") == ["B5.16"]
    # study B's and C's run lengths: not the cross-checks', which set their own
    assert _row("duration / warmup / repetitions", "paper tier 300 s") == [
        "B5.1",
        "B5.10",
        "B5.14",
        "B5.16",
        "B5.20",
    ]
    assert not [f for f in _row("duration / repetitions", "600 s") if f.startswith("X")]
    # X10 restates B5.20's pacing in a note of its own
    assert _row("flows.bn.pacing", "ns-3 TCP pacing") == ["B5.20"]
    # a note that names its figure (C1 ...) in the base of study C: C1 and its twin only
    assert _row("C1 topology.senders[0].rtt / flows.f2.start", "25 ms") == ["C1", "X7"]


def test_a_note_stays_where_its_subject_holds():
    """The other side: a part of a structure changed, a value among those run, a qualifier."""
    # A2 changes the uplink buffer, not the links' kind: A1's note on the topology holds
    assert {"A1", "A2", "A3", "A4", "X1"} <= set(
        _row("topology", "point-to-point links (2-byte PPP header)")
    )
    # X6 runs Hybla (B5.10's model) but not FAST nor YeAH
    assert _row("flows.bn.variant (Hybla)", "ns3::TcpHyblaMinRtt") == ["B5.10", "X6"]
    assert _row("flows.bn.variant (Fast)", "ns3::TcpFast") == ["B5.10"]
    assert _row("flows.bn.variant (Yeah)", "YeahPaper") == ["B5.10"]
    # B5.1's background hosts: X12 replaces them with one host
    assert _row("topology.senders.bg", "100 hosts") == ["B5.1"]
    # B_fq's start of the bottlenecked flows: every figure on it, its twins included
    assert set(_row("flows.bn.start", "uniform 0-5 s")) >= {"B5.10", "X6", "X10", "X13", "X14"}


def test_the_deviations_table_prints_the_rows_figures():
    config = _config()
    table = _deviations(config, "quick", config.simulated_figures)
    assert re.search(r"^D1, X3 & warmup \(choice\) & 1 s of 10 s &", table, re.M)
    assert re.search(r"^B5\.10 & sweep \(quick tier\) \(deviation\)", table, re.M)
