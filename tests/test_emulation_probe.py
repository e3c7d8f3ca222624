"""The fidelity probes of an emulated run (tcprepro.emulation.probe and .fidelity):
ping, and the UDP probe rate iperf3 and iperf 2 report. No root."""

import json
import math

import pytest


def test_ping_probe_takes_the_median_reply():
    from tcprepro.emulation.fidelity import parse_ping

    replies = "".join(
        f"64 bytes from 10.0.2.2: icmp_seq={i} ttl=63 time={t} ms\n"
        for i, t in enumerate([50.2, 50.4, 130.0, 50.3, 50.1])
    )
    assert parse_ping(replies) == pytest.approx(0.0503)
    assert math.isnan(parse_ping("5 packets transmitted, 0 received"))


def _iperf3_server_report(intervals, end_seconds):
    total = sum(b for _, _, b in intervals)
    return {
        "intervals": [
            {"sum": {"start": start, "end": start + seconds, "seconds": seconds, "bytes": b}}
            for start, seconds, b in intervals
        ],
        "end": {
            "sum_received": {"bytes": total, "bits_per_second": 8 * total / end_seconds},
        },
    }


def test_udp_probe_rate_ignores_a_late_end_of_test_message(tmp_path):
    from tcprepro.emulation.probe import udp_received_bps

    # as measured: two whole seconds at 9.72 Mb/s, then the 60-ms drain of the queue
    normal = tmp_path / "normal.json"
    normal.write_text(
        json.dumps(
            _iperf3_server_report(
                [(0, 1.0, 1215872), (1.0, 1.0, 1215872), (2.0, 0.06, 72128)], 2.06
            )
        )
    )
    assert udp_received_bps(normal, 2.0) == pytest.approx(8 * 1215872, rel=1e-9)
    # the end-of-test segment lost at the full bottleneck and resent one RTO later: iperf3's
    # total reads 6.4 Mb/s, while the link delivered 9.7 Mb/s while the probe sent
    late = tmp_path / "late.json"
    late.write_text(
        json.dumps(
            _iperf3_server_report(
                [(0, 1.0, 1215872), (1.0, 1.0, 1215872), (2.0, 1.136, 72128)], 3.136
            )
        )
    )
    report = json.loads(late.read_text())
    assert report["end"]["sum_received"]["bits_per_second"] == pytest.approx(6.39e6, rel=0.01)
    assert udp_received_bps(late, 2.0) == pytest.approx(8 * 1215872, rel=1e-9)
    # a report without whole intervals falls back to iperf3's total; unreadable gives NaN
    short = tmp_path / "short.json"
    short.write_text(json.dumps(_iperf3_server_report([(0, 0.5, 600000)], 0.5)))
    assert udp_received_bps(short, 2.0) == pytest.approx(8 * 600000 / 0.5)
    (tmp_path / "bad.json").write_text("warning: not json")
    assert math.isnan(udp_received_bps(tmp_path / "bad.json", 2.0))


def test_iperf2_udp_probe_rate_reads_the_servers_whole_intervals(tmp_path):
    """iperf 2 sends the probe where it sends the flows (UML: it sleeps, iperf3 polls);
    its server's CSV has a line per 0.5-s interval and the whole test last."""
    from tcprepro.emulation import probe

    report = tmp_path / "probe.csv"
    lines = [
        (0.0, 0.5, 657090),
        (0.5, 1.0, 654150),
        (1.0, 1.5, 654150),
        (1.5, 2.0, 651210),
        (2.0, 2.06, 20000),  # the queue draining after the client stopped
        (0.0, 2.06, 2636600),  # the whole test, up to the last datagram
    ]
    report.write_text(
        "".join(
            f"20261124063505,10.0.0.1,46102,10.0.1.1,6201,1,{a:.1f}-{b:.2f},{n},"
            f"{8 * n / (b - a):.0f},0.001,0,447,0.000,0\n"
            for a, b, n in lines
        )
    )
    assert probe.iperf2_udp_received_bps(report, 2.0) == pytest.approx(
        8 * (657090 + 654150 + 654150 + 651210) / 2.0
    )
    # a probe shorter than a report interval: the whole test; nothing readable: NaN
    assert probe.iperf2_udp_received_bps(report, 0.3) == pytest.approx(8 * 2636600 / 2.06)
    (tmp_path / "empty.csv").write_text("iperf: connect failed\n")
    assert math.isnan(probe.iperf2_udp_received_bps(tmp_path / "empty.csv", 2.0))
    assert math.isnan(probe.iperf2_udp_received_bps(tmp_path / "missing.csv", 2.0))
    client = probe._client_argv("iperf2", "10.0.1.1", 6201, 10.5e6, 1472, 2.0)
    assert client[:2] == ["iperf", "-c"]
    assert "-u" in client
    assert client[client.index("-b") + 1] == "10500000"
    assert probe._server_argv("iperf2", 6201)[:3] == ["iperf", "-s", "-u"]
    assert probe._client_argv("iperf3", "10.0.1.1", 6201, 10.5e6, 1472, 2.0)[0] == "iperf3"
