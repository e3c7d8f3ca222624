"""The kernel's TCP sockets and qdisc counters read over netlink, in the sampler's process.

What ``ss -tin`` and ``tc -s qdisc show`` print comes from two netlink dumps:
``sock_diag`` (``SOCK_DIAG_BY_FAMILY`` with ``struct tcp_info`` and the congestion
control's name) and ``rtnetlink`` (``RTM_GETQDISC`` with ``TCA_STATS2``). The sampler
asks for them itself instead of starting ``ss`` and ``tc`` for every sample: inside
User-mode Linux each ``fork``/``exec`` of those programs costs a large share of the
guest's time (every sample of every namespace started two of them), while the dumps
cost a few system calls.

The results keep the two programs' notation, so one parser reads both
(:mod:`tcprepro.emulation.linux`): a socket is ``(state, local, peer, cc, fields)``
with the fields ``ss`` prints and under its rule (a counter that is zero is left out,
``rtt`` as ``srtt/rttvar`` in ms, ``retrans`` as ``retransmits/total_retrans``,
``pacing_rate`` as ``rate/max`` in bit/s); a qdisc is what ``tc -s -j`` prints of it.

Only the standard library is imported: the sampler runs it inside the guest.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from collections.abc import Iterator

__all__ = ["NetlinkError", "parse_qdiscs", "parse_tcp_sockets", "qdiscs", "tcp_sockets"]

NETLINK_ROUTE = 0
NETLINK_SOCK_DIAG = 4
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
SOCK_DIAG_BY_FAMILY = 20
RTM_NEWQDISC = 36
RTM_GETQDISC = 38
INET_DIAG_INFO = 2
INET_DIAG_CONG = 4
TCA_KIND = 1
TCA_STATS2 = 7
TCA_STATS_BASIC = 1
TCA_STATS_QUEUE = 3
TCA_STATS_PKT64 = 8

_NLMSG = struct.Struct("=IHHII")
_RTATTR = struct.Struct("=HH")
_DIAG_REQ = struct.Struct("=BBBxI")  # family, protocol, ext, states (sockid follows)
_DIAG_MSG = struct.Struct("=BBBB")  # family, state, timer, retrans (sockid follows)
_SOCKID = struct.Struct("!HH16s16s")  # sport, dport (network order), src, dst
_SOCKID_SIZE = 48  # the ports and addresses, then the interface and a cookie
_DIAG_MSG_SIZE = 72  # the header, the socket id, expires, rqueue, wqueue, uid, inode
_TCMSG = struct.Struct("=BBHiIII")

#: ``ss``'s names of the TCP states (``include/net/tcp_states.h`` order)
STATE_NAMES = (
    "UNKNOWN",
    "ESTAB",
    "SYN-SENT",
    "SYN-RECV",
    "FIN-WAIT-1",
    "FIN-WAIT-2",
    "TIME-WAIT",
    "UNCONN",
    "CLOSE-WAIT",
    "LAST-ACK",
    "LISTEN",
    "CLOSING",
)
#: the states ``ss -t`` lists by default (its ``SS_CONN``): all but LISTEN, CLOSE,
#: TIME-WAIT and SYN-RECV
DEFAULT_STATES = ((1 << 12) - 1) & ~((1 << 10) | (1 << 7) | (1 << 6) | (1 << 3))

#: ``struct tcp_info`` (``include/uapi/linux/tcp.h``): byte offset and format of the
#: fields read; a shorter structure (an older kernel) leaves the later ones out
_TCP_INFO = {
    "retransmits": (2, "B"),
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),
    "rtt": (68, "I"),
    "rttvar": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "max_pacing_rate": (112, "Q"),
    "bytes_acked": (120, "Q"),
    "bytes_received": (128, "Q"),
    "data_segs_out": (156, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
}
#: ``tcp_info``'s "no limit" value of ``max_pacing_rate`` (``ss`` prints no maximum then)
_UNSET_U64 = (1 << 64) - 1
#: the ssthresh of a socket that never left slow start (``TCP_INFINITE_SSTHRESH``)
_INFINITE_SSTHRESH = 0x7FFFFFFF


class NetlinkError(OSError):
    """The kernel refused a dump (or has no such netlink family)."""


def _attributes(data: bytes, offset: int, end: int) -> Iterator[tuple[int, bytes]]:
    """The ``rtattr`` (type, payload) pairs of ``data[offset:end]``."""
    while offset + _RTATTR.size <= end:
        length, kind = _RTATTR.unpack_from(data, offset)
        if length < _RTATTR.size:
            break
        yield kind & 0x3FFF, data[offset + _RTATTR.size : offset + length]  # no NLA_F_ flags
        offset += (length + 3) & ~3


def _messages(data: bytes) -> Iterator[tuple[int, bytes]]:
    """The (type, payload) netlink messages of one ``recv``."""
    offset = 0
    while offset + _NLMSG.size <= len(data):
        length, kind, _flags, _seq, _pid = _NLMSG.unpack_from(data, offset)
        if length < _NLMSG.size:
            break
        yield kind, data[offset + _NLMSG.size : offset + length]
        offset += (length + 3) & ~3


def _dump(protocol: int, kind: int, payload: bytes) -> list[tuple[int, bytes]]:
    """Every message of a netlink dump request (until ``NLMSG_DONE``)."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, protocol) as sock:
        sock.bind((0, 0))
        header = _NLMSG.pack(_NLMSG.size + len(payload), kind, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
        sock.send(header + payload)
        out = []
        while True:
            data = sock.recv(1 << 16)
            if not data:
                return out
            for msg_kind, body in _messages(data):
                if msg_kind == NLMSG_DONE:
                    return out
                if msg_kind == NLMSG_ERROR:
                    (error,) = struct.unpack_from("=i", body)
                    if error:
                        raise NetlinkError(-error, os.strerror(-error))
                    continue
                out.append((msg_kind, body))


def _endpoint(family: int, raw: bytes, port: int) -> str:
    """``10.0.0.1:5201`` or ``[2001:db8::1]:5201`` as ``ss`` prints it (v4-mapped as v4)."""
    if family == socket.AF_INET:
        return f"{ipaddress.IPv4Address(raw[:4])}:{port}"
    address = ipaddress.IPv6Address(raw)
    if address.ipv4_mapped is not None:
        return f"{address.ipv4_mapped}:{port}"
    return f"[{address}]:{port}"


def _tcp_info(raw: bytes) -> dict[str, int]:
    return {
        name: struct.unpack_from("=" + fmt, raw, offset)[0]
        for name, (offset, fmt) in _TCP_INFO.items()
        if offset + struct.calcsize(fmt) <= len(raw)
    }


def _ss_fields(info: dict[str, int]) -> dict[str, str]:
    """The ``ss -i`` fields of a ``tcp_info``, each present where ``ss`` prints it."""
    fields: dict[str, str] = {}
    if info.get("snd_mss"):
        fields["mss"] = str(info["snd_mss"])
    if info.get("rtt"):
        fields["rtt"] = f"{info['rtt'] / 1000:g}/{info.get('rttvar', 0) / 1000:g}"
    if info.get("snd_cwnd"):
        fields["cwnd"] = str(info["snd_cwnd"])
    ssthresh = info.get("snd_ssthresh", _INFINITE_SSTHRESH)
    if ssthresh < 0xFFFF:
        fields["ssthresh"] = str(ssthresh)
    for name in ("bytes_sent", "bytes_retrans", "bytes_acked", "bytes_received"):
        if info.get(name):
            fields[name] = str(info[name])
    if info.get("data_segs_out"):
        fields["data_segs_out"] = str(info["data_segs_out"])
    if info.get("pacing_rate"):
        rate = f"{info['pacing_rate'] * 8}bps"
        maximum = info.get("max_pacing_rate", _UNSET_U64)
        if maximum and maximum != _UNSET_U64:
            rate += f"/{maximum * 8}bps"
        fields["pacing_rate"] = rate
    if info.get("unacked"):
        fields["unacked"] = str(info["unacked"])
    if info.get("retransmits") or info.get("total_retrans"):
        fields["retrans"] = f"{info.get('retransmits', 0)}/{info.get('total_retrans', 0)}"
    return fields


#: a socket as the sampler records it: state, local and peer endpoints, congestion
#: control, the ``ss -i`` fields
Socket = tuple[str, str, str, str | None, dict[str, str]]


def parse_tcp_sockets(messages: list[tuple[int, bytes]]) -> list[Socket]:
    """The sockets of a ``sock_diag`` dump (its messages' type and payload)."""
    sockets = []
    for _kind, body in messages:
        if len(body) < _DIAG_MSG_SIZE:
            continue
        family, state, _timer, _retrans = _DIAG_MSG.unpack_from(body)
        sport, dport, src, dst = _SOCKID.unpack_from(body, _DIAG_MSG.size)
        cc, fields = None, {}
        for kind, payload in _attributes(body, _DIAG_MSG_SIZE, len(body)):
            if kind == INET_DIAG_INFO:
                fields = _ss_fields(_tcp_info(payload))
            elif kind == INET_DIAG_CONG:
                cc = payload.split(b"\0", 1)[0].decode() or None
        name = STATE_NAMES[state] if state < len(STATE_NAMES) else "UNKNOWN"
        sockets.append(
            (name, _endpoint(family, src, sport), _endpoint(family, dst, dport), cc, fields)
        )
    return sockets


def tcp_sockets(states: int = DEFAULT_STATES) -> list[Socket]:
    """The TCP sockets (IPv4, IPv6) of the caller's network namespace, as ``ss -tin`` lists them."""
    messages = []
    ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_CONG - 1))
    for family in (socket.AF_INET, socket.AF_INET6):
        request = _DIAG_REQ.pack(family, socket.IPPROTO_TCP, ext, states) + bytes(_SOCKID_SIZE)
        messages += _dump(NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, request)
    return parse_tcp_sockets(messages)


