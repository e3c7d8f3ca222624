"""The sampler: TCP sockets, qdiscs and ``/proc/net/netstat`` at an interval in a namespace.

This module owns the timing of the emulation's traces. One sampler runs inside
each network namespace that has something to trace (flow endpoints, or the
egress interface of a traced link direction). It starts, writes its ``ready``
file, waits for the ``go`` file (which holds the run's time origin on the
monotonic clock, shared by every namespace), then takes sample ``k`` at
``t0 + k * interval`` for ``k = 0..count``: sample 0 is the baseline every
counter is measured from. Each sample is one JSON line with what ``ss -tin`` and
``tc -s qdisc`` would print, read over netlink in this process
(:mod:`tcprepro.emulation.netlink`: no ``fork``/``exec`` per sample, which inside
User-mode Linux cost more guest time than the traffic), and how late it was
taken; :mod:`tcprepro.emulation.traces` reads them afterwards. ``--commands`` (or
a kernel without ``sock_diag``) runs the two programs instead and keeps their raw
text. A sample that cannot be taken in time is skipped (and counted late), never
shifted.

Only the standard library is imported: the process starts in a fraction of a
second even inside a TCG virtual machine.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from tcprepro.emulation import netlink

__all__ = ["exact_timers", "main", "wait_for_go"]


def _run_all(commands: dict[str, list[str]]) -> dict[str, str]:
    procs = {
        name: subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for name, argv in commands.items()
    }
    return {name: proc.communicate()[0] for name, proc in procs.items()}


def _read_netlink(ss: bool, devices: Sequence[str]) -> dict[str, object]:
    """A sample's sockets and qdiscs over netlink (:mod:`tcprepro.emulation.netlink`)."""
    sample: dict[str, object] = {}
    if ss:
        sample["sockets"] = netlink.tcp_sockets()
    if devices:
        sample["qdiscs"] = netlink.qdiscs(list(devices))
    return sample


def _read_commands(ss: bool, devices: Sequence[str]) -> dict[str, object]:
    """A sample's sockets and qdiscs as the text of ``ss -tinH`` and ``tc -s -j``."""
    # all commands of a sample run at once (a TCG guest forks slowly)
    commands = {f"tc:{dev}": ["tc", "-s", "-j", "qdisc", "show", "dev", dev] for dev in devices}
    if ss:
        commands["ss"] = ["ss", "-tinH"]
    outputs = _run_all(commands)
    sample: dict[str, object] = {}
    if ss:
        sample["ss"] = outputs["ss"]
    if devices:
        sample["tc"] = {dev: outputs[f"tc:{dev}"] for dev in devices}
    return sample


def _netstat() -> str:
    """The namespace's TCP counters (``/proc/net/netstat``: TcpExt's RTO expiries...).

    Read, not forked: /proc/net is the reading process's network namespace.
    """
    try:
        with open("/proc/net/netstat") as handle:
            return handle.read()
    except OSError:
        return ""


def exact_timers() -> None:
    """Ask for 1-ns timer slack (default 50 us) so each sleep ends at its deadline.

    ``select``/``epoll`` waits get another slack on top: 0.1 % of the wait (Linux's
    ``select_estimate_accuracy``, 0.5 % for a niced process), which only a short wait
    keeps small (the transfers' sender caps its waits for that reason).
    """
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK


def wait_for_go(path: str, poll_s: float = 0.01, timeout_s: float = 600.0) -> float:
    """The run's time origin (monotonic clock) once the ``go`` file is complete.

    Polls with a sleep, never a spin: in User-mode Linux's virtual time the clock
    moves on only while the guest sleeps. The guest's other programs (the background
    of :mod:`tcprepro.emulation.background`) wait for the same file with it.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(path) as handle:
                text = handle.read()
            if text.endswith("\n"):
                return float(text)
        except FileNotFoundError:
            pass
        time.sleep(poll_s)
    raise TimeoutError(f"no go file {path} after {timeout_s} s")


def write_json(path: str, data: object) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file, then a rename).

    For the guest programs, which import nothing beyond the standard library
    (:func:`tcprepro.latex.atomic_write` would bring pandas into the guest).
    """
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as handle:
        json.dump(data, handle, sort_keys=True)
    os.replace(tmp, path)


#: the files every guest program is started with: its ready file (written once it is set
#: up), the go file holding the run's time origin it waits for, and its output file
START_FILES = ("ready", "go", "out")


def add_start_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments every guest program takes: ``--ready``, ``--go``, ``--out``."""
    for name in START_FILES:
        parser.add_argument(f"--{name}", required=True)


def start_argv(files: Mapping[str, object]) -> list[str]:
    """How the host passes those files (``files``: ready, go, out) to a guest program."""
    argv: list[str] = []
    for name in START_FILES:
        argv += [f"--{name}", str(files[name])]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``python -m tcprepro.emulation.sampler --out F --ready R --go G ...``."""
    parser = argparse.ArgumentParser(prog="tcprepro-sampler")
    add_start_arguments(parser)
    parser.add_argument("--interval", type=float, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--ss", action="store_true", help="sample TCP sockets")
    parser.add_argument("--tc", nargs="*", default=[], help="interfaces whose qdiscs to sample")
    parser.add_argument(
        "--commands", action="store_true", help="run ss and tc for each sample instead of netlink"
    )
    args = parser.parse_args(argv)

    with open(args.ready, "w") as handle:
        handle.write(f"{os.getpid()}\n")
    t0 = wait_for_go(args.go)
    use_netlink = not args.commands
    k = 0
    with open(args.out, "w") as out:
        while k <= args.count:
            deadline = t0 + k * args.interval
            delay = deadline - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            taken = time.monotonic()
            sample: dict[str, object] = {"k": k, "late_s": round(taken - deadline, 6)}
            if use_netlink:
                try:
                    sample.update(_read_netlink(args.ss, args.tc))
                except OSError as exc:  # a kernel without sock_diag: ss and tc from now on
                    print(f"netlink unavailable ({exc}); running ss and tc", file=sys.stderr)
                    use_netlink = False
            if not use_netlink:
                sample.update(_read_commands(args.ss, args.tc))
            if args.ss:
                sample["netstat"] = _netstat()
            out.write(json.dumps(sample) + "\n")
            # the next sample; those whose time passed by over half an interval are skipped
            k += 1
            position = (time.monotonic() - t0) / args.interval
            if position > k + 0.5:
                k = math.ceil(position)
    return 0


if __name__ == "__main__":
    sys.exit(main())
