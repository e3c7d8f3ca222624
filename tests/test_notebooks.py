"""Notebooks run top to bottom on their own, with their default parameters."""

import json
from pathlib import Path

import papermill
import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow


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
