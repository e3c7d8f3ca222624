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
