"""The main deviations on the report's first pages, read from the data the tables read."""

import re

import yaml

from conftest import ROOT
from tcprepro.campaign import WorkflowConfig
from tcprepro.paper.inputs import _glance_tex
from tcprepro.paper.parameters import _deviations, _main_deviations

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
