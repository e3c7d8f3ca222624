"""Benchmarks that print figures: speed, start-up, scaling, memory, storage.

This module owns ``tcprepro bench`` and ``BENCHMARKS.md``. Every number is
measured when the command runs, on the machine it runs on, and printed with
that machine's description; nothing here asserts a speed (speed targets are
not tests).

What is measured
----------------
- **Event loop, tcprepro vs native C++**: the same run through tcprepro's
  Python backend (cppyy) and through ``benchmarks/replay.cc``, a plain C++
  ``main()`` that replays the identical builder calls on the same C++ library
  (:func:`tcprepro.ns3.backend.record_calls`): wall time of the event loop,
  events and bottleneck data packets per wall second, peak memory, and whether
  the results (bytes received per flow, drops per link) are identical.
- **Start-up**: interpreter + tcprepro + loading the compiled models, against
  ``from ns import ns`` (the ns-3 bindings' full header parse).
- **Scaling**: the same independent simulations on 1 and on 2 worker processes.
- **Memory** of the largest scenario of the studies (500 Mb/s, B = 625).
- **Storage**: dataset size per simulated second and per entity; time to read
  a combined dataset.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tcprepro.bench_sections import (
    again_note,
    calibration_section,
    contention_section,
    md_row,
    plan_section,
    recorded_section,
    rounds_lines,
    uml_section,
)
from tcprepro.bench_workflow import (
    BENCH_DIR,
    PLAN_CHECK,
    PLAN_TOLERANCE,
    calibration_sample,
    guest_contention,
    plan_check,
    recorded_workflow,
    stage_times,
    uml_sample,
    workflow,
)
from tcprepro.errors import CapabilityError
from tcprepro.ns3 import build
from tcprepro.scenario import Scenario
from tcprepro.scenario_io import load_scenario

__all__ = [  # the workflow's benchmarks live in tcprepro.bench_workflow
    "PLAN_TOLERANCE",
    "compare_native",
    "machine",
    "measure_again",
    "plan_check",
    "recorded_workflow",
    "report",
    "run_all",
    "scaling",
    "stage_times",
    "startup",
    "storage",
    "workflow",
]


def machine() -> dict[str, str]:
    """Description of the host the numbers were measured on."""
    from tcprepro.provenance import git_state, host_description

    commit, dirty = git_state()
    host = host_description()
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "tcprepro commit": commit[:12] + (" (src or workflow modified)" if dirty else ""),
        **{key: host[key] for key in ("cpu", "cores", "memory", "kernel", "python")},
        "ns-3": build.find_wheel().package_version,
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def replay_binary() -> Path:
    """Compile ``benchmarks/replay.cc`` against the cached tcprepro library (cached)."""
    library = build.build_library()
    wheel = build.find_wheel()
    source = BENCH_DIR / "replay.cc"
    digest = hashlib.sha256(source.read_bytes() + str(library).encode()).hexdigest()[:16]
    target = library.parent / f"replay-{digest}"
    if target.exists():
        return target
    cmd = [
        os.environ.get("CXX", "g++"),
        "-std=c++20",
        "-O2",
        f"-I{build.CPP_DIR}",
        str(source),
        "-o",
        str(target) + ".tmp",
        str(library),
        f"-Wl,-rpath,{library.parent}",
        f"-Wl,-rpath,{wheel.lib_dir}",
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    os.replace(str(target) + ".tmp", target)
    return target


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def compare_native(scenario: Scenario, repeats: int = 3) -> dict[str, Any]:
    """Run ``scenario`` through tcprepro and through the native replay; compare."""
    from tcprepro.ns3.backend import record_calls, run_scenario

    binary = replay_binary()
    python_loops, native_loops, native = [], [], {}
    dataset = None
    for _ in range(repeats):
        dataset = run_scenario(scenario, 0)
        python_loops.append(float(dataset.attrs["event_loop_wall_s"]))
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as handle:
        handle.write(record_calls(scenario, 0))
        calls = handle.name
    try:
        for _ in range(repeats):
            out = subprocess.run([str(binary), calls], check=True, capture_output=True, text=True)
            native = json.loads(out.stdout)
            native_loops.append(native["loop_s"])
    finally:
        os.unlink(calls)
    assert dataset is not None
    python_rx = [float(v) for v in dataset["flow_rx_bytes"].values]
    python_drops = [float(v) for v in dataset["drops_pkts"].sum("time").values]
    data_pkts = float(dataset["tx_data_pkts"].sum())
    events = int(dataset.attrs["ns3_events"])
    py_loop, native_loop = _median(python_loops), _median(native_loops)
    return {
        "scenario": scenario.id,
        "simulated_s": scenario.duration,
        "events": events,
        "data_packets": int(data_pkts),
        "python_loop_s": py_loop,
        "native_loop_s": native_loop,
        "ratio_native_over_python": native_loop / py_loop,
        "python_events_per_s": events / py_loop,
        "native_events_per_s": native["events"] / native_loop,
        "python_packets_per_s": data_pkts / py_loop,
        "identical": python_rx == native["rx_bytes"]
        and python_drops == native["drops_pkts"]
        and events == native["events"],
        "native_maxrss_mb": native["maxrss_kb"] / 1024,
        "repeats": repeats,
    }


def _timed_subprocess(cmd: list[str]) -> tuple[float, float]:
    """Wall time (s) and peak memory (MiB) of a child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed with status {status}")
    return wall, usage.ru_maxrss / 1024


