"""The benchmark harness: its correctness checks, not its speed (speed is printed, not tested)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from tcprepro import bench, bench_sections
from tcprepro.campaign import load_workflow_config
from tcprepro.scenario_io import load_scenario


@pytest.mark.slow
def test_native_replay_gives_the_same_results_as_tcprepro():
    # The same builder calls replayed by a plain C++ main(): bytes per flow, drops per link
    # and the number of events must be identical, or the speed comparison is meaningless.
    scenario = load_scenario(ROOT / "benchmarks/dumbbell.yaml", ["duration=4s", "warmup=1s"])
    result = bench.compare_native(scenario, repeats=1)
    assert result["identical"], result
    assert result["events"] > 10_000
    assert result["data_packets"] > 1_000
    assert result["python_loop_s"] > 0
    assert result["native_loop_s"] > 0


SNAKEMAKE_LOG = """Config file workflow/config.yaml is extended by additional config.
SNAKEMAKE
  Date: 2026-01-02 03:04:05
  Command: /x/.venv/bin/snakemake --profile workflow/profiles/quick --cores 2
{body}
"""


def _write_run(root, figure, cell, simulated, wall, size):
    log = root / "data/logs/simulate" / figure / cell / "rep0.log"
    log.parent.mkdir(parents=True)
    log.write_text(f"x.nc: {figure} rep 0, {simulated} simulated s in {wall} s wall (0.1 ...)\n")
    run = root / "data/runs" / figure / cell / "rep0.nc"
    run.parent.mkdir(parents=True)
    run.write_bytes(b"\0" * size)


def test_recorded_workflow_sums_the_logs_of_a_run(tmp_path):
    _write_run(tmp_path, "A1", "c1", 100, 5.0, 4000)
    _write_run(tmp_path, "A1", "c2", 100, 7.0, 6000)
    _write_run(tmp_path, "D1", "c1", 2, 1.5, 1000)
    # a run that wrote a log but no dataset (failed) is not counted
    (tmp_path / "data/logs/simulate/D1/c2").mkdir(parents=True)
    (tmp_path / "data/logs/simulate/D1/c2/rep0.log").write_text("Traceback ...\n")
    logs = tmp_path / ".snakemake/log"
    logs.mkdir(parents=True)
    (logs / "2026-01-02T030405.1.snakemake.log").write_text(
        SNAKEMAKE_LOG.format(
            body="3 of 10 steps (30%) done\nError in rule simulate:\n"
            "Elapsed time: 0:10:30.5\nWorkflowError:"
        )
    )
    (logs / "2026-01-02T040405.1.snakemake.log").write_text(
        SNAKEMAKE_LOG.format(
            body="[Fri Jan  2 04:04:10 2026]\nrule simulate_batch:\n    jobid: 1\n"
            "[Fri Jan  2 04:04:11 2026]\nrule simulate_batch:\n    jobid: 2\n"
            "[Fri Jan  2 04:34:10 2026]\nFinished jobid: 1 (Rule: simulate_batch)\n"
            "[Fri Jan  2 04:44:11 2026]\nFinished jobid: 2 (Rule: simulate_batch)\n"
            "localrule combine:\n    jobid: 3\n"
            "[Fri Jan  2 04:46:10 2026]\nFinished jobid: 3 (Rule: combine)\n"
            "7 of 7 steps (100%) done\nElapsed time: 1 day, 2:00:00"
        )
    )
    config_path = ROOT / "workflow/config.yaml"
    out = bench.recorded_workflow(tmp_path, config_path)

    first, second = out["invocations"]
    assert first["outcome"] == "stopped on a failed job"
    assert first["wall_s"] == pytest.approx(630.5)
    assert (first["steps_done"], first["steps_total"]) == (3, 10)
    assert first["command"] == "--profile workflow/profiles/quick --cores 2"
    assert second["outcome"] == "complete"
    assert second["wall_s"] == pytest.approx(86400 + 7200)
    assert first["stages"] == {}
    assert second["stages"] == {  # job time summed; done at, from the first job's start
        "simulate_batch": {"jobs": 2, "job_s": 1800.0 + 2400.0, "ended_s": 2401.0},
        "combine": {"jobs": 1, "job_s": 119.0, "ended_s": 2520.0},
    }

    assert out["studies"]["A"] == {
        "runs": 2,
        "simulated_s": 200.0,
        "wall_s": 12.0,
        "bytes": 10_000.0,
    }
    assert out["studies"]["D"]["runs"] == 1
    assert out["studies"]["B"]["runs"] == 0

    config = load_workflow_config(config_path)
    expected = 50.0 * sum(r.scenario().duration for r in config.runs("A1", "paper"))
    expected += 500.0 * sum(r.scenario().duration for r in config.runs("D1", "paper"))
    assert out["paper_estimate_gib"] * 2**30 == pytest.approx(expected)
    text = bench.report(
        {
            "machine": {"cores": "2"},
            "native": [],
            "startup": {"python_s": 0.01, "tcprepro_models_s": 1.0},
            "scaling": {"runs": 2, "1_process_s": 2.0, "2_process_s": 1.0, "speedup": 2.0},
            "memory": {"wall_s": 1.0, "peak_mib": 10.0, "dataset_mib": 0.1},
            "storage": {
                "run_kib": 1.0,
                "bytes_per_sample_per_entity": 4.0,
                "combined_mib": 0.1,
                "combined_runs": 2,
                "read_combined_s": 0.01,
            },
            "recorded": out,
        }
    )
    assert "| A | 2 | 200 | 12 | 0.060 | 0.0 |" in text
    assert "| 2026-01-02 03:04:05 |" in text
    assert "Stages of the invocation started 2026-01-02 03:04:05" in text
    assert "| simulate_batch | 2 | 70.0 | 40.0 |" in text
    assert "| combine | 1 | 2.0 | 42.0 |" in text


def test_bench_refuses_a_recorded_folder_without_a_run(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tcprepro.cli", "bench", "--recorded", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "--recorded" in result.stderr
    assert "data/logs/simulate" in result.stderr


def test_stage_times_pair_each_job_start_with_its_end():
    from tcprepro.bench import stage_times

    log = """[Fri Nov 27 13:00:00 2026]
