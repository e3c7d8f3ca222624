"""Generated TCP transfers in the emulation: a ``poisson_transfers`` generator's schedule.

The ns-3 backend opens one connection per transfer that
:func:`tcprepro.traffic.expand_transfers` plans (arrival time, size, source,
destination), with the generator's congestion control. The emulation runs the
same plan, transfer for transfer, with Linux's TCP:

- on the host side (the backend), the plan is written to a JSON file the guest
  reads (:func:`write_plan`), the guest commands are built (:func:`sender_argv`,
  :func:`sink_argv`) and the two reports become the dataset's ``transfer_*``
  variables (:func:`transfer_info`), in the plan's order, as ns-3's;
- in the guest, ``python -m tcprepro.emulation.transfers send|sink`` (stdlib only).

The sender is one process with non-blocking sockets in one selector loop. At each
transfer's arrival it opens a connection with the generator's congestion control
(``TCP_CONGESTION``), writes a 12-byte header (transfer index, size) and then the
transfer's bytes, and closes its side. It waits in ``select`` with a timeout to the
next arrival and never polls: in User-mode Linux's virtual time a polling loop
would stall the clock. The sink accepts every connection in its own selector loop,
reads the header, and records when the last byte of each transfer arrived. Both
write JSON atomically when the run ends. The header is 12 bytes that ns-3's
transfers do not send (stated in the twins that use it).

What each side records, in seconds from the run's origin:

- sender: ``opened_s`` (``connect`` called), ``connected_s`` (the handshake
  completed) and ``error`` (e.g. a refused connection), per transfer it opened;
- sink: ``end_s`` (the transfer's last byte read; absent while it was still
  running at the end: censored, as in ns-3) and ``rx_bytes``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import selectors
import socket
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcprepro.emulation.sampler import (
    add_start_arguments,
    exact_timers,
    start_argv,
    wait_for_go,
    write_json,
)

__all__ = [
    "HEADER",
    "SINK_BASE_PORT",
    "end_within",
    "main",
    "read_plan",
    "sender_argv",
    "sink_argv",
    "summary",
    "transfer_info",
    "write_plan",
]

#: what precedes a transfer's bytes on its connection: index (uint32), size (uint64)
HEADER = struct.Struct("!IQ")
#: first TCP port of the sinks (one per generator)
SINK_BASE_PORT = 9500
#: seconds the sink keeps reading after the run's end
SINK_GRACE_S = 1.0
#: longest wait of the sender's ``select``: Linux lets a wait of T end up to T/1000 late
#: (``select_estimate_accuracy``; a 7.5-s wait opened a transfer 8 ms late in UML's
#: virtual time), so waits are cut into pieces of at most 20 ms (20 us late at most);
#: epoll's timeout is in whole milliseconds, rounded up, which adds up to 1 ms
MAX_WAIT_S = 0.02
#: socket option of Linux's maximum pacing rate (asm-generic/socket.h)
SO_MAX_PACING_RATE = 47
#: bytes written per send call unless the sender is given ``--write``
WRITE_BYTES = 1 << 16


# ---------------------------------------------------------------------------
# Host side


def write_plan(path: Path, transfers: Sequence[Any], congestion_control: str) -> None:
    """Write a generator's planned transfers (``PlannedTransfer``) for the guest's sender."""
    plan = {
        "congestion_control": congestion_control,
        "transfers": [[i, float(t.start_s), int(t.size_bytes)] for i, t in enumerate(transfers)],
    }
    write_json(str(path), plan)


def read_plan(path: str) -> tuple[str, list[tuple[int, float, int]]]:
    """The congestion control and the (index, start, size) of each planned transfer."""
    plan = json.loads(Path(path).read_text())
    return plan["congestion_control"], [(int(i), float(t), int(s)) for i, t, s in plan["transfers"]]


def sender_argv(
    plan: Path,
    dst_ip: str,
    port: int,
    until_s: float,
    files: dict[str, Path],
    *,
    source: tuple[str, int] | None = None,
    send_buffer: int | None = None,
    pacing_bps: int | None = None,
    write_bytes: int = 0,
) -> list[str]:
    """Guest command of a sender (``files``: ready, go, out).

    ``source`` binds each connection to that address and port (a sized flow's socket,
    which the samplers find by its port); ``send_buffer`` sets SO_SNDBUF before the
    connection opens (the kernel doubles it, ``socket(7)``); ``pacing_bps`` sets
    SO_MAX_PACING_RATE (bit/s, as iperf's ``--fq-rate``), which turns Linux's internal
    TCP pacing on; ``write_bytes`` is the size of each send call (0: the default
    :data:`WRITE_BYTES`).
    """
    argv = [
        sys.executable,
        "-m",
        "tcprepro.emulation.transfers",
        "send",
        "--plan",
        str(plan),
        "--dst",
        dst_ip,
        "--port",
        str(port),
        "--until",
        repr(until_s),
        *start_argv(files),
    ]
    if source is not None:
        argv += ["--source", f"{source[0]}:{source[1]}"]
    if send_buffer is not None:
        argv += ["--sndbuf", str(send_buffer)]
    if pacing_bps is not None:
        argv += ["--max-pacing", str(pacing_bps)]
    if write_bytes:
        argv += ["--write", str(write_bytes)]
    return argv


def sink_argv(
    bind_ip: str,
    port: int,
    until_s: float,
    files: dict[str, Path],
    *,
    recv_buffer: int | None = None,
) -> list[str]:
    """Guest command of a sink (``files``: ready, go, out).

    ``recv_buffer`` sets SO_RCVBUF on the listening socket, before ``listen`` (the
    accepted connections inherit it, and the window scale follows from it).
    """
    argv = [
        sys.executable,
        "-m",
        "tcprepro.emulation.transfers",
        "sink",
        "--bind",
        bind_ip,
        "--port",
        str(port),
        "--until",
        repr(until_s + SINK_GRACE_S),
        "--run-end",
        repr(until_s),
        *start_argv(files),
    ]
    if recv_buffer is not None:
        argv += ["--rcvbuf", str(recv_buffer)]
    return argv


def transfer_info(
    transfers: Sequence[Any],
    sent: dict[str, Any],
    received: dict[str, Any],
    until_s: float = math.inf,
) -> dict[str, list[Any]]:
    """The dataset's ``transfer_*`` values of one generator, in the plan's order.

    ``transfer_end_s`` is NaN for a transfer still running at the run's end
    ``until_s`` (censored), as in ns-3, whose simulation stops there: the sink reads on
    for :data:`SINK_GRACE_S` after it, and a last byte read then is not an end. The
    per-transfer packet counts are NaN (Linux does not give them per connection once
    it is closed).
    """
    opened = sent.get("transfers", {})
    arrived = received.get("transfers", {})
    out: dict[str, list[Any]] = {
        name: []
        for name in (
            "transfer_generator",
            "transfer_src",
            "transfer_dst",
            "transfer_start_s",
            "transfer_size_bytes",
            "transfer_connected_s",
            "transfer_end_s",
            "transfer_rx_bytes",
            "transfer_tx_data_pkts",
            "transfer_lost_data_pkts",
        )
    }
    for index, planned in enumerate(transfers):
        mine = opened.get(str(index), {})
        got = arrived.get(str(index), {})
        out["transfer_generator"].append(planned.generator)
        out["transfer_src"].append(planned.src)
        out["transfer_dst"].append(planned.dst)
        out["transfer_start_s"].append(float(planned.start_s))
        out["transfer_size_bytes"].append(int(planned.size_bytes))
        out["transfer_connected_s"].append(_seconds(mine.get("connected_s")))
        out["transfer_end_s"].append(end_within(got, until_s))
        # the bytes read by the run's end, as ns-3 counts them (not the grace second's)
        out["transfer_rx_bytes"].append(float(got.get("rx_bytes_by_end", got.get("rx_bytes", 0))))
        out["transfer_tx_data_pkts"].append(math.nan)
        out["transfer_lost_data_pkts"].append(math.nan)
    return out


def summary(
    transfers: Sequence[Any],
    sent: dict[str, Any],
    received: dict[str, Any],
    until_s: float = math.inf,
) -> dict:
    """What the dataset's ``transfers`` attribute records of one generator's run.

    Transfers planned, opened (before the run's end), refused or failed (``errors``,
    with the first message), delivered whole by the run's end ``until_s``, and how late
    the latest opening was after its planned arrival (``max_late_s``: the sender's
    timing, the fidelity of the plan).
    """
    opened = sent.get("transfers", {})
    late = [entry["opened_s"] - transfers[int(i)].start_s for i, entry in opened.items()]
    errors = [entry["error"] for entry in opened.values() if "error" in entry]
    delivered = received.get("transfers", {})
    return {
        "planned": len(transfers),
        "opened": len(opened),
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
        "delivered": sum(
            1 for entry in delivered.values() if math.isfinite(end_within(entry, until_s))
        ),
        "max_late_s": round(max(late), 6) if late else math.nan,
    }


def _seconds(value: Any) -> float:
    return math.nan if value is None else float(value)


def end_within(entry: dict[str, Any], until_s: float) -> float:
    """A sink's ``end_s`` for one transfer, NaN when absent or after ``until_s``."""
    end = _seconds(entry.get("end_s"))
    return end if end <= until_s else math.nan


# ---------------------------------------------------------------------------
# Guest programs (stdlib only: imports are slow in User-mode Linux)


class _Outgoing:
    """One transfer's connection on the sender's side."""

    def __init__(self, index: int, size: int, sock: socket.socket, zeros: bytes) -> None:
        self.index = index
        self.pending = memoryview(HEADER.pack(index, size))
        self.left = size
        self.sock = sock
        self.zeros = zeros  # one write's worth of payload


def _send(args: argparse.Namespace) -> int:
    congestion_control, plan = read_plan(args.plan)
    args.zeros = bytes(args.write)
    exact_timers()
    Path(args.ready).write_text(f"{os.getpid()}\n")
    t0 = wait_for_go(args.go)
    selector = selectors.DefaultSelector()
    report: dict[str, dict[str, Any]] = {}
    upcoming = sorted(plan, key=lambda item: item[1])
    position = 0
    while True:
        now = time.monotonic() - t0
        if now >= args.until:
            break
        while position < len(upcoming) and upcoming[position][1] <= now:
            index, _, size = upcoming[position]
            position += 1
            report[str(index)] = _open(selector, index, size, congestion_control, args)
            report[str(index)]["opened_s"] = round(time.monotonic() - t0, 9)
        wait = min(args.until - now, MAX_WAIT_S)
        if position < len(upcoming):
            wait = min(wait, upcoming[position][1] - now)
        # with no socket registered, select() sleeps to the timeout (epoll)
        for key, _ in selector.select(timeout=max(0.0, wait)):
            _write_some(selector, key.data, report, time.monotonic() - t0)
    for key in list(selector.get_map().values()):
        key.data.sock.close()
    write_json(args.out, {"congestion_control": congestion_control, "transfers": report})
    return 0


def _open(
    selector: selectors.BaseSelector, index: int, size: int, cc: str, args: argparse.Namespace
) -> dict[str, Any]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    except OSError as exc:
        sock.close()
        return {"error": f"congestion control {cc!r}: {exc.strerror}"}
    if args.sndbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, args.sndbuf)
    if args.max_pacing is not None:  # bytes/s, a 32-bit value
        rate = min(args.max_pacing // 8, 0xFFFFFFFF)
        sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, rate)
    if args.source is not None:
        address, port = args.source.rsplit(":", 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, int(port)))
        except OSError as exc:
            sock.close()
            return {"error": f"bind {args.source}: {exc.strerror}"}
    sock.setblocking(False)
    sock.connect_ex((args.dst, args.port))
    selector.register(sock, selectors.EVENT_WRITE, _Outgoing(index, size, sock, args.zeros))
    return {}


