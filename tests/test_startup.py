"""Process start-up: what every workflow job pays before its work.

jsonschema imports ``rfc3987_syntax`` when installed, which compiles 39 grammars on import
(2.5-6 s a process); tcprepro's processes (the config validation, ``tcprepro papermill``,
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


def test_tcprepro_papermill_runs_papermill_and_keeps_its_exit_status(tmp_path):
    notebook = ROOT / "notebooks/D4_transfer_volume.ipynb"
    help_text = subprocess.run(
        [BIN / "tcprepro", "papermill", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "papermill" in help_text.lower()
    assert "--parameters" in help_text
    failed = subprocess.run(
        [BIN / "tcprepro", "papermill", str(tmp_path / "missing.ipynb"), str(tmp_path / "o.ipynb")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode != 0
    assert "missing.ipynb" in failed.stdout + failed.stderr
    assert notebook.exists()
