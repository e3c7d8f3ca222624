"""Process start-up: what every workflow job pays before its work.

jsonschema imports ``rfc3987_syntax`` when installed, which compiles 39 grammars on import
(2.5-6 s a process); tcprepro's processes (the config validation, ``tcprepro draw-notebook``,
the workflow's Snakemake) skip it (:func:`tcprepro.skip_iri_grammars`).
"""

import subprocess
import sys
from pathlib import Path

import pytest

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


def _draw_notebook(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BIN / "tcprepro", "draw-notebook", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_draw_notebook_refuses_a_figure_of_another_notebook_before_starting_a_kernel():
    notebook = "notebooks/D4_transfer_volume.ipynb"
    failed = _draw_notebook(notebook, "D4", "A1")
    assert failed.returncode == 2
    assert "A1 is drawn by notebooks/A1_A2_utilisation.ipynb" in failed.stderr
    unknown = _draw_notebook(notebook, "D9")
    assert unknown.returncode == 2
    assert "no figure 'D9'" in unknown.stderr


def test_every_yaml_file_reads_the_same_through_the_c_parser_and_errors_keep_their_line():
    """tcprepro.yamlfile parses with libyaml (here: PyYAML has it) and gives what
    yaml.safe_load gives, for every YAML file of the workflow and the claims; a
    malformed file still raises a YAMLError that names its line."""
    import yaml

    from tcprepro import yamlfile

    assert yamlfile._LOADER is yaml.CSafeLoader, "PyYAML without libyaml: the slow parser"
    files = [
        *(ROOT / "workflow").rglob("*.yaml"),
        *(ROOT / "src/tcprepro/claims").glob("*.yaml"),
    ]
    assert len(files) > 40
    for path in files:
        text = path.read_text()
        assert yamlfile.load_yaml(text) == yaml.safe_load(text), path
    with pytest.raises(yaml.YAMLError) as raised:
        yamlfile.load_yaml("a: 1\nb: [2, 3\nc: 4\n")
    assert raised.value.problem_mark.line >= 1
