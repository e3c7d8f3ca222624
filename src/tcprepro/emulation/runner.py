"""Running a batch of emulated runs on the route this host takes.

This module owns the dispatch: given jobs (a scenario, a repetition, an
output path, dataset attributes), it finds what they need, chooses the route
once for the whole batch (:func:`tcprepro.emulation.capabilities.choose_route`,
refusing up front with every missing capability), then runs them one after the
other here (native), inside one UML boot with a virtual clock
(:mod:`tcprepro.emulation.uml`) or inside one VM boot (:mod:`tcprepro.emulation.vm`).
On the UML route a batch may be split into several boots running side by side
(``parallel``, at most one per core: a UML instance uses one core, and its
virtual clock makes its results independent of how busy the host is). Each
dataset is written atomically; a failed job writes nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tcprepro.emulation import capabilities
from tcprepro.emulation.fidelity import Tolerances
from tcprepro.scenario import Scenario

__all__ = ["EmulationJob", "JobResult", "emulate_batch", "parallel_boots", "plan_route"]


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


def plan_route(
    scenarios: Sequence[Scenario], route: str = "auto", tools: Sequence[str] = ()
) -> capabilities.RouteChoice:
    """The route a batch of scenarios takes (raises CapabilityError/ConfigError up front)."""
    needs = capabilities.Needs(("htb",), ())
    for scenario in scenarios:
        needs = needs | capabilities.scenario_needs(scenario)
    for tool in tools:
        needs = needs | capabilities.tool_needs(tool)
    return capabilities.choose_route(needs, route)


def emulate_batch(
    jobs: Sequence[EmulationJob],
    route: str = "auto",
    *,
    probe_s: float = 2.0,
    tolerances: Tolerances | None = None,
    log: TextIO = sys.stderr,
    parallel: int = 1,
) -> list[JobResult]:
    """Run every job on one route (one boot for the whole batch on the UML and VM routes).

    With ``parallel`` > 1 on the UML route, the jobs are shared out among up to
    ``parallel`` boots (never more than the host's cores) that run side by side;
    the native and VM routes run in real time and keep one batch.
    """
    if not jobs:
        return []
    choice = plan_route([job.scenario for job in jobs], route, [job.tool for job in jobs])
    tolerances = tolerances or Tolerances()
    boots = parallel_boots(choice.route, len(jobs), parallel)
    print(
        f"emulation: {len(jobs)} run(s) on the {choice.route} route ({choice.reason})"
        + (f", {boots} boots side by side" if boots > 1 else ""),
        file=log,
    )
    route_attrs = {"route_reason": choice.reason}
    from tcprepro.emulation.network import sigterm_as_interrupt

    # SIGTERM (a scheduler cancelling the job) ends the batch as Ctrl-C does: every boot
    # killed, its folder removed, no output half-written (the native route's teardown too)
    with sigterm_as_interrupt():
        if choice.route == "native":
            return [_native(job, probe_s, tolerances, route_attrs, log) for job in jobs]
        if boots == 1:
            return _boot(jobs, choice, probe_s, tolerances, route_attrs, log)
        return _side_by_side(jobs, boots, choice, probe_s, tolerances, route_attrs, log)


def _side_by_side(
    jobs: Sequence[EmulationJob],
    boots: int,
    choice: capabilities.RouteChoice,
    probe_s: float,
    tolerances: Tolerances,
    route_attrs: dict[str, Any],
    log: TextIO,
) -> list[JobResult]:
    """``boots`` UML boots in threads, the jobs dealt out in turn, results in job order.

    A boot that fails lets the others finish (their datasets are kept for the rerun);
    an interrupt of this thread (Ctrl-C, SIGTERM) cancels every boot, and each boot's
    thread kills its instance and removes its folder before this returns.
    """
    shares = [list(range(i, len(jobs), boots)) for i in range(boots)]
    started = _StartedBoots()
    pool = ThreadPoolExecutor(max_workers=boots)
    futures = []
    try:
        for share in shares:
            boot_jobs = [jobs[i] for i in share]
            futures.append(
                pool.submit(started.run, boot_jobs, choice, probe_s, tolerances, route_attrs, log)
            )
        parts = [future.result() for future in futures]
    except Exception:
        try:
            wait_for(futures)  # the other boots finish; their datasets are kept
        except BaseException:
            started.cancel()
            raise
        raise
    except BaseException:  # an interrupt
        started.cancel()
        raise
    finally:
        pool.shutdown(wait=False)  # every boot that started has ended (above)
    ordered: dict[int, JobResult] = {}
    for share, results in zip(shares, parts, strict=True):
        ordered.update(zip(share, results, strict=True))
    return [ordered[i] for i in range(len(jobs))]


class _StartedBoots:
    """The boots of a batch that started, each with an event set once it has ended.

    An interrupt can reach the main thread inside ``ThreadPoolExecutor.submit``, after
    the thread started but before the pool records it, so ``shutdown(wait=True)`` may
    not wait for every boot; the boots register themselves here instead.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cancelled = threading.Event()
        self.ended: list[threading.Event] = []

    def run(self, jobs: Sequence[EmulationJob], *args: Any) -> list[JobResult]:
        with self.lock:
            if self.cancelled.is_set():
                raise KeyboardInterrupt("the batch was interrupted")
            ended = threading.Event()
            self.ended.append(ended)
        try:
            return _boot(jobs, *args, self.cancelled)
        finally:
            ended.set()

    def cancel(self) -> None:
        """Tell every boot to stop, then wait until each has torn down.

        A second interrupt does not cut the wait short: the teardowns are under way.
        """
        with self.lock:
            self.cancelled.set()
            pending = list(self.ended)
        while pending:
            try:
                pending[-1].wait()
                pending.pop()
            except KeyboardInterrupt:
                continue


def parallel_boots(route: str, jobs: int, parallel: int) -> int:
    """How many boots run a batch of ``jobs``.

    On the UML route up to ``parallel`` and the host's cores (one UML instance uses
    one core); on the native and VM routes (real time), one.
    """
    if route != "uml":
        return 1
    return max(1, min(parallel, jobs, os.cpu_count() or 1))


def _boot(
    jobs: Sequence[EmulationJob],
    choice: capabilities.RouteChoice,
    probe_s: float,
    tolerances: Tolerances,
    route_attrs: dict[str, Any],
    log: TextIO,
    cancel: threading.Event | None = None,
) -> list[JobResult]:
    """One UML or VM boot running ``jobs`` one after the other (``cancel``: UML only)."""
    from tcprepro.emulation import uml, vm

    vm_jobs = [
        vm.VmJob(
            scenario_json=job.scenario.to_json(),
            rep=job.rep,
            output=str(job.output),
            attrs={**job.attrs, **route_attrs},
            options={
                "probe_s": probe_s,
                "tolerances": asdict(tolerances),
                "traffic_tool": job.tool,
            },
        )
        for job in jobs
    ]
    if choice.route == "uml":
        statuses = uml.run_batch(vm_jobs, log=log, tolerances=tolerances, cancel=cancel)
    else:
        statuses = vm.run_batch(vm_jobs, log=log, tolerances=tolerances)
    results = []
    for job, status in zip(jobs, statuses, strict=True):
        result = JobResult(
            output=job.output,
            ok=bool(status.get("ok")),
            error=str(status.get("error", "")),
            fidelity_ok=bool(status.get("fidelity_ok", 0)),
            wall_s=float(status.get("wall_s", 0.0)),
        )
        _report(result, job, log, status.get("traceback", ""))
        results.append(result)
    return results


def _native(
    job: EmulationJob, probe_s: float, tolerances: Tolerances, attrs: dict[str, Any], log: TextIO
) -> JobResult:
    from tcprepro.emulation.backend import EmulationOptions, run_scenario
    from tcprepro.store import write_dataset

    started = time.perf_counter()
    options = EmulationOptions(
        route="native",
        probe_s=probe_s,
        tolerances=tolerances,
        extra_attrs={**job.attrs, **attrs},
        traffic_tool=job.tool,
    )
    try:
        ds = run_scenario(job.scenario, job.rep, options=options)
    except Exception as exc:  # reported per job; the batch goes on
        result = JobResult(job.output, False, f"{type(exc).__name__}: {exc}")
        _report(result, job, log)
        return result
    write_dataset(ds, job.output)
    result = JobResult(
        job.output,
        True,
        fidelity_ok=bool(ds.attrs["fidelity_ok"]),
        wall_s=time.perf_counter() - started,
    )
    _report(result, job, log)
    return result


def _report(result: JobResult, job: EmulationJob, log: TextIO, detail: str = "") -> None:
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