def startup(repeats: int = 3, full_bindings: bool = True) -> dict[str, float]:
    """Start-up cost of a worker process: tcprepro + models, and ``from ns import ns``."""
    ours = [
        _timed_subprocess(
            [sys.executable, "-c", "from tcprepro.ns3 import build, backend; build.load()"]
        )[0]
        for _ in range(repeats)
    ]
    bare = [_timed_subprocess([sys.executable, "-c", "pass"])[0] for _ in range(repeats)]
    out = {"python_s": _median(bare), "tcprepro_models_s": _median(ours)}
    if full_bindings:
        out["from_ns_import_ns_s"] = _timed_subprocess([sys.executable, "-c", "from ns import ns"])[
            0
        ]
    return out


def _simulate_cmd(config: Path, output: Path, overrides: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "tcprepro.cli", "simulate", str(config), "-o", str(output), "-q"]
    for item in overrides:
        cmd += ["--set", item]
    return cmd


def scaling(config: Path, runs: int = 4, overrides: tuple[str, ...] = ()) -> dict[str, float]:
    """Wall time of ``runs`` independent simulations on 1 and on 2 processes."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            started = time.perf_counter()
            pending = [
                _simulate_cmd(
                    config, Path(tmp) / f"w{workers}-{i}.nc", [*overrides, f"seed={i + 1}"]
                )
                for i in range(runs)
            ]
            active: list[subprocess.Popen[bytes]] = []
            while pending or active:
                while pending and len(active) < workers:
                    active.append(
                        subprocess.Popen(
                            pending.pop(0), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                        )
                    )
                active[0].wait()
                if active[0].returncode != 0:
                    raise RuntimeError("a scaling run failed")
                active.pop(0)
            out[f"{workers}_process_s"] = time.perf_counter() - started
    out["speedup"] = out["1_process_s"] / out["2_process_s"]
    out["runs"] = runs
    return out


def memory(config: Path) -> dict[str, float]:
    """Wall time and peak memory of one run of ``config`` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp) / "run.nc"
        wall, peak = _timed_subprocess(_simulate_cmd(config, output, []))
        size = output.stat().st_size
    return {"wall_s": wall, "peak_mib": peak, "dataset_mib": size / 2**20}


