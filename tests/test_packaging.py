"""Project hygiene that can fail: dependency lists in step, clean notebooks, lint, CI."""

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from conftest import ROOT

BIN = Path(sys.executable).parent


def _pyproject_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    names = project["dependencies"] + [r for group in extras.values() for r in group]
    return [r for r in map(Requirement, names) if r.name != "tcprepro"]


def _environment_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    specs = {}
    for item in env["dependencies"]:
        if isinstance(item, dict):
            for pip_item in item["pip"]:
                if not pip_item.startswith("-e"):
                    req = Requirement(pip_item)
                    specs[req.name.lower()] = str(req.specifier)
        else:
            name, spec = re.match(r"^([A-Za-z0-9_.-]+)(.*)$", item).groups()
            specs[name.lower()] = spec.replace("=", "==") if re.match(r"^=[^=]", spec) else spec
    return env, specs


def test_environment_yml_matches_pyproject():
    env, specs = _environment_requirements()
    assert "python=3.11" in env["dependencies"]
    for req in _pyproject_requirements():
        name = req.name.lower()
        assert name in specs, f"{name} is in pyproject.toml but not in environment.yml"
        assert specs[name] == str(req.specifier), f"{name}: {specs[name]} != {req.specifier}"


def test_committed_notebooks_have_no_outputs_and_a_parameters_cell():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), path
        tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name} needs exactly one 'parameters' cell"


def test_ruff_lint_and_format():
    paths = ["src", "tests", "notebooks"]
    lint = subprocess.run([BIN / "ruff", "check", *paths], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run(
        [BIN / "ruff", "format", "--check", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout


def test_snakefmt():
    result = subprocess.run(
        [BIN / "snakefmt", "--check", "Snakefile", "workflow/rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(?:sh|bash|console)?\n(.*?)```", readme, re.S).group(1)
    commands = [
        line.strip()
        for line in first_block.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert commands == ["make figures", "make test"]
    ci = [
        line.strip()
        for line in (ROOT / ".ci/run").read_text().splitlines()
        if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))
    ]
    assert ci == ["make test"]


def test_license_is_gpl2():
    assert "GNU GENERAL PUBLIC LICENSE" in (ROOT / "LICENSE").read_text()[:200]
    assert "Version 2" in (ROOT / "LICENSE").read_text()[:200]


def test_workflow_config_references_existing_files_named_by_catalogue_id():
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    for figure in config.figures:
        block = config.figure(figure)
        source = config.source(figure)
        if figure in config.simulated_figures:
            assert (ROOT / block["scenario"]).is_file()
            assert Path(block["scenario"]).stem == figure
        else:  # a data view draws another figure's dataset
            assert source in config.simulated_figures
        # named by the ids it draws: tests/test_notebooks.py
        assert (ROOT / block["notebook"]).is_file()


@pytest.mark.parametrize("tier", ["smoke", "quick", "paper"])
def test_every_run_of_every_tier_validates(tier):
    import os

    from tcprepro.campaign import load_workflow_config

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        load_workflow_config("workflow/config.yaml").check(tier)
    finally:
        os.chdir(cwd)


def test_every_test_file_that_emulates_runs_in_an_emulation_phase_of_make_test():
    """``make test`` keeps the emulations out of its first phase (the Makefile says why):
    a test file that boots UML, a VM or Mininet must be in SIDE_BY_SIDE_TESTS or
    ALONE_TESTS, and the real-time Mininet runs and host-state checks stay alone."""
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    phases = {
        name: set(re.search(rf"^{name} := (.*)$", makefile, re.M).group(1).split())
        for name in ("SIDE_BY_SIDE_TESTS", "ALONE_TESTS")
    }
    assert not phases["SIDE_BY_SIDE_TESTS"] & phases["ALONE_TESTS"]
    booting = re.compile(
        r"\b(?:uml_batch|emulate_batch|run_batch|vm_batch|crosscheck_smoke)\("
        r"|emulation\.backend import run_scenario"
    )
    emulating = {
        f"tests/{path.name}"
        for path in (ROOT / "tests").glob("test_*.py")
        if booting.search(path.read_text()) and path.name != "test_packaging.py"
    }
    assert emulating, "no emulating test file found: the pattern is stale"
    assert emulating <= phases["SIDE_BY_SIDE_TESTS"] | phases["ALONE_TESTS"], emulating
    assert {"tests/test_emulation.py", "tests/test_uml.py"} <= phases["ALONE_TESTS"]
