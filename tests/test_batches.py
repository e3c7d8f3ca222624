"""Simulation batches: which runs share a process, and a batch under Snakemake, for real.

A batch job runs several runs in one process; each run stays its own cached dataset,
written atomically, so a killed batch keeps the runs it finished and its rerun
simulates only the others (tcprepro.campaign.batches, rule ``simulate_batch``).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import xarray as xr

from conftest import ROOT
from tcprepro.campaign import load_workflow_config
from tcprepro.campaign.batches import make_batches, parse_run_path, simulate_batch
from tcprepro.errors import ConfigError
from tcprepro.store import open_dataset, validate_run_dataset

BIN = str(Path(sys.executable).parent)


class _Run:
    """A stand-in run: batching reads only a run's cost (given apart) and identity."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def _batches(costs, target):
    runs = [_Run(f"r{i}") for i in range(len(costs))]
    cost = dict(zip(runs, costs, strict=True))
    return make_batches("F", runs, cost.__getitem__, target)


def test_longest_runs_first_each_to_the_lightest_batch():
    # 220 s at 120 s a batch: two batches; 100 -> b0, 50 -> b1, 50 -> b1, 10 -> b0 (tie:
    # lower index), 10 -> b1
    batches = _batches([10, 100, 50, 50, 10], 120)
    assert [b.name for b in batches] == ["b0", "b1"]
    assert [repr(r) for r in batches[0].runs] == ["r0", "r1"]  # the figure's order inside
    assert [repr(r) for r in batches[1].runs] == ["r2", "r3", "r4"]
    assert [b.cost_s for b in batches] == [110, 110]


def test_a_run_longer_than_the_target_has_a_batch_of_its_own():
    batches = _batches([500, 1, 1, 1], 120)
    assert len(batches) == 4  # ceil(503 / 120) = 5 batches asked, at most one per run
    assert sorted(len(b.runs) for b in batches) == [1, 1, 1, 1]
    assert len(_batches([1, 1, 1], 120)) == 1  # cheap runs share one process


def test_a_bad_target_or_run_path_is_named():
    with pytest.raises(ConfigError, match="simulate_batch_s: 0"):
        _batches([1], 0)
    with pytest.raises(ConfigError, match=r"not data/runs/<figure>/<cell>/rep<r>\.nc"):
        parse_run_path("data/runs/A1/rep0.nc")
    assert parse_run_path("data/runs/B5.1/C=50_B=20/rep12.nc") == ("B5.1", "C=50_B=20", 12)


@pytest.mark.parametrize("tier", ["smoke", "quick", "paper"])
def test_every_run_of_a_tier_is_in_exactly_one_batch_whatever_the_cores(tier):
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    again = load_workflow_config(ROOT / "workflow/config.yaml")
    for figure in config.simulated_figures:
        runs = config.runs(figure, tier)
        batches = config.batches(figure, tier)
        batched = [run for batch in batches for run in batch.runs]
        assert sorted(batched, key=str) == sorted(runs, key=str), figure
        assert len(set(batched)) == len(batched), figure
        # decided by the config alone: a second load gives the same batches
        assert [[r.path for r in b.runs] for b in again.batches(figure, tier)] == [
            [r.path for r in b.runs] for b in batches
        ]
    with pytest.raises(ConfigError, match="A1 has no batch b999"):
        config.batch("A1", "b999", tier)


def _workdir(tmp_path):
    for name in ("Snakefile", "workflow", "notebooks"):
        source = ROOT / name
        if source.is_dir():
            subprocess.run(["cp", "-r", str(source), str(tmp_path / name)], check=True)
        else:
            subprocess.run(["cp", str(source), str(tmp_path / name)], check=True)
    return tmp_path


