"""The Snakemake workflow, for real: dry runs of every profile, a smoke-tier run through
papermill and LaTeX, a no-op rerun, and a rerun limited to what a change touches."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from tcprepro import analysis_c
from tcprepro.store import open_dataset, validate_run_dataset

pytestmark = pytest.mark.slow

BIN = str(Path(sys.executable).parent)


def snakemake(workdir, *args, check=True):
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    result = subprocess.run(
        [f"{BIN}/snakemake", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        )
    return result


def job_counts(output):
    counts = {}
    table = re.search(r"job\s+count\n-+\s+-+\n(.*?)\ntotal", output, re.S)
    for line in (table.group(1) if table else "").splitlines():
        name, count = line.split()
        counts[name] = int(count)
    return counts


def copy_workflow(dest):
    for name in ("Snakefile", "workflow", "notebooks", "paper"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source,
                dest / name,
                ignore=shutil.ignore_patterns(
                    "build", "figures", "generated", ".ipynb_checkpoints"
                ),
            )
        else:
            shutil.copy(source, dest / name)
    return dest


# simulations per profile: study A (A1-A4) + study C (C1, C3.1, C3.3, C3.4, C3.6; C2, C3.2
# and C3.5 draw C3.1's runs)
@pytest.mark.parametrize(
    ("profile", "simulations"),
    [("smoke", 16 + 12), ("quick", 160 + 74), ("paper", 960 + 744)],
)
def test_dry_run_of_every_profile(tmp_path, profile, simulations):
    workdir = copy_workflow(tmp_path)
    result = snakemake(workdir, "--profile", f"workflow/profiles/{profile}", "-n", "--cores", "2")
    counts = job_counts(result.stdout)
    assert counts["simulate"] == simulations
    assert counts["figure"] == 6 + 7  # A1-A4, A1.1, A2.1; C1, C3.1-C3.6
    assert counts["table"] == 1  # C2 (Table I)
    assert counts["combine"] == 4 + 5
    assert counts["claims"] == 2  # studies A and C
    assert counts["paper"] == 1


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
    result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "--cores", "2")
    return workdir, result


def test_smoke_run_produces_figures_claims_and_paper(smoke_run):
    workdir, result = smoke_run
    assert "simulations to run" in result.stdout + result.stderr  # plan printed before running
    assert (workdir / "paper/build/tcprepro.pdf").stat().st_size > 10_000
    for figure in ("A1", "A2", "A3", "A4"):
        assert (workdir / f"paper/figures/{figure}.pdf").stat().st_size > 5_000
        executed = json.loads((workdir / f"data/notebooks/{figure}.ipynb").read_text())
        assert any(cell.get("outputs") for cell in executed["cells"])
        combined = open_dataset(workdir / f"data/combined/{figure}.nc")
        sweep = ("up", "down", "rep") if figure in ("A1", "A2") else ("up", "down", "load", "rep")
        assert combined["goodput_bps"].dims[: len(sweep)] == sweep
        assert list(combined["up"].values) == ["NewReno", "Vegas"]
    a3 = open_dataset(workdir / "data/combined/A3.nc")
    assert a3["transfer_size_bytes"].dims == ("up", "down", "load", "rep", "transfer")
    assert int(np.isfinite(a3["transfer_end_s"]).sum()) > 0
    runs = sorted((workdir / "data/runs").rglob("*.nc"))
    assert len(runs) == 16 + 12
    assert all(validate_run_dataset(open_dataset(run)) == [] for run in runs)
    claims = (workdir / "data/claims/A.csv").read_text()
    for claim in ("A-c1", "A-c3", "A-c4", "A-c5", "A-c6", "A-c7", "A-c8", "A-c9"):
        assert claim in claims
    log = (workdir / "data/logs/claims/A.log").read_text()
    assert "verdict" in log
    assert "A-c5" in log
    tex = (workdir / "paper/generated/claims_A.tex").read_text()
    assert "A-c2" in tex
    assert "pending" in tex


def test_smoke_run_draws_study_c_with_its_table_and_claims(smoke_run):
    workdir, _ = smoke_run
    for figure in ("C1", "C3.1", "C3.2", "C3.3", "C3.4", "C3.5", "C3.6"):
        assert (workdir / f"paper/figures/{figure}.pdf").stat().st_size > 5_000
    for view in ("C2", "C3.2", "C3.5"):  # drawn from C3.1's runs
        assert not (workdir / f"data/combined/{view}.nc").exists()
    table = (workdir / "paper/generated/C2.tex").read_text()
    assert "tabular" in table
    assert "YeAH" in table
    assert "RTT 14 ms, paper" in table
    body = (workdir / "paper/generated/body.tex").read_text()
    assert "generated/C2.tex" in body
    assert "claims_C.tex" in body
    claims = (workdir / "data/claims/C.csv").read_text()
    for claim in ("C-c1", "C-c2", "C-c3", "C-c4"):
        assert claim in claims


def test_smoke_c1_second_yeah_flow_catches_up_with_the_first(smoke_run):
    """Issue 6: in the tiny C1 run, the later YeAH flow's window comes within a factor 2 of
    the first's (5-s means) before the end, and YeAH's count_reno is sampled through the
    limited-slow-start decorator."""
    workdir, _ = smoke_run
    c1 = open_dataset(workdir / "data/combined/C1.nc")
    run = c1.sel(second="YeahPaper").isel(rep=0)
    assert float(run["flow_start_s"].sel(flow="f2")) == 10.0
    converged_s = analysis_c.convergence_time_s(run, factor=2.0, smooth_s=5.0)
    assert np.isfinite(converged_s), "the second YeAH flow never came within x2 of the first"
    assert converged_s < float(run["time"].max()) - 10.0
    assert bool(run["cc_RenoCount"].sel(flow="f1").notnull().any())
    assert str(run["flow_cc_type"].sel(flow="f1").values) == "ns3::TcpYeahPaper"


def test_rerun_with_nothing_changed_runs_nothing(smoke_run):
    workdir, _ = smoke_run
    result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
    assert "Nothing to be done" in result.stdout + result.stderr


def test_a_change_reruns_only_what_it_touches(smoke_run):
    workdir, _ = smoke_run
    scenario = workdir / "workflow/scenarios/A2.yaml"
    original = scenario.read_text()
    try:
        scenario.write_text(original + "# a comment changes no result\n")
        result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
        assert "Nothing to be done" in result.stdout + result.stderr

        scenario.write_text(
            original.replace("uplink: {buffer_pkts: 250}", "uplink: {buffer_pkts: 200}")
        )
        result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
        counts = job_counts(result.stdout)
        assert counts["simulate"] == 4  # the four A2 runs, none of A1 (nor A3/A4)
        rerun = re.findall(r"output: (data/runs/\S+\.nc)", result.stdout)
        assert rerun
        assert all(path.startswith("data/runs/A2/") for path in rerun)
    finally:
        scenario.write_text(original)
