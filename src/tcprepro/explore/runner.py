"""An explored cell's runs in the background: progress, cancellation, results.

This module owns the running side of an explorer. :class:`Exploration` takes a cell
and the backends to run it in (ns-3, and real Linux in User-mode Linux); a backend
whose every run is cached (the workflow's or the explorer's, same cache keys) is done
at once, read from ``data/``; otherwise one ``tcprepro explore-run`` process per
backend makes the missing runs (the ns-3 library loaded once, one UML boot), each
in its own process group so that :meth:`Exploration.cancel` stops it and every child
it started. The processes report each finished run; their stderr goes to a log under
``data/explore/logs``. Listeners are called from the watching threads.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcprepro.explore.cell import EXPLORE_DIR, LINUX_ROUTE, ExploredCell, FigureExplorer

__all__ = ["BackendProgress", "Exploration"]

#: seconds a cancelled process has to clean up (UML boots, namespaces) before SIGKILL
CANCEL_GRACE_S = 30.0


@dataclass
class BackendProgress:
    """How one backend's runs of a cell are going.

    ``state`` is ``waiting``, ``running``, ``done``, ``failed``, ``cancelled`` or
    ``not run`` (the backend cannot run the cell: ``message`` says why).
    """

    backend: str
    total: int
    paths: dict[int, Path] = field(default_factory=dict)
    cached: int = 0
    state: str = "waiting"
    message: str = ""
    started_s: float = 0.0
    finished_s: float = 0.0
    estimate_s: float = 0.0
    log: Path | None = None

    @property
    def done(self) -> int:
        """Runs finished (made or read from the cache)."""
        return len(self.paths)

    @property
    def elapsed_s(self) -> float:
        """Wall seconds since the backend started (until it finished)."""
        if not self.started_s:
            return 0.0
        return (self.finished_s or time.monotonic()) - self.started_s

    @property
    def over(self) -> bool:
        """True once the backend will report nothing more."""
        return self.state in ("done", "failed", "cancelled", "not run")


class Exploration:
    """The runs of one explored cell in the given backends, made in the background.

    Parameters
    ----------
    explorer
        The figure's explorer (config, working folder, cache).
    cell
        The cell to run (already validated).
    backends
        ``("ns3",)`` or ``("ns3", "linux")``.
    listener
        Called with this object whenever a run finishes or a backend's state changes
        (from a background thread).
    """

    def __init__(
        self,
        explorer: FigureExplorer,
        cell: ExploredCell,
        backends: Sequence[str] = ("ns3",),
        listener: Callable[[Exploration], None] | None = None,
    ) -> None:
        self.explorer = explorer
        self.cell = cell
        self.runs = explorer.runs(cell)
        self.listener = listener
        self.progress = {b: BackendProgress(b, len(self.runs)) for b in backends}
        self._processes: dict[str, subprocess.Popen[str]] = {}
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._cancelled = False

    # ---- running -------------------------------------------------------------

    def start(self) -> Exploration:
        """Read what is cached, and start a process for each backend with runs to make."""
        atexit.register(self.cancel)  # a kernel shut down mid-run leaves no process behind
        for backend, progress in self.progress.items():
            progress.started_s = time.monotonic()
            if backend == "linux":
                reason = self.explorer.linux_reason(self.cell)
                if reason is not None:
                    self._finish(progress, "not run", reason)
                    continue
            missing = []
            for run in self.runs:
                path = self.explorer.cached(run, backend)
                if path is None:
                    missing.append(run)
                else:
                    progress.paths[run.rep] = path
                    progress.cached += 1
            if not missing:
                self._finish(progress, "done", "read from data/ (cached)")
                continue
            progress.estimate_s = _estimate_s(missing, backend)
            thread = threading.Thread(
                target=self._run, args=(progress, [run.rep for run in missing]), daemon=True
            )
            self._threads.append(thread)
            progress.state = "running"
            self._notify()
            thread.start()
        self._notify()
        return self

    def _command(self, backend: str, reps: Sequence[int]) -> list[str]:
        command = [sys.executable, "-m", "tcprepro.cli", "explore-run", *self.cell.args()]
        command += ["--backend", backend, "--root", str(self.explorer.root)]
        command += ["--workdir", str(self.explorer.workdir)]
        for rep in reps:
            command += ["--rep", str(rep)]
        return command

    def _run(self, progress: BackendProgress, reps: Sequence[int]) -> None:
        logs = self.explorer.workdir / EXPLORE_DIR / "logs" / self.cell.figure
        logs.mkdir(parents=True, exist_ok=True)
        progress.log = logs / f"{self.cell.name}-{progress.backend}.log"
        with progress.log.open("w") as log, self._lock:
            if self._cancelled:
                self._finish(progress, "cancelled", "cancelled before it started")
                return
            process = subprocess.Popen(
                self._command(progress.backend, reps),
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=self.explorer.root,
                start_new_session=True,  # its own process group: cancel stops its children
            )
            self._processes[progress.backend] = process
        assert process.stdout is not None
        for line in process.stdout:
            words = line.split(maxsplit=2)
            if len(words) == 3 and words[0] == "done":
                progress.paths[int(words[1])] = Path(words[2].strip())
                self._notify()
        code = process.wait()
        if self._cancelled:
            self._finish(progress, "cancelled", "cancelled")
        elif code == 0 and progress.done == progress.total:
            self._finish(progress, "done", "")
        else:
            tail = progress.log.read_text().strip().splitlines()[-3:]
            self._finish(progress, "failed", " / ".join(tail) or f"exit status {code}")

    def _finish(self, progress: BackendProgress, state: str, message: str) -> None:
        progress.state, progress.message = state, message
        progress.finished_s = time.monotonic()
        if self.over:
            atexit.unregister(self.cancel)
        self._notify()

    def _notify(self) -> None:
        if self.listener is not None:
            self.listener(self)

    def cancel(self) -> None:
        """Stop every backend's process (and its children); finished runs stay cached."""
        with self._lock:
            self._cancelled = True
            processes = list(self._processes.values())
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(CANCEL_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for progress in self.progress.values():
            if not progress.over:
                self._finish(progress, "cancelled", "cancelled")

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until every backend is over; False when ``timeout_s`` ran out first."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for thread in self._threads:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(remaining)
        return self.over

    # ---- results -------------------------------------------------------------

    @property
    def over(self) -> bool:
        """True once every backend is done, failed, cancelled or not run."""
        return all(progress.over for progress in self.progress.values())

    @property
    def cancelled(self) -> bool:
        """True after :meth:`cancel`."""
        return self._cancelled

    def dataset(self, backend: str) -> Any:
        """The backend's runs of the cell combined (None until every one is there)."""
        import json

        from tcprepro.store import combine_runs

        progress = self.progress.get(backend)
        if progress is None or progress.state != "done" or progress.done < progress.total:
            return None
        paths = [progress.paths[rep] for rep in sorted(progress.paths)]
        values = {dim: [value] for dim, value in self.cell.sweep}
        combined = combine_runs(paths, sweep_values=values)
        combined.attrs["explored_paths"] = json.dumps([str(p) for p in paths])
        return combined


def _estimate_s(runs: Sequence[Any], backend: str) -> float:
    """The plan's estimate of the wall time of ``runs`` in ``backend`` on one core."""
    from tcprepro.campaign.plan import estimate_emulated_wall_s, estimate_wall_s

    if backend == "ns3":
        return estimate_wall_s(runs)
    return estimate_emulated_wall_s(runs, LINUX_ROUTE)
