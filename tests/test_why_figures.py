"""The trace figure behind each claim's "why" (issue 14): the run it names, and only then.

Synthetic combined datasets whose every run has its own congestion window, so that a
figure of the wrong run (cell, repetition or flow) cannot pass for the right one.
"""

import csv
import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import xarray as xr

from conftest import compile_report_inputs, pdf_text
from synthetic import synthetic_run
from tcprepro import claims
from tcprepro.claims import Claim, ClaimResult, check_claims, write_tex
from tcprepro.claims.cells import TracedRun
from tcprepro.figures.common import drawn
from tcprepro.figures.why import HEIGHT_IN, run_trace, write_why_figures
from tcprepro.store import combine_runs
from test_claims import _losses_only_in_warmup, a_figure, grid

matplotlib.use("Agg")

MSS = 1000
UPS, DOWNS = ["NewReno", "Vegas"], ["NewReno", "Cubic"]
#: the one flow-run without a loss in its measured window (the criterion names it)
QUIET = ({"up": "Vegas", "down": "Cubic"}, 1, "up")


def window_bytes(up, down, rep, flow):
    """Each run's own window (bytes) over time: no two flow-runs alike."""
    base = 20_000 + 5_000 * UPS.index(up) + 2_000 * DOWNS.index(down) + 700 * rep
    base += 300 * ["down", "up"].index(flow)
    return lambda times: base * (1.0 + 0.2 * np.sin(times))


def quiet_upload(times, warmup_s=2.0):
    """Cumulative lost segments: the download loses in every interval, the upload only in
    the warm-up."""
    per_interval = np.column_stack([np.ones(times.size), 2.0 * (times <= warmup_s)])
    return np.cumsum(per_interval, axis=0)


def t_figure(reps=2):
    """A combined dataset of figure T1 (up x down x rep): every flow-run loses segments in
    every interval but the QUIET one, which loses only in its warm-up."""
    runs = []
    for up in UPS:
        for down in DOWNS:
            for rep in range(reps):
                windows = [window_bytes(up, down, rep, f) for f in ("down", "up")]
                series = {"cwnd_bytes": lambda t, w=windows: np.column_stack([w[0](t), w[1](t)])}
                if ({"up": up, "down": down}, rep) == QUIET[:2]:
                    series["lost_data_pkts"] = quiet_upload
                runs.append(
                    synthetic_run(
                        extra_flow_series=series,
                        attrs={
                            "config": json.dumps({"id": "t", "tcp": {"mss": f"{MSS}B"}}),
                            "figure": "T1",
                            "sweep": json.dumps({"up": up, "down": down}),
                            "sweep_values": json.dumps({"up": UPS, "down": DOWNS}),
                            "rep": rep,
                        },
                    )
                )
    return combine_runs(runs)


@claims.check
def why_test_reproduced(data):
    return ClaimResult("fine", "reproduced")


@claims.check
def why_test_not_reproduced(data):
    return ClaimResult("off", "not reproduced")


@claims.explainer
def why_test_explain(data, cells=()):
    return "the traces say so"


def t_claim(claim_id, check, regime=None, **extra):
    return Claim(
        id=claim_id,
        study="T",
        text="t",
        paper="p",
        tolerance="tol",
        check=check,
        requires=("T1",),
        cells=({"figure": "T1", "up": UPS, "down": DOWNS},),
        regime=regime or {},
        **extra,
    )


def cwnd_line(fig, flow):
    (line,) = [
        line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == f"cwnd:{flow}"
    ]
    return line


