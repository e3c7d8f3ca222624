"""Cluster profiles (SLURM, Kubernetes) through Snakemake's executor plugins: dry runs."""

import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from tcprepro.campaign import load_workflow_config
from test_workflow import copy_workflow, job_counts

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    ("profile", "extra"),
    [("slurm", []), ("kubernetes", ["--default-storage-prefix", "{workdir}"])],
)
def test_cluster_profile_dry_run_plans_the_paper_tier(tmp_path, profile, extra):
    workdir = copy_workflow(tmp_path)
    args = [a.format(workdir=workdir) for a in extra]
    result = subprocess.run(
        [BIN / "snakemake", "--profile", f"workflow/profiles/{profile}", "-n", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    batches = sum(len(config.batches(f, "paper")) for f in config.figures)
    assert job_counts(result.stdout)["simulate_batch"] == batches
    # same output paths as a local run: results land in the same cache
    assert re.search(r"data/batches/paper/A1/b0\.json", result.stdout)


def test_cache_keys_do_not_depend_on_the_host(monkeypatch):
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        run = config.runs("A1", "paper")[0]
        key = run.cache_key()
        monkeypatch.setattr(platform, "node", lambda: "compute-node-17")
        monkeypatch.setattr(platform, "release", lambda: "5.14.0-cluster")
        assert run.cache_key() == key
    finally:
        os.chdir(cwd)
