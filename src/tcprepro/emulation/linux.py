"""The Linux side of the emulation: tc commands, TCP sysctls, and output parsers.

This module owns how one planned link direction becomes Linux queueing
disciplines, how the scenario's TCP settings become sysctls and route metrics,
and how ``tc -s -j qdisc show`` and ``ss -tin`` output is read back. It runs
nothing itself (the topology and the sampler do), so every function is a pure
function a test can check without root.

One shaped direction (the egress interface of the sending side)::

    root  netem delay <d> [loss <p>] limit <huge>     only when delay or loss > 0
      └── htb, one class: rate = ceil = <rate>, small burst
            └── pfifo limit <buffer_pkts>              (or codel / fq_codel / sfq)

Why this shape:

- the buffer is a fifo under htb, and the delay a netem whose limit never
  binds: netem's own packet limit also counts the packets travelling its delay
  line, so using it as the buffer (Mininet's ``max_queue_size``) starves
  long-RTT links (a 50 Mb/s link fell to 25 % with 100 packets and 100 ms);
- a delay element in front of a FIFO server gives the same departure times as
  one behind it (the queue is time-invariant), so putting netem at the root
  changes no packet timing, only where the delay is spent;
- offloads (TSO/GSO/GRO) are switched off by the topology: with them a
  "100-packet" fifo holds 64 KB super-packets.

Differences from ns-3 that remain (see the README):

- htb releases a packet when its tokens allow and veth delivers it at once, so
  a packet arrives one serialisation time (size / rate) earlier than over
  ns-3's store-and-forward point-to-point link; the queue itself is the same
  (``buffer_pkts`` waiting, plus the one being sent);
- htb counts Ethernet frames without preamble/FCS (14 header bytes), ns-3's
  point-to-point links a 2-byte PPP header: each backend's goodput capacity
  uses its own overhead (:data:`ETHERNET_HEADER_BYTES`);
- the random loss of a direction (netem) hits packets before the queue,
  ns-3's error model after it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tcprepro.errors import ConfigError
from tcprepro.network_plan import PlannedDirection
from tcprepro.scenario import Scenario, StackSettings, TcpSettings, TransferGenerator, VariantConfig
from tcprepro.variants import QDISCS, get_variant, params_key

__all__ = [
    "DELAYED_ACK_COUNTS",
    "EMULATED_LINUX_QDISCS",
    "ETHERNET_HEADER_BYTES",
    "NETEM_HEADROOM_PKTS",
    "SFQ_DIVISOR",
    "SFQ_FLOWS",
    "SFQ_MAX_DEPTH_PKTS",
    "SsSocket",
    "boot_module_arguments",
    "delayed_ack_metrics",
    "egress_commands",
    "emulated_qdiscs",
    "frame_bytes",
    "host_sysctls",
    "htb_burst_bytes",
    "in_flight_bytes",
    "leaf_qdisc",
    "module_parameters",
    "mtu_bytes",
    "needs_netem",
    "parse_netstat",
    "parse_ss",
    "parse_tc_qdiscs",
    "qdisc_counters",
    "route_metrics",
    "sample_qdiscs",
    "sample_sockets",
    "scenario_congestion_controls",
    "sfq_arguments",
]

#: bytes htb and ``tc`` count per packet on top of the IP packet (Ethernet header)
ETHERNET_HEADER_BYTES = 14
#: packets netem may hold on top of the buffer: more than any window fits (4 MiB / 64 B)
NETEM_HEADROOM_PKTS = 65536
#: the delayed-ACK factors b (``tcp.delayed_ack_count``) Linux can be asked for, and the
#: route metrics that give each: Linux's receiver ACKs every second full-sized segment by
#: default (b = 2); the route metric ``quickack 1`` keeps it in quick-ACK mode, an ACK per
#: segment (b = 1). No other b has a Linux setting.
DELAYED_ACK_COUNTS = {1: ["quickack", "1"], 2: []}
#: Linux's cap on the packets one sfq flow may hold (SFQ_MAX_DEPTH in net/sched/sch_sfq.c)
SFQ_MAX_DEPTH_PKTS = 127
#: sfq's hash table size: its largest (a power of two up to 65536). With the 100
#: background flows of study B and a few TCP flows, two flows share a bucket (and one
#: DRR queue) with probability about n^2 / (2 x 65536) = 8 %, against 5 expected
#: collisions with the default 1024 buckets
SFQ_DIVISOR = 65536
#: sfq's flow slots: each occupied slot holds at least one packet and sfq enqueues before
#: it drops, so buffer_pkts + 1 <= 128 slots (buffer_pkts <= SFQ_MAX_DEPTH_PKTS) suffice
SFQ_FLOWS = SFQ_MAX_DEPTH_PKTS + 1


def mtu_bytes(tcp: TcpSettings) -> int:
    """Interface MTU that makes Linux TCP send segments of exactly ``tcp.mss`` bytes."""
    return tcp.packet_bytes


def frame_bytes(tcp: TcpSettings) -> int:
    """Bytes htb counts for one full data segment (IP packet + Ethernet header)."""
    return mtu_bytes(tcp) + ETHERNET_HEADER_BYTES


def needs_netem(direction: PlannedDirection) -> bool:
    """True when the direction has a delay or a random loss (netem's job)."""
    return direction.delay_s > 0 or direction.loss_rate > 0


def htb_burst_bytes(rate_bps: float, frame: int) -> int:
    """The htb burst: one frame, or 1 ms at line rate on fast links (fewer timer wake-ups).

    A small burst keeps htb close to a constant-rate server; at 10 Mb/s a burst
    of one frame means at most one packet leaves early after an idle period.
    """
    return max(frame, math.ceil(rate_bps * 1e-3 / 8))


def sfq_arguments(direction: PlannedDirection, frame: int, where: str = "") -> list[str]:
    """``tc`` arguments of sfq as the Linux twin of PFQ/LQD (``pfq_lqd``).

    Each parameter brings sfq closest to tcprepro's PFQ/LQD model:

    - ``limit B``: one buffer of ``buffer_pkts`` packets shared by every flow; when
      it is full sfq drops from the flow with the most packets (ties: the flow of the
      packet that just arrived, the first in sfq's list of that depth), as LQD;
    - ``depth B``: one flow may fill the whole shared buffer, as under LQD; Linux
      caps the depth at 127 packets, so a larger buffer is refused (below);
    - ``headdrop`` when the queue's ``DropFront`` is true (study B's stack profile: the
      thesis recommends LQD with FrontDrop): sfq then drops the longest flow's *first*
      packet; without it, its *last* packet (or the arriving one), as PfqLqdQueueDisc
      with ``DropFront = false``;
    - ``perturb 0``: the flow hash keeps its key for the whole run (a periodic
      rehash would move flows between queues mid-run);
    - ``divisor 65536`` (:data:`SFQ_DIVISOR`): flows rarely share a hash bucket,
      where PFQ/LQD tells every 5-tuple apart;
    - ``flows 128`` (:data:`SFQ_FLOWS`): never short of slots for B <= 127;
    - ``quantum`` one full frame (``frame`` bytes, as htb counts it): each flow
      sends up to one full-sized packet per round, PFQ's equal weights in bytes.

    What stays different: sfq is deficit round robin, without PFQ's priority queue
    for flows below their fair rate (a background packet waits for at most one
    round of the backlogged flows instead of none), and its flows are hash buckets.

    Raises
    ------
    ConfigError
        When ``buffer_pkts`` exceeds 127 packets (naming the field): sfq could not
        let one flow hold the whole buffer, which LQD allows.
    """
    if direction.buffer_pkts > SFQ_MAX_DEPTH_PKTS:
        place = where.removesuffix(" qdisc") if where else "topology"
        raise ConfigError(
            f"{place} buffer_pkts: {direction.buffer_pkts} packets with qdisc pfq_lqd; its "
            f"Linux twin sfq holds at most {SFQ_MAX_DEPTH_PKTS} packets per flow, where "
            "LQD lets one flow fill the whole shared buffer: emulate buffers of at most "
            f"{SFQ_MAX_DEPTH_PKTS} packets"
        )
    buffer = str(direction.buffer_pkts)
    head = (
        ["headdrop"] if str(dict(direction.qdisc_params).get("DropFront")).lower() == "true" else []
    )
    return [
        "sfq",
        *head,
        "limit",
        buffer,
        "depth",
        buffer,
        "flows",
        str(SFQ_FLOWS),
        "divisor",
        str(SFQ_DIVISOR),
        "perturb",
        "0",
        "quantum",
        str(frame),
    ]


#: the Linux queue disciplines the emulation sets up, named by the registry's
#: ``Qdisc.linux_qdisc`` (tcprepro.variants): the first three take the buffer as their
#: ``limit``, sfq as above. A Linux kind missing here (red: ns-3's defaults have no
#: faithful Linux parameters yet) is not emulated.
EMULATED_LINUX_QDISCS = ("pfifo", "codel", "fq_codel", "sfq")


#: ns-3 queue-disc attributes a Linux qdisc takes over: PFQ/LQD's drop side (sfq headdrop)
MAPPED_QDISC_PARAMS = {"sfq": {"DropFront"}}


def emulated_qdiscs() -> list[str]:
    """The scenario queue disciplines the emulation maps to Linux (registry order)."""
    return [q.name for q in QDISCS.values() if q.linux_qdisc in EMULATED_LINUX_QDISCS]


def leaf_qdisc(direction: PlannedDirection, where: str = "", frame: int | None = None) -> list[str]:
    """``tc`` arguments of the buffer qdisc of a direction (``pfifo limit B`` ...).

    The Linux qdisc is the registry's ``linux_qdisc`` (:data:`tcprepro.variants.QDISCS`);
    ``frame`` is the bytes of one full-sized frame (sfq's quantum; default: the
    frame of a 1500-byte packet).

    Raises
    ------
    ConfigError
        For a queue discipline the emulation does not map (its parameters
        have no faithful Linux equivalent yet), or a buffer the Linux twin cannot
        hold (sfq: more than 127 packets).
    """
    qdisc = QDISCS.get(direction.qdisc)
    kind = qdisc.linux_qdisc if qdisc else None
    if kind not in EMULATED_LINUX_QDISCS:
        supported = ", ".join(emulated_qdiscs())
        raise ConfigError(
            f"{where or 'qdisc'}: {direction.qdisc!r} is not supported by the Mininet "
            f"backend (supported: {supported})"
        )
    unmapped = sorted(set(dict(direction.qdisc_params)) - MAPPED_QDISC_PARAMS.get(kind, set()))
    if unmapped:
        raise ConfigError(
            f"{where or 'qdisc_params'}: qdisc_params {', '.join(unmapped)} are ns-3 "
            "attributes the Mininet backend cannot map"
        )
    if kind == "sfq":
        return sfq_arguments(direction, frame or 1500 + ETHERNET_HEADER_BYTES, where)
    return [kind, "limit", str(direction.buffer_pkts)]


def egress_commands(dev: str, direction: PlannedDirection, tcp: TcpSettings) -> list[list[str]]:
    """The ``tc`` commands (argv lists) that shape one direction on interface ``dev``."""
    frame = frame_bytes(tcp)
    commands: list[list[str]] = []
    parent = ["root"]
    if needs_netem(direction):
        netem = [
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "root",
            "handle",
            "1:",
            "netem",
            "delay",
            f"{round(direction.delay_s * 1e6)}us",
            "limit",
            str(direction.buffer_pkts + NETEM_HEADROOM_PKTS),
        ]
        if direction.loss_rate > 0:
            netem += ["loss", "random", f"{direction.loss_rate * 100:.6g}%"]
        commands.append(netem)
        parent = ["parent", "1:1"]
    burst = htb_burst_bytes(direction.rate_bps, frame)
    rate = f"{round(direction.rate_bps)}bit"
    commands += [
        ["tc", "qdisc", "add", "dev", dev, *parent, "handle", "2:", "htb", "default", "1"],
        [
            "tc",
            "class",
            "add",
            "dev",
            dev,
            "parent",
            "2:",
            "classid",
            "2:1",
            "htb",
            "rate",
            rate,
            "ceil",
            rate,
            "burst",
            f"{burst}b",
            "cburst",
            f"{burst}b",
            "quantum",
            str(frame),
        ],
        [
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "parent",
            "2:1",
            "handle",
            "3:",
            *leaf_qdisc(direction, frame=frame),
        ],
    ]
    return commands


def host_sysctls(
    tcp: TcpSettings, router: bool, stack: StackSettings | None = None
) -> dict[str, str]:
    """Per-namespace sysctls implementing the TCP settings (and forwarding on routers).

    ``tcp_no_metrics_save`` keeps one run's RTT/ssthresh cache out of the next (each run
    has new namespaces, whose metrics start empty); the buffer maxima let autotuning
    (and iperf3 ``-w``) reach the scenario's socket buffers. The testbed profile's
    ``stack.linux_sysctls`` come last (its host cache, pacing ratios, DSACK...).
    """
    out = {
        "net.ipv4.tcp_sack": str(int(tcp.sack)),
        "net.ipv4.tcp_timestamps": str(int(tcp.timestamps)),
        "net.ipv4.tcp_window_scaling": str(int(tcp.window_scaling)),
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_ecn": "0",
        "net.ipv4.tcp_wmem": f"4096 16384 {max(tcp.send_buffer, 16384) * 2}",
        "net.ipv4.tcp_rmem": f"4096 131072 {max(tcp.recv_buffer, 131072) * 2}",
        "net.ipv4.ip_forward": "1" if router else "0",
        "net.ipv4.conf.all.rp_filter": "0",
        "net.ipv4.conf.default.rp_filter": "0",
    }
    if stack is not None:
        out.update({name.replace("/", "."): value for name, value in stack.linux_sysctls.items()})
    return out


def module_parameters(scenario: Scenario) -> dict[str, str]:
    """``/sys/module`` parameter files and values the testbed profile sets for a run.

    Only the modules of the congestion controls the run uses
    (:func:`scenario_congestion_controls`): ``tcp_cubic``'s parameters for a run with a
    ``cubic`` flow. They are kernel-wide, so a run sets them and puts them back
    (:mod:`tcprepro.emulation.network`).
    """
    stack = scenario.stack
    if stack is None:
        return {}
    used = {f"tcp_{name}" for name in scenario_congestion_controls(scenario)}
    return {
        f"/sys/module/{module}/parameters/{name}": str(
            int(value) if isinstance(value, bool) else value
        )
        for module, params in sorted(stack.linux_modules.items())
        if module in used
        for name, value in sorted(params.items())
    }


def boot_module_arguments(parameters: Mapping[str, str]) -> list[str]:
    """Kernel command-line arguments giving built-in modules their parameters at boot.

    A parameter written at run time misses what a module computes once when it registers
    (``tcp_cubic``'s TCP-friendly slope from ``beta``); a UML boot passes them on its
    command line as well (``tcp_cubic.beta=819``).
    """
    out = []
    for path, value in parameters.items():
        module, _, name = path.removeprefix("/sys/module/").partition("/parameters/")
        out.append(f"{module}.{name}={value}")
    return out


def delayed_ack_metrics(tcp: TcpSettings) -> list[str]:
    """``ip route`` metrics giving the scenario's delayed-ACK factor b (``tcp.delayed_ack_count``).

    b = 2 is Linux's default (an ACK for every second full-sized segment, or when
    the delayed-ACK timer fires); b = 1 is ``quickack 1`` (ip-route(8)): the
    receiver ACKs every segment at once. The metric is read from the route of the
    receiving socket (towards its peer), so it is set on every node's routes, as
    ns-3 sets ``DelAckCount`` on every socket.

    Raises
    ------
    ConfigError
        For any other b (naming ``tcp.delayed_ack_count``): Linux has no setting
        for it, and emulating another factor silently would compare different
        receivers.
    """
    metrics = DELAYED_ACK_COUNTS.get(tcp.delayed_ack_count)
    if metrics is None:
        offered = " or ".join(str(b) for b in DELAYED_ACK_COUNTS)
        raise ConfigError(
            f"tcp.delayed_ack_count: {tcp.delayed_ack_count} has no Linux equivalent (the "
            f"emulation offers {offered}: 2 is Linux's default delayed ACK, 1 the route "
            "metric quickack 1)"
        )
    return list(metrics)


def route_metrics(tcp: TcpSettings) -> list[str]:
    """``ip route`` metrics for the initial window, minimum RTO and delayed-ACK factor.

    Raises
    ------
    ConfigError
        For a ``tcp.delayed_ack_count`` Linux cannot give (:func:`delayed_ack_metrics`).
    """
    return [
        "initcwnd",
        str(tcp.initial_cwnd_pkts),
        # Linux's RTO is srtt + max(4 mdev, rto_min): rto_min plays ns-3's ClockGranularity
        # (tcp.rto_granularity) and, without one, its minimum RTO
        "rto_min",
        f"{max(1, round(tcp.rto_floor_s * 1000))}ms",
        *delayed_ack_metrics(tcp),
    ]


# ---------------------------------------------------------------------------
# Parsers


def parse_tc_qdiscs(text: str) -> dict[str, dict[str, object]]:
    """Read ``tc -s -j qdisc show dev X``: handle (``"3:"``) -> kind and counters."""
    text = text.strip()
    return qdisc_counters(json.loads(text)) if text else {}


def qdisc_counters(entries: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, object]]:
    """Qdiscs as ``tc -s -j`` lists them, or the sampler's netlink read of them.

    Handle (``"3:"``) -> kind and counters.
    """
    out: dict[str, dict[str, object]] = {}
    for entry in entries:
        out[str(entry.get("handle", ""))] = {
            "kind": entry.get("kind"),
            "bytes": int(entry.get("bytes", 0)),
            "packets": int(entry.get("packets", 0)),
            "drops": int(entry.get("drops", 0)),
            "backlog_bytes": int(entry.get("backlog", 0)),
            "qlen_pkts": int(entry.get("qlen", 0)),
        }
    return out


