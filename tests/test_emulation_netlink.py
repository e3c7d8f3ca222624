"""The sampler's netlink reads (tcprepro.emulation.netlink) against ``ss`` and ``tc`` on
this host's kernel: the same sockets, fields and qdisc counters. Root (a network
namespace of its own), ss and tc."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tcprepro.emulation import linux

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("ss") and shutil.which("tc") and shutil.which("ip")),
    reason="needs root, ip, ss and tc",
)

#: in a fresh namespace: an htb + pfifo tree on lo as the emulation shapes a link, one
#: TCP connection carrying 2 MB over it, then both readings of the idle connection
PROGRAM = textwrap.dedent(
    """
    import json, socket, subprocess, sys, time
    from tcprepro.emulation import netlink
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, text=True).stdout
    run("ip", "link", "set", "lo", "up")
    run("tc", "qdisc", "add", "dev", "lo", "root", "handle", "2:", "htb", "default", "1")
    run("tc", "class", "add", "dev", "lo", "parent", "2:", "classid", "2:1", "htb",
        "rate", "200mbit")
    run("tc", "qdisc", "add", "dev", "lo", "parent", "2:1", "handle", "3:", "pfifo",
        "limit", "50")
    server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
    client = socket.create_connection(server.getsockname()); peer, _ = server.accept()
    client.setsockopt(socket.SOL_SOCKET, 47, 5_000_000)  # SO_MAX_PACING_RATE, bytes/s
    client.sendall(b"x" * 2_000_000)
    got = 0
    while got < 2_000_000:
        got += len(peer.recv(1 << 20))
    time.sleep(0.3)
    print(json.dumps({
        "netlink": netlink.tcp_sockets(), "ss": run("ss", "-tinH"),
        "qdiscs": netlink.qdiscs(["lo"])["lo"],
        "tc": run("tc", "-s", "-j", "qdisc", "show", "dev", "lo"),
    }))
    """
)


@pytest.fixture(scope="module")
def readings():
    name = f"tcprepro-netlink-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        out = subprocess.run(
            ["ip", "netns", "exec", name, sys.executable, "-c", PROGRAM],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)
    return json.loads(out)


def test_netlink_lists_the_sockets_and_fields_that_ss_prints(readings):
    ours = [
        linux.SsSocket(s, local, peer, cc, fields)
        for s, local, peer, cc, fields in readings["netlink"]
    ]
    theirs = linux.parse_ss(readings["ss"])
    assert len(ours) == len(theirs) == 2  # both ends of the connection (the listener is not listed)
    for sock in ours:
        other = linux.find_socket(theirs, sock.local, sock.peer)
        assert other is not None, (sock.local, sock.peer)
        assert (sock.state, sock.cc) == (other.state, other.cc) == ("ESTAB", other.cc)
        # every field the netlink read gives, ss prints with the same value, and every
        # field the traces read that ss prints, the netlink read gives
        assert {k: other.fields.get(k) for k in sock.fields} == sock.fields
        read = {"mss", "cwnd", "rtt", "data_segs_out", "retrans", "unacked", "pacing_rate"}
        read |= {"bytes_sent", "bytes_acked", "bytes_retrans", "bytes_received"}
        assert read & set(other.fields) <= set(sock.fields)
    sender = next(s for s in ours if "bytes_sent" in s.fields)
    receiver = next(s for s in ours if "bytes_received" in s.fields)
    assert sender.number("bytes_sent") == receiver.number("bytes_received") == 2_000_000
    assert linux.max_pacing_bps(sender) == 40e6  # SO_MAX_PACING_RATE 5 MB/s
    assert linux.in_flight_bytes(sender, sender.number("mss")) == 0


def test_netlink_reads_the_counters_tc_prints_of_each_qdisc(readings):
    ours = linux.qdisc_counters(readings["qdiscs"])
    assert ours == linux.parse_tc_qdiscs(readings["tc"])
    assert (ours["2:"]["kind"], ours["3:"]["kind"]) == ("htb", "pfifo")
    assert ours["3:"]["bytes"] > 2_000_000
    assert ours["3:"]["packets"] > 0
