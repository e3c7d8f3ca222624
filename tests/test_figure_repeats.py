"""No two figures of a build draw the same data: each figure's record has a digest of its
data, and the report refuses two figures with one digest (one plot under two numbers).
"""

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from tcprepro.campaign import load_workflow_config
from tcprepro.errors import ConfigError
from tcprepro.figures.checks import data_digest
from tcprepro.figures.common import save_figure
from tcprepro.paper.inputs import repeated_figures, write_paper_inputs

matplotlib.use("Agg")


def _plot(values, title="B5.4: one Reno flow", ylabel="cwnd (packets)"):
    fig, ax = plt.subplots()
    ax.plot(np.arange(len(values)), values, label="Reno")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.legend()
    return fig


def test_the_digest_reads_the_data_not_the_titles_or_styles():
    same = data_digest(_plot([1.0, 3.0, 2.0])), data_digest(_plot([1.0, 3.0, 2.0], "B5.8: x", "y"))
    assert same[0] == same[1]
    assert data_digest(_plot([1.0, 3.0, 2.5])) != same[0]
    empty, _ = plt.subplots()
    assert data_digest(empty) == ""


def test_a_saved_figure_records_its_digest(tmp_path):
    fig = _plot([1.0, 3.0, 2.0])
    digest = data_digest(fig)
    save_figure(fig, tmp_path / "B5.4.pdf")
    assert json.loads((tmp_path / "B5.4.json").read_text())["data_digest"] == digest


def test_figures_with_one_digest_are_named_and_the_report_refuses_them(tmp_path):
    facts = {
        "B5.1": {"data_digest": "a"},
        "B5.4": {"data_digest": "a"},
        "B5.8": {"data_digest": "a"},
        "B5.10": {"data_digest": "b"},
        "B5.11": {"data_digest": "b"},
        "B5.12": {"data_digest": "c"},
        "B5.2": {"data_digest": ""},  # nothing drawn
        "B5.3": {"data_digest": ""},
        "B5.5": {},  # a record from before the digest
    }
    assert repeated_figures(facts) == [["B5.1", "B5.4", "B5.8"], ["B5.10", "B5.11"]]
    # the report's inputs read the records next to the PDFs and refuse a repetition
    for figure in ("B5.4", "B5.8"):
        save_figure(_plot([1.0, 3.0, 2.0], f"{figure}: one Reno flow"), tmp_path / f"{figure}.pdf")
    with pytest.raises(ConfigError, match=r"B5\.4 = B5\.8"):
        write_paper_inputs(
            load_workflow_config(), "smoke", {}, tmp_path / "out", facts_dir=tmp_path, plan=False
        )


def test_a_run_under_two_claims_whys_is_drawn_once(tmp_path):
    """Why A-c1, A-c3 and A-c7 traced A1's NewReno/NewReno run three times (Figures 7, 8, 11
    of the smoke report), A-c5 and A-c6 A2's twice (9, 10): the later claims point to the
    first's figure.
    """
    from tcprepro.claims import ClaimResult, load_registry, write_tex
    from tcprepro.claims.cells import TracedRun
    from tcprepro.claims.tables import WhyFigure

    claims = {c.id: c for c in load_registry()}
    a1 = TracedRun("A1", {"up": "NewReno", "down": "NewReno"}, 0)
    a2 = TracedRun("A2", {"up": "NewReno", "down": "NewReno"}, 0)
    runs = {"A-c1": a1, "A-c3": a1, "A-c5": a2, "A-c6": a2, "A-c7": a1}
    results = [
        ClaimResult("x", "not reproduced", claim=claims[c], explanation="why", trace=run)
        for c, run in runs.items()
    ]
    figures = {c: WhyFigure(c, tmp_path / f"{c}.pdf", f"why/A/{c}.pdf", "t", 2.0) for c in runs}
    write_tex(results, tmp_path / "claims.tex", caption="Claims.", figures=figures)
    text = (tmp_path / "claims.tex").read_text()
    assert text.count(r"\includegraphics") == 2
    assert "{why/A/A-c1.pdf}" in text
    assert "{why/A/A-c5.pdf}" in text
    assert text.count(r"the same run as Figure~\ref{why:A-c1}") == 2  # A-c3, A-c7
    assert text.count(r"the same run as Figure~\ref{why:A-c5}") == 1  # A-c6