def parse_netstat(text: str) -> dict[str, dict[str, int]]:
    """Read ``/proc/net/netstat``: ``{"TcpExt": {"TCPTimeouts": 3, ...}, "IpExt": {...}}``.

    Each group is a line of names and a line of values with the same ``Group:``
    prefix. ``TcpExt.TCPTimeouts`` counts the retransmission timeouts that expired
    in the namespace (back-offs included), as ns-3's ``rto_count``.
    """
    out: dict[str, dict[str, int]] = {}
    lines = [line.split() for line in text.splitlines() if line.strip()]
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if not names or names[0] != values[0] or not names[0].endswith(":"):
            continue
        group: dict[str, int] = {}
        for name, value in zip(names[1:], values[1:], strict=False):
            try:
                group[name] = int(value)
            except ValueError:
                continue
        out[names[0][:-1]] = group
    return out


#: ``ss`` fields printed as "name value" rather than "name:value"
_SS_SPACED = {"send", "pacing_rate", "delivery_rate"}
#: bare flags ss prints before the congestion-control name
_SS_FLAGS = {"ts", "sack", "ecn", "ecnseen", "fastopen", "ecn_flags", "app_limited"}


@dataclass
class SsSocket:
    """One TCP socket as ``ss -tin`` prints it."""

    state: str
    local: str
    peer: str
    cc: str | None = None
    fields: dict[str, str] = field(default_factory=dict)

    def number(self, name: str, default: float = math.nan) -> float:
        """A numeric field (``cwnd``, ``bytes_received``, ...); ``default`` when absent."""
        value = self.fields.get(name)
        if value is None:
            return default
        try:
            return float(value.split("/")[0].split(",")[0].rstrip("ms"))
        except ValueError:
            return default

    def pair(self, name: str) -> tuple[float, float]:
        """A ``a/b`` field (``retrans:0/12``, ``rtt:41.2/3.1``) as two numbers (NaN if absent)."""
        value = self.fields.get(name)
        if value is None or "/" not in value:
            return math.nan, math.nan
        first, second = value.split("/", 1)
        return float(first), float(second)


