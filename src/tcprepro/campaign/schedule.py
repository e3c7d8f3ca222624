"""A build's wall time from its jobs' estimates: longest first, each to a free core.

The workflow gives every simulate and emulate job its estimated seconds as its priority,
so Snakemake starts the longest job whenever a core is free. :func:`makespan_s` replays
that for independent jobs of fixed cost. :func:`shared_makespan_s` adds what a UML guest
does to the simulations beside it: while an emulated figure's job runs, a simulate job on
another core progresses ``slowdown`` times slower (measured by `tcprepro bench`, section
"A UML guest beside the simulations"; the emulated job's own cost is measured with a
second boot beside it, so it keeps its estimate).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

__all__ = ["makespan_s", "shared_makespan_s"]


def makespan_s(costs: Iterable[float], cores: int) -> float:
    """Wall time of independent jobs on ``cores`` cores: longest first, each to a free core."""
    loads = [0.0] * max(1, cores)
    heapq.heapify(loads)
    for cost in sorted(costs, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + cost)
    return max(loads)


def shared_makespan_s(
    simulate: Iterable[float], emulate: Iterable[float], cores: int, slowdown: float = 1.0
) -> float:
    """Wall time of simulate and emulate jobs sharing ``cores``, longest estimate first.

    A job starts when a core is free, in order of its estimate (its priority). A simulate
    job progresses at 1/``slowdown`` of its estimate's pace while any emulate job runs,
    at full pace otherwise; an emulate job always at its estimate's pace. The schedule is
    replayed event by event (a job's start or end), between which every pace is constant.
    ``slowdown`` 1 gives :func:`makespan_s` of all the jobs.
    """
    if slowdown < 1:
        raise ValueError(f"slowdown: {slowdown} is below 1 (a neighbour cannot speed a job up)")
    queue = sorted(
        [(cost, False) for cost in simulate] + [(cost, True) for cost in emulate],
        key=lambda job: -job[0],
    )
    running: list[list[float | bool]] = []  # [work left in estimate seconds, emulated]
    now, slots = 0.0, max(1, cores)
    while queue or running:
        while queue and len(running) < slots:
            cost, emulated = queue.pop(0)
            running.append([cost, emulated])
        shared = any(job[1] for job in running)
        paces = [1.0 if job[1] or not shared else 1.0 / slowdown for job in running]
        step = min(float(job[0]) / pace for job, pace in zip(running, paces, strict=True))
        now += step
        for job, pace in zip(running, paces, strict=True):
            job[0] = float(job[0]) - step * pace
        running = [job for job in running if float(job[0]) > 1e-9]
    return now
