"""Simulation batches: a figure's runs grouped into jobs that each run in one process.

Starting a process, importing ns-3 and loading the compiled models costs seconds; a
smoke or quick run often simulates for less. The workflow therefore runs a figure's
runs in batches (rule ``simulate_batch``, ``tcprepro sweep-batch``): one process per
batch, each run still its own dataset, cached by its own key and written atomically.

- **Which runs go together** is decided from the config alone (never from ``--cores``):
  the figure's runs, longest first by the cost model
  (:func:`~tcprepro.campaign.plan.estimate_wall_s`), each to the lightest of
  ``ceil(total / target)`` batches, where the target is the config's
  ``simulate_batch_s`` (estimated core seconds per batch). Cheap runs share a batch; a run
  longer than the target gets a batch of its own.
- **What a batch job declares** is only its manifest (``data/batches/...json``), written
  last: Snakemake deletes a failed job's declared outputs, and a killed batch must keep
  the runs it finished. The rerun skips every run whose dataset carries its cache key.
- **Each run keeps its own log** (``data/logs/simulate/<figure>/<cell>/rep<r>.log``) with
  its simulated and wall time, as a single-run job wrote it.
- **Progress** goes to the batch's log: a line per run when it ends, and while a run
  simulates, a line at most every ``PROGRESS_EVERY_S`` wall seconds with its simulated
  seconds done and the time left at its pace so far (a paper-length run takes tens of
  minutes).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcprepro.campaign.runs import Run, is_cached
from tcprepro.errors import ConfigError

__all__ = [
    "DEFAULT_BATCH_S",
    "PROGRESS_EVERY_S",
    "Batch",
    "make_batches",
    "manifest_dir",
    "parse_run_path",
    "run_progress",
    "simulate_batch",
    "write_manifest",
]

#: estimated core seconds of simulation per batch when the config does not say
#: (``simulate_batch_s``): start-up (about 4.5 s a process) stays under 4 % of a full batch
#: and a cluster job (about 40 s of queueing and start-up) under a quarter
DEFAULT_BATCH_S = 120.0
#: a run's dataset path: data/runs/<figure>/<cell>/rep<r>.nc
_RUN_PATH = re.compile(r"^data/runs/(?P<figure>[^/]+)/(?P<cell>[^/]+)/rep(?P<rep>[0-9]+)\.nc$")


@dataclass(frozen=True)
class Batch:
    """Runs of one figure simulated by one process, in this order."""

    figure: str
    index: int
    runs: tuple[Run, ...]
    cost_s: float  # the cost model's core seconds

    @property
    def name(self) -> str:
        """``b<index>``: the batch's wildcard and manifest name."""
        return f"b{self.index}"


def manifest_dir(tier: str, whatif: str | None = None) -> str:
    """Folder of a tier's batch manifests (a what-if build's apart: its runs are others)."""
    return f"data/batches/{tier}" + (f"-{whatif}" if whatif else "")


def write_manifest(path: str | Path, entries: list[dict[str, Any]], wall_s: float) -> dict:
    """Write a batch's manifest atomically: its runs, each with its key and status."""
    from tcprepro.latex import atomic_write

    record = {
        "runs": entries,
        "simulated": sum(e["status"] == "simulated" for e in entries),
        "cached": sum(e["status"] != "simulated" for e in entries),
        "wall_s": round(wall_s, 3),
    }
    atomic_write(Path(path), json.dumps(record, indent=1) + "\n")
    return record


def make_batches(
    figure: str, runs: Sequence[Run], cost: Callable[[Run], float], target_s: float
) -> list[Batch]:
    """The runs of ``figure`` in batches of about ``target_s`` estimated core seconds.

    Deterministic: the same runs and costs give the same batches. Longest run first,
    each to the batch with the least cost so far (ties: the lower index); inside a
    batch the runs keep the figure's order (cell, then repetition).
    """
    if target_s <= 0:
        raise ConfigError(f"simulate_batch_s: {target_s} is not a positive number of seconds")
    if not runs:
        return []
    costs = [float(cost(run)) for run in runs]
    count = max(1, min(len(runs), math.ceil(sum(costs) / target_s)))
    loads = [0.0] * count
    members: list[list[int]] = [[] for _ in range(count)]
    for position in sorted(range(len(runs)), key=lambda i: (-costs[i], i)):
        lightest = min(range(count), key=lambda b: (loads[b], b))
        loads[lightest] += costs[position]
        members[lightest].append(position)
    return [
        Batch(figure, index, tuple(runs[i] for i in sorted(chosen)), loads[index])
        for index, chosen in enumerate(members)
        if chosen
    ]


