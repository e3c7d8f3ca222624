"""The Linux commands and parsers of the Mininet backend (tcprepro.emulation.linux):
tc trees, MTU, netem's random loss, and what ss, tc and netstat print. Pure functions:
no root."""

import json
import math

import pytest

from conftest import ROOT
from tcprepro.emulation import linux
from tcprepro.errors import ConfigError
from tcprepro.network_plan import PlannedDirection, build_plan
from tcprepro.scenario import TcpSettings
from tcprepro.scenario_io import load_scenario

TCP = TcpSettings()


def test_egress_keeps_the_buffer_in_a_fifo_under_htb_and_the_delay_in_netem():
    delayed = PlannedDirection(rate_bps=10e6, delay_s=0.042, buffer_pkts=250, qdisc="fifo")
    commands = [" ".join(c) for c in linux.egress_commands("eth0", delayed, TCP)]
    assert commands[0].startswith("tc qdisc add dev eth0 root handle 1: netem delay 42000us")
    netem_limit = int(commands[0].split("limit ")[1].split()[0])
    assert netem_limit >= 250 + 10_000  # never binds: the fifo is the buffer (pitfall a)
    assert "parent 1:1 handle 2: htb" in commands[1]
    assert "rate 10000000bit ceil 10000000bit" in commands[2]
    assert commands[3].endswith("parent 2:1 handle 3: pfifo limit 250")
    plain = [
        " ".join(c)
        for c in linux.egress_commands("eth0", delayed.__class__(2e6, 0.0, 40, "fifo"), TCP)
    ]
    assert not any("netem" in c for c in plain)
    assert plain[0] == "tc qdisc add dev eth0 root handle 2: htb default 1"
    assert plain[-1].endswith("pfifo limit 40")


def test_unmapped_queue_discipline_is_a_config_error_naming_the_field():
    red = PlannedDirection(10e6, 0.0, 100, "red", trace_name="bottleneck")
    with pytest.raises(ConfigError, match="'red' is not supported by the Mininet backend"):
        linux.leaf_qdisc(red, "topology (bottleneck) qdisc")


def test_mtu_and_frame_make_segments_of_exactly_the_mss():
    assert linux.mtu_bytes(TCP) == 1500
    assert linux.frame_bytes(TCP) == 1514
    assert linux.mtu_bytes(TcpSettings(timestamps=False)) == 1488


SS_OUTPUT = (
    "ESTAB 0      0      [::ffff:10.0.4.2]:5201 [::ffff:10.0.2.1]:40001\n"
    "\t cubic wscale:7,7 rto:1004 rtt:0.031/0.015 ato:40 mss:1448 cwnd:10 "
    "bytes_received:111533 segs_out:78\n"
    "ESTAB 0      6691440 10.0.3.1:40002 10.0.4.2:5202\n"
    "\t ts sack reno wscale:7,7 rto:1064 rtt:60.637/0.842 mss:1448 cwnd:23 ssthresh:15 "
    "bytes_acked:1172918 data_segs_out:859 send 4393885bps pacing_rate 8482000bps "
    "retrans:1/10 lost:1\n"
)


def test_ss_parser_reads_cc_cwnd_rtt_retransmissions_and_ipv4_mapped_endpoints():
    sockets = linux.parse_ss(SS_OUTPUT)
    receiver = linux.find_socket(sockets, "10.0.4.2:5201", "10.0.2.1:40001")
    assert receiver is not None
    assert receiver.number("bytes_received") == 111533
    sender = linux.find_socket(sockets, "10.0.3.1:40002", "10.0.4.2:5202")
    assert sender.cc == "reno"
    assert sender.number("cwnd") == 23
    assert sender.pair("rtt") == (60.637, 0.842)
    assert sender.pair("retrans") == (1.0, 10.0)
    assert sender.number("data_segs_out") == 859
    assert sender.fields["pacing_rate"] == "8482000bps"
    assert math.isnan(sender.number("bytes_received"))


