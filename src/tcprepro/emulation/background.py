"""Generated background traffic in the emulation: Poisson UDP packets and their sink.

This module owns the packet kind of ``traffic:`` generator the Mininet backend
emulates, ``poisson_packets`` (:class:`tcprepro.scenario.PacketGenerator`), on
both sides of a run:

- on the host side (the backend), which generators a scenario may have
  (:func:`check_generators`; ``poisson_transfers`` generators run in
  :mod:`tcprepro.emulation.transfers`), the guest commands that run them (:func:`sender_argv`,
  :func:`sink_argv`) and what the dataset records of them (:func:`summary`);
- in the guest, the programs themselves (``python -m
  tcprepro.emulation.background send|sink``), run with the guest's Python as
  the samplers are.

The sender draws an aggregate Poisson process of rate
``load x rate / (8 x packet_size)`` packets per second (the packet rate ns-3's
generator offers: ``load`` of the bottleneck's rate in IP bytes) and gives each
packet to one of ``flows`` UDP sockets chosen uniformly at random: the
superposition of ``flows`` independent Poisson streams of rate / flows each, as
in ns-3. Each socket has its own source port, so a per-flow scheduler (sfq)
hashes the flows apart. Draws are deterministic from the scenario seed, the
repetition and the generator's name (:func:`tcprepro.traffic.generator_seed`),
never from the clock. The sender sleeps to each packet's absolute deadline and
never busy-polls (in User-mode Linux's virtual time a polling loop stalls the
clock); it stops at the generator's ``stop`` (the run's end by default). The
sink blocks in ``recv`` (with a timeout at the run's end) and discards what it
reads. Both write their counts as JSON, atomically, when they end: packets sent
and received in all and within the run's measurement window, from which
:func:`summary` gives the measured offered and received loads.
"""

from __future__ import annotations

import argparse
import math
import os
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcprepro.emulation.sampler import (
    add_start_arguments,
    exact_timers,
    start_argv,
    wait_for_go,
    write_json,
)
from tcprepro.errors import ConfigError
from tcprepro.scenario import PacketGenerator, Scenario, TransferGenerator
from tcprepro.traffic import bottleneck_rate_bps, generator_seed

__all__ = [
    "IP_UDP_HEADER_BYTES",
    "check_generators",
    "main",
    "packet_generators",
    "packet_rate_pps",
    "poisson_schedule",
    "sender_argv",
    "sink_argv",
    "sink_port",
    "summary",
    "transfer_generators",
]

#: IPv4 and UDP headers: a datagram of ``packet_size - 28`` bytes is an IP packet of
#: ``packet_size`` bytes
IP_UDP_HEADER_BYTES = 28
#: first UDP port of the sinks (one per generator) and of the senders' sockets
SINK_BASE_PORT = 9000
SENDER_BASE_PORT = 20000
#: seconds the sink keeps reading after the run's end (packets still in the network)
SINK_GRACE_S = 1.0
#: packets drawn at a time (the schedule is drawn in chunks: no array of a whole run)
_CHUNK = 65536


def check_generators(scenario: Scenario) -> list[str]:
    """Names of the scenario's generators, all of which the emulation runs.

    ``poisson_packets`` generators run here, ``poisson_transfers`` generators in
    :mod:`tcprepro.emulation.transfers` (:func:`packet_generators` and
    :func:`transfer_generators` split them).

    A transfer generator's variant is checked with the flows' variants
    (:func:`tcprepro.emulation.capabilities.scenario_needs`).

    Raises
    ------
    ConfigError
        For a generator whose source is a group of several hosts (the emulation sends
        a generator's traffic from one host), naming the field.
    """
    names = []
    for name in scenario.traffic:
        src, _ = scenario.endpoints_of(name)
        groups = getattr(scenario.topology, "sender_groups", {})
        if len(groups.get(src, [src])) > 1:
            raise ConfigError(
                f"traffic.{name}.src: {src} is a group of {len(groups[src])} hosts; the "
                "emulation sends a generator's traffic from one host (X12 stands in one "
                "host whose transfers are each paced at the access rate, traffic.<name>."
                "max_rate, for B5.1's group of access links)"
            )
        names.append(name)
    return names