def parse_run_path(path: str) -> tuple[str, str, int]:
    """``(figure, cell, rep)`` of a run dataset path; a ConfigError for any other path."""
    match = _RUN_PATH.match(Path(path).as_posix())
    if match is None:
        raise ConfigError(f"run path {path!r}: not data/runs/<figure>/<cell>/rep<r>.nc")
    return match["figure"], match["cell"], int(match["rep"])


def _remove_stale_temporaries(run: Run) -> None:
    """A process killed while writing leaves a hidden ``.<name>.tmp-<pid>``: remove it."""
    folder = Path(run.path).parent
    for tmp in folder.glob(f".{Path(run.path).name}.tmp-*"):
        pid = tmp.name.rpartition("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        pass
    return True


def _log_path(run: Run) -> Path:
    return Path(run.path.replace("data/runs/", "data/logs/simulate/", 1)).with_suffix(".log")


PROGRESS_EVERY_S = 60.0
"""Wall seconds between two progress lines of a run in a batch's log."""


def run_progress(
    label: str, duration_s: float, out, every_s: float = PROGRESS_EVERY_S
) -> Callable[[float], None]:
    """A run's progress reporter, called with the simulated seconds done.

    It prints a line to ``out`` when ``every_s`` wall seconds have passed since the last
    (or the start)::

        [2/6] data/runs/C1/x/rep0.nc: 150 of 600 simulated s (25 %) in 5.0 min, about 15 min left
    """
    started = time.perf_counter()
    last = started

    def report(done_s: float) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last < every_s or not 0 < done_s < duration_s:
            return
        last = now
        elapsed = now - started
        left = elapsed * (duration_s - done_s) / done_s
        print(
            f"{label}: {done_s:.4g} of {duration_s:.4g} simulated s "
            f"({100 * done_s / duration_s:.0f} %) in {elapsed / 60:.1f} min, "
            f"about {left / 60:.0f} min left",
            file=out,
            flush=True,
        )

    return report


def _simulate(run: Run, key: str, progress: Callable[[float], None] | None = None) -> float:
    """Simulate one run, write its dataset atomically and its log; its wall seconds."""
    from tcprepro.latex import atomic_write
    from tcprepro.ns3.backend import run_scenario
    from tcprepro.store import write_dataset

    scenario = run.scenario()
    started = time.perf_counter()
    ds = run_scenario(scenario, run.rep, progress=progress or False, extra_attrs=run.attrs())
    if ds.attrs.get("cache_key") != key:  # the dataset must carry the key the job checks
        raise RuntimeError(
            f"{run.path}: dataset cache key {ds.attrs.get('cache_key')} is not the run's {key}"
        )
    write_dataset(ds, run.path)
    wall = time.perf_counter() - started
    atomic_write(
        _log_path(run),
        f"{run.path}: {scenario.id} rep {run.rep}, {scenario.duration:g} simulated s in "
        f"{wall:.1f} s wall ({wall / scenario.duration:.4f} wall s per simulated s)\n",
    )
    return wall


def simulate_batch(
    runs: Iterable[Run],
    manifest: str | Path,
    *,
    out=sys.stderr,
    progress_every_s: float = PROGRESS_EVERY_S,
) -> dict[str, Any]:
    """Simulate the runs not cached yet, one after the other, then write the manifest.

    Every run is checked before any is simulated (its scenario validated, the ns-3
    models it needs available): a bad run fails the batch before it starts. A run that
    fails while simulating does not stop the others; the batch then raises, naming the
    failed runs, and writes no manifest (the rerun redoes only those). Progress goes to
    ``out``, one line per run and, while a run simulates, one every ``progress_every_s``
    wall seconds (:func:`run_progress`).
    """
    from tcprepro.ns3.backend import check_scenario

    runs = list(runs)
    keys = [run.cache_key() for run in runs]
    for run in runs:
        check_scenario(run.scenario())
    started = time.perf_counter()
    entries, failed = [], []
    for number, (run, key) in enumerate(zip(runs, keys, strict=True), start=1):
        label = f"[{number}/{len(runs)}] {run.path}"
        _remove_stale_temporaries(run)
        if is_cached(run, key=key):
            entries.append({"path": run.path, "cache_key": key, "status": "cached"})
            print(f"{label}: cached", file=out, flush=True)
            continue
        try:
            wall = _simulate(
                run, key, run_progress(label, run.scenario().duration, out, progress_every_s)
            )
        except Exception as exc:
            failed.append(run.path)
            print(f"{label}: FAILED: {exc!r}", file=out, flush=True)
            continue
        entries.append(
            {"path": run.path, "cache_key": key, "status": "simulated", "wall_s": round(wall, 3)}
        )
        print(f"{label}: {wall:.1f} s", file=out, flush=True)
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(runs)} runs failed: {', '.join(failed)}")
    return write_manifest(manifest, entries, time.perf_counter() - started)
