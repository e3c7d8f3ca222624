"""The main deviations on the report's first pages, read from the data the tables read."""

import re

import pytest
import yaml

from conftest import ROOT
from tcprepro.campaign import TIERS, WorkflowConfig
from tcprepro.errors import ConfigError
from tcprepro.paper.inputs import _glance_tex
from tcprepro.paper.parameters import _deviations, _main_deviations
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