def test_an_inconclusive_claim_gets_a_figure_of_exactly_the_run_its_criterion_names(tmp_path):
    ds = t_figure()
    registry = [
        t_claim("T-1", "why_test_reproduced", regime={"min_loss_events": 3}),
        t_claim("T-2", "why_test_reproduced"),  # no regime: reproduced
    ]
    inconclusive, reproduced = check_claims({"T1": ds}, registry=registry, resamples=0)
    assert inconclusive.verdict == "inconclusive"
    cell, rep, flow = QUIET
    # the structured run is the one the explanation names in words
    assert inconclusive.trace == TracedRun(
        "T1", cell, rep, flow, "the run the unmet criterion names"
    )
    assert "fewest 0: T1, up=Vegas, down=Cubic, rep 1, flow up" in inconclusive.explanation
    assert reproduced.verdict == "reproduced"
    assert reproduced.trace is None

    fig = run_trace(ds, inconclusive.trace.cell, inconclusive.trace.rep, inconclusive.trace.flow)
    times = ds["time"].values
    for name in ("down", "up"):
        line = cwnd_line(fig, name)
        np.testing.assert_allclose(line.get_xdata(), times)
        np.testing.assert_allclose(
            line.get_ydata(), window_bytes(*cell.values(), rep, name)(times) / MSS
        )
        # and not the same cell's other repetition
        assert not np.allclose(line.get_ydata(), window_bytes(*cell.values(), 0, name)(times) / MSS)
    assert cwnd_line(fig, "up").get_linewidth() > cwnd_line(fig, "down").get_linewidth()
    statements = " ".join(drawn(fig).statements)
    assert "Run: T1, up=Vegas, down=Cubic, repetition 1." in statements
    assert "segments of 1000 B" in statements
    assert "lasts 10 s; its first 2 s are warm-up" in statements
    # the loss ticks: the quiet flow's fall in its warm-up only, the other's in every interval
    ticks = {
        tuple(c.get_colors()[0][:3]): c.get_segments()
        for c in fig.axes[0].collections
        if isinstance(c, matplotlib.collections.LineCollection)
    }
    up_colour = tuple(matplotlib.colors.to_rgb(cwnd_line(fig, "up").get_color()))
    assert max(seg[0][0] for seg in ticks[up_colour]) <= 2.0
    assert len(ticks) == 2
    # the queues of both link directions the flows cross, buffers dashed
    queue_ax = fig.axes[1]
    assert len([line for line in queue_ax.get_lines() if line.get_linestyle() == "-"]) == 2
    matplotlib.pyplot.close(fig)

    figures = write_why_figures(
        [inconclusive, reproduced], {"T1": ds}, tmp_path / "paper/figures/why/T", tmp_path / "paper"
    )
    assert list(figures) == ["T-1"]
    assert sorted(p.name for p in (tmp_path / "paper/figures/why/T").iterdir()) == [
        "T-1.json",
        "T-1.pdf",
    ]
    assert figures["T-1"].include == "figures/why/T/T-1.pdf"
    assert (tmp_path / "paper/figures/why/T/T-1.pdf").read_bytes().startswith(b"%PDF")
    write_tex([inconclusive, reproduced], tmp_path / "c.tex", caption="x", figures=figures)
    tex = (tmp_path / "c.tex").read_text()
    item = tex.split(r"\item[T-1]")[1]
    assert r"{figures/why/T/T-1.pdf}" in item
    assert r"height=1.8in" in item
    assert HEIGHT_IN == 1.8
    assert re.search(r"\\caption\{\\textbf\{Why T-1\.\} The traces of the run the unmet", item)
    assert r"\label{why:T-1}" in item
    assert r"\item[T-2]" not in tex


