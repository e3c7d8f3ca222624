"""What the report's figures and parameters table promise (issue 15): a common text size,
fixed and stated colour limits across A1/A2, markers for one or two points, the paper's
value next to each parameter with the ones the tier changed marked."""

import re

import matplotlib
import pytest
from matplotlib.collections import QuadMesh

from conftest import ROOT
from test_claims import a_figure, grid

matplotlib.use("Agg")


def _texts(fig):
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]


@pytest.mark.parametrize(("figure", "rtt_s"), [("A1", 0.318), ("A2", 1.5)])
def test_a1_a2_rtt_colour_scale_is_fixed_stated_and_text_is_8_pt(figure, rtt_s):
    from tcprepro.figures.common import FONT_PT, TEXT_WIDTH_IN, drawn
    from tcprepro.figures.study_a import utilisation_grid

    ds = a_figure(figure, grid((50, 90)), rtt_s=rtt_s, reps=1, duration_s=20.0)
    fig = utilisation_grid(ds, title=figure)
    maps = [ax for ax in fig.axes if ax.get_title() in ("download flow", "upload flow")]
    assert len(maps) == 2  # download and upload RTT
    meshes = [c for ax in maps for c in ax.collections if isinstance(c, QuadMesh)]
    assert len(meshes) == 2
    # one colour bar for both maps, as tall as both
    assert [c.colorbar is not None for c in meshes].count(True) == 1
    for mesh in meshes:  # the same limits whatever the data: a colour is one RTT in A1 and A2
        assert (mesh.norm.vmin, mesh.norm.vmax) == (100.0, 2000.0)
    statements = " ".join(drawn(fig).statements)
    assert "fixed at 100–2000 ms" in statements
    assert "One repetition: no error bars." in statements
    assert "standard deviation" not in statements
    sizes = {round(t.get_fontsize(), 1) for t in _texts(fig)}
    assert min(sizes) >= FONT_PT - 1.5, sizes
    assert max(sizes) <= FONT_PT + 1, sizes
    assert fig.get_figwidth() <= TEXT_WIDTH_IN + 1e-9
    annotations = [t.get_text() for t in _texts(fig)]
    assert f"{rtt_s * 1000:.0f}" in annotations  # each cell's mean RTT is printed in it


def test_one_or_two_points_are_markers_more_are_lines():
    from tcprepro.figures.common import points_style

    assert points_style(1) == {"linestyle": "none"}
    assert points_style(2) == {"linestyle": "none"}
    assert points_style(3) == {}


def test_the_parameters_table_sets_the_papers_value_next_to_each_changed_one():
    from tcprepro.campaign import load_workflow_config
    from tcprepro.paper import _parameters

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    text = _parameters(config, "smoke", ["A1"])
    smoke = config.figure_scenario("A1", "smoke")
    paper = config.figure_scenario("A1", "paper")
    assert smoke.duration != paper.duration  # the smoke tier shortens A1
    row = next(line for line in text.splitlines() if "duration / warm-up" in line)
    assert row.count(r"\reprochanged{}") == 1
    assert f"{smoke.duration:g} s" in row.split(" & ")[2]
    assert f"{paper.duration:g} s" in row.split(" & ")[3]
    reps = int(config.tier_settings("A1", "paper")["repetitions"])
    row = next(line for line in text.splitlines() if "repetitions / seed" in line)
    assert row.split(" & ")[3].startswith(f"{reps} /")
    # a parameter the tier keeps says "same", without the mark
    same = [line for line in text.splitlines() if r"\textcolor{gray}{same}" in line]
    assert same
    assert not any(r"\reprochanged" in line for line in same)
    # the paper tier's own table marks nothing
    assert r"\reprochanged{} " not in _parameters(config, "paper", ["A1"]).split(r"\endhead")[1]
    assert re.search(r"(?m)^A1 & ", text)


def test_the_parameters_table_names_sender_groups_and_sweeps_as_the_report_does():
    """Issue 34: "senders s", "RTT of senders s", "sweep rtt2": the scenario's and the
    config's internal names. Each sender group of a simulated figure has the label its
    paper's terms give it; each sweep row names its dimension by its axis label."""
    from tcprepro.campaign import load_workflow_config
    from tcprepro.paper import _parameters
    from tcprepro.scenario import DumbbellTopology

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    figures = config.simulated_figures
    text = _parameters(config, "smoke", figures)
    names = {
        line.split(" & ")[1].replace(r"\reprochanged{} ", "")
        for line in text.splitlines()
        if line.count(" & ") == 3
    }
    for figure in figures:
        topology = config.figure_scenario(figure, "paper").topology
        if not isinstance(topology, DumbbellTopology):
            continue
        for group in topology.senders:
            assert group.label, f"{figure}: sender group {group.name!r} has no label"
            assert group.label in names
        sweep = config.figure(figure).get("sweep", {})
        for dim, spec in sweep.items():
            assert f"sweep: {spec.get('label', dim)}" in names, (figure, dim)
    assert not [n for n in names if n.startswith("senders ") or re.match(r"sweep \w", n)]
    assert {"hosts 1 and 2", "host 1", "host 2", "web clients", "sweep: RTT2"} <= names
    assert "SACK on, timestamps on" in text
