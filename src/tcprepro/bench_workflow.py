"""Benchmarks of the workflow as a whole (``tcprepro bench``, :mod:`tcprepro.bench`).

- **Whole workflow**: a profile from empty data, then its no-op rerun, with the job
  time of each stage (:func:`stage_times`, from Snakemake's log).
- **The plan against a build**: ``tcprepro plan``'s estimate of two figures' runs next
  to the wall time of building them (:func:`plan_check`).
- **The simulation's cost per study**: the plan's calibration sample of the quick tier,
  simulated in batch processes as the workflow runs them (:func:`calibration_sample`).
- **A UML guest beside the simulations**: the same simulate batch alone and beside a
  UML guest (:func:`guest_contention`).
- **A recorded run**: the logs of an earlier ``make figures`` (:func:`recorded_workflow`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = [
    "PLAN_CHECK",
    "PLAN_TOLERANCE",
    "calibration_sample",
    "guest_contention",
    "job_spans",
    "plan_check",
    "recorded_workflow",
    "stage_times",
    "uml_sample",
    "workflow",
]

#: the repository's benchmarks folder; its parent holds the workflow
BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"


def _copy_workflow(root: Path, dest: Path) -> None:
    """The workflow's files (no build, figures or generated tables) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "workflow", "notebooks", "paper"):
        source = root / name
        if source.is_dir():
            shutil.copytree(
                source, dest / name, ignore=shutil.ignore_patterns("build", "figures", "generated")
            )
        else:
            shutil.copy(source, dest / name)


def workflow(profile: str, root: Path | None = None) -> dict[str, float]:
    """Wall time of the workflow for ``profile`` from empty data, then of a no-op rerun.

    Runs in a temporary copy of the workflow files (the repository's ``data/`` is
    untouched); the compiled models are already built (setup excluded).
    """
    root = root or BENCH_DIR.parent
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    with tempfile.TemporaryDirectory() as tmp:
        _copy_workflow(root, Path(tmp))
        cmd = [
            str(bin_dir / "snakemake"),
            "--profile",
            f"workflow/profiles/{profile}",
            "--cores",
            str(os.cpu_count() or 1),
        ]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        subprocess.run(cmd, cwd=tmp, env=env, check=True, capture_output=True)
        full = time.perf_counter() - started
        stages, run_wall = _build_times(Path(tmp))
        started = time.perf_counter()
        rerun = subprocess.run(cmd, cwd=tmp, env=env, check=True, capture_output=True, text=True)
        noop = time.perf_counter() - started
        simulated = "rule simulate" in rerun.stdout + rerun.stderr
    return {
        "profile": profile,
        "full_s": full,
        "noop_rerun_s": noop,
        "noop_ran_simulations": float(simulated),
        "stages": stages,
        "runs_wall_s": run_wall,
        "load_at_start": load,
    }


def _build_times(workdir: Path) -> tuple[dict[str, dict[str, float]], float]:
    """A finished build's job time per stage (its Snakemake log) and its runs' own time.

    The runs' time sums each simulated run's wall time in its batch, from the batch
    manifests: what the event loops and writing took, start-ups and scheduling apart.
    """
    [log] = sorted((workdir / ".snakemake/log").glob("*.snakemake.log"))
    run_wall = sum(
        entry["wall_s"]
        for path in (workdir / "data/batches").glob("**/*.json")
        for entry in json.loads(path.read_text())["runs"]
        if entry["status"] == "simulated"
    )
    return stage_times(log.read_text(errors="replace")), run_wall


def _sweep_batch(
    workdir: Path, name: str, runs: list[Any], tier: str
) -> tuple[float, list[dict[str, Any]]]:
    """Simulate ``runs`` in one ``tcprepro sweep-batch`` process in ``workdir``.

    Its wall time and its manifest's entries (each run's path and own wall seconds).
    """
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    manifest = workdir / f"{name}.json"
    cmd = [str(bin_dir / "tcprepro"), "sweep-batch", "--tier", tier, "-o"]
    cmd += [str(manifest), *(run.path for run in runs)]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{name}: {' '.join(cmd[:6])} failed:\n{done.stderr}")
    return wall, json.loads(manifest.read_text())["runs"]