def storage(config: Path, runs: int = 6) -> dict[str, float]:
    """Dataset size per simulated second and entity; combine + read time of a figure."""
    from tcprepro.ns3.backend import run_scenario
    from tcprepro.store import combine_runs, open_dataset, write_dataset

    scenario = load_scenario(config, [f"repetitions={runs}"])
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for rep in range(runs):
            ds = run_scenario(
                scenario,
                rep,
                extra_attrs={
                    "figure": "bench",
                    "sweep": json.dumps({}),
                    "sweep_values": json.dumps({}),
                },
            )
            paths.append(write_dataset(ds, Path(tmp) / f"rep{rep}.nc"))
        entities = ds.sizes["flow"] + ds.sizes["link"]
        run_bytes = float(np.mean([p.stat().st_size for p in paths]))
        write_dataset(combine_runs(paths), Path(tmp) / "combined.nc")
        started = time.perf_counter()
        open_dataset(Path(tmp) / "combined.nc")
        read_s = time.perf_counter() - started
        combined_bytes = (Path(tmp) / "combined.nc").stat().st_size
    return {
        "run_kib": run_bytes / 1024,
        "bytes_per_sample_per_entity": run_bytes / (ds.sizes["time"] * entities),
        "combined_mib": combined_bytes / 2**20,
        "combined_runs": runs,
        "read_combined_s": read_s,
    }


def report(results: dict[str, Any]) -> str:
    """BENCHMARKS.md text from :func:`run_all` results."""
    lines = [
        "# Benchmarks",
        "",
        "Regenerate with `make bench` (or `.venv/bin/tcprepro bench --write BENCHMARKS.md`).",
        "Every number below was measured by that command on this machine:",
        "",
    ]
    lines += [md_row("machine", ""), md_row("---", "---")]
    lines += [md_row(k, v) for k, v in results["machine"].items()]
    lines += _event_loop_section(results)
    lines += _startup_section(results)
    lines += _scaling_section(results)
    lines += _memory_section(results)
    lines += _storage_section(results)
    lines += _workflow_section(results)
    lines += calibration_section(results)
    lines += uml_section(results)
    lines += contention_section(results)
    lines += plan_section(results)
    lines += recorded_section(results)
    lines.append("")
    return "\n".join(lines)


def _event_loop_section(results: dict[str, Any]) -> list[str]:
    """The event loop of tcprepro against native C++, scenario by scenario."""
    lines: list[str] = []
    lines += [
        "",
        "## Event loop: tcprepro (Python + cppyy) vs native C++",
        "",
        "Same builder calls, same C++ library; `native/tcprepro` > 1 means tcprepro is "
        "faster. Medians of the repeats.",
        "",
        md_row(
            "scenario",
            "simulated s",
            "events",
            "tcprepro loop s",
            "native loop s",
            "native/tcprepro",
            "events/s (tcprepro)",
            "data pkts/s (tcprepro)",
            "identical results",
        ),
        md_row(*["---"] * 9),
    ]
    for item in results["native"]:
        lines.append(
            md_row(
                item["scenario"],
                f"{item['simulated_s']:g}",
                item["events"],
                f"{item['python_loop_s']:.2f}",
                f"{item['native_loop_s']:.2f}",
                f"{item['ratio_native_over_python']:.3f}",
                f"{item['python_events_per_s']:.3g}",
                f"{item['python_packets_per_s']:.3g}",
                "yes" if item["identical"] else "NO",
            )
        )
    return lines


def _startup_section(results: dict[str, Any]) -> list[str]:
    """The start-up of a worker process."""
    lines: list[str] = []
    s = results["startup"]
    lines += [
        "",
        "## Start-up of a worker process",
        "",
        md_row("what", "wall s"),
        md_row("---", "---"),
        md_row("python -c pass", f"{s['python_s']:.2f}"),
        md_row("tcprepro + compiled models (build.load)", f"{s['tcprepro_models_s']:.2f}"),
    ]
    if "from_ns_import_ns_s" in s:
        lines.append(md_row("from ns import ns (full bindings)", f"{s['from_ns_import_ns_s']:.2f}"))
    return lines


def _scaling_section(results: dict[str, Any]) -> list[str]:
    """Independent runs on one core and on two."""
    lines: list[str] = []
    c = results["scaling"]
    lines += [
        "",
        "## Scaling across cores",
        "",
        f"{c['runs']} independent runs of `benchmarks/dumbbell.yaml` as separate processes.",
        "",
        md_row("workers", "wall s"),
        md_row("---", "---"),
        md_row(1, f"{c['1_process_s']:.1f}"),
        md_row(2, f"{c['2_process_s']:.1f}"),
        md_row("speedup", f"{c['speedup']:.2f}"),
    ]
    return lines


