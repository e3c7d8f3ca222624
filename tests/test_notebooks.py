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