def test_tc_parser_reads_queue_drops_and_bytes():
    text = json.dumps(
        [
            {
                "kind": "htb",
                "handle": "2:",
                "bytes": 1514000,
                "packets": 1000,
                "drops": 0,
                "backlog": 0,
                "qlen": 0,
            },
            {
                "kind": "pfifo",
                "handle": "3:",
                "bytes": 1514000,
                "packets": 1000,
                "drops": 7,
                "backlog": 15140,
                "qlen": 10,
            },
        ]
    )
    stats = linux.parse_tc_qdiscs(text)
    assert stats["3:"]["qlen_pkts"] == 10
    assert stats["3:"]["backlog_bytes"] == 15140
    assert stats["3:"]["drops"] == 7
    assert stats["2:"]["bytes"] == 1514000


def test_netem_random_loss_is_applied_only_in_the_data_direction():
    """D3's loss is on the bottleneck (data) direction only, as ns-3's RateErrorModel on
    the bottleneck's receiving device: the reverse (ACK) direction and the access links
    get a netem without ``loss`` (or none)."""
    d3 = load_scenario(ROOT / "workflow/scenarios/D3.yaml")
    plan = build_plan(d3, 0)
    lossy = []
    for link in plan.links:
        for direction in (link.a_to_b, link.b_to_a):
            netem = [
                " ".join(argv)
                for argv in linux.egress_commands("eth0", direction, d3.tcp)
                if "netem" in argv
            ]
            if any(" loss " in c for c in netem):
                lossy.append(direction.trace_name)
                assert netem[0].endswith("loss random 0.1%")
    assert lossy == ["bottleneck"]
    [flow] = plan.flows
    assert flow.bottleneck == "bottleneck"  # the data crosses it; the ACKs cross "reverse"


NETSTAT = """TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes
TcpExt: 0 {timeouts} 7
IpExt: InNoRoutes InOctets
IpExt: 0 123
"""


def test_netstat_parser_reads_the_rto_expiries():
    counters = linux.parse_netstat(NETSTAT.format(timeouts=3))
    assert counters["TcpExt"]["TCPTimeouts"] == 3
    assert counters["IpExt"]["InOctets"] == 123
    assert linux.parse_netstat("") == {}


#: `ss -tinH` of an iperf 2 sender (Linux 6.18, SO_SNDBUF 16 KiB, 10 Mb/s htb), recorded
SS_IPERF2_SENDER = (
    "ESTAB 28     65912  10.9.0.1:40001 10.9.0.2:5201\n"
    "\t reno wscale:7,10 rto:256 rtt:54.659/0.228 ato:40 mss:1448 pmtu:1500 rcvmss:536 "
    "advmss:1448 cwnd:156 bytes_sent:3079876 bytes_acked:3013965 bytes_received:28 "
    "segs_out:2142 segs_in:346 data_segs_out:2139 data_segs_in:1 send 33061417bps "
    "lastsnd:40 lastrcv:2508 lastack:40 pacing_rate 66121768bps delivery_rate 9542528bps "
    "delivered:2094 busy:2508ms unacked:46 rcv_space:14480 rcv_ssthresh:64088 "
    "minrtt:0.023 snd_wnd:5307520\n"
    # after a retransmission: bytes_retrans counts the resent bytes once more
    "ESTAB 0      80000  10.9.0.1:40002 10.9.0.2:5202\n"
    "\t reno mss:1448 cwnd:20 bytes_sent:102896 bytes_retrans:2896 bytes_acked:60001 "
    "unacked:28 retrans:0/2\n"
    # an older kernel printing no byte counters: unacked segments x MSS
    "ESTAB 0      2896  10.9.0.1:40003 10.9.0.2:5203\n"
    "\t reno mss:1448 cwnd:10 unacked:2\n"
    # connected, nothing sent yet: ss omits the zero counters
    "ESTAB 0      0      10.9.0.1:40004 10.9.0.2:5204\n"
    "\t reno mss:1448 cwnd:3\n"
)


def test_in_flight_bytes_come_from_the_byte_counters_of_ss():
    sockets = {s.local: s for s in linux.parse_ss(SS_IPERF2_SENDER)}
    assert linux.in_flight_bytes(sockets["10.9.0.1:40001"], 1448) == 3079876 - 3013965
    # with snd_nxt - snd_una the ss Send-Q of a sender whose data is all in flight
    assert linux.in_flight_bytes(sockets["10.9.0.1:40002"], 1448) == 102896 - 2896 - 60001
    assert linux.in_flight_bytes(sockets["10.9.0.1:40003"], 1448) == 2 * 1448
    assert linux.in_flight_bytes(sockets["10.9.0.1:40004"], 1448) == 0.0
