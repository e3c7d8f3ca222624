"""The JupyterLab explorer's library side: validation, the cache, the saved scenario.

The browser test (tests/test_explore_browser.py) drives the same explorer in JupyterLab.
"""

import html
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from conftest import ROOT

BIN = Path(sys.executable).parent
#: the smoke tier's first cell of A1 (what the workflow's smoke build runs first)
A1_CELL = "up-NewReno_down-NewReno"


@pytest.fixture
def no_process(monkeypatch):
    """Fail the test if the explorer starts making a run."""
    from tcprepro.explore.runner import Exploration

    started = []

    def refuse(self, progress, reps):
        started.append(reps)
        raise AssertionError(f"the explorer started a run of {self.cell.describe()}")

    monkeypatch.setattr(Exploration, "_run", refuse)
    monkeypatch.setattr(Exploration, "start", lambda self: started.append(self) or self)
    return started


def _explorer(tmp_path, figure="A1", **kwargs):
    from tcprepro.explore import Explorer

    return Explorer(figure, "smoke", run_on_open=False, root=ROOT, workdir=tmp_path, **kwargs)


@pytest.mark.parametrize(
    ("key", "text", "said"),
    [
        ("topology.uplink.buffer_pkts", "-20", "greater than or equal to 2"),
        ("down", "Reno2000", "unknown TCP variant 'Reno2000'"),
        ("duration", "ten seconds", "cannot read 'ten seconds' as a duration"),
        ("warmup", "40s", "must be shorter than duration"),
    ],
)
def test_an_invalid_control_shows_its_fields_error_and_starts_no_run(
    tmp_path, no_process, key, text, said
):
    explorer = _explorer(tmp_path)
    explorer.set(**{key: text})
    assert said in html.unescape(explorer.errors[key].value)
    others = [k for k, error in explorer.errors.items() if error.value and k != key]
    assert not others, f"errors shown under other fields: {others}"
    assert "nothing runs" in explorer.status.value
    assert explorer.exploration is None
    assert not no_process
    assert not (tmp_path / "data").exists()


def test_a_corrected_control_clears_its_error(tmp_path, monkeypatch):
    from tcprepro.explore.runner import Exploration

    started = []
    monkeypatch.setattr(Exploration, "start", lambda self: started.append(self.cell) or self)
    explorer = _explorer(tmp_path)
    explorer.set(**{"topology.uplink.buffer_pkts": "-20"})
    explorer.set(**{"topology.uplink.buffer_pkts": "100"})
    assert explorer.errors["topology.uplink.buffer_pkts"].value == ""
    [cell] = started
    assert dict(cell.changes) == {"topology.uplink.buffer_pkts": 100}


def test_linux_side_needs_a_tolerance_and_a_linux_variant():
    from tcprepro.explore.cell import FigureExplorer

    a1 = FigureExplorer("A1", root=ROOT)  # X1's scenario is based on A1's: its tolerance
    assert a1.linux().tolerance == {"utilisation_pp": 10, "rtt_rel": 0.2}
    compound = a1.cell({**a1.start_texts(), "down": "Compound"})
    assert "no Linux implementation" in a1.linux_reason(compound)
    a3 = FigureExplorer("A3", root=ROOT)
    assert not a3.linux().available
    assert "no cross-check tolerance" in a3.linux().reason


@pytest.mark.parametrize(
    ("figure", "key", "text"),
    [("A1", "topology.uplink.buffer_pkts", "100"), ("C3.3", "topology.senders.0.rtt", "90ms")],
)
def test_saved_scenario_gives_the_explored_cells_cache_key(tmp_path, figure, key, text):
    from tcprepro.explore.cell import FigureExplorer
    from tcprepro.scenario_io import load_scenario

    explorer = FigureExplorer(figure, root=ROOT, workdir=tmp_path)
    if key not in explorer.start_texts():
        pytest.fail(f"{figure} has no knob {key}: {list(explorer.start_texts())}")
    cell = explorer.cell({**explorer.start_texts(), key: text})
    path = explorer.save_scenario(cell, tmp_path / "saved" / "cell.yaml")
    saved = yaml.safe_load(path.read_text())
    assert Path(saved["base"]).name == Path(explorer.config.figure(figure)["scenario"]).name
    run = explorer.runs(cell)[0]
    assert load_scenario(path).cache_key(0, "ns3", {}) == run.scenario().cache_key(0, "ns3", {})
    assert load_scenario(path).resolved() == run.scenario().resolved()