def parse_qdiscs(messages: list[tuple[int, bytes]], ifindex: int) -> list[dict[str, object]]:
    """The qdiscs of interface ``ifindex`` in an ``RTM_GETQDISC`` dump, as ``tc -s -j`` has them."""
    out = []
    for kind, body in messages:
        if kind != RTM_NEWQDISC or len(body) < _TCMSG.size:
            continue
        _family, _p1, _p2, index, handle, _parent, _info = _TCMSG.unpack_from(body)
        if index != ifindex:
            continue
        entry: dict[str, object] = {"kind": None, "handle": f"{handle >> 16:x}:"}
        for attr, payload in _attributes(body, _TCMSG.size, len(body)):
            if attr == TCA_KIND:
                entry["kind"] = payload.split(b"\0", 1)[0].decode()
            elif attr == TCA_STATS2:
                for stat, value in _attributes(payload, 0, len(payload)):
                    if stat == TCA_STATS_BASIC and len(value) >= 12:
                        entry["bytes"], entry["packets"] = struct.unpack_from("=QI", value)
                    elif stat == TCA_STATS_PKT64 and len(value) >= 8:
                        (entry["packets"],) = struct.unpack_from("=Q", value)
                    elif stat == TCA_STATS_QUEUE and len(value) >= 20:
                        qlen, backlog, drops, requeues, overlimits = struct.unpack_from(
                            "=5I", value
                        )
                        entry.update(
                            qlen=qlen,
                            backlog=backlog,
                            drops=drops,
                            requeues=requeues,
                            overlimits=overlimits,
                        )
        out.append(entry)
    return out


def qdiscs(devices: list[str]) -> dict[str, list[dict[str, object]]]:
    """Each interface's qdiscs and their counters (one dump for all of them)."""
    messages = _dump(NETLINK_ROUTE, RTM_GETQDISC, _TCMSG.pack(socket.AF_UNSPEC, 0, 0, 0, 0, 0, 0))
    return {dev: parse_qdiscs(messages, socket.if_nametoindex(dev)) for dev in devices}
