import copy

import pandas as pd
import pytest
import yaml

from conftest import ROOT
from tcprepro.campaign import WorkflowConfig
from tcprepro.latex import write_tabular
from tcprepro.paper import _body


def test_write_tabular_escapes_and_formats(tmp_path):
    frame = pd.DataFrame({"variant": ["NewReno", "H_TCP"], "loss %": [0.012345, 12.0]})
    text = write_tabular(frame, tmp_path / "t.tex").read_text()
    assert text.startswith(r"\begin{tabular}{ll}")
    assert r"H\_TCP & 12 \\" in text
    assert r"loss \%" in text
    assert "0.0123" in text


def test_paper_body_includes_figures_and_tables_by_declared_output():
    data = yaml.safe_load((ROOT / "workflow/config.yaml").read_text())
    data = copy.deepcopy(data)
    data["figures"]["A2"]["outputs"] = ["figure", "table"]
    config = WorkflowConfig(data)
    assert "paper/generated/A2.tex" in config.paper_files("table")
    assert "paper/generated/A1.tex" not in config.paper_files("table")
    assert "paper/figures/A2.pdf" in config.paper_files("figure")
    body = _body(config, ["A1", "A2"], "figures", "generated", "smoke")
    assert r"\includegraphics[width=\linewidth]{figures/A1.pdf}" in body
    assert r"\input{generated/A2.tex}" in body
    assert r"\input{generated/A1.tex}" not in body
    assert r"\input{generated/claims_A.tex}" in body


def test_caption_and_title_quote_the_scenario_not_typed_numbers(tmp_path):
    """An uplink buffer of 77 packets makes the A1 caption and title say 77."""
    import xarray as xr

    from tcprepro.figures.study_a import title
    from tcprepro.scenario_io import load_scenario

    data = copy.deepcopy(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))
    scenario = yaml.safe_load((ROOT / "workflow/scenarios/A1.yaml").read_text())
    scenario["topology"]["uplink"]["buffer_pkts"] = 77
    path = tmp_path / "A1.yaml"
    path.write_text(yaml.safe_dump(scenario))
    data["figures"]["A1"]["scenario"] = str(path)
    caption = WorkflowConfig(data).caption("A1", "smoke")
    assert "(77 packets)" in caption
    assert "40 packets" not in caption
    assert "[[" not in caption
    ds = xr.Dataset(attrs={"config": load_scenario(path).to_json()})
    assert title(ds, "A1") == "A1: uplink buffer 77 packets, 10/2 Mb/s"


def test_a_caption_naming_a_field_the_scenario_lacks_is_refused():
    from tcprepro.errors import ConfigError
    from tcprepro.quoting import fill
    from tcprepro.scenario_io import load_scenario

    scenario = load_scenario(ROOT / "workflow/scenarios/A1.yaml")
    assert fill("[[topology.downlink.rate|rate]], [[duration|s]]", scenario).startswith("10~Mb/s")
    with pytest.raises(ConfigError, match=r"topology\.uplink\.colour"):
        fill("[[topology.uplink.colour]]", scenario)