@pytest.mark.slow
def test_a_cell_the_workflow_ran_is_read_from_data_not_simulated_again(tmp_path, monkeypatch):
    from tcprepro.explore.runner import Exploration

    # the workflow's own run of the smoke tier's first cell, as Snakemake makes it
    workflow_run = tmp_path / "data/runs/A1" / A1_CELL / "rep0.nc"
    command = ["sweep-run", "--tier", "smoke", "--figure", "A1", "--cell", A1_CELL, "--rep", "0"]
    made = subprocess.run(
        [BIN / "tcprepro", *command, "-o", str(workflow_run), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    explorer = _explorer(tmp_path)
    started = []
    monkeypatch.setattr(Exploration, "_run", lambda self, progress, reps: started.append(reps))
    exploration = explorer.run()
    assert exploration.over, "a cached cell is shown at once"
    assert not started
    progress = exploration.progress["ns3"]
    assert progress.cached == 1
    assert progress.paths == {0: workflow_run}
    shown = explorer.comparison().set_index("flow")["ns3_util_pct"]
    with xr.open_dataset(workflow_run) as ds:
        from tcprepro import metrics

        util_pct = float(metrics.utilisation(ds).sel(flow="down")) * 100.0
    assert shown["down"] == pytest.approx(util_pct)
    assert f"{util_pct:.1f}" in explorer.results.value
    # one knob turned: not the workflow's run, so the explorer starts one
    changed = Exploration(
        explorer.model,
        explorer.model.cell({**explorer.texts(), "topology.uplink.buffer_pkts": "41"}),
    )
    changed.start()
    changed.wait(60)
    assert started == [[0]], "a changed cell was taken from the cache"


@pytest.mark.slow
def test_saved_scenario_simulated_gives_the_explorers_dataset(tmp_path):
    explorer = _explorer(tmp_path)
    explorer.set(down="Bbr", duration="12s", warmup="4s")
    assert explorer.wait(300), "the explored run did not finish within 300 s"
    progress = explorer.exploration.progress["ns3"]
    assert progress.state == "done", progress.message
    explored = progress.paths[0]
    assert explored.is_relative_to(tmp_path / "data/explore")
    saved = explorer.save(tmp_path / "bbr.yaml")
    valid = subprocess.run(
        [BIN / "tcprepro", "validate", str(saved)], capture_output=True, text=True
    )
    assert valid.returncode == 0, valid.stderr
    again = tmp_path / "again.nc"
    simulated = subprocess.run(
        [BIN / "tcprepro", "simulate", str(saved), "-o", str(again), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert simulated.returncode == 0, simulated.stderr
    with xr.open_dataset(explored) as first, xr.open_dataset(again) as second:
        assert first.attrs["cache_key"] == second.attrs["cache_key"]
        assert first.attrs["config"] == second.attrs["config"]
        assert set(first.data_vars) == set(second.data_vars)
        for name in first.data_vars:
            left, right = first[name].values, second[name].values
            if left.dtype.kind == "f":
                np.testing.assert_array_equal(left, right, err_msg=name)
            else:
                assert (left == right).all(), name


@pytest.mark.slow
def test_cancel_stops_the_run_and_writes_nothing(tmp_path):
    from tcprepro.explore.cell import FigureExplorer
    from tcprepro.explore.runner import Exploration

    explorer = FigureExplorer("A1", "smoke", ROOT, tmp_path)
    cell = explorer.cell({**explorer.start_texts(), "duration": "3000s"})
    exploration = Exploration(explorer, cell).start()
    while not exploration._processes and not exploration.over:
        time.sleep(0.05)
    process = exploration._processes["ns3"]
    exploration.cancel()
    assert process.poll() is not None, "the run's process still runs"
    assert exploration.progress["ns3"].state == "cancelled"
    assert not explorer.output_path(explorer.runs(cell)[0], "ns3").exists()


def test_the_paper_values_of_an_explored_cell_are_its_own_stated_values(tmp_path):
    """A2's New Reno cell gets the paper's 95 % up and 40 % down (A-c5); a changed
    experiment keeps them labelled as the figure's settings; a cell without one gets none."""
    from tcprepro.explore.cell import FigureExplorer

    model = FigureExplorer("A2", "smoke", root=ROOT, workdir=tmp_path)
    flows = xr.Dataset(coords={"flow": ["down", "up"]})
    start = model.start_texts()
    own = model.cell({**start, "up": "NewReno", "down": "NewReno"})
    paper = model.paper_values(own, flows).set_index("flow")
    assert paper["util_pct"].to_dict() == {"up": 95.0, "down": 40.0}
    assert set(paper["label"]) == {"paper (A-c5)"}
    changed = model.cell(
        {**start, "up": "NewReno", "down": "NewReno", "topology.uplink.buffer_pkts": "100"}
    )
    assert set(model.paper_values(changed, flows)["label"]) == {
        "paper (A-c5), at the figure's own settings"
    }
    longer = model.cell({**start, "up": "NewReno", "down": "NewReno", "duration": "90s"})
    assert set(model.paper_values(longer, flows)["label"]) == {"paper (A-c5)"}
    assert model.paper_values(model.cell({**start, "up": "Cubic", "down": "Vegas"}), flows) is None


def test_a_throughput_the_thesis_states_is_drawn_as_its_flows_utilisation(tmp_path):
    """B5.16's AIMD(1, 2) at B = 20: the thesis's 12 Mb/s of a 47.5 Mb/s goodput capacity."""
    from tcprepro.explore.cell import FigureExplorer

    model = FigureExplorer("B5.16", "smoke", root=ROOT, workdir=tmp_path)
    one_flow = xr.Dataset(
        {
            "flow_start_s": ("flow", [0.0]),
            "flow_link": ("flow", ["bottleneck"]),
            "link_goodput_capacity_bps": ("link", [47.5e6]),
        },
        coords={"flow": ["bn"], "link": ["bottleneck"]},
    )
    start = model.start_texts()
    cell = model.cell({**start, "law": "AIMD.1.2", "buffer": "20"})
    paper = model.paper_values(cell, one_flow)
    assert paper["flow"].tolist() == ["bn"]
    assert paper["util_pct"].tolist() == pytest.approx([12e6 / 47.5e6 * 100])
    assert paper["label"].tolist() == ["paper (B-c8)"]
    # the thesis states nothing at B = 100
    assert (
        model.paper_values(model.cell({**start, "law": "AIMD.1.2", "buffer": "100"}), one_flow)
        is None
    )


def test_the_explored_figure_names_the_papers_values_once():
    """Two flows with a stated value each: two crosses drawn, one legend entry."""
    import pandas as pd

    from tcprepro.figures.explore import explored_figure

    explored = pd.DataFrame(
        {"flow": ["down", "up"], "ns3_util_pct": [42.0, 93.0], "ns3_rtt_ms": [700.0, 720.0]}
    )
    paper = pd.DataFrame(
        {"flow": ["up", "down"], "util_pct": [95.0, 40.0], "label": "paper (A-c5)"}
    )
    fig = explored_figure(explored, None, title="A2: a cell", build_label="", paper=paper)
    black = [c for c in fig.axes[0].collections if tuple(c.get_facecolor()[0]) == (0, 0, 0, 1)]
    crosses = [c for c in black if len(c.get_offsets())]
    assert sorted(float(y) for c in crosses for _, y in c.get_offsets()) == [40.0, 95.0]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels.count("paper (A-c5)") == 1