rule simulate_batch:
    output: data/batches/smoke/A1/b0.json
    jobid: 3
    wildcards: figure=A1, batch=b0
[Fri Nov 27 13:00:02 2026]
localrule combine:
    input: data/batches/smoke/D4/b0.json
    jobid: 7
[Fri Nov 27 13:00:05 2026]
Finished jobid: 7 (Rule: combine)
[Fri Nov 27 13:00:30 2026]
Finished jobid: 3 (Rule: simulate_batch)
[Fri Nov 27 13:00:31 2026]
rule draw_A1_A2_utilisation:
    jobid: 8
[Fri Nov 27 13:00:33 2026]
rule draw_D4_transfer_volume:
    jobid: 9
[Fri Nov 27 13:00:40 2026]
Finished jobid: 8 (Rule: draw_A1_A2_utilisation)
Finished jobid: 9 (Rule: draw_D4_transfer_volume)
[Fri Nov  7 13:01:00 2026]
rule simulate_batch:
    jobid: 4
[Fri Nov  7 13:01:10 2026]
Error in rule simulate_batch:
"""
    assert stage_times(log) == {
        "simulate_batch": {"jobs": 1, "job_s": 30.0},  # job 4 never finished: not counted
        "combine": {"jobs": 1, "job_s": 3.0},
        "draw": {"jobs": 2, "job_s": 9.0 + 7.0},  # the notebook jobs, one stage
    }


def test_job_spans_start_a_job_with_a_message_at_its_message_line():
    """An emulate job (its rule has a message) logs ``Job N: <message>`` in place of a rule
    block: it starts there and takes its rule from its ``Finished jobid`` line."""
    from tcprepro.bench_workflow import job_spans

    log = """[Fri Nov 27 13:00:00 2026]
Job 42: Emulating X1 (native needs root; or the UML or VM route)
Reason: Missing output files: data/combined/emulated/X1.nc
[Fri Nov 27 13:00:01 2026]
localrule simulate_batch:
    jobid: 3