def test_a_batch_matches_single_run_jobs_and_skips_what_is_cached(tmp_path, monkeypatch):
    workdir = _workdir(tmp_path)
    monkeypatch.chdir(workdir)
    config = load_workflow_config("workflow/config.yaml")
    runs = config.runs("D4", "smoke")
    assert len(runs) >= 2
    log = io.StringIO()
    record = simulate_batch(runs, "data/batches/smoke/D4/b0.json", out=log, progress_every_s=0)
    assert record["simulated"] == len(runs)
    assert record["cached"] == 0
    # while a run simulates, its progress: simulated seconds that grow, then its end line
    first_label = f"[1/{len(runs)}] {runs[0].path}: "
    lines = [x for x in log.getvalue().splitlines() if x.startswith(first_label)]
    done = [float(x.split(": ")[1].split(" of ")[0]) for x in lines[:-1]]
    duration = runs[0].scenario().duration
    assert len(done) >= 2
    assert done == sorted(done)
    assert done[0] > 0
    assert done[-1] < duration
    assert all(f"of {duration:.4g} simulated s" in x and "min left" in x for x in lines[:-1])
    assert lines[-1].endswith(" s")
    assert "simulated" not in lines[-1]
    manifest = json.loads(Path("data/batches/smoke/D4/b0.json").read_text())
    assert [e["path"] for e in manifest["runs"]] == [r.path for r in runs]
    # the same run in its own process, as `tcprepro sweep-run` (a single-run job) makes it
    first = runs[0]
    cell, rep = first.cell, first.rep
    single = workdir / "single.nc"
    subprocess.run(
        [
            f"{BIN}/tcprepro",
            "sweep-run",
            "--tier",
            "smoke",
            "--figure",
            "D4",
            "--cell",
            cell,
            "--rep",
            str(rep),
            "-o",
            str(single),
            "--quiet",
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    batch_ds, single_ds = open_dataset(first.path), open_dataset(single)
    xr.testing.assert_equal(batch_ds, single_ds)  # values and coordinates (attrs aside)
    assert batch_ds.attrs["cache_key"] == single_ds.attrs["cache_key"]
    # each run keeps its own log line, as a single-run job wrote it
    log = Path(first.path.replace("data/runs/", "data/logs/simulate/")).with_suffix(".log")
    assert "simulated s in" in log.read_text()
    # again: every run cached, nothing simulated, the datasets untouched
    stamps = [os.stat(r.path).st_mtime_ns for r in runs]
    record = simulate_batch(runs, "data/batches/smoke/D4/b0.json")
    assert record["simulated"] == 0
    assert record["cached"] == len(runs)
    assert [os.stat(r.path).st_mtime_ns for r in runs] == stamps


def _batch_process(workdir: Path) -> int | None:
    """The pid of the ``tcprepro sweep-batch`` process running in ``workdir``, if any."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"sweep-batch" in cmdline and b"bash" not in cmdline[0] and cwd == str(workdir):
            return int(entry.name)
    return None


def test_a_batch_killed_under_snakemake_keeps_its_finished_runs(tmp_path):
    """Killed after its first run: that run stays whole, no partial file; the rerun
    simulates only the missing runs."""
    workdir = _workdir(tmp_path)
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT / "src")}
    command = [
        f"{BIN}/snakemake", "--profile", "workflow/profiles/smoke", "--cores", "1",
        # (a --config on the command line replaces the profile's: the tier is repeated)
        "--config", "tier=smoke", "emulation=exclude", "simulate_batch_s=100000",
        "--", "data/combined/A1.nc",
    ]  # fmt: skip
    config = load_workflow_config(ROOT / "workflow/config.yaml", {"simulate_batch_s": 100000})
    [batch] = config.batches("A1", "smoke")
    paths = [workdir / run.path for run in batch.runs]
    assert len(paths) >= 3
    job = subprocess.Popen(command, cwd=workdir, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while not paths[0].exists():
        assert job.poll() is None, "snakemake ended before the first run"
        assert time.monotonic() < deadline, "no first run"
        time.sleep(0.05)
    pid = _batch_process(workdir)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    output = job.communicate(timeout=120)[0]
    assert job.returncode != 0, output
    finished = [p for p in paths if p.exists()]
    assert paths[0] in finished
    assert len(finished) < len(paths)
    for path in finished:
        assert validate_run_dataset(open_dataset(path)) == []
    assert not list((workdir / "data/runs/A1").glob("*/.*"))  # no partial file anywhere
    assert not (workdir / "data/batches/smoke/A1/b0.json").exists()
    stamps = {p: os.stat(p).st_mtime_ns for p in finished}
    rerun = subprocess.run([*command[:-2], "--rerun-incomplete", "--", "data/combined/A1.nc"],
                           cwd=workdir, env=env, capture_output=True, text=True)  # fmt: skip
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    manifest = json.loads((workdir / "data/batches/smoke/A1/b0.json").read_text())
    status = {entry["path"]: entry["status"] for entry in manifest["runs"]}
    for path in paths:
        relative = path.relative_to(workdir).as_posix()
        assert status[relative] == ("cached" if path in finished else "simulated")
    assert {p: os.stat(p).st_mtime_ns for p in finished} == stamps
    assert open_dataset(workdir / "data/combined/A1.nc").attrs["n_runs"] == len(paths)


def test_a_runs_progress_line_says_how_far_it_is_at_most_once_per_interval():
    from tcprepro.campaign.batches import run_progress

    quiet = io.StringIO()
    report = run_progress("[1/3] data/runs/C1/x/rep0.nc", 600.0, quiet, every_s=3600)
    report(150.0)
    assert quiet.getvalue() == ""  # the interval has not passed
    out = io.StringIO()
    report = run_progress("[1/3] data/runs/C1/x/rep0.nc", 600.0, out, every_s=0)
    report(0.0)  # nothing done yet: no pace to extrapolate
    report(150.0)
    report(600.0)  # the run's own end line says it
    (line,) = out.getvalue().splitlines()
    assert line.startswith("[1/3] data/runs/C1/x/rep0.nc: 150 of 600 simulated s (25 %) in ")
    assert line.endswith(" min left")
