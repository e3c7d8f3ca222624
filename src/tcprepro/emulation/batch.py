"""What every route's batch of emulated runs shares: its jobs, their results, a boot.

This module owns the plumbing the routes of :mod:`tcprepro.emulation.routes` have in
common, written once:

- a job (:class:`EmulationJob`) and how it ended (:class:`JobResult`), and the job as
  the guest reads it from the batch file (:class:`GuestJob`);
- a boot (:func:`boot`): the guest's host process in a process group of its own, its
  console in a log file, a wall-clock limit (:class:`subprocess.TimeoutExpired` past
  it), a ``tick`` called at every step of the wait, a ``cancel`` event; whatever
  happens, no process of the group is left. The one kill policy (:func:`kill_group`):
  SIGTERM to the whole group, then SIGKILL to what is left after :data:`KILL_GRACE_S`;
- the guest's status lines (:func:`read_statuses`), one per job, a job the guest never
  reached counted as failed, and the datasets moved into place atomically
  (:func:`move_into_place`); the statuses as results (:class:`JobResult`), each reported.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tcprepro.emulation.fidelity import Tolerances
from tcprepro.scenario import Scenario

__all__ = [
    "KILL_GRACE_S",
    "BatchSettings",
    "EmulationJob",
    "GuestJob",
    "JobResult",
    "boot",
    "guest_jobs",
    "kill_group",
    "log_tail",
    "move_into_place",
    "read_statuses",
    "report",
    "results",
    "wait_group_gone",
]

#: seconds a boot's process group has to end after SIGTERM before it is sent SIGKILL
KILL_GRACE_S = 10.0


@dataclass(frozen=True)
class EmulationJob:
    """One emulated run to make."""

    scenario: Scenario
    rep: int
    output: Path
    attrs: dict[str, Any] = field(default_factory=dict)
    #: iperf3, or iperf2 for separate send and receive buffers (see tcprepro.emulation.iperf)
    tool: str = "iperf3"


@dataclass(frozen=True)
class JobResult:
    """How one job ended."""

    output: Path
    ok: bool
    error: str = ""
    fidelity_ok: bool = False
    wall_s: float = 0.0


@dataclass(frozen=True)
class BatchSettings:
    """What every job of a batch shares: probe length, tolerances, attributes, the log."""

    probe_s: float
    tolerances: Tolerances
    #: dataset attributes of the route (its reason), added to each job's own
    route_attrs: Mapping[str, Any]
    log: TextIO


@dataclass(frozen=True)
class GuestJob:
    """One emulated run for the guest: a resolved scenario, a repetition, an output."""

    scenario_json: str
    rep: int
    output: str
    attrs: dict[str, Any]
    options: dict[str, Any]


def guest_jobs(jobs: Sequence[EmulationJob], settings: BatchSettings) -> list[GuestJob]:
    """The jobs as a guest reads them (scenario as JSON, options as plain data)."""
    return [
        GuestJob(
            scenario_json=job.scenario.to_json(),
            rep=job.rep,
            output=str(job.output),
            attrs={**job.attrs, **settings.route_attrs},
            options={
                "probe_s": settings.probe_s,
                "tolerances": asdict(settings.tolerances),
                "traffic_tool": job.tool,
            },
        )
        for job in jobs
    ]


def results(
    jobs: Sequence[EmulationJob], statuses: Sequence[Mapping[str, Any]], log: TextIO
) -> list[JobResult]:
    """The guest's statuses as results, in the jobs' order, each reported on ``log``."""
    out = []
    for job, status in zip(jobs, statuses, strict=True):
        result = JobResult(
            output=job.output,
            ok=bool(status.get("ok")),
            error=str(status.get("error", "")),
            fidelity_ok=bool(status.get("fidelity_ok", 0)),
            wall_s=float(status.get("wall_s", 0.0)),
        )
        report(result, job, log, status.get("traceback", ""))
        out.append(result)
    return out


def report(result: JobResult, job: EmulationJob, log: TextIO, detail: str = "") -> None:
    """One line on ``log`` saying how ``job`` ended (and ``detail``, a traceback)."""
    if result.ok:
        verdict = "passed" if result.fidelity_ok else "FLAGGED (see the fidelity attribute)"
        print(
            f"  {job.output}: {job.scenario.id} rep {job.rep} in {result.wall_s:.0f} s; "
            f"fidelity gate {verdict}",
            file=log,
        )
    else:
        print(f"  {job.output}: FAILED: {result.error}", file=log)
        if detail:
            print(detail, file=log)


def move_into_place(source: Path, dest: Path) -> None:
    """Copy a guest's dataset to ``dest`` atomically (temporary file, fsync, rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        shutil.copyfile(source, tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def read_statuses(folder: Path, count: int, guest: str) -> list[dict[str, Any]]:
    """The guest's ``status.jsonl`` lines in ``folder``; [] when it never wrote one.

    A job past the last line failed: "the ``guest`` ended before this job ran".
    """
    path = folder / "status.jsonl"
    if not path.exists():
        return []
    statuses = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    missing = {"ok": False, "error": f"the {guest} ended before this job ran"}
    return statuses[:count] + [dict(missing) for _ in range(count - len(statuses))]


def log_tail(folder: Path, names: Sequence[str], headed: bool = False, chars: int = 1500) -> str:
    """The last ``chars`` of each log ``names`` in ``folder`` (``--- name`` first if ``headed``)."""
    return "".join(
        (f"--- {name}\n" if headed else "") + (folder / name).read_text(errors="replace")[-chars:]
        for name in names
        if (folder / name).exists()
    )


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """End the boot's process group: SIGTERM, then SIGKILL after :data:`KILL_GRACE_S`."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_group_gone(pgid: int, timeout_s: float = KILL_GRACE_S) -> None:
    """Wait until no process of group ``pgid`` is left, then SIGKILL what still is.

    A boot's helpers end after its leader (UML's, say).
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _wait(
    proc: subprocess.Popen[bytes],
    budget_s: float,
    step_s: float,
    tick: Callable[[], None] | None,
    cancel: threading.Event | None,
) -> None:
    deadline = time.monotonic() + budget_s
    while proc.poll() is None:
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, budget_s)
        if cancel is not None and cancel.is_set():
            raise KeyboardInterrupt("the batch was interrupted")
        time.sleep(step_s)
        if tick is not None:
            tick()


def boot(
    argv: Sequence[str],
    console: Path,
    budget_s: float,
    *,
    step_s: float,
    tick: Callable[[], None] | None = None,
    cancel: threading.Event | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run a boot's host process until it ends; returns its exit status.

    The process gets a session (process group) of its own, no input, and ``console``
    for its output. Every ``step_s`` the wait checks the wall-clock limit ``budget_s``
    and ``cancel``, then calls ``tick``.

    Raises
    ------
    subprocess.TimeoutExpired
        When the boot outlived ``budget_s``.
    KeyboardInterrupt
        When ``cancel`` was set (or on an interrupt of this thread).

    Whatever is raised (by the wait or by ``tick``), the group is killed
    (:func:`kill_group`), and no process of it is left when this returns.
    """
    with open(console, "wb") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
        try:
            _wait(proc, budget_s, step_s, tick, cancel)
        except BaseException:
            kill_group(proc)
            raise
        finally:
            wait_group_gone(proc.pid)
    return int(proc.returncode)