[Fri Nov 27 13:00:09 2026]
Finished jobid: 3 (Rule: simulate_batch)
[Fri Nov 27 13:01:51 2026]
Finished jobid: 42 (Rule: emulate_figure)
"""
    spans = job_spans(log)
    assert {k: (v["rule"], (v["end"] - v["start"]).total_seconds()) for k, v in spans.items()} == {
        "42": ("emulate_figure", 111.0),
        "3": ("simulate_batch", 8.0),
    }
    assert bench.stage_times(log) == {
        "emulate_figure": {"jobs": 1, "job_s": 111.0},
        "simulate_batch": {"jobs": 1, "job_s": 8.0},
    }


def test_plan_check_builds_the_figures_and_sets_the_plan_beside_the_measurement():
    """The benchmark behind "the plan predicts a build within ±20 %" (make bench) on one
    smoke figure: a real Snakemake build of its combined dataset, the plan's estimate of
    the same runs, and the report's row."""
    check = bench.plan_check(("D4",), "smoke", emulated=())  # no emulation in this phase
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    assert check["runs"] == len(config.runs("D4", "smoke")) > 0
    assert check["measured_s"] > 0
    assert check["predicted_s"] > 0
    assert check["ratio"] == pytest.approx(check["predicted_s"] / check["measured_s"])
    assert check["within"] == (abs(check["ratio"] - 1) <= bench.PLAN_TOLERANCE)
    text = "\n".join(bench_sections.plan_section({"plan_check": check}))
    assert "## The plan against a build" in text
    assert (
        f"| {check['predicted_s']:.0f} | {check['measured_s']:.0f} | {check['ratio']:.2f} |" in text
    )


def test_calibration_sample_simulates_every_strideth_run_of_each_study_in_batches():
    """The plan's calibration on a smoke-tier sample (the first run of each figure): each
    study's runs and simulated seconds are those of the sample, each run's time in its
    batch covers its event loop, and the report's table has a row per study."""
    from tcprepro.campaign.plan import calibration_runs

    sample = bench.calibration_sample(stride=1000, tier="smoke", progress=lambda _: None)
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    for study, row in sample["studies"].items():
        runs = calibration_runs(config, study, 1000, "smoke")
        figures = [f for f in config.figures_of(study) if not config.crosschecked(f)]
        assert [run.figure for run in runs] == [f for f in figures if config.runs(f, "smoke")]
        assert row["runs"] == len(runs) > 0
        assert row["simulated_s"] == pytest.approx(sum(r.scenario().duration for r in runs))
        assert row["wall_s"] > row["loop_s"] > 0
        assert row["mib"] > 0
    assert sorted(sample["studies"]) == sorted(config.studies())
    # per figure, the same runs: one each here, their times summing to the studies'
    assert all(row["runs"] == 1 for row in sample["figures"].values())
    assert sum(row["wall_s"] for row in sample["figures"].values()) == pytest.approx(
        sum(row["wall_s"] for row in sample["studies"].values())
    )
    assert len(sample["processes"]) == min(
        os.cpu_count() or 1, sum(row["runs"] for row in sample["studies"].values())
    )
    for process in sample["processes"]:
        assert process["wall_s"] > process["runs_s"] > 0
    text = "\n".join(bench_sections.calibration_section({"calibration": sample}))
    assert "## The simulation's cost per study" in text
    for study, row in sample["studies"].items():
        assert f"| {study} | {row['runs']} | {row['simulated_s']:.0f} |" in text


def test_a_section_measured_again_replaces_only_its_numbers_and_says_when(monkeypatch):
    """`tcprepro bench --from-json F --only S`: S's numbers are new, marked with the date,
    commit and load of their measure in BENCHMARKS.md; the other sections are the saved
    ones; an unknown section is refused before anything runs."""
    saved = {
        "machine": bench.machine(),
        "native": [],
        "plan_check": {
            "figures": ["D4"],
            "emulated": [],
            "tier": "smoke",
            "cores": 2,
            "runs": 1,
            "predicted_s": 1.0,
            "measured_s": 2.0,
            "ratio": 0.5,
            "within": False,
        },
        "contention": {"slowdown": 9.0},
    }
    new = {
        "figures": ["D1", "B5.16"],
        "twin": "X14",
        "runs": 9,
        "guest_runs": 2,
        "alone_s": 36.0,
        "beside_s": 54.0,
        "slowdown": 1.5,
        "overlapped": True,
    }
    monkeypatch.setitem(bench.AGAIN, "contention", lambda progress: new)
    with pytest.raises(ValueError, match="unknown section nope"):
        bench.measure_again(saved, ["contention", "nope"])
    again = bench.measure_again(saved, ["contention"], progress=lambda _: None)
    assert again["contention"] == new
    assert again["plan_check"] == saved["plan_check"]
    assert saved["contention"] == {"slowdown": 9.0}  # the saved numbers are not modified
    assert set(again["measured_again"]) == {"contention"}
    text = "\n".join(bench_sections.contention_section(again))
    assert "| 36.0 | 54.0 | 1.50 | yes |" in text
    stamp = again["measured_again"]["contention"]
    assert f"`tcprepro bench --only contention`): {stamp['date']}" in text
    assert "--only" not in "\n".join(bench_sections.plan_section(again))