def test_a_counted_flow_is_named_by_its_variant_and_number_and_its_run_name():
    """B5.1's ``reno: {count: 2}`` gives ``reno0``, ``reno1``: the legend reads "Reno,
    flow 1 (reno0)", the run name the "why" text cites kept after it; a variant by its
    report name."""
    ds = t_figure(reps=1).assign_coords(flow=["reno0", "reno1"])
    scenario = json.dumps({"id": "t", "flows": {"reno": {"count": 2, "variant": "newreno"}}})
    ds["run_config"] = xr.full_like(ds["run_config"], scenario, dtype=object)
    ds["flow_variant"] = xr.full_like(ds["flow_variant"], "NewReno", dtype=object)
    fig = run_trace(ds, {"up": "NewReno", "down": "NewReno"}, 0)
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    assert "Reno, flow 1 (reno0)" in labels
    assert "Reno, flow 2 (reno1)" in labels
    matplotlib.pyplot.close(fig)
    # a flow the scenario names itself keeps its name
    fig = run_trace(t_figure(reps=1), {"up": "NewReno", "down": "NewReno"}, 0)
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    assert "up (CUBIC)" in labels, labels  # its variant by its report name
    matplotlib.pyplot.close(fig)


def test_a_queue_is_drawn_and_keyed_in_a_style_no_flow_has():
    """Issue 34: the ``down`` flow and the queue of the ``down`` link it alone crosses were
    drawn and keyed in one colour, "down (Reno)" and "queue: down" alike in the key."""
    ds = t_figure(reps=1)
    flows = [str(f) for f in ds["flow"].values]
    crossed = {f: str(ds["flow_link"].sel(flow=f).values.ravel()[0]) for f in flows}
    assert sorted(crossed.values()) == ["down", "up"]  # each flow alone on its link
    fig = run_trace(ds, {"up": "NewReno", "down": "NewReno"}, 0)
    (legend,) = fig.legends
    styles = {
        text.get_text(): (matplotlib.colors.to_rgb(handle.get_color()), handle.get_linestyle())
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True)
        if isinstance(handle, matplotlib.lines.Line2D) and handle.get_linestyle() == "-"
    }
    windows = {label: style for label, style in styles.items() if not label.startswith("queue")}
    queues = {label: style for label, style in styles.items() if label.startswith("queue")}
    assert len(windows) == 2
    assert sorted(queues) == ["queue: down", "queue: up"]
    assert len(set(styles.values())) == len(styles), styles
    # the lines drawn are the styles keyed
    flow_colours = {matplotlib.colors.to_rgb(cwnd_line(fig, f).get_color()) for f in crossed}
    drawn_queues = {
        matplotlib.colors.to_rgb(line.get_color())
        for line in fig.axes[1].get_lines()
        if line.get_linestyle() == "-"
    }
    assert drawn_queues == {colour for colour, _ in queues.values()}
    assert not drawn_queues & flow_colours
    # and so are the drop ticks and buffers: none in a flow's colour
    queue_marks = {
        tuple(c.get_colors()[0][:3]) for c in fig.axes[1].collections if hasattr(c, "get_colors")
    }
    queue_marks |= {matplotlib.colors.to_rgb(line.get_color()) for line in fig.axes[1].get_lines()}
    assert not queue_marks & flow_colours
    matplotlib.pyplot.close(fig)


def test_an_inconclusive_claims_figure_is_the_run_its_why_names_not_its_explained_cell():
    """A-c1's "why" names the run with the fewest loss events; its figure drew the first
    cell of its explanation (another run) instead."""
    claim = t_claim(
        "T-1",
        "why_test_reproduced",
        regime={"min_loss_events": 3},
        explain="why_test_explain",
        explain_args={"cells": [{"figure": "T1", "up": "NewReno", "down": "NewReno"}]},
    )
    (result,) = check_claims({"T1": t_figure()}, registry=[claim], resamples=0)
    cell, rep, flow = QUIET
    assert result.verdict == "inconclusive"
    assert "fewest 0: T1, up=Vegas, down=Cubic, rep 1, flow up" in result.explanation
    assert result.trace == TracedRun("T1", cell, rep, flow, "the run the unmet criterion names")


def test_a_criterion_of_one_loss_event_reads_as_no_loss_event():
    registry = [t_claim("T-1", "why_test_reproduced", regime={"min_loss_events": 1})]
    (result,) = check_claims({"T1": t_figure()}, registry=registry, resamples=0)
    assert result.verdict == "inconclusive"
    assert "no loss event in the measured window for 1 of 16 flow-runs" in result.explanation
    assert "fewer than 1" not in result.explanation