def packet_generators(scenario: Scenario) -> list[str]:
    """The scenario's ``poisson_packets`` generators, in order."""
    return [n for n, gen in scenario.traffic.items() if isinstance(gen, PacketGenerator)]


def transfer_generators(scenario: Scenario) -> list[str]:
    """The scenario's ``poisson_transfers`` generators, in order."""
    return [n for n, gen in scenario.traffic.items() if isinstance(gen, TransferGenerator)]


def packet_rate_pps(scenario: Scenario, name: str) -> float:
    """Aggregate packet rate of a ``poisson_packets`` generator (packets per second).

    ``load`` is the share of the bottleneck direction's rate the IP packets
    occupy, as in :func:`tcprepro.traffic.calibrate` (and ns-3).
    """
    gen = scenario.traffic[name]
    assert isinstance(gen, PacketGenerator)
    return gen.load * bottleneck_rate_bps(scenario, name) / (8.0 * gen.packet_size)


def poisson_schedule(
    seed: Sequence[int], rate_pps: float, flows: int, start_s: float, stop_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Send times (s from the run's origin) and socket indices of a Poisson packet stream.

    Exponential gaps of mean ``1 / rate_pps`` from ``start_s``, up to (not
    including) ``stop_s``; each packet goes to one of ``flows`` sockets, uniformly.
    The same seed gives the same schedule.
    """
    rng = np.random.default_rng(list(seed))
    times: list[np.ndarray] = []
    now = start_s
    while now < stop_s:
        chunk = now + np.cumsum(rng.exponential(1.0 / rate_pps, _CHUNK))
        times.append(chunk[chunk < stop_s])
        now = float(chunk[-1])
    sent = np.concatenate(times) if times else np.empty(0)
    return sent, rng.integers(0, flows, sent.size)


def sink_port(index: int) -> int:
    """UDP port of the sink of the ``index``-th generator."""
    return SINK_BASE_PORT + index


def _window(scenario: Scenario) -> tuple[float, float]:
    return scenario.warmup, scenario.duration


def _shared_args(scenario: Scenario, files: dict[str, Path]) -> list[str]:
    """Arguments both guest programs take: the measurement window and their files."""
    start, end = _window(scenario)
    return ["--window", repr(start), repr(end), *start_argv(files)]


def sender_argv(
    scenario: Scenario,
    rep: int,
    name: str,
    index: int,
    src_ip: str,
    dst_ip: str,
    files: dict[str, Path],
) -> list[str]:
    """Guest command of generator ``name``'s sender (``files``: ready, go, out)."""
    gen = scenario.traffic[name]
    assert isinstance(gen, PacketGenerator)
    stop = min(gen.stop or scenario.duration, scenario.duration)
    return [
        sys.executable,
        "-m",
        "tcprepro.emulation.background",
        "send",
        "--src",
        src_ip,
        "--dst",
        dst_ip,
        "--port",
        str(sink_port(index)),
        "--base-port",
        str(SENDER_BASE_PORT + 1000 * index),
        "--flows",
        str(gen.flows),
        "--packet-size",
        str(gen.packet_size),
        "--rate-pps",
        repr(packet_rate_pps(scenario, name)),
        "--start",
        repr(gen.start),
        "--stop",
        repr(stop),
        "--seed",
        *(str(x) for x in generator_seed(scenario, rep, name)),
        *_shared_args(scenario, files),
    ]


def sink_argv(scenario: Scenario, index: int, dst_ip: str, files: dict[str, Path]) -> list[str]:
    """Guest command of the ``index``-th generator's sink (``files``: ready, go, out)."""
    return [
        sys.executable,
        "-m",
        "tcprepro.emulation.background",
        "sink",
        "--bind",
        dst_ip,
        "--port",
        str(sink_port(index)),
        "--until",
        repr(scenario.duration + SINK_GRACE_S),
        *_shared_args(scenario, files),
    ]


def summary(
    scenario: Scenario, name: str, sent: dict[str, Any], received: dict[str, Any]
) -> dict[str, Any]:
    """What a run's dataset records of one generator: counts and measured loads.

    ``offered_load`` (``received_load``) is the IP bytes sent (received) within
    the measurement window over the window's length and the bottleneck rate: the
    unit of the configured ``load``.
    """
    gen = scenario.traffic[name]
    assert isinstance(gen, PacketGenerator)
    start, end = _window(scenario)
    capacity_bytes = bottleneck_rate_bps(scenario, name) / 8.0 * (end - start)

    def load(packets: float) -> float:
        return packets * gen.packet_size / capacity_bytes if capacity_bytes > 0 else math.nan

    return {
        "kind": gen.kind,
        "configured_load": gen.load,
        "flows": gen.flows,
        "packet_size_bytes": gen.packet_size,
        "rate_pps": packet_rate_pps(scenario, name),
        "packets_scheduled": sent.get("scheduled", 0),
        "packets_sent": sent.get("sent", 0),
        "packets_received": received.get("received", 0),
        "send_errors": sent.get("errors", 0),
        "sent_in_window": sent.get("sent_window", 0),
        "received_in_window": received.get("received_window", 0),
        "max_late_s": sent.get("max_late_s", math.nan),
        "offered_load": load(sent.get("sent_window", math.nan)),
        "received_load": load(received.get("received_window", math.nan)),
    }


# ---------------------------------------------------------------------------
# Guest programs


def _send(args: argparse.Namespace) -> int:
    times, which = poisson_schedule(args.seed, args.rate_pps, args.flows, args.start, args.stop)
    payload = bytes(args.packet_size - IP_UDP_HEADER_BYTES)
    sockets = []
    for k in range(args.flows):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((args.src, args.base_port + k))
        sock.connect((args.dst, args.port))
        sockets.append(sock)
    exact_timers()
    Path(args.ready).write_text(f"{os.getpid()}\n")
    t0 = wait_for_go(args.go)
    begin, end = args.window
    sent = sent_window = errors = 0
    max_late = 0.0
    for at, k in zip(times.tolist(), which.tolist(), strict=True):
        delay = t0 + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            max_late = max(max_late, -delay)
        try:
            sockets[k].send(payload)
        except OSError:
            errors += 1
            continue
        sent += 1
        if begin <= at < end:
            sent_window += 1
    report = {
        "scheduled": int(times.size),
        "sent": sent,
        "sent_window": sent_window,
        "errors": errors,
        "max_late_s": round(max_late, 9),
    }
    write_json(args.out, report)
    return 0


def _sink(args: argparse.Namespace) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((args.bind, args.port))
    Path(args.ready).write_text(f"{os.getpid()}\n")
    t0 = wait_for_go(args.go)
    begin, end = args.window
    buffer = bytearray(65536)
    received = received_window = 0
    received_bytes = 0
    while True:
        left = t0 + args.until - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)  # a blocking read that gives up at the run's end
        try:
            size = sock.recv_into(buffer)
        except TimeoutError:
            break
        now = time.monotonic() - t0
        received += 1
        received_bytes += size + IP_UDP_HEADER_BYTES
        if begin <= now < end:
            received_window += 1
    write_json(
        args.out,
        {"received": received, "received_window": received_window, "bytes": received_bytes},
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``python -m tcprepro.emulation.background send|sink ...``."""
    parser = argparse.ArgumentParser(prog="tcprepro-background")
    sub = parser.add_subparsers(dest="role", required=True)
    send = sub.add_parser("send", help="send Poisson UDP packets over several sockets")
    send.add_argument("--src", required=True)
    send.add_argument("--dst", required=True)
    send.add_argument("--port", type=int, required=True)
    send.add_argument("--base-port", type=int, required=True)
    send.add_argument("--flows", type=int, required=True)
    send.add_argument("--packet-size", type=int, required=True)
    send.add_argument("--rate-pps", type=float, required=True)
    send.add_argument("--start", type=float, required=True)
    send.add_argument("--stop", type=float, required=True)
    send.add_argument("--seed", type=int, nargs="+", required=True)
    sink = sub.add_parser("sink", help="read and discard the packets")
    sink.add_argument("--bind", required=True)
    sink.add_argument("--port", type=int, required=True)
    sink.add_argument("--until", type=float, required=True)
    for role in (send, sink):
        role.add_argument("--window", type=float, nargs=2, required=True)
        add_start_arguments(role)
    args = parser.parse_args(argv)
    return _send(args) if args.role == "send" else _sink(args)


if __name__ == "__main__":
    sys.exit(main())
