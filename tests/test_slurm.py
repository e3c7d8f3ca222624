"""The SLURM profile on a real one-node SLURM cluster (tests/slurm_cluster.py).

The smoke tier of figure D1 (its batch of two runs and their combined dataset) runs as SLURM jobs
through ``workflow/profiles/slurm`` and snakemake-executor-plugin-slurm; the accounting
database (``sacct``) must show every job completed, and the datasets must hold the same
values as a local run of the same targets.
"""

import os
import re
import time

import pytest
import yaml

import slurm_cluster
from conftest import ROOT
from tcprepro.campaign import load_workflow_config
from tcprepro.store import open_dataset
from test_workflow import copy_workflow, snakemake

pytestmark = pytest.mark.slow

FIGURE = "D1"
TARGETS = [f"data/combined/{FIGURE}.nc"]
#: per-run provenance that says where and when a run was made, not what it computed
WHERE_AND_WHEN = ("run_created", "run_host", "run_kernel")


@pytest.fixture(scope="module")
def cluster():
    lacking = slurm_cluster.missing()
    if lacking:
        pytest.skip(f"missing capability: {', '.join(lacking)} (make test installs them: APT_TEST)")
    if os.geteuid() != 0:
        pytest.skip("missing capability: root (slurmd launches the jobs; run the tests as root)")
    with slurm_cluster.start() as running:
        yield running


def slurm_resources(cluster):
    """The profile's default resources, with this cluster's partition and account.

    A command-line --default-resources replaces the profile's whole list, so the
    profile's runtime, memory and CPUs are passed along.
    """
    profile = yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    resources = {
        **profile["default-resources"],
        "slurm_partition": cluster.partition,
        "slurm_account": cluster.account,
    }
    return [f"{key}={value}" for key, value in resources.items()]


def workflow_copy(path):
    path.mkdir()
    return copy_workflow(path)


def test_smoke_tier_of_d1_runs_as_slurm_jobs_and_matches_a_local_run(cluster, tmp_path):
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    runs = config.runs(FIGURE, "smoke")
    assert len(runs) == 2

    on_slurm = workflow_copy(tmp_path / "slurm")  # a workflow folder the node shares
    started = time.monotonic()
    result = snakemake(
        on_slurm,
        "--profile",
        "workflow/profiles/slurm",
        "--config",
        "tier=smoke",
        "emulation=exclude",
        "--jobs",
        str(cluster.cpus),
        "--default-resources",
        *slurm_resources(cluster),
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--slurm-keep-successful-logs",
        *TARGETS,
        env=cluster.env,
    )
    slurm_wall = time.monotonic() - started
    output = result.stdout + result.stderr
    run_id = re.search(r"SLURM run ID: (\S+)", output)
    assert run_id, output

    # the accounting database: one job per batch of runs and one for the combination, all
    # named after this workflow run, charged to the account, in the partition, completed
    jobs = [job for job in cluster.sacct() if job["JobName"] == run_id[1]]
    assert len(jobs) == len(config.batches(FIGURE, "smoke")) + 1, cluster.sacct()
    assert {job["State"] for job in jobs} == {"COMPLETED"}, jobs
    assert {job["Account"] for job in jobs} == {cluster.account}
    assert {job["Partition"] for job in jobs} == {cluster.partition}
    assert {job["ExitCode"] for job in jobs} == {"0:0"}
    completion = cluster.jobcomp_log.read_text()
    for job in jobs:
        assert re.search(rf"JobId={job['JobIDRaw']} .*JobState=COMPLETED", completion)
    # each job's log, kept under .snakemake/slurm_logs/rule_<rule>/<wildcards>/<jobid>.log
    logs = sorted((on_slurm / ".snakemake/slurm_logs").rglob("*.log"))
    assert sorted(log.stem for log in logs) == sorted(job["JobIDRaw"] for job in jobs)
    assert {log.parent.parent.name for log in logs} == {"rule_simulate_batch", "rule_combine"}

    local = workflow_copy(tmp_path / "local")
    started = time.monotonic()
    snakemake(local, "--profile", "workflow/profiles/smoke", "--cores", "2", *TARGETS)
    local_wall = time.monotonic() - started
    print(f"D1 smoke tier: SLURM {slurm_wall:.0f} s, local {local_wall:.0f} s wall")
    for job in jobs:
        print("sacct:", "|".join(job.values()))

    for run in runs:
        there, here = open_dataset(on_slurm / run.path), open_dataset(local / run.path)
        assert there.equals(here), run.path  # every variable and coordinate, value for value
        for attr in ("cache_key", "config", "seed", "rep", "git_commit", "ns3_version"):
            assert there.attrs[attr] == here.attrs[attr], (run.path, attr)
    there = open_dataset(on_slurm / TARGETS[0]).drop_vars(WHERE_AND_WHEN)
    here = open_dataset(local / TARGETS[0]).drop_vars(WHERE_AND_WHEN)
    assert there.equals(here)
    assert there["goodput_bps"].notnull().any()
