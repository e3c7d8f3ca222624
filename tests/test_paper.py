import copy

import pandas as pd
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
    body = _body(config, ["A1", "A2"], "figures", "generated")
    assert r"\includegraphics[width=\linewidth]{figures/A1.pdf}" in body
    assert r"\input{generated/A2.tex}" in body
    assert r"\input{generated/A1.tex}" not in body
    assert r"\input{generated/claims_A.tex}" in body