def _memory_section(results: dict[str, Any]) -> list[str]:
    """Peak memory and dataset size of the largest scenario."""
    lines: list[str] = []
    m = results["memory"]
    lines += [
        "",
        "## Memory of the largest scenario",
        "",
        "`benchmarks/largest.yaml`: 500 Mb/s, B = 625, 10 NewReno flows + 50 % Poisson "
        "background, 10 simulated s, in a fresh process.",
        "",
        md_row("wall s", "peak memory MiB", "dataset MiB"),
        md_row("---", "---", "---"),
        md_row(f"{m['wall_s']:.1f}", f"{m['peak_mib']:.0f}", f"{m['dataset_mib']:.2f}"),
    ]
    return lines


def _storage_section(results: dict[str, Any]) -> list[str]:
    """A run's dataset, a combined dataset and the time to read it."""
    lines: list[str] = []
    st = results["storage"]
    lines += [
        "",
        "## Storage",
        "",
        md_row(
            "run dataset KiB (dumbbell, 60 s)",
            "bytes per sample per entity",
            f"combined MiB ({st['combined_runs']} runs)",
            "read combined s",
        ),
        md_row(*["---"] * 4),
        md_row(
            f"{st['run_kib']:.0f}",
            f"{st['bytes_per_sample_per_entity']:.1f}",
            f"{st['combined_mib']:.2f}",
            f"{st['read_combined_s']:.2f}",
        ),
    ]
    return lines


def _workflow_section(results: dict[str, Any]) -> list[str]:
    """Each profile's workflow end to end, then its no-op rerun."""
    lines: list[str] = []
    lines += [
        "",
        "## Whole workflow",
        "",
        "Setup excluded (venv and compiled models present), from empty data, in a "
        "temporary copy of the workflow; then the same command again.",
        "",
        md_row("profile", "wall s", "no-op rerun s", "rerun simulated anything"),
        md_row(*["---"] * 4),
    ]
    for item in results.get("workflow", []):
        lines.append(
            md_row(
                item["profile"],
                f"{item['full_s']:.0f}",
                f"{item['noop_rerun_s']:.1f}",
                "yes" if item["noop_ran_simulations"] else "no",
            )
        )
    for item in results.get("workflow", []):
        stages = item.get("stages")
        if not stages:
            continue
        lines += [
            "",
            f"Stages of the {item['profile']} workflow (Snakemake's log: job time from a job's "
            "start to its end, whole seconds; the runs' own event loop and writing as their "
            f"logs report it: {item['runs_wall_s']:.1f} s):",
            "",
            md_row("rule", "jobs", "job time s", "s per job"),
            md_row(*["---"] * 4),
        ]
        for rule, row in sorted(stages.items(), key=lambda kv: -kv[1]["job_s"]):
            per_job = row["job_s"] / max(1, row["jobs"])
            lines.append(
                md_row(rule, f"{row['jobs']:.0f}", f"{row['job_s']:.0f}", f"{per_job:.1f}")
            )
    return lines + rounds_lines(results, "workflow") + again_note(results, "workflow")