def test_a_buffer_far_above_its_queue_is_named_in_the_caption_not_drawn():
    """D-c3's run: a 1000-packet buffer over a queue of a few packets would flatten the
    queue to the axis; the panel scales to the queues and the caption names the buffer."""
    ds = t_figure()
    cell, rep, flow = QUIET
    links = [str(link) for link in ds["link"].values]
    peak = float(ds["queue_pkts"].sel(link=links).max())
    statements = {}
    for far in (False, True):
        buffers = ds["link_buffer_pkts"].copy()
        buffers.loc[{"link": links}] = 2 * peak
        if far:
            buffers.loc[{"link": links[0]}] = 100 * peak
        fig = run_trace(ds.assign(link_buffer_pkts=buffers), cell, rep, flow)
        queue_ax = fig.axes[1]
        dashed = [line for line in queue_ax.get_lines() if line.get_linestyle() == "--"]
        assert len(dashed) == (1 if far else 2)
        assert queue_ax.get_ylim()[1] < 3 * peak
        statements[far] = " ".join(drawn(fig).statements)
        matplotlib.pyplot.close(fig)
    assert "buffer dashed;" in statements[False]
    assert f"buffer dashed, except {100 * peak:g} packets ({links[0]}): more " in statements[True]


def test_a_claim_not_reproduced_draws_its_first_explained_cell_that_ran_else_its_first_cell():
    ds = t_figure(reps=1)
    explained = t_claim(
        "T-3",
        "why_test_not_reproduced",
        explain="why_test_explain",
        explain_args={
            "cells": [
                {"figure": "T1", "up": "Compound", "down": "Cubic"},  # not in this sweep
                {"figure": "T9", "up": "Vegas", "down": "Cubic"},  # no such dataset
                {"figure": "T1", "up": "Vegas", "down": "NewReno"},
            ]
        },
    )
    plain = t_claim("T-4", "why_test_not_reproduced")
    missing = Claim("T-5", "T", "t", "p", "tol", "why_test_not_reproduced", requires=("T2",))
    results = check_claims({"T1": ds}, registry=[explained, plain, missing], resamples=0)
    assert [r.verdict for r in results] == ["not reproduced", "not reproduced", "not run"]
    assert results[0].trace.figure == "T1"
    assert results[0].trace.cell == {"up": "Vegas", "down": "NewReno"}
    assert results[0].trace.rep == 0
    assert results[0].trace.flow is None
    assert results[1].trace.cell == {"up": "NewReno", "down": "NewReno"}  # first of cells:
    assert results[2].trace is None

    fig = run_trace(ds, results[0].trace.cell, results[0].trace.rep)
    times = ds["time"].values
    expected = window_bytes("Vegas", "NewReno", 0, "down")(times) / MSS
    np.testing.assert_allclose(cwnd_line(fig, "down").get_ydata(), expected)
    matplotlib.pyplot.close(fig)


def test_the_directory_is_written_afresh_and_a_bad_run_is_refused(tmp_path):
    ds = t_figure(reps=1)
    out = tmp_path / "why"
    out.mkdir()
    (out / "T-old.pdf").write_bytes(b"%PDF stale")  # a claim reproduced since
    (result,) = check_claims(
        {"T1": ds}, registry=[t_claim("T-4", "why_test_not_reproduced")], resamples=0
    )
    figures = write_why_figures([result], {"T1": ds}, out)
    assert sorted(p.name for p in out.iterdir()) == ["T-4.json", "T-4.pdf"]
    assert figures["T-4"].include == str(out / "T-4.pdf")
    # nothing to draw: the directory is still written, empty
    write_why_figures([], {"T1": ds}, out)
    assert list(out.iterdir()) == []
    assert not list(tmp_path.glob(".why*"))  # no staging left behind
    with pytest.raises(KeyError, match="no up='Compound'"):
        run_trace(ds, {"up": "Compound", "down": "Cubic"})
    with pytest.raises(KeyError, match="no flow 'web'"):
        run_trace(ds, {"up": "Vegas", "down": "Cubic"}, flow="web")


