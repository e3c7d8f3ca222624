"""Notebooks run top to bottom on their own, with their default parameters, and each is
named by the catalogue ids of the figures its rule draws."""

import json
import re
from pathlib import Path

import papermill
import pytest

from conftest import ROOT

#: a catalogue id (A1, B5.10) or a range of one letter's ids (X1-X14, C3.1-C3.6)
_ID = r"[A-Z]\d+(?:\.\d+)?"
_NAMED = re.compile(rf"{_ID}(?:-{_ID})?")


def _catalogue_key(figure: str) -> tuple[str, list[int]]:
    """Catalogue order within a letter: by number (D1, D1.1, D2, D2.1; X2 before X10)."""
    return (figure[0], [int(n) for n in re.findall(r"\d+", figure)])


def _named_ids(stem: str, figures: list[str]) -> set[str]:
    """The ids a notebook's name names: its leading ``_``-separated parts, each an id or a
    range ``first-last`` of the ids of first's letter from first to last in catalogue order."""
    named: set[str] = set()
    for part in stem.split("_"):
        if not _NAMED.fullmatch(part):
            break
        first, _, last = part.partition("-")
        last = last or first
        assert first[0] == last[0], f"{stem}: the range {part} spans two letters"
        named |= {
            f
            for f in figures
            if f[0] == first[0]
            and _catalogue_key(first) <= _catalogue_key(f) <= _catalogue_key(last)
        }
    return named


def test_every_notebook_is_named_by_the_ids_of_the_figures_its_rule_draws():
    """The figure and table rules run ``figure_notebook``: the ``notebook:`` of the figure's
    block in the workflow config. A notebook's name names exactly the ids it draws."""
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    drawn: dict[str, set[str]] = {}
    for figure in config.figures:
        drawn.setdefault(Path(config.figure(figure)["notebook"]).name, set()).add(figure)
    wrong = {}
    for notebook in sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")):
        ids = drawn.get(notebook, set())
        named = _named_ids(Path(notebook).stem, config.figures)
        if named != ids:
            wrong[notebook] = (sorted(ids, key=_catalogue_key), sorted(named, key=_catalogue_key))
    assert not wrong, "\n".join(
        f"{notebook} draws {ids} but its name names {named}"
        for notebook, (ids, named) in wrong.items()
    )
    assert set(drawn) <= {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}


@pytest.mark.slow
@pytest.mark.parametrize("notebook", sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_notebook_runs_with_its_default_parameters(tmp_path, notebook):
    output = tmp_path / notebook
    papermill.execute_notebook(
        str(ROOT / "notebooks" / notebook),
        str(output),
        cwd=str(ROOT / "notebooks"),
        progress_bar=False,
        kernel_name="python3",
    )
    executed = json.loads(Path(output).read_text())
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure was drawn"


def test_every_figure_is_drawn_by_one_execution_of_its_notebook():
    """The workflow's notebook jobs (tcprepro.campaign.notebooks): each figure once, with
    the parameters its notebook takes and the outputs the paper reads."""
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.notebooks import notebook_runs

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    jobs = notebook_runs(config, config.figures)
    runs = {run.figure: run for group in jobs.values() for run in group}
    assert sorted(runs) == sorted(config.figures)
    assert sum(len(group) for group in jobs.values()) == len(config.figures)
    for notebook, group in jobs.items():
        assert {str(config.figure(run.figure)["notebook"]) for run in group} == {notebook}
    assert runs["X3"].parameters == {
        "figure_id": "X3",
        "combined": "data/combined/X3.nc",
        "emulated": "data/combined/emulated/X3.nc",
        "output_pdf": "paper/figures/X3.pdf",
    }
    assert runs["C2"].outputs == ["paper/generated/C2.tex", "data/notebooks/C2.ipynb"]
    assert runs["C2"].inputs == ["data/combined/C3.1.nc"]  # C2 draws C3.1's runs
    assert runs["D1"].outputs == [
        *("paper/figures/D1.pdf", "paper/figures/D1.json", "paper/generated/D1.tex"),
        "data/notebooks/D1.ipynb",
    ]
    assert runs["D1.1"].inputs == ["data/combined/emulated/D1.1.nc"]  # emulated only


def _tiny_notebook(path: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    parameters = nbformat.v4.new_code_cell('figure_id = "T0"\nfail = False')
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [
        parameters,
        nbformat.v4.new_code_cell(
            "import matplotlib\n"
            "matplotlib.use('agg')\n"
            "import matplotlib.pyplot as plt\n"
            "assert 'left_over' not in globals(), 'a name of the previous figure'\n"
            "assert not plt.get_fignums(), 'a figure of the previous execution'\n"
            "left_over = figure_id\n"
            "plt.figure()\n"
            "assert not fail, f'{figure_id} fails'"
        ),
    ]
    nbformat.write(nb, path)
    return path


def test_one_kernel_executes_each_figure_as_if_alone(tmp_path, monkeypatch):
    """Executions share a kernel but no name, open figure or cell number; a failed one is
    reported and the next still runs."""
    from tcprepro.campaign.notebooks import NotebookRun, execute

    monkeypatch.chdir(tmp_path)
    notebook = _tiny_notebook(tmp_path / "tiny.ipynb")
    runs = [
        NotebookRun("T1", {"figure_id": "T1"}),
        NotebookRun("T2", {"figure_id": "T2", "fail": True}),
        NotebookRun("T3", {"figure_id": "T3"}),
    ]
    lines = []
    assert execute(notebook, runs, progress=lines.append) == ["T2"]
    assert any(line.startswith("T2: FAILED") for line in lines)
    assert [line.split(":")[0] for line in lines if "drawn in" in line] == ["T1", "T3"]
    for figure in ("T1", "T3"):
        executed = json.loads((tmp_path / f"data/notebooks/{figure}.ipynb").read_text())
        code = [c for c in executed["cells"] if c["cell_type"] == "code"]
        assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
        assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    failed = json.loads((tmp_path / "data/notebooks/T2.ipynb").read_text())
    errors = [o for c in failed["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert any("T2 fails" in str(o.get("evalue")) for o in errors)
