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


def test_the_provenance_says_which_runs_came_from_an_imported_bundle():
    import numpy as np
    import xarray as xr

    from tcprepro.paper import _provenance

    def combined(keys, created):
        ds = xr.Dataset(
            {
                name: ("rep", np.array(values, dtype=object))
                for name, values in {
                    "run_cache_key": keys,
                    "run_created": created,
                    "run_git_commit": ["abc"] * len(keys),
                    "run_git_dirty": ["0"] * len(keys),
                    "run_kernel": ["6.1"] * len(keys),
                }.items()
            },
            attrs={"n_runs": len(keys), "tcprepro_version": "0.1.0", "ns3_version": "3.44"},
        )
        return ds

    here = _provenance({"D1": combined(["k1", "k2"], ["2026-01-01", "2026-01-02"])})
    assert "Every run was simulated by this build's workflow" in here
    assert r"& here \\" in here
    source = {
        "bundle": "paper.tar",
        "tier": "paper",
        "manifest_sha256": "f" * 64,
        "exported_by": {"host": "node1", "cpu": "x", "cores": "64"},
        "software": {"tcprepro": "0.1.0", "ns3": "3.44"},
        # k2 was simulated here again after the import: same key, another date
        "runs": {"k1": "2026-01-01", "k2": "2025-12-31", "k3": "2025-12-31"},
        "verify": None,
    }
    text = _provenance(
        {
            "D1": combined(["k1", "k2"], ["2026-01-01", "2026-01-02"]),
            "D3": combined(["k3"], ["2025-12-31"]),
        },
        source,
    )
    assert "2 of the 3 runs were imported from the trace bundle paper.tar" in text
    assert "1 were simulated here" in text
    assert "f" * 64 in text
    assert "was not verified on this machine" in text
    assert r"& bundle 1, here 1 \\" in text
    assert r"& bundle \\" in text
    source["verify"] = {"date": "d", "seed": 4, "sampled": 5, "identical": 4, "different": ["x"]}
    text = _provenance({"D3": combined(["k3"], ["2025-12-31"])}, source)
    assert "4 of 5 runs drawn at random (seed 4) were re-simulated here bit-identical" in text
    assert "DIFFERENT: x" in text