def max_pacing_bps(sock: SsSocket) -> float:
    """The socket's SO_MAX_PACING_RATE in bit/s, NaN when unset.

    ``ss`` prints ``pacing_rate <rate>`` for every socket, and ``pacing_rate
    <rate>/<max>`` once a maximum is set: on a kernel without the ``fq`` qdisc, setting
    one is what turns TCP's internal pacing on for a congestion control that does not
    ask for it (Reno, CUBIC...).
    """
    value = sock.fields.get("pacing_rate", "")
    if "/" not in value:
        return math.nan
    return _bits_per_second(value.split("/", 1)[1])


def _bits_per_second(text: str) -> float:
    """``12.5Mbps`` -> 12.5e6 (ss's rate notation); NaN when unreadable."""
    match = re.fullmatch(r"([\d.]+)([KMGT]?)bps", text)
    if not match:
        return math.nan
    return float(match.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[match.group(2)]


def _normalise(endpoint_text: str) -> str:
    """``[::ffff:10.0.1.2]:5201`` (an IPv4 peer of a dual-stack socket) -> ``10.0.1.2:5201``."""
    if endpoint_text.startswith("[::ffff:"):
        address, _, port = endpoint_text[len("[::ffff:") :].partition("]:")
        return f"{address}:{port}"
    return endpoint_text


def _split_endpoint_line(line: str) -> tuple[str, str, str] | None:
    parts = line.split()
    if len(parts) < 5:
        return None
    return parts[0], _normalise(parts[3]), _normalise(parts[4])


def parse_ss(text: str) -> list[SsSocket]:
    """Read ``ss -tinH`` output (a socket line, then an indented info line)."""
    sockets: list[SsSocket] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            parsed = _split_endpoint_line(line)
            if parsed is not None:
                sockets.append(SsSocket(*parsed))
            continue
        if not sockets:
            continue
        sock = sockets[-1]
        tokens = line.split()
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token in _SS_SPACED and i + 1 < len(tokens):
                sock.fields[token] = tokens[i + 1]
                i += 2
                continue
            if ":" in token and not token.startswith("("):
                key, value = token.split(":", 1)
                sock.fields[key] = value
            elif sock.cc is None and token not in _SS_FLAGS and token.isidentifier():
                sock.cc = token
            i += 1
    return sockets


def in_flight_bytes(sock: SsSocket, mss: float) -> float:
    """Payload bytes the sender has sent and not yet had cumulatively acknowledged.

    From the byte counters of ``tcp_info`` that ``ss -ti`` prints (Linux >= 4.1
    for ``bytes_acked``, >= 4.19 for ``bytes_sent``/``bytes_retrans``):
    ``bytes_sent`` counts every payload byte transmitted, retransmissions
    included, ``bytes_retrans`` the retransmitted ones and ``bytes_acked`` those
    cumulatively acknowledged, so ``bytes_sent - bytes_retrans - bytes_acked``
    is ``snd_nxt - snd_una``: the send window in use (the thesis's FE). Without
    ``bytes_sent`` (an older kernel, or nothing sent yet) it is ``unacked``
    (segments in flight) x MSS. ``ss`` omits a counter that is zero, so a
    socket that prints neither has nothing in flight (0).
    """
    sent = sock.number("bytes_sent")
    if not math.isnan(sent):
        acked = sock.number("bytes_acked", 0.0)
        retrans = sock.number("bytes_retrans", 0.0)
        return max(0.0, sent - retrans - acked)
    return sock.number("unacked", 0.0) * mss


def endpoint(ip: str, port: int) -> str:
    """``ss``'s spelling of an IPv4 endpoint."""
    return f"{ip}:{port}"


def sample_sockets(sample: Mapping[str, Any]) -> list[SsSocket]:
    """The TCP sockets of a sampler's sample: read over netlink, or ``ss -tinH``'s text."""
    if "sockets" in sample:
        return [
            SsSocket(state, local, peer, cc, dict(fields))
            for state, local, peer, cc, fields in sample["sockets"]
        ]
    return parse_ss(sample.get("ss", ""))


def sample_qdiscs(sample: Mapping[str, Any], dev: str) -> dict[str, dict[str, object]] | None:
    """Interface ``dev``'s qdiscs in a sampler's sample (None when not sampled there)."""
    if dev in sample.get("qdiscs", {}):
        return qdisc_counters(sample["qdiscs"][dev])
    if dev in sample.get("tc", {}):
        return parse_tc_qdiscs(sample["tc"][dev])
    return None


def find_socket(sockets: Iterable[SsSocket], local: str, peer: str) -> SsSocket | None:
    """The socket with this local and peer endpoint, if listed."""
    for sock in sockets:
        if sock.local == local and sock.peer == peer:
            return sock
    return None


def congestion_control(variant: VariantConfig, field: str) -> str:
    """The Linux module that runs a flow's or generator's variant (``field`` names it).

    A variant with ns-3 parameters runs only where a Linux module is that variant with
    those parameters (``Variant.linux_with_params``: AIMD 1/2 is ``reno``, MIMD 100/3
    ``scalable``).

    Raises
    ------
    ConfigError
        When the variant has no Linux implementation, or sets ns-3 parameters that no
        Linux module has (Linux congestion controls take theirs from module options, which
        the emulation does not set).
    """
    registered = get_variant(variant.name)
    if variant.params:
        key = params_key(variant.params)
        if key in registered.linux_with_params:
            return registered.linux_with_params[key]
        offered = "; ".join(f"{k} ({name})" for k, name in registered.linux_with_params.items())
        raise ConfigError(
            f"{field}.params: {registered.name} with {key} has no Linux module"
            + (f"; Linux has it with {offered}" if offered else "")
            + " (Linux congestion controls take their parameters from module options, which "
            "the emulation does not set)"
        )
    if not registered.linux_name:
        raise ConfigError(
            f"{field}: {registered.name} has no Linux implementation; the Mininet backend "
            "cannot run it"
            + (
                f" (it can with params {', '.join(registered.linux_with_params)})"
                if registered.linux_with_params
                else ""
            )
        )
    return registered.linux_name


def scenario_congestion_controls(scenario: Scenario) -> set[str]:
    """The Linux modules the scenario's flows and transfer generators use.

    Raises
    ------
    ConfigError
        When one of their variants has no Linux module (:func:`congestion_control`),
        naming its field.
    """
    controls = {
        congestion_control(flow.variant, f"flows.{name}.variant")
        for name, flow in scenario.flows.items()
    }
    for name, generator in scenario.traffic.items():
        if isinstance(generator, TransferGenerator):
            controls.add(congestion_control(generator.variant, f"traffic.{name}.variant"))
    return controls
