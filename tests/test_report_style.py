"""What the report's figures and parameters table promise (issue 15): a common text size,
fixed and stated colour limits across A1/A2, markers for one or two points, the paper's
value next to each parameter with the ones the tier changed marked."""

import re

import matplotlib
import pytest
from matplotlib.collections import QuadMesh

from conftest import ROOT, compile_report_inputs, pdf_text
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


def test_the_parameters_table_prints_values_as_the_report_does():
    """Issue 34: queue disciplines by their registry names (``fifo``, ``pfq_lqd``),
    "recovery classic", sweep values as the config writes them (``50Mbps``, ``14ms``),
    buffers as a count of KiB. The table prints names and quantities as the report's prose
    does, through the units module's and the registry's names."""
    from tcprepro.campaign import load_workflow_config
    from tcprepro.latex import escape
    from tcprepro.paper import _parameters
    from tcprepro.units import format_quantity
    from tcprepro.variants import QDISCS

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    figures = config.simulated_figures
    text = _parameters(config, "smoke", figures)
    rows = [line.split(" & ") for line in text.split(r"\endhead")[1].splitlines()]
    rows = [row for row in rows if len(row) == 4]
    values = "\n".join(" & ".join(row[2:]) for row in rows)
    for internal in (r"\bfifo\b", r"pfq\\_lqd", r"recovery classic", r"\bpkts\b"):
        assert not re.search(internal, values), internal
    # a quantity as the config writes it (50Mbps, 14ms, 16MiB), or a size in thousands of KiB
    assert not re.search(r"\d(?:[kMG]bps|ms|s|[KMG]iB)\b", values)
    assert not re.search(r"\b\d{4,}\W*KiB", values)
    # a small rate in one form, however the config wrote it (D3's 0.00001, C3.6's 1e-07)
    assert not re.search(r"\b0\.0000|e-0\d", values)
    assert "1e-5" in values
    assert "1e-7" in values
    assert r"FIFO~(drop-tail)" in values
    assert r"PFQ/LQD" in values
    assert "classic fast recovery" in values
    assert all(q.label for q in QDISCS.values())  # each discipline has the report's name
    # each swept value printed through the units module, number and unit kept together
    for figure in figures:
        sweep = config.figure(figure).get("sweep", {})
        for dim, swept in config.sweep_values(figure, "smoke").items():
            if not all(isinstance(v, str) for v in swept):
                continue
            label = sweep[dim].get("label", dim)
            printed = ", ".join(escape(format_quantity(v).replace(" ", "\u00a0")) for v in swept)
            row = next(
                r
                for r in rows[[r[0] for r in rows].index(figure) :]
                if r[1].endswith(f"sweep: {escape(label)}")
            )
            assert row[2].removeprefix(r"\textbf{").startswith(f"{printed} ("), (figure, dim)
    c31 = config.sweep_values("C3.1", "smoke")["rtt"]
    assert all(v.endswith("ms") for v in c31)  # the check above covers durations
    rate = config.sweep_values("B5.10", "smoke")["rate"]
    assert all(v.endswith("Mbps") for v in rate)  # and rates


def test_the_longest_sweep_label_fits_its_column(tmp_path):
    """B5.1's "Bottlenecked flows, queue discipline, buffer B (packets)": five lines of
    its narrow column; the parameter column holds it in three, with no overfull box."""

    from tcprepro.campaign import load_workflow_config
    from tcprepro.paper import _parameters, overfull_boxes

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    label = config.figure("B5.1")["sweep"]["case"]["label"]
    assert len(label) > 50  # the longest label of the config
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated/parameters.tex").write_text(_parameters(config, "smoke", ["B5.1"]))
    report = (ROOT / "paper/tcprepro.tex").read_text()
    assert "\\begingroup\\small\n\\reproinput{generated/parameters.tex}" in report  # set so
    log = compile_report_inputs(tmp_path, ["generated/parameters.tex"], setting="\\small")
    assert [box for box in overfull_boxes(log) if box[1] > 1.0] == []
    lines = pdf_text(tmp_path / "t.pdf").splitlines()
    first = next(i for i, line in enumerate(lines) if "sweep:" in line)
    last = next(i for i, line in enumerate(lines) if i >= first and "(packets)" in line)
    assert last - first + 1 <= 3, lines[first : last + 1]
    printed = " ".join(lines[first : last + 1])
    assert all(word in printed for word in label.split()), printed