def test_a_section_measured_in_rounds_keeps_its_median_and_reports_every_round(monkeypatch):
    """`--rounds 3`: the plan check runs three times; its table shows the median round,
    and a rounds table shows each round's load, times and stages, with how many rounds
    stayed within the tolerance (a slow round is kept, not dropped)."""
    measured = iter([320.0, 200.0, 250.0])

    def check() -> dict:
        seconds = next(measured)
        ratio = 240.0 / seconds
        return {
            "figures": ["D4"],
            "emulated": [],
            "tier": "smoke",
            "cores": 2,
            "runs": 1,
            "predicted_s": 240.0,
            "measured_s": seconds,
            "ratio": ratio,
            "within": abs(ratio - 1) <= bench.PLAN_TOLERANCE,
            "stages": {"simulate_batch": {"jobs": 2, "job_s": seconds * 1.5}},
            "runs_wall_s": seconds,
            "load_at_start": 0.5,
        }

    monkeypatch.setitem(bench.AGAIN, "plan_check", check)
    again = bench.measure_again({"machine": bench.machine()}, ["plan_check"], lambda _: None, 3)
    assert again["plan_check"]["measured_s"] == 250.0
    assert [item["measured_s"] for item in again["rounds"]["plan_check"]] == [320, 200, 250]
    text = "\n".join(bench_sections.plan_section(again))
    assert "| 240 | 250 | 0.96 | yes |" in text
    assert "3 rounds" in text
    assert "200 to 320 s measured; 2 of 3 rounds within ±20%" in text
    assert "| 1 | 0.50 | 240 | 320 | 0.75 (outside) | 480 | - | 320 |" in text
    assert "| 2 | 0.50 | 240 | 200 | 1.20 | 300 | - | 200 |" in text
    # measured again once: the old rounds go, they no longer describe the section's numbers
    measured = iter([260.0])
    once = bench.measure_again(again, ["plan_check"], lambda _: None)
    assert "plan_check" not in once["rounds"]
    assert "rounds" not in "\n".join(bench_sections.plan_section(once))
    with pytest.raises(ValueError, match="--rounds: 0"):
        bench.measure_again(again, ["plan_check"], lambda _: None, 0)
    walls = iter([130.0, 110.0])
    smoke = {"profile": "smoke", "noop_rerun_s": 2.5, "noop_ran_simulations": 0.0}
    smoke |= {"stages": {"draw": {"jobs": 11, "job_s": 90.0}}, "runs_wall_s": 48.0}
    monkeypatch.setitem(
        bench.AGAIN, "workflow", lambda progress: [{**smoke, "full_s": next(walls)}]
    )
    twice = bench.measure_again(again, ["workflow"], lambda _: None, 2)
    assert twice["workflow"][0]["full_s"] == 130.0  # the upper median of two
    assert twice["rounds"]["plan_check"] == again["rounds"]["plan_check"]
    text = "\n".join(bench._workflow_section(twice))
    assert "2 rounds, one after the other" in text
    assert "110 to 130 s measured." in text
    assert "| 2 | - | 110 | 2.5 | - | 90 | 48 |" in text


def test_bench_only_needs_the_saved_numbers_and_known_sections(tmp_path):
    for args, error in (
        (["--only", "contention"], "--only: needs --from-json"),
        (
            ["--from-json", str(ROOT / "benchmarks/results.json"), "--only", "x", "--rounds", "0"],
            "--rounds: 0",
        ),
        (
            ["--from-json", str(ROOT / "benchmarks/results.json"), "--only", "x"],
            "unknown section x",
        ),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "tcprepro.cli", "bench", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode != 0
        assert error in done.stderr