def _write_some(
    selector: selectors.BaseSelector, out: _Outgoing, report: dict[str, dict[str, Any]], now: float
) -> None:
    entry = report[str(out.index)]
    if "connected_s" not in entry:  # the first time it is writable: the handshake ended
        error = out.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            entry["error"] = os.strerror(error)
            selector.unregister(out.sock)
            out.sock.close()
            return
        entry["connected_s"] = round(now, 9)
    try:
        if out.pending:
            sent = out.sock.send(out.pending)
            out.pending = out.pending[sent:]
        while not out.pending and out.left > 0:
            sent = out.sock.send(out.zeros[: min(out.left, len(out.zeros))])
            out.left -= sent
    except BlockingIOError:
        return
    except OSError as exc:
        entry["error"] = exc.strerror or str(exc)
        selector.unregister(out.sock)
        out.sock.close()
        return
    if not out.pending and out.left == 0:
        selector.unregister(out.sock)
        out.sock.close()  # the kernel sends what is still buffered, then its FIN


class _Incoming:
    """One accepted connection on the sink's side."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.header = bytearray()
        self.index = -1
        self.size = 0


def _sink(args: argparse.Namespace) -> int:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.rcvbuf is not None:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
    listener.bind((args.bind, args.port))
    listener.listen(1024)
    listener.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    Path(args.ready).write_text(f"{os.getpid()}\n")
    t0 = wait_for_go(args.go)
    report: dict[str, dict[str, Any]] = {}
    buffer = bytearray(1 << 16)
    while True:
        left = args.until - (time.monotonic() - t0)
        if left <= 0:
            break
        for key, _ in selector.select(timeout=left):
            if key.data is None:
                with contextlib.suppress(BlockingIOError):
                    conn, _ = listener.accept()
                    conn.setblocking(False)
                    selector.register(conn, selectors.EVENT_READ, _Incoming(conn))
                continue
            _read_some(selector, key.data, buffer, report, time.monotonic() - t0, args.run_end)
    write_json(args.out, {"transfers": report})
    return 0


def _read_some(
    selector: selectors.BaseSelector,
    conn: _Incoming,
    buffer: bytearray,
    report: dict[str, dict[str, Any]],
    now: float,
    run_end: float,
) -> None:
    try:
        count = conn.sock.recv_into(buffer)
    except BlockingIOError:
        return
    except OSError:
        count = 0
    if count == 0:  # end of the connection (or reset)
        selector.unregister(conn.sock)
        conn.sock.close()
        return
    data = memoryview(buffer)[:count]
    if conn.index < 0:
        need = HEADER.size - len(conn.header)
        conn.header += data[:need]
        data = data[need:]
        if len(conn.header) < HEADER.size:
            return
        conn.index, conn.size = HEADER.unpack(conn.header)
        report[str(conn.index)] = {"rx_bytes": 0, "rx_bytes_by_end": 0}
    entry = report[str(conn.index)]
    entry["rx_bytes"] += len(data)
    if now <= run_end:  # what the run itself delivered; the grace second's bytes are not
        entry["rx_bytes_by_end"] = entry["rx_bytes"]
    if entry["rx_bytes"] >= conn.size and "end_s" not in entry:
        entry["end_s"] = round(now, 9)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``python -m tcprepro.emulation.transfers send|sink ...``."""
    parser = argparse.ArgumentParser(prog="tcprepro-transfers")
    sub = parser.add_subparsers(dest="role", required=True)
    send = sub.add_parser("send", help="open the planned transfers, one connection each")
    send.add_argument("--plan", required=True)
    send.add_argument("--dst", required=True)
    send.add_argument("--port", type=int, required=True)
    send.add_argument("--source", help="IP:PORT each connection binds to")
    send.add_argument("--sndbuf", type=int, help="SO_SNDBUF of each connection (bytes)")
    send.add_argument("--max-pacing", type=int, help="SO_MAX_PACING_RATE (bit/s)")
    send.add_argument(
        "--write", type=int, default=WRITE_BYTES, help="bytes per send call (default: 64 KiB)"
    )
    sink = sub.add_parser("sink", help="accept the transfers and time their last byte")
    sink.add_argument("--bind", required=True)
    sink.add_argument("--port", type=int, required=True)
    sink.add_argument("--rcvbuf", type=int, help="SO_RCVBUF of the listening socket (bytes)")
    sink.add_argument(
        "--run-end", type=float, default=math.inf, help="the run's end (s after the go)"
    )
    for role in (send, sink):
        role.add_argument("--until", type=float, required=True)
        add_start_arguments(role)
    args = parser.parse_args(argv)
    return _send(args) if args.role == "send" else _sink(args)


if __name__ == "__main__":
    sys.exit(main())
