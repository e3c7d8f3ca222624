"""Running a batch of emulated runs on the route this host takes.

This module owns the dispatch: given jobs (a scenario, a repetition, an
output path, dataset attributes), it has the route checked for what they need
once for the whole batch (:func:`tcprepro.emulation.routes.choose_for`, refusing
up front with every missing capability), then has the route run them
(:meth:`tcprepro.emulation.routes.Route.run_batch`: one after the other here,
or inside one boot). A route whose batches may run in parallel shares a batch
among several boots side by side (``parallel``, at most one per core). Each
dataset is written atomically; a failed job writes nothing.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from typing import TextIO

from tcprepro.emulation import routes
from tcprepro.emulation.batch import BatchSettings, EmulationJob, JobResult
from tcprepro.emulation.fidelity import Tolerances
from tcprepro.emulation.routes import Route, RouteChoice

__all__ = ["EmulationJob", "JobResult", "emulate_batch", "parallel_boots"]


def emulate_batch(
    jobs: Sequence[EmulationJob],
    route: str | Route | RouteChoice = "auto",
    *,
    probe_s: float = 2.0,
    tolerances: Tolerances | None = None,
    log: TextIO = sys.stderr,
    parallel: int = 1,
) -> list[JobResult]:
    """Run every job on one route.

    ``route``: a route, its name, ``auto``, or a choice already made (its route is
    checked for the jobs' needs). The booted routes run the whole batch in one boot;
    a route whose batches run in parallel shares the jobs out among up to
    ``parallel`` boots (never more than the host's cores) side by side.
    """
    if not jobs:
        return []
    scenarios, tools = [job.scenario for job in jobs], [job.tool for job in jobs]
    if isinstance(route, RouteChoice):
        routes.choose_for(scenarios, route.route, tools)  # refuses what the route lacks
        choice = route
    else:
        choice = routes.choose_for(scenarios, route, tools)
    boots = parallel_boots(choice.route, len(jobs), parallel)
    print(
        f"emulation: {len(jobs)} run(s) on the {choice.route} route ({choice.reason})"
        + (f", {boots} boots side by side" if boots > 1 else ""),
        file=log,
    )
    settings = BatchSettings(
        probe_s, tolerances or Tolerances(), {"route_reason": choice.reason}, log
    )
    from tcprepro.emulation.network import sigterm_as_interrupt

    # SIGTERM (a scheduler cancelling the job) ends the batch as Ctrl-C does: every boot
    # killed, its folder removed, no output half-written (the native route's teardown too)
    with sigterm_as_interrupt():
        if boots == 1:
            return choice.route.run_batch(jobs, settings)
        return _side_by_side(jobs, boots, choice.route, settings)


def _side_by_side(
    jobs: Sequence[EmulationJob], boots: int, route: Route, settings: BatchSettings
) -> list[JobResult]:
    """``boots`` boots in threads, the jobs dealt out in turn, results in job order.

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
            futures.append(pool.submit(started.run, route, boot_jobs, settings))
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

    def run(
        self, route: Route, jobs: Sequence[EmulationJob], settings: BatchSettings
    ) -> list[JobResult]:
        with self.lock:
            if self.cancelled.is_set():
                raise KeyboardInterrupt("the batch was interrupted")
            ended = threading.Event()
            self.ended.append(ended)
        try:
            return route.run_batch(jobs, settings, self.cancelled)
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


def parallel_boots(route: str | Route, jobs: int, parallel: int) -> int:
    """How many boots run a batch of ``jobs``.

    The route's answer for up to ``parallel`` boots, never more than the host's cores.
    """
    return routes.get_route(route).boots(jobs, min(parallel, os.cpu_count() or 1))