def calibration_sample(
    stride: int | None = None,
    root: Path | None = None,
    progress: Any = print,
    tier: str = "quick",
) -> dict[str, Any]:
    """Simulate the plan's calibration sample and measure what it cost, per study.

    The sample is every ``stride``-th quick-tier run of each figure of each study
    (:func:`tcprepro.campaign.plan.calibration_runs`). Its runs are shared among one
    ``tcprepro sweep-batch`` process per core (longest first by the cost model), in a
    temporary copy of the workflow from empty data. Per study: the runs, their simulated
    seconds, their wall seconds in the batch (each run's own, from the manifests), their
    event loops' seconds (the datasets' ``wall_time_s``) and their datasets' MiB; per
    figure, its runs and their wall seconds; per process: its wall time and its start-up
    (the process's wall time less its runs').
    """
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.cost import estimate_wall_s
    from tcprepro.campaign.measured import CALIBRATION_STRIDE
    from tcprepro.campaign.plan import calibration_runs
    from tcprepro.store import open_dataset

    stride = stride or CALIBRATION_STRIDE
    root = root or BENCH_DIR.parent
    cores = os.cpu_count() or 1
    config = load_workflow_config(root / "workflow/config.yaml")
    sample = {s: calibration_runs(config, s, stride, tier) for s in config.studies()}
    runs = [run for mine in sample.values() for run in mine]
    shares: list[list[Any]] = [[] for _ in range(cores)]
    loads = [0.0] * cores
    costs = {run.path: estimate_wall_s([run]) for run in runs}
    for run in sorted(runs, key=lambda run: -costs[run.path]):
        least = loads.index(min(loads))
        shares[least].append(run)
        loads[least] += costs[run.path]
    processes: list[dict[str, Any]] = []
    run_wall: dict[str, float] = {}  # each run's own time in its batch (the manifests')
    with tempfile.TemporaryDirectory() as tmp:
        _copy_workflow(root, Path(tmp))

        def batch(index: int, mine: list[Any]) -> None:
            wall, entries = _sweep_batch(Path(tmp), f"calibration-{index}", mine, tier)
            run_wall.update((e["path"], e["wall_s"]) for e in entries)
            processes.append(
                {"runs": len(mine), "wall_s": wall, "runs_s": sum(e["wall_s"] for e in entries)}
            )

        progress(f"calibration sample: {len(runs)} {tier}-tier runs on {cores} processes")
        threads = [
            threading.Thread(target=batch, args=(i, mine)) for i, mine in enumerate(shares) if mine
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        if len(processes) != len(threads):
            raise RuntimeError("calibration: a sweep-batch process failed (see above)")
        studies = {}
        for study, mine in sample.items():
            if not mine:
                continue
            loop_s = 0.0
            for run in mine:
                with open_dataset(Path(tmp) / run.path) as ds:
                    loop_s += float(ds.attrs["wall_time_s"])
            studies[study] = {
                "runs": len(mine),
                "simulated_s": sum(run.scenario().duration for run in mine),
                "wall_s": sum(run_wall[run.path] for run in mine),
                "loop_s": loop_s,
                "mib": sum((Path(tmp) / run.path).stat().st_size for run in mine) / 2**20,
            }
    figures: dict[str, dict[str, Any]] = {}  # the same runs per figure
    for run in runs:
        entry = figures.setdefault(run.figure, {"runs": 0, "wall_s": 0.0})
        entry["runs"] += 1
        entry["wall_s"] += run_wall[run.path]
    return {
        "stride": stride,
        "tier": tier,
        "cores": cores,
        "wall_s": wall,
        "studies": studies,
        "figures": figures,
        "processes": processes,
    }


def uml_sample(
    stride: int | None = None,
    root: Path | None = None,
    progress: Any = print,
    tier: str = "quick",
    figures: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Emulate every ``stride``-th run of each emulated figure on the UML route and time it.

    ``figures``: those emulated figures only (default: every one).

    The runs go through one batch (:func:`tcprepro.emulation.runner.emulate_batch`) of
    one boot per core side by side, as the workflow's emulate jobs share the cores, in
    a temporary folder. Per figure: the runs, their guest seconds, their measured wall
    seconds (the datasets' ``wall_time_s``: set-up, probe, traffic, teardown, dataset),
    the traffic stage's share of it, and the plan's estimate of the same runs
    (:func:`tcprepro.campaign.plan.uml_run_wall_s`, without the boot).
    """
    import io

    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.emulated import figure_tool
    from tcprepro.campaign.measured import UML_SAMPLE_STRIDE
    from tcprepro.campaign.plan import uml_run_wall_s, uml_sample_runs
    from tcprepro.emulation.runner import EmulationJob, emulate_batch
    from tcprepro.store import open_dataset

    root = root or BENCH_DIR.parent
    stride = stride or UML_SAMPLE_STRIDE
    cores = os.cpu_count() or 1
    config = load_workflow_config(root / "workflow/config.yaml", {"emulation": "include"})
    sample = {  # the plan's calibration sample (the UML kernel offers every twin's variants)
        figure: uml_sample_runs(config, figure, stride, tier)
        for figure in figures or config.simulated_figures
        if config.runs(figure, tier, "mininet")
    }
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [
            EmulationJob(
                run.scenario(), run.rep, Path(tmp) / run.path, run.attrs(), figure_tool(config, f)
            )
            for f, runs in sample.items()
            for run in runs
        ]
        progress(f"UML sample: {len(jobs)} {tier}-tier emulated runs, {cores} boots")
        started = time.perf_counter()
        results = emulate_batch(jobs, "uml", log=io.StringIO(), parallel=cores)
        wall = time.perf_counter() - started
        failed = [r for r in results if not r.ok]
        if failed:
            raise RuntimeError(f"UML sample: {len(failed)} run(s) failed")
        for figure, runs in sample.items():
            row = figures.setdefault(
                figure, {"runs": 0, "guest_s": 0.0, "wall_s": 0.0, "traffic_s": 0.0, "plan_s": 0.0}
            )
            for run in runs:
                with open_dataset(Path(tmp) / run.path) as ds:
                    row["wall_s"] += float(ds.attrs["wall_time_s"])
                    row["traffic_s"] += float(ds.attrs.get("stage_traffic_wall_s", math.nan))
                row["runs"] += 1
                row["guest_s"] += run.scenario().duration
                row["plan_s"] += uml_run_wall_s(run.scenario())
    return {"stride": stride, "tier": tier, "cores": cores, "wall_s": wall, "figures": figures}


#: the guest-contention measure: the emulated twin whose first quick-tier runs (how many)
#: the guest emulates, and the figures whose calibration sample the simulations run
GUEST_CONTENTION = ("X14", 2, ("D1", "B5.16"))


def guest_contention(
    root: Path | None = None,
    progress: Any = print,
    tier: str = "quick",
    setup: tuple[str, int, tuple[str, ...]] = GUEST_CONTENTION,
) -> dict[str, Any]:
    """How much slower the simulations run while a UML guest runs on another core.

    The same simulate batch (the calibration sample of ``setup``'s figures, one ``tcprepro
    sweep-batch`` process) runs twice: alone, then once a UML guest has booted and runs
    ``setup``'s twin's first runs on the UML route (one boot). The slowdown is
    the runs' own wall seconds beside the guest over alone (the manifests'); it holds only
    if the guest was still running when the batch ended (``overlapped``).
    """
    import io

    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.cost import UML_BOOT_WALL_S
    from tcprepro.campaign.emulated import figure_tool
    from tcprepro.campaign.plan import calibration_runs
    from tcprepro.emulation.runner import EmulationJob, emulate_batch

    root = root or BENCH_DIR.parent
    twin, guest_runs, figures = setup
    config = load_workflow_config(root / "workflow/config.yaml", {"emulation": "include"})
    studies = dict.fromkeys(config.figure(figure)["study"] for figure in figures)
    runs = [
        run
        for study in studies
        for run in calibration_runs(config, study, tier=tier)
        if run.figure in figures
    ]
    guest = config.runs(twin, tier, "mininet")[:guest_runs]
    results: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        alone_dir, beside_dir, guest_dir = (Path(tmp) / name for name in ("a", "b", "g"))
        for folder in (alone_dir, beside_dir):
            _copy_workflow(root, folder)
        progress(f"guest contention: {len(runs)} runs of {' and '.join(figures)} alone")
        _, alone = _sweep_batch(alone_dir, "alone", runs, tier)
        jobs = [
            EmulationJob(
                r.scenario(), r.rep, guest_dir / r.path, r.attrs(), figure_tool(config, twin)
            )
            for r in guest
        ]
        thread = threading.Thread(
            target=lambda: results.extend(emulate_batch(jobs, "uml", log=io.StringIO()))
        )
        thread.start()
        time.sleep(UML_BOOT_WALL_S + 5)  # the guest booted: its runs under way
        progress(f"guest contention: the same runs beside a UML guest running {twin}")
        _, beside = _sweep_batch(beside_dir, "beside", runs, tier)
        overlapped = thread.is_alive()
        thread.join()
    if not results or not all(r.ok for r in results):
        raise RuntimeError(f"guest contention: the UML guest's {twin} runs failed")
    alone_s, beside_s = (sum(e["wall_s"] for e in entries) for entries in (alone, beside))
    return {
        "figures": list(figures),
        "twin": twin,
        "runs": len(runs),
        "guest_runs": len(guest),
        "alone_s": alone_s,
        "beside_s": beside_s,
        "slowdown": beside_s / alone_s,
        "overlapped": overlapped,
    }


#: the figures and tier of the plan check: two studies' figures, a few minutes on 2 cores
PLAN_CHECK = (("D1", "B5.16"), "quick")
#: the emulated twin the plan check builds beside them, on a host with a virtual-clock route
PLAN_CHECK_EMULATED = ("X14",)
#: how far the plan's estimate may stray from the measured wall time (issue 33: ±20 %)
PLAN_TOLERANCE = 0.2


def plan_check(
    figures: tuple[str, ...] = PLAN_CHECK[0],
    tier: str = PLAN_CHECK[1],
    root: Path | None = None,
    emulated: tuple[str, ...] = PLAN_CHECK_EMULATED,
) -> dict[str, Any]:
    """The plan's estimate of a build of ``figures`` against its measured wall time.

    Builds the figures' combined datasets (their simulate batches and combine jobs) and
    the ``emulated`` twins' (one emulate job each, on the UML route when this host has
    it; else none) from empty data in a temporary copy of the workflow, on every core,
    and compares the wall time with the plan's makespan of the same jobs
    (:func:`tcprepro.campaign.plan.build_wall_s`: each simulate batch's calibrated cost and
    start-up, each emulated figure's one-boot job, longest first on the same cores, as the
    workflow's priorities run them).
    """
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.emulated import decide
    from tcprepro.campaign.plan import build_wall_s
    from tcprepro.errors import CapabilityError

    root = root or BENCH_DIR.parent
    cores = os.cpu_count() or 1
    config = load_workflow_config(root / "workflow/config.yaml", {"emulation": "include"})
    try:
        decision = decide(config, tier)
        route = decision.route if decision.route and decision.route.virtual_clock else None
    except CapabilityError:  # this host cannot emulate: the simulations alone
        route = None
    emulated = emulated if route is not None else ()
    runs = [run for figure in figures for run in config.runs(figure, tier)]
    predicted = build_wall_s(config, tier, cores, route, figures, emulated)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    targets = [f"data/combined/{figure}.nc" for figure in figures]
    targets += [f"data/combined/emulated/{twin}.nc" for twin in emulated]
    with tempfile.TemporaryDirectory() as tmp:
        _copy_workflow(root, Path(tmp))
        cmd = [  # the targets before --config, which takes every value after it
            *(str(bin_dir / "snakemake"), *targets),
            *("--profile", f"workflow/profiles/{tier}", "--cores", str(cores)),
            *("--config", f"tier={tier}", f"emulation={'include' if emulated else 'exclude'}"),
        ]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        done = subprocess.run(cmd, cwd=tmp, env=env, check=False, capture_output=True, text=True)
        measured = time.perf_counter() - started
        if done.returncode:
            raise RuntimeError(f"plan check: {' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
        stages, runs_wall = _build_times(Path(tmp))
    return {
        "figures": list(figures),
        "emulated": list(emulated),
        "route": route.name if route is not None else None,
        "tier": tier,
        "cores": cores,
        "runs": len(runs),
        "emulated_runs": sum(len(config.runs(twin, tier, "mininet")) for twin in emulated),
        "predicted_s": predicted,
        "measured_s": measured,
        "ratio": predicted / measured,
        "within": abs(predicted / measured - 1) <= PLAN_TOLERANCE,
        "stages": stages,
        "runs_wall_s": runs_wall,
        "load_at_start": load,
    }


_SIM_LOG = re.compile(r"([0-9.]+) simulated s in ([0-9.]+) s wall")
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?rule (\S+):$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\S+)\)$")
_MESSAGE = re.compile(r"^Job (\d+): ")


def job_spans(log_text: str) -> dict[str, dict[str, Any]]:
    """Per job id of Snakemake's log: its rule, start and end (None: it never finished).

    A job starts at the time stamp before its ``rule`` block, or before its ``Job N:
    <message>`` line when its rule has a message; it ends at the stamp before its
    ``Finished jobid`` line, which names its rule (whole seconds, as Snakemake logs them).
    """
    stamp = None
    rule = None
    spans: dict[str, dict[str, Any]] = {}
    for line in log_text.splitlines():
        if found := _STAMP.match(line):
            stamp = dt.datetime.strptime(" ".join(found[1].split()), "%a %b %d %H:%M:%S %Y")
        elif found := _RULE.match(line):
            rule = found[1]
        elif (found := _JOBID.match(line)) and rule is not None and stamp is not None:
            spans[found[1]] = {"rule": rule, "start": stamp, "end": None}
            rule = None
        elif (found := _MESSAGE.match(line)) and stamp is not None:
            spans[found[1]] = {"rule": None, "start": stamp, "end": None}
        elif (found := _FINISHED.match(line)) and found[1] in spans and stamp is not None:
            spans[found[1]].update(rule=found[2], end=stamp)
    return spans


def _stages(log_text: str) -> dict[str, dict[str, float]]:
    """Per stage, its finished jobs, their summed job time and when its last job ended.

    ``ended_s`` counts seconds from the first finished job's start.
    """
    spans = [span for span in job_spans(log_text).values() if span["end"] is not None]
    first = min((span["start"] for span in spans), default=None)
    out: dict[str, dict[str, float]] = {}
    for span in spans:
        name = span["rule"]
        row = out.setdefault(
            "draw" if name.startswith("draw_") else name, {"jobs": 0, "job_s": 0.0, "ended_s": 0.0}
        )
        row["jobs"] += 1
        row["job_s"] += (span["end"] - span["start"]).total_seconds()
        row["ended_s"] = max(row["ended_s"], (span["end"] - first).total_seconds())
    return out


def stage_times(log_text: str) -> dict[str, dict[str, float]]:
    """Per rule, the jobs Snakemake's log shows finished and their summed job time (s).

    Each job's time from :func:`job_spans`. The notebook jobs (``draw_<notebook>``, one
    rule per notebook) are one stage, ``draw``.
    """
    return {
        name: {"jobs": row["jobs"], "job_s": row["job_s"]}
        for name, row in _stages(log_text).items()
    }


_ELAPSED = re.compile(r"Elapsed time: (?:(\d+) days?, )?(\d+):(\d+):([0-9.]+)")
_STEPS = re.compile(r"(\d+) of (\d+) steps \((\d+)%\) done")
_STARTED = re.compile(r"Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_COMMAND = re.compile(r"Command: (.*)")


def _invocation(log: Path) -> dict[str, Any]:
    """One Snakemake invocation from its log: start, elapsed wall time, steps, outcome."""
    text = log.read_text(errors="replace")
    started = _STARTED.search(text)
    elapsed = _ELAPSED.search(text)
    steps = _STEPS.findall(text)
    command = _COMMAND.search(text)
    if elapsed:
        days, hours, minutes, seconds = elapsed.groups()
        wall = int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    elif started:  # stopped before Snakemake printed its summary: until the log's last write
        begin = dt.datetime.strptime(started[1], "%Y-%m-%d %H:%M:%S")
        end = dt.datetime.fromtimestamp(log.stat().st_mtime, dt.UTC).replace(tzinfo=None)
        wall = (end - begin).total_seconds()
    else:
        wall = float("nan")
    failed = any(
        marker in text
        for marker in ("Error in rule", "Exiting because a job execution failed", "WorkflowError")
    )
    if "Nothing to be done" in text:
        outcome = "nothing to do"
    elif failed:
        outcome = "stopped on a failed job"
    elif steps and steps[-1][0] == steps[-1][1]:
        outcome = "complete"
    else:
        outcome = "interrupted"
    done, total = (int(steps[-1][0]), int(steps[-1][1])) if steps else (0, 0)
    return {
        "stages": _stages(text),
        "log": log.name,
        "started": started[1] if started else "?",
        "command": command[1].split("snakemake", 1)[-1].strip() if command else "?",
        "wall_s": wall,
        "steps_done": done,
        "steps_total": total,
        "outcome": outcome,
    }


def recorded_workflow(workdir: Path, config_path: Path | None = None) -> dict[str, Any]:
    """What the logs of an earlier ``make figures`` in ``workdir`` measured.

    Reads the Snakemake logs (one per invocation: wall time, steps, outcome, and per
    stage its jobs, their summed job time and when its last job ended), each
    run's own log line ("N simulated s in W s wall", the event loop and writing of
    that run) and the datasets under ``data/runs``. Sums them per study, and
    estimates the paper profile's storage from each figure's bytes per simulated
    second (the paper tier samples at the same interval, for longer).
    """
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(config_path or workdir / "workflow/config.yaml")
    studies: dict[str, dict[str, float]] = {}
    per_figure_rate: dict[str, float] = {}
    for figure in config.simulated_figures:
        study = str(config.figure(figure)["study"])
        row = studies.setdefault(
            study, {"runs": 0, "simulated_s": 0.0, "wall_s": 0.0, "bytes": 0.0}
        )
        fig_sim, fig_bytes = 0.0, 0.0
        for log in sorted((workdir / "data/logs/simulate" / figure).glob("**/*.log")):
            match = _SIM_LOG.search(log.read_text(errors="replace"))
            dataset = workdir / "data/runs" / log.relative_to(workdir / "data/logs/simulate")
            dataset = dataset.with_suffix(".nc")
            if not match or not dataset.exists():
                continue
            row["runs"] += 1
            row["simulated_s"] += float(match[1])
            row["wall_s"] += float(match[2])
            row["bytes"] += dataset.stat().st_size
            fig_sim += float(match[1])
            fig_bytes += dataset.stat().st_size
        if fig_sim:
            per_figure_rate[figure] = fig_bytes / fig_sim
    paper_bytes, paper_runs = 0.0, 0
    for figure, rate in per_figure_rate.items():
        runs = config.runs(figure, "paper")
        paper_runs += len(runs)
        paper_bytes += rate * sum(run.scenario().duration for run in runs)
    logs = sorted((workdir / ".snakemake/log").glob("*.snakemake.log"))
    return {
        "workdir": str(workdir),
        "invocations": [_invocation(log) for log in logs],
        "studies": studies,
        "paper_estimate_gib": paper_bytes / 2**30,
        "paper_estimate_runs": paper_runs,
    }