def test_the_claims_command_draws_the_figures_of_its_inconclusive_claims(tmp_path):
    """``tcprepro claims`` on A2-like runs that lose only in their warm-up: A-c5 and A-c6
    are inconclusive, each gets its figure under its why; the table includes them."""
    from tcprepro.cli import main
    from tcprepro.store import write_dataset

    ds = a_figure(
        "A2", grid((95, 40)), rtt_s=0.7, reps=1, extra_flow_series=_losses_only_in_warmup()
    )
    combined = write_dataset(ds, tmp_path / "A2.nc")
    why = tmp_path / "paper/figures/why/A"
    tex = tmp_path / "paper/generated/claims_A.tex"
    argv = ["claims", "--study", "A", "--tex", str(tex), "--csv", str(tmp_path / "A.csv")]
    argv += ["--why-dir", str(why), "--why-root", str(tmp_path / "paper"), str(combined)]
    assert main(argv) == 0
    rows = csv.DictReader((tmp_path / "A.csv").open())
    verdicts = {row["claim"]: row["verdict"] for row in rows}
    drawn_for = {p.stem for p in why.glob("*.pdf")}
    expected = {c for c, v in verdicts.items() if v in ("inconclusive", "not reproduced")}
    assert "A-c5" in expected
    assert drawn_for == expected  # pending claims (no A1, A3) get none
    text = tex.read_text()
    included = {c for c in expected if f"{{figures/why/A/{c}.pdf}}" in text}
    assert "A-c5" in included
    # a claim whose trace is the run another's figure draws points to that figure instead
    # of drawing it again (A-c6 traces A-c5's run)
    for claim in expected - included:
        item = rf"\\item\[{claim}\][^\n]*\n\\par\\noindent Its traces: the same run as "
        assert re.search(item + r"Figure~\\ref\{why:A-c\d+\}", text), claim
    assert "A-c2.pdf" not in text


@pytest.mark.needs_latex
def test_the_claims_list_with_its_figures_compiles_with_captions_and_no_overfull_box(tmp_path):
    from tcprepro.paper import overfull_boxes

    ds = t_figure(reps=1)
    registry = [t_claim(f"T-{k}", "why_test_not_reproduced") for k in range(1, 4)]
    results = check_claims({"T1": ds}, registry=registry, resamples=0)
    figures = write_why_figures(results, {"T1": ds}, tmp_path / "figures/why/T", tmp_path)
    (tmp_path / "generated").mkdir()
    write_tex(results, tmp_path / "generated/claims_T.tex", caption="Claims.", figures=figures)
    # twice: the labels' pages
    log = compile_report_inputs(tmp_path, ["generated/claims_T.tex"], runs=2)
    assert [box for box in overfull_boxes(log) if box[1] > 1.0] == []
    assert "Warning" not in log.split("<<generated")[1]
    pages = pdf_text(tmp_path / "t.pdf").split("\f")
    aux = (tmp_path / "t.aux").read_text()
    text = (tmp_path / "generated/claims_T.tex").read_text()
    drawn = [claim for claim in figures if f"why/T/{claim}.pdf" in text]
    assert drawn  # the claims tracing one run share its figure (the first claim's)
    for claim in set(figures) - set(drawn):
        assert f"the same run as Figure~\\ref{{why:{drawn[0]}}}" in text, claim
    for claim in drawn:
        page = int(re.search(rf"\\newlabel\{{why:{claim}\}}\{{\{{\d+\}}\{{(\d+)\}}", aux)[1])
        assert f"Why {claim}." in pages[page - 1]  # the caption is on the figure's page
    assert Path(tmp_path / "t.pdf").stat().st_size > 10_000
