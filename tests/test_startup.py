"""Process start-up: what every workflow job pays before its work.

jsonschema imports ``rfc3987_syntax`` when installed, which compiles 39 grammars on import
(2.5-6 s a process); tcprepro's processes (the config validation, ``tcprepro draw-notebook``,
the workflow's Snakemake) skip it (:func:`tcprepro.skip_iri_grammars`).
"""

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

BIN = Path(sys.executable).parent


def test_loading_the_workflow_config_does_not_compile_the_iri_grammars():
    code = (
        "import sys\n"
        "from tcprepro.campaign import load_workflow_config\n"
        "load_workflow_config('workflow/config.yaml')\n"
        "assert 'jsonschema' in sys.modules\n"
        "assert sys.modules.get('rfc3987_syntax') is None, 'the IRI grammars were compiled'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_draw_notebook_refuses_a_figure_of_another_notebook_before_starting_a_kernel():
    notebook = "notebooks/D4_transfer_volume.ipynb"
    failed = subprocess.run(
        [BIN / "tcprepro", "draw-notebook", notebook, "D4", "A1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 2
    assert "A1 is drawn by notebooks/A1_A2_utilisation.ipynb" in failed.stderr
    unknown = subprocess.run(
        [BIN / "tcprepro", "draw-notebook", notebook, "D9"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert unknown.returncode == 2
    assert "no figure 'D9'" in unknown.stderr
