"""The emulation's generated TCP transfers (tcprepro.emulation.transfers), on loopback.

The guest programs run here as they do in a guest: two processes started with their
command lines, waiting for the same go file, with Linux's TCP between them (the host's
loopback instead of an emulated path). What is checked: every planned transfer is opened
at its arrival and delivered whole, its last byte timed; one still running at the end is
censored, not dropped; a congestion control the kernel lacks is reported by name.
"""

from __future__ import annotations

import json
import math
import resource
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tcprepro.emulation import transfers
from tcprepro.traffic import PlannedTransfer

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_pair(tmp_path: Path, planned, congestion_control: str, until_s: float, pacing_bps=None):
    """Start the sink and the sender, give them the go, return both reports.

    Each call runs in a new directory, as each emulation does (backend: mkdtemp): a ready
    or go file left by an earlier pair would let this one start before its sink listens.
    """
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))
    plan = tmp_path / "plan.json"
    transfers.write_plan(plan, planned, congestion_control)
    port = free_port()
    go = tmp_path / "go"
    files = {
        role: {"ready": tmp_path / f"ready-{role}", "go": go, "out": tmp_path / f"{role}.json"}
        for role in ("sink", "send")
    }
    commands = {
        "sink": transfers.sink_argv("127.0.0.1", port, until_s, files["sink"]),
        "send": transfers.sender_argv(
            plan, "127.0.0.1", port, until_s, files["send"], pacing_bps=pacing_bps
        ),
    }
    procs = {role: subprocess.Popen(argv, cwd=ROOT) for role, argv in commands.items()}
    deadline = time.monotonic() + 60
    while not all(files[role]["ready"].exists() for role in procs):
        assert time.monotonic() < deadline, "the guest programs did not start"
        time.sleep(0.01)
    go.write_text(f"{time.monotonic() + 0.1!r}\n")
    for role, proc in procs.items():
        assert proc.wait(timeout=60) == 0, role
    return tuple(json.loads(files[role]["out"].read_text()) for role in ("send", "sink"))


def planned(starts_sizes):
    return [
        PlannedTransfer("web", i, "server", "client", start, size)
        for i, (start, size) in enumerate(starts_sizes)
    ]


def test_every_planned_transfer_is_opened_at_its_arrival_and_delivered_whole(tmp_path):
    plan = planned(
        [(0.05, 1), (0.10, 12), (0.15, 1000), (0.20, 65_536), (0.2, 65_537), (0.4, 3_000_000)]
        + [(0.5 + 0.05 * k, 10_000 * (k + 1)) for k in range(20)]
    )
    sent, received = run_pair(tmp_path, plan, "cubic", until_s=2.5)
    info = transfers.transfer_info(plan, sent, received)
    assert sent["congestion_control"] == "cubic"
    assert info["transfer_rx_bytes"] == [float(t.size_bytes) for t in plan]
    for start, connected, end in zip(
        info["transfer_start_s"], info["transfer_connected_s"], info["transfer_end_s"], strict=True
    ):
        # opened at its arrival (the sender sleeps to it, never early), done within the run
        assert start <= connected < start + 0.5
        assert connected <= end < 2.5
    assert info["transfer_generator"] == ["web"] * len(plan)
    assert info["transfer_src"][0] == "server"
    assert info["transfer_dst"][0] == "client"
    assert all(math.isnan(x) for x in info["transfer_tx_data_pkts"])
    summary = transfers.summary(plan, sent, received)
    assert summary["planned"] == summary["opened"] == summary["delivered"] == len(plan)
    assert summary["errors"] == 0
    assert 0 <= summary["max_late_s"] < 0.05


def test_a_transfer_still_running_at_the_end_is_censored(tmp_path):
    plan = planned([(0.1, 10_000), (0.3, 200_000_000_000)])  # 200 GB cannot end in 0.7 s
    sent, received = run_pair(tmp_path, plan, "reno", until_s=1.0)
    info = transfers.transfer_info(plan, sent, received)
    assert info["transfer_end_s"][0] < 1.0
    assert math.isnan(info["transfer_end_s"][1])
    assert 0 < info["transfer_rx_bytes"][1] < plan[1].size_bytes
    # the bytes the run delivered by its end, not those the sink read in its grace second
    running = received["transfers"]["1"]
    assert info["transfer_rx_bytes"][1] == running["rx_bytes_by_end"] <= running["rx_bytes"]


def test_a_last_byte_read_after_the_run_end_is_censored_as_in_ns3():
    """The sink reads on for SINK_GRACE_S after the run's end; ns-3 stops there, so a
    last byte read in that second is not an end (nor a delivery)."""
    plan = planned([(0.1, 1000), (0.5, 1000)])
    sent = {"transfers": {"0": {"opened_s": 0.1}, "1": {"opened_s": 0.5}}}
    received = {
        "transfers": {
            "0": {"rx_bytes": 1000, "rx_bytes_by_end": 1000, "end_s": 0.9},
            "1": {"rx_bytes": 1000, "rx_bytes_by_end": 600, "end_s": 1.4},
        }
    }
    info = transfers.transfer_info(plan, sent, received, until_s=1.0)
    assert info["transfer_end_s"][0] == 0.9
    assert math.isnan(info["transfer_end_s"][1])
    assert info["transfer_rx_bytes"] == [1000.0, 600.0]  # by the run's end, as ns-3
    assert transfers.summary(plan, sent, received, until_s=1.0)["delivered"] == 1
    assert transfers.summary(plan, sent, received)["delivered"] == 2


def test_a_paced_sender_sends_each_transfer_at_most_at_its_rate(tmp_path):
    """pacing_bps (a generator's max_rate) sets SO_MAX_PACING_RATE on every connection.

    Linux paces a connection from its 11th segment on (tcp_update_skb_after_send); on
    loopback a segment is up to 64 kB, so of a 2-MB transfer about 655 kB go unpaced
    and the rest, about 1.35 MB, at 8 Mb/s takes about 1.35 s. Unpaced, loopback
    carries it in milliseconds.
    """
    plan = planned([(0.05, 2_000_000), (0.1, 2_000_000)])
    sent, received = run_pair(tmp_path, plan, "reno", until_s=4.0, pacing_bps=8_000_000)
    info = transfers.transfer_info(plan, sent, received)
    for connected, end in zip(info["transfer_connected_s"], info["transfer_end_s"], strict=True):
        assert 1.0 < end - connected < 2.5, (connected, end)
    sent, received = run_pair(tmp_path, plan, "reno", until_s=1.0)
    info = transfers.transfer_info(plan, sent, received)
    for connected, end in zip(info["transfer_connected_s"], info["transfer_end_s"], strict=True):
        assert end - connected < 0.3, (connected, end)


def test_a_congestion_control_the_kernel_lacks_is_reported_by_name(tmp_path):
    plan = planned([(0.05, 1000)])
    sent, received = run_pair(tmp_path, plan, "no_such_cc", until_s=0.5)
    assert "no_such_cc" in sent["transfers"]["0"]["error"]
    assert transfers.summary(plan, sent, received)["errors"] == 1
    info = transfers.transfer_info(plan, sent, received)
    assert math.isnan(info["transfer_connected_s"][0])
    assert info["transfer_rx_bytes"] == [0.0]


def test_the_sender_and_the_sink_wait_without_polling(tmp_path):
    """One transfer at the end of a quiet 2-s interval: the two programs together use far
    less CPU than the interval (a polling loop would burn it all; in User-mode Linux's
    virtual time it would stall the clock)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_pair(tmp_path, planned([(1.9, 100)]), "reno", until_s=2.0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 1.0  # mostly the two interpreters' start-up