def run_all(
    quick: bool = False,
    profiles: tuple[str, ...] = (),
    progress: Callable[[str], None] = print,
    recorded: Path | None = None,
    rounds: int = 1,
) -> dict[str, Any]:
    """Every benchmark; ``quick`` shortens the runs (to check that the harness works).

    ``profiles`` lists the workflow profiles to time end to end (e.g. smoke, quick); they
    and the plan check are measured ``rounds`` times (:func:`_in_rounds`).
    """
    repeats = 1 if quick else 3
    short = ["duration=10s", "warmup=2s"] if quick else []
    results: dict[str, Any] = {"machine": machine(), "native": []}
    for config, extra in (
        (BENCH_DIR / "dumbbell.yaml", short),
        (
            Path("workflow/scenarios/A1.yaml"),
            ["duration=60s", "warmup=10s"] if not quick else ["duration=20s", "warmup=12s"],
        ),
    ):
        progress(f"native comparison: {config}")
        results["native"].append(compare_native(load_scenario(config, extra), repeats))
    progress("start-up")
    results["startup"] = startup(repeats, full_bindings=not quick)
    progress("scaling")
    results["scaling"] = scaling(
        BENCH_DIR / "dumbbell.yaml", 2 if quick else 4, tuple(short) or ("duration=30s",)
    )
    progress("memory")
    results["memory"] = memory(BENCH_DIR / "largest.yaml")
    progress("storage")
    results["storage"] = storage(BENCH_DIR / "dumbbell.yaml", 2 if quick else 6)

    def each_profile() -> list[dict[str, Any]]:
        measured = []
        for profile in profiles:
            progress(f"workflow, profile {profile}")
            measured.append(workflow(profile))
        return measured

    _in_rounds(results, "workflow", each_profile, rounds if profiles else 1, progress)
    if not quick:
        results["calibration"] = calibration_sample(progress=progress)
        try:
            results["uml"] = uml_sample(progress=progress)
        except CapabilityError as exc:  # no UML route on this host: no emulation sample
            progress(f"UML sample skipped: {exc}")
        try:
            results["contention"] = guest_contention(progress=progress)
        except CapabilityError as exc:  # no UML route: the simulations never share a core
            progress(f"guest contention skipped: {exc}")
        progress(f"plan check: {' and '.join(PLAN_CHECK[0])}, tier {PLAN_CHECK[1]}")
        _in_rounds(results, "plan_check", plan_check, rounds, progress)
    if recorded is not None:
        progress(f"recorded workflow run in {recorded}")
        results["recorded"] = recorded_workflow(recorded)
    results["resource_self_maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return results


#: the sections `tcprepro bench --only` measures again, each by its own function
AGAIN = {
    "workflow": lambda progress: [workflow("smoke")],
    "calibration": calibration_sample,
    "uml": uml_sample,
    "contention": guest_contention,
    "plan_check": plan_check,
}


#: the sections measured in rounds (``--rounds N``), each round's measured wall time
ROUNDED = {
    "workflow": lambda value: value[0]["full_s"],
    "plan_check": lambda value: value["measured_s"],
}


def _in_rounds(
    results: dict[str, Any],
    name: str,
    measure: Callable[[], Any],
    rounds: int,
    progress: Callable[[str], None],
) -> None:
    """``results[name]`` measured ``rounds`` times (once if it has no rounds).

    The section keeps its median round (by wall time); ``results["rounds"][name]`` keeps
    every round, in order, when there are several, so the report shows their spread.
    """
    count = rounds if name in ROUNDED else 1
    values = []
    for index in range(count):
        if count > 1:
            progress(f"{name}: round {index + 1} of {count}")
        values.append(measure())
    kept = dict(results.get("rounds", {}))
    kept.pop(name, None)
    if count > 1:
        kept[name] = values
        values = sorted(values, key=ROUNDED[name])
    results[name] = values[len(values) // 2]
    results["rounds"] = kept


def measure_again(
    results: dict[str, Any],
    sections: list[str],
    progress: Callable[[str], None] = print,
    rounds: int = 1,
) -> dict[str, Any]:
    """``results`` with ``sections`` measured again, in the order given.

    Each is marked with the date, commit and load of its measure; the other sections keep
    the run that measured them. The sections of :data:`ROUNDED` are measured ``rounds``
    times (see :func:`_in_rounds`).
    """
    unknown = [name for name in sections if name not in AGAIN]
    if unknown:
        known = ", ".join(AGAIN)
        raise ValueError(f"--only: unknown section {', '.join(unknown)} (one of {known})")
    if rounds < 1:
        raise ValueError(f"--rounds: {rounds} (at least 1)")
    results = dict(results)
    for name in sections:
        stamp = machine()
        progress(f"measuring again: {name}")
        kwargs = {"progress": progress} if name != "plan_check" else {}
        measure = functools.partial(AGAIN[name], **kwargs)
        _in_rounds(results, name, measure, rounds, progress)
        results["measured_again"] = {**results.get("measured_again", {}), name: stamp}
    return results
