"""The scenario model: what a scenario is, validated, typed and in SI units.

This module owns what a scenario *is*: a topology (links with rate, one-way
delay, buffer in packets and queue discipline per direction), TCP flows
(variant, endpoints, start time or random stagger, bulk or sized), TCP
settings, duration, warm-up, seed and repetitions. Both backends (ns-3 and
Mininet) run the same validated :class:`Scenario`.

Reading scenario files (``base:`` chains, ``--set`` overrides) is
:mod:`tcprepro.scenario_io`'s job; every error it raises is a
:class:`~tcprepro.errors.ConfigError` that names the offending field, before
anything runs.

Quantities carry units in the file (``"10Mbps"``, ``"42ms"``, ``"200kB"``) and
are stored in SI base units (bit/s, s, bytes) once validated.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    field_validator,
    model_serializer,
    model_validator,
)

from tcprepro import units
from tcprepro.errors import ConfigError
from tcprepro.variants import Qdisc, Variant, canonical_variant, get_qdisc, get_variant

__all__ = [
    "AccessTopology",
    "DumbbellTopology",
    "FlowConfig",
    "HostStack",
    "LinkDirection",
    "Scenario",
    "StackSettings",
    "TcpSettings",
    "VariantConfig",
    "goodput_capacity_bps",
]

# Validated quantities are floats/ints in SI units; they serialise back to text with
# their unit ("1e+07bps"), so a resolved scenario can be loaded again as it is.
Rate = Annotated[
    float,
    BeforeValidator(units.parse_rate),
    PlainSerializer(lambda v: f"{v!r}bps", return_type=str),
]
Duration = Annotated[
    float,
    BeforeValidator(units.parse_duration),
    PlainSerializer(lambda v: f"{v!r}s", return_type=str),
]
Size = Annotated[
    int, BeforeValidator(units.parse_size), PlainSerializer(lambda v: f"{v}B", return_type=str)
]
Frequency = Annotated[
    float,
    BeforeValidator(units.parse_frequency),
    PlainSerializer(lambda v: f"{v!r}/s", return_type=str),
]
Scalar = bool | int | float | str


def _without_unset(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data`` without ``key`` when it is None.

    A field added later and left unset serialises as before it existed, so resolved
    scenarios, cache keys and provenance of existing runs do not change.
    """
    if data.get(key) is None:
        data.pop(key, None)
    return data


class _Strict(BaseModel):
    """Base model: unknown keys are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class VariantConfig(_Strict):
    """A congestion control and its parameters (ns-3 attribute names)."""

    name: str
    params: dict[str, Scalar] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        canonical = canonical_variant(name)
        variant = get_variant(canonical)
        if not variant.available:
            raise ValueError(f"variant {canonical!r} is not available: {variant.status}")
        return canonical


class LinkDirection(_Strict):
    """One direction of a link: rate, one-way delay and its queue."""

    rate: Rate = Field(gt=0, description="transmission rate (bit/s), e.g. '10Mbps'")
    delay: Duration = Field(default=0.0, ge=0, description="one-way propagation delay (s)")
    buffer_pkts: int = Field(
        default=1000,
        ge=2,
        description="packets that may wait at the egress (not counting the one on the wire)",
    )
    qdisc: str = Field(default="fifo", description="queue discipline, see tcprepro.variants")
    qdisc_params: dict[str, Scalar] = Field(default_factory=dict)
    loss_rate: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="random loss probability of each packet (after the queue)",
    )

    @field_validator("qdisc")
    @classmethod
    def _known_qdisc(cls, name: str) -> str:
        qdisc = get_qdisc(name)
        if not qdisc.available:
            raise ValueError(f"queue discipline {name!r} is not available: {qdisc.status}")
        return name


class AccessTopology(_Strict):
    """client -- router -- server, with an asymmetric client-router bottleneck (study A).

    Nodes: ``client``, ``router``, ``server``. Traced link directions:
    ``down`` (router to client) and ``up`` (client to router).
    """

    kind: Literal["access"]
    downlink: LinkDirection
    uplink: LinkDirection
    server_link: LinkDirection = Field(
        default_factory=lambda: LinkDirection(rate="1Gbps", delay="0ms", buffer_pkts=1000),
        description="router <-> server link, same settings both ways",
    )

    @property
    def endpoints(self) -> tuple[str, ...]:
        """Names of the hosts flows may use."""
        return ("client", "server")


class SenderLink(_Strict):
    """Access link(s) of one sender group of a dumbbell."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    count: int | None = Field(default=None, ge=1, description="expand into name0..name{count-1}")
    rate: Rate = Field(default="1Gbps", gt=0, validate_default=True)
    delay: Duration = Field(default="0ms", ge=0, validate_default=True)
    buffer_pkts: int = Field(default=1000, ge=2)
    rtt: Duration | None = Field(
        default=None,
        gt=0,
        description="dumbbell sender group: round-trip propagation time of its paths to the "
        "receiver; sets delay (see DumbbellTopology)",
    )

    def names(self) -> list[str]:
        """Host names this entry creates."""
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]


class DumbbellTopology(_Strict):
    """N senders -- left router == bottleneck == right router -- receiver.

    Traced link directions: ``bottleneck`` (left to right) and ``reverse``.

    Round-trip times and BDP-relative buffers (study C): a sender group may give
    ``rtt``, the round-trip propagation time of its paths to the receiver, instead
    of ``delay``; its access delay is then (rtt - bottleneck delay - reverse delay
    - 2 x receiver delay) / 2. ``buffer_bdp`` sets the bottleneck buffer as a
    fraction of the bandwidth-delay product C x min RTT over the ``bdp_senders``
    groups (default: all); the scenario converts it to ``bottleneck.buffer_pkts``
    with its packet size (MSS + TCP/IP headers), see :meth:`Scenario.bdp_pkts`.
    """

    kind: Literal["dumbbell"]
    bottleneck: LinkDirection
    reverse: LinkDirection | None = Field(
        default=None, description="right-to-left direction; default: same rate and delay"
    )
    senders: list[SenderLink] = Field(min_length=1)
    receiver: SenderLink = Field(default_factory=lambda: SenderLink(name="receiver"))
    buffer_bdp: float | None = Field(
        default=None,
        gt=0,
        le=100,
        description="bottleneck buffer as a fraction of the BDP C x min RTT (of bdp_senders)",
    )
    bdp_senders: list[str] | None = Field(
        default=None, min_length=1, description="sender groups whose RTTs define the BDP"
    )

    @property
    def sender_names(self) -> list[str]:
        """Names of every sender host, in order."""
        return [name for group in self.senders for name in group.names()]

    @property
    def endpoints(self) -> tuple[str, ...]:
        """Names of the hosts flows may use."""
        return (*self.sender_names, self.receiver.name)

    @property
    def sender_groups(self) -> dict[str, list[str]]:
        """Host names of each sender group, by the group's name."""
        return {group.name: group.names() for group in self.senders}

    @model_validator(mode="after")
    def _unique_names(self) -> DumbbellTopology:
        names = list(self.endpoints)
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"host names must be unique, repeated: {', '.join(duplicates)}")
        return self

    # ---- round-trip times and the BDP (study C) ---------------------------

    @property
    def _fixed_rtt_s(self) -> float:
        """Round-trip propagation time outside the sender's access link (s)."""
        reverse = self.reverse.delay if self.reverse is not None else self.bottleneck.delay
        return self.bottleneck.delay + reverse + 2 * self.receiver.delay

    def path_rtt_s(self, group: str) -> float:
        """Round-trip propagation time between a sender group's hosts and the receiver (s)."""
        for entry in self.senders:
            if entry.name == group:
                return 2 * entry.delay + self._fixed_rtt_s
        raise KeyError(group)

    @property
    def bdp_rtt_s(self) -> float:
        """Smallest RTT of the ``bdp_senders`` groups (all groups by default), in s."""
        groups = self.bdp_senders or [entry.name for entry in self.senders]
        return min(self.path_rtt_s(group) for group in groups)

    @model_validator(mode="after")
    def _derive_rtt_delays(self) -> DumbbellTopology:
        if self.receiver.rtt is not None:
            raise ValueError("receiver.rtt: only sender groups take an rtt")
        known = [entry.name for entry in self.senders]
        unknown = [g for g in self.bdp_senders or [] if g not in known]
        if unknown:
            raise ValueError(f"bdp_senders: unknown sender groups {unknown}; groups: {known}")
        senders = []
        for i, entry in enumerate(self.senders):
            if entry.rtt is None:
                senders.append(entry)
                continue
            delay = (entry.rtt - self._fixed_rtt_s) / 2
            if delay < 0:
                raise ValueError(
                    f"senders[{i}].rtt: {entry.rtt * 1000:g} ms is shorter than the round trip "
                    f"outside the access link ({self._fixed_rtt_s * 1000:g} ms)"
                )
            if "delay" in entry.model_fields_set and not np.isclose(entry.delay, delay):
                raise ValueError(f"senders[{i}]: give rtt or delay, not both")
            senders.append(entry.model_copy(update={"delay": delay}))
        return self.model_copy(update={"senders": senders})


Topology = Annotated[AccessTopology | DumbbellTopology, Field(discriminator="kind")]


class UniformStart(_Strict):
    """A start time drawn uniformly in [low, high] for each repetition."""

    uniform: tuple[Duration, Duration]

    @model_validator(mode="after")
    def _ordered(self) -> UniformStart:
        low, high = self.uniform
        if low < 0 or high < low:
            raise ValueError("uniform start needs 0 <= low <= high")
        return self


class _Endpoints(_Strict):
    """Where traffic goes: ``direction`` (access topology) or ``src``/``dst`` hosts."""

    direction: Literal["down", "up"] | None = Field(
        default=None, description="access topology: down = server->client, up = client->server"
    )
    src: str | None = None
    dst: str | None = None


class FlowConfig(_Endpoints):
    """One TCP connection between two hosts (or ``count`` alike ones).

    With ``count``, the entry ``name`` stands for ``count`` connections named
    ``name0`` .. ``name{count-1}`` (0: none), each with its own random start;
    ``src`` may then name a dumbbell sender group, whose hosts they are spread
    over round-robin.
    """

    variant: VariantConfig
    start: UniformStart | Duration = Field(default=0.0, union_mode="left_to_right")
    size: Literal["bulk"] | Size = "bulk"
    pacing: bool = False
    count: int | None = Field(
        default=None, ge=0, description="this many alike connections name0.. (0: none)"
    )
    write_size: Size | None = Field(
        default=None,
        ge=128,
        description="bytes the emulated application hands the socket per write (iperf -l, "
        "the transfer sender's chunk); None: the tool's default (iperf 2 and iperf3: "
        "128 KiB, the transfer sender: 64 KiB). Linux 6.1 keeps a sender to a small "
        "SO_SNDBUF with large writes and not with small ones (docs/emulation.md); ns-3's "
        "sender keeps its send buffer full whatever the write size, and ignores it",
    )

    @model_serializer(mode="wrap")
    def _without_unset_write_size(self, handler: Any) -> dict[str, Any]:
        return _without_unset(handler(self), "write_size")

    @field_validator("start", mode="before")
    @classmethod
    def _nonnegative_start(cls, value: Any) -> Any:
        if isinstance(value, (str, int, float)) and units.parse_duration(value) < 0:
            raise ValueError("start time must be >= 0")
        return value

    @field_validator("size")
    @classmethod
    def _positive_size(cls, value: Any) -> Any:
        if value != "bulk" and value <= 0:
            raise ValueError("size must be 'bulk' or a positive size such as '2MB'")
        return value

    def latest_start(self) -> float:
        """Latest possible start time (s)."""
        return self.start.uniform[1] if isinstance(self.start, UniformStart) else self.start


class SizeLaw(_Strict):
    """Distribution of transfer sizes (bytes).

    ``fixed`` (``size``), ``exponential`` (``mean``), ``pareto`` (shape
    ``alpha`` > 1, scale ``min``, optional truncation ``max``: a bounded Pareto) or
    ``zipf`` (Zipf's rank-size law of exponent ``alpha`` > 0: the r-th largest of n
    sizes is proportional to r^-alpha, i.e. P(S > s) proportional to s^(-1/alpha), a
    Pareto law of index 1/alpha on [``min``, ``max``]; ``max`` is required when
    alpha >= 1, whose unbounded mean is infinite). For a Pareto or Zipf law, give
    ``min`` or ``mean`` (not both); a generator with a ``load`` may leave the scale
    open, and it is calibrated to that load.
    """

    law: Literal["fixed", "exponential", "pareto", "zipf"]
    size: Size | None = Field(default=None, gt=0)
    mean: Size | None = Field(default=None, gt=0)
    alpha: float | None = Field(default=None, gt=0)
    min: Size | None = Field(default=None, gt=0)
    max: Size | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _parameters(self) -> SizeLaw:
        allowed = {
            "fixed": {"size"},
            "exponential": {"mean"},
            "pareto": {"alpha", "min", "mean", "max"},
            "zipf": {"alpha", "min", "mean", "max"},
        }[self.law]
        given = {k for k in ("size", "mean", "alpha", "min", "max") if getattr(self, k) is not None}
        if given - allowed:
            extra = sorted(given - allowed)
            raise ValueError(f"a {self.law} law takes {sorted(allowed)}, not {extra}")
        if self.law == "pareto" and (self.alpha is None or self.alpha <= 1):
            raise ValueError("a pareto law needs alpha greater than 1")
        if self.law == "zipf":
            if self.alpha is None:
                raise ValueError("a zipf law needs alpha (its rank exponent, > 0)")
            if self.alpha >= 1 and self.max is None:
                raise ValueError("a zipf law with alpha >= 1 needs max (its mean is infinite)")
        if self.law in ("pareto", "zipf"):
            if self.min is not None and self.mean is not None:
                raise ValueError(f"give min or mean for a {self.law} law, not both")
            if self.min is not None and self.max is not None and self.max <= self.min:
                raise ValueError("max must exceed min")
        return self

    @property
    def tail_index(self) -> float | None:
        """Pareto index of a power law: P(S > s) ~ s^-index (pareto: alpha; zipf: 1/alpha)."""
        if self.alpha is None:
            return None
        return float(self.alpha) if self.law == "pareto" else 1.0 / float(self.alpha)


class TransferGenerator(_Endpoints):
    """Finite TCP transfers arriving as a Poisson process (web-like load).

    Give two of ``arrival_rate``, ``load`` and a size law whose mean is known;
    the third follows (:func:`tcprepro.traffic.calibrate`). ``load`` is the
    offered load as a fraction of the goodput capacity of the bottleneck
    direction the transfers cross: link rate x MSS / (MSS + TCP/IP
    headers). Each transfer is a new connection.
    """

    kind: Literal["poisson_transfers"]
    variant: VariantConfig
    arrival_rate: Frequency | None = Field(default=None, gt=0, description="arrivals per second")
    load: float | None = Field(default=None, gt=0, le=2)
    size: SizeLaw
    start: Duration = Field(default=0.0, ge=0, description="first possible arrival (s)")
    stop: Duration | None = Field(default=None, gt=0, description="last arrival (default: end)")
    max_rate: Rate | None = Field(
        default=None,
        gt=0,
        description="each transfer's sending socket paced at most at this rate (bit/s of "
        "payload; ns-3 from the end of the initial window, Linux from the 11th segment)",
    )
    request_bytes: Size | None = Field(
        default=None,
        gt=0,
        description="the receiving end of each transfer sends a request of this many bytes "
        "once the connection is up, and the sender answers only when it has it (a browser's "
        "request crossing the receiver's uplink); None: the sender starts at once",
    )

    @model_serializer(mode="wrap")
    def _without_unset_rate(self, handler: Any) -> dict[str, Any]:
        return _without_unset(_without_unset(handler(self), "max_rate"), "request_bytes")


class PacketGenerator(_Endpoints):
    """Poisson packet arrivals (UDP) at a given load, split over ``flows`` flows.

    ``load`` is the fraction of the bottleneck direction's link rate the packets
    occupy (``packet_size`` is the IP packet size). Each of the ``flows`` flows
    (distinct UDP ports) carries an equal share of the load.
    """

    kind: Literal["poisson_packets"]
    load: float = Field(gt=0, le=2)
    packet_size: Size = Field(default=1000, ge=64, le=9000)
    flows: int = Field(default=1, ge=1)
    start: Duration = Field(default=0.0, ge=0)
    stop: Duration | None = Field(default=None, gt=0)


Generator = Annotated[TransferGenerator | PacketGenerator, Field(discriminator="kind")]


#: TCP settings added for the testbed profiles; unset, they serialise as before they existed
TCP_PROFILE_KNOBS = (
    "ack_counting",
    "slow_start_ack_limit",
    "rto_granularity",
    "host_cache",
    "pacing_ss_ratio",
    "pacing_ca_ratio",
)


class TcpSettings(_Strict):
    """TCP settings shared by every socket of the scenario."""

    mss: Size = Field(default=1448, ge=64, le=9000, description="segment payload (bytes)")
    sack: bool = True
    timestamps: bool = True
    window_scaling: bool = True
    delayed_ack_count: int = Field(default=2, ge=1)
    delayed_ack_timeout: Duration = Field(
        default=0.2,
        gt=0,
        description="longest the receiver holds an ACK for fewer than delayed_ack_count "
        "segments (ns-3 TcpSocket::DelAckTimeout)",
    )
    initial_cwnd_pkts: int = Field(default=10, ge=1)
    send_buffer: Size = Field(default=4 * 1024 * 1024, gt=0)
    recv_buffer: Size = Field(default=4 * 1024 * 1024, gt=0)
    recovery: Literal["prr", "classic"] = "prr"
    min_rto: Duration = Field(default=1.0, gt=0)
    max_ssthresh_pkts: int | None = Field(
        default=None,
        ge=2,
        description="limited slow start (RFC 3742) above this many segments; None: off",
    )
    ack_counting: Literal["ack", "segment"] | None = Field(
        default=None,
        description="what the senders' window growth counts, in both phases (a stack may set "
        "it per variant and phase: stack.counting): 'ack' (one growth step per "
        "ACK, whatever it acknowledges: Linux 2.6 without tcp_abc), 'segment' (one per "
        "acknowledged full segment: byte counting, RFC 3465); None: each ns-3 model's own "
        "rule (TcpNewReno per ACK, TcpCubic per segment)",
    )
    slow_start_ack_limit: int | None = Field(
        default=None,
        ge=1,
        description="where slow start counts segments: most segments one ACK may add "
        "(RFC 3465's L; FreeBSD's net.inet.tcp.abc_l_var); None: no limit",
    )
    rto_granularity: Duration | None = Field(
        default=None,
        gt=0,
        description="the RTO is at least srtt + this (ns-3's ClockGranularity: RTO = "
        "max(min_rto, srtt + max(G, 4 rttvar))); None: ns-3's 1 ms",
    )
    host_cache: bool | None = Field(
        default=None,
        description="a connection's ssthresh and RTT are kept per (sender, destination) when "
        "it closes and seed the next connection to the same host (FreeBSD's TCP host "
        "cache, Linux's route metrics); None or false: every connection starts afresh",
    )
    pacing_ss_ratio: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="paced flows: pacing rate in slow start, % of cwnd/srtt (ns-3 and Linux: "
        "200); None: the stack's default",
    )
    pacing_ca_ratio: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="paced flows: pacing rate in congestion avoidance, % of cwnd/srtt (ns-3 "
        "and Linux: 120); None: the stack's default",
    )

    @model_serializer(mode="wrap")
    def _without_unset_profile_knobs(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        for key in TCP_PROFILE_KNOBS:
            _without_unset(data, key)
        return data

    @model_validator(mode="after")
    def _limit_needs_segment_counting(self) -> TcpSettings:
        if self.slow_start_ack_limit is not None and self.ack_counting is None:
            raise ValueError(
                "tcp.slow_start_ack_limit applies where growth counts segments: set "
                "tcp.ack_counting too"
            )
        return self

    @property
    def header_bytes(self) -> int:
        """IPv4 (20) + TCP (20) header bytes of a full data segment, + 12 with timestamps."""
        return 40 + (12 if self.timestamps else 0)

    @property
    def packet_bytes(self) -> int:
        """IP size of a full-sized data segment: MSS + :attr:`header_bytes`."""
        return self.mss + self.header_bytes

    @property
    def rto_floor_s(self) -> float:
        """The shortest RTO this stack can have: max(min_rto, rto_granularity)."""
        return max(self.min_rto, self.rto_granularity or 0.0)

    @model_validator(mode="after")
    def _delayed_ack_before_rto(self) -> TcpSettings:
        # ns-3 3.44 leaves a retransmission timeout with cwnd = 1 segment when the ACK that
        # ends the loss state covers exactly the recovery point (it grows cwnd by the
        # segments acked beyond that point: none). The lone segment sent next is ACKed only
        # when the receiver's delayed-ACK timer fires; if that timer is not shorter than the
        # minimum RTO, the RTO fires first, and the connection repeats this for the rest of
        # the run at one segment per RTO (README, "A stall in ns-3").
        if self.delayed_ack_timeout >= self.rto_floor_s:
            raise ValueError(
                f"tcp.delayed_ack_timeout ({self.delayed_ack_timeout:g} s) must be shorter "
                f"than the shortest RTO, max(tcp.min_rto, tcp.rto_granularity) "
                f"({self.rto_floor_s:g} s): otherwise ns-3 connections lock at "
                "one segment per retransmission timeout after a timeout"
            )
        return self


class TraceSettings(_Strict):
    """What the run records."""

    interval: Duration = Field(default=0.1, gt=0, description="sampling period (s)")
    congestion_state: list[str] = Field(
        default_factory=list,
        description="traced values of the congestion controls to sample (e.g. RenoCount)",
    )

    @field_validator("congestion_state")
    @classmethod
    def _source_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name.isidentifier():
                raise ValueError(f"{name!r} is not a trace source name")
        return names


class Note(_Strict):
    """A parameter the paper leaves open, or a deliberate deviation from it."""

    field: str
    kind: Literal["choice", "deviation"] = "choice"
    value: Scalar | None = None
    paper: str = ""
    reason: str


class HostStack(_Strict):
    """Another stack on the hosts that send one variant's flows (study A's Windows 7 end).

    ``socket`` holds ns-3 ``TcpSocket``/``TcpSocketBase`` attributes set on every socket of
    such a host: the ones it sends from and the ones it receives on (its delayed ACKs).
    """

    testbed: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    socket: dict[str, Scalar] = Field(default_factory=dict)
    ack_counting: Literal["ack", "segment"] | None = Field(
        default=None, description="this host's window growth rule (as tcp.ack_counting)"
    )

    @model_serializer(mode="wrap")
    def _without_unset_counting(self, handler: Any) -> dict[str, Any]:
        return _without_unset(handler(self), "ack_counting")


Counting = Literal["ack", "segment", "model"]


class GrowthCounting(_Strict):
    """What a variant's window growth counts in each phase, on this stack (see tcp.ack_counting)."""

    slow_start: Counting | None = None
    congestion_avoidance: Counting | None = None


class StackSettings(_Strict):
    """The testbed's TCP stack beyond ``tcp:``, resolved from its profile (``testbed:``).

    ``variants``: ns-3 attributes of each variant's model as that stack implemented it
    (FreeBSD's CUBIC beta, Vegas alpha and beta), under a flow's own ``params``;
    ``qdiscs``: the same for each queue discipline (study B's PFQ/LQD drops at the head),
    under a link direction's own ``qdisc_params``;
    ``counting``: what each variant's growth counts per phase where the stack's modules
    differ from ``tcp.ack_counting`` (Linux 2.6.16: Reno per byte in congestion avoidance,
    HighSpeed per ACK; "model": the ns-3 model's own rule);
    ``hosts``: the hosts that send a given variant's flows run another stack
    (:class:`HostStack`); ``linux_sysctls`` and ``linux_modules``: what the emulated
    Linux guest sets to approach the same stack (module parameters by module name).
    The profile files and what each value rests on: ``workflow/testbeds/``,
    ``docs/testbeds.md``.
    """

    testbed: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    variants: dict[str, dict[str, Scalar]] = Field(default_factory=dict)
    qdiscs: dict[str, dict[str, Scalar]] = Field(default_factory=dict)
    counting: dict[str, GrowthCounting] = Field(default_factory=dict)
    hosts: dict[str, HostStack] = Field(default_factory=dict)
    linux_sysctls: dict[str, str] = Field(default_factory=dict)
    linux_modules: dict[str, dict[str, Scalar]] = Field(default_factory=dict)

    @field_validator("variants", "counting", "hosts")
    @classmethod
    def _registry_names(cls, by_variant: dict[str, Any]) -> dict[str, Any]:
        return {canonical_variant(name): value for name, value in by_variant.items()}

    @field_validator("qdiscs")
    @classmethod
    def _known_qdiscs(cls, by_qdisc: dict[str, Any]) -> dict[str, Any]:
        for name in by_qdisc:
            get_qdisc(name)  # ValueError naming the known ones
        return by_qdisc

    @field_validator("linux_sysctls", mode="before")
    @classmethod
    def _sysctl_text(cls, values: Any) -> Any:
        # names in sysctl's slash form (net/ipv4/tcp_ecn), so that a dotted scenario path
        # (stack.linux_sysctls.net/ipv4/tcp_ecn) can name one
        if isinstance(values, Mapping):
            for key in values:
                if not isinstance(key, str) or "." in key or not key.startswith("net/"):
                    raise ValueError(
                        f"linux_sysctls: {key!r} must be a sysctl name in its slash form, "
                        "e.g. net/ipv4/tcp_no_metrics_save"
                    )
            return {key: str(value) for key, value in values.items()}
        return values


class Scenario(_Strict):
    """A validated scenario. Quantities are in SI base units."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    title: str = ""
    study: str | None = None
    topology: Topology
    flows: dict[str, FlowConfig] = Field(default_factory=dict)
    traffic: dict[str, Generator] = Field(
        default_factory=dict, description="generated traffic: finite transfers, Poisson packets"
    )
    tcp: TcpSettings = Field(default_factory=TcpSettings)
    duration: Duration = Field(gt=0, description="simulated time of one run (s)")
    warmup: Duration = Field(default=0.0, ge=0, description="excluded from measurements (s)")
    seed: int = Field(default=1, ge=1, le=2**31 - 1)
    repetitions: int = Field(default=1, ge=1)
    trace: TraceSettings = Field(default_factory=TraceSettings)
    stack: StackSettings | None = Field(
        default=None,
        description="the testbed's stack beyond tcp: (set from a profile by testbed:)",
    )
    notes: list[Note] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_unset_stack(self, handler: Any) -> dict[str, Any]:
        return _without_unset(handler(self), "stack")

    @field_validator("flows", "traffic")
    @classmethod
    def _flow_names(cls, flows: dict[str, Any]) -> dict[str, Any]:
        for name in flows:
            if not name or not name.replace("_", "").replace("-", "").isalnum():
                raise ValueError(f"name {name!r} must be letters, digits, '-' or '_'")
        return flows

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup:g} s) must be shorter than duration ({self.duration:g} s)"
            )
        if self.trace.interval > self.duration:
            raise ValueError("trace.interval must not exceed duration")
        if not self.traffic and all(f.count == 0 for f in self.flows.values()):
            raise ValueError("a scenario needs at least one flow or traffic entry")
        expanded = [
            instance
            for name, flow in self.flows.items()
            for instance in (
                [name] if flow.count is None else [f"{name}{k}" for k in range(flow.count)]
            )
        ]
        shared = sorted(
            {n for n in expanded if expanded.count(n) > 1} | (set(expanded) & set(self.traffic))
        )
        if shared:
            raise ValueError(f"flows and traffic share the names {shared}")
        endpoints = self.topology.endpoints
        groups = self.topology.sender_groups if isinstance(self.topology, DumbbellTopology) else {}
        entries: list[tuple[str, str, _Endpoints]] = [
            *((f"flows.{n}", n, f) for n, f in self.flows.items()),
            *((f"traffic.{n}", n, g) for n, g in self.traffic.items()),
        ]
        for where, name, entry in entries:
            if isinstance(self.topology, AccessTopology):
                if entry.direction is None and (entry.src is None or entry.dst is None):
                    raise ValueError(f"{where}: give a direction (down or up) or both src and dst")
            elif entry.direction is not None:
                raise ValueError(f"{where}.direction: only the access topology has directions")
            src, dst = self.endpoints_of(name)
            # a generator, or a flow entry with a count, may start from a sender group
            spread = where.startswith("traffic.") or getattr(entry, "count", None) is not None
            for role, host in (("src", src), ("dst", dst)):
                if host not in endpoints and not (spread and role == "src" and host in groups):
                    raise ValueError(
                        f"{where}.{role}: unknown host {host!r}; hosts: {', '.join(endpoints)}"
                    )
            if src == dst:
                raise ValueError(f"{where}: src and dst are the same host {src!r}")
            if isinstance(entry, FlowConfig):
                if entry.latest_start() >= self.duration:
                    raise ValueError(f"{where}.start: the flow would start after the run ends")
            elif entry.start >= min(entry.stop or self.duration, self.duration):
                raise ValueError(f"{where}.start: no arrival can happen before stop or the end")
        self.host_stacks()  # two stacks on one host are an error
        return self

    @model_validator(mode="after")
    def _stack_qdisc_params(self) -> Scenario:
        """Each link direction's queue takes its stack's parameters under its own."""
        if self.stack is None or not self.stack.qdiscs:
            return self
        topo = self.topology
        update = {}
        for name in type(topo).model_fields:
            direction = getattr(topo, name)
            if isinstance(direction, LinkDirection) and direction.qdisc in self.stack.qdiscs:
                params = {**self.stack.qdiscs[direction.qdisc], **direction.qdisc_params}
                update[name] = direction.model_copy(update={"qdisc_params": params})
        if not update:
            return self
        return self.model_copy(update={"topology": topo.model_copy(update=update)})

    @model_validator(mode="after")
    def _bdp_buffer(self) -> Scenario:
        topo = self.topology
        if not isinstance(topo, DumbbellTopology) or topo.buffer_bdp is None:
            return self
        pkts = self.bdp_pkts(topo.buffer_bdp)
        given = topo.bottleneck
        if "buffer_pkts" in given.model_fields_set and given.buffer_pkts != pkts:
            raise ValueError(
                f"topology.bottleneck.buffer_pkts ({given.buffer_pkts}) contradicts "
                f"topology.buffer_bdp ({topo.buffer_bdp:g} x BDP = {pkts} packets); give one"
            )
        bottleneck = given.model_copy(update={"buffer_pkts": pkts})
        return self.model_copy(
            update={"topology": topo.model_copy(update={"bottleneck": bottleneck})}
        )

    @property
    def packet_bytes(self) -> int:
        """IP size of a full-sized data segment: MSS + TCP/IP headers (+ timestamps)."""
        return self.tcp.packet_bytes

    def bdp_pkts(self, fraction: float = 1.0) -> int:
        """``fraction`` of the dumbbell's BDP C x min RTT, in full-sized packets (>= 2).

        C is the bottleneck rate, the RTT the smallest round-trip propagation time of
        the ``bdp_senders`` groups (:attr:`DumbbellTopology.bdp_rtt_s`); the buffer of
        the paper of study C, "a fraction of the BDP C·min(RTT1, RTT2)".
        """
        topo = self.topology
        if not isinstance(topo, DumbbellTopology):
            raise ValueError("the BDP is defined for the dumbbell topology only")
        bdp = topo.bottleneck.rate * topo.bdp_rtt_s / (8.0 * self.packet_bytes)
        return max(2, round(fraction * bdp))

    def endpoints_of(self, flow_name: str) -> tuple[str, str]:
        """Return (src, dst) host names of a flow or traffic generator.

        A generator's ``src`` (or that of a flow entry with a ``count``) may name a
        dumbbell sender group; its connections are then spread over the group's hosts.
        """
        flow = self.flows.get(flow_name) or self.traffic[flow_name]
        if flow.direction == "down":
            return flow.src or "server", flow.dst or "client"
        if flow.direction == "up":
            return flow.src or "client", flow.dst or "server"
        if isinstance(self.topology, DumbbellTopology):
            return flow.src or "", flow.dst or self.topology.receiver.name
        return flow.src or "", flow.dst or ""

    # ---- derived values -------------------------------------------------

    def resolved(self) -> dict[str, Any]:
        """Canonical, JSON-ready form (SI units written out), loadable again as a scenario.

        Provenance and cache keys use it.
        """
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """Canonical JSON text of :meth:`resolved` (sorted keys, no spaces)."""
        return json.dumps(self.resolved(), sort_keys=True, separators=(",", ":"))

    def cache_key(self, rep: int, backend: str, versions: Mapping[str, str]) -> str:
        """Hash of everything that changes a run's result.

        Covers the resolved scenario (which includes the seed), the repetition
        index, the backend and the given software versions; for ns-3, also the
        attributes the variant registry always sets for the variants the scenario
        runs (:attr:`tcprepro.variants.Variant.ns3_defaults`), when there are any,
        so that changing one reruns exactly the runs of that variant.
        """
        content: dict[str, Any] = {
            "scenario": self.resolved(),
            "rep": rep,
            "backend": backend,
            "versions": dict(versions),
        }
        defaults = self.ns3_variant_defaults() if backend == "ns3" else {}
        if defaults:
            content["variant_defaults"] = defaults
        payload = json.dumps(content, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()[:20]

    def variants_used(self) -> list[str]:
        """Registry names of the variants the scenario's flows and generators run, sorted."""
        used = {flow.variant.name for flow in self.flows.values()}
        used |= {gen.variant.name for gen in self.traffic.values() if hasattr(gen, "variant")}
        return sorted(used)

    def variant_params(self, variant: VariantConfig) -> dict[str, Scalar]:
        """A variant's ns-3 parameters on this scenario's stack: its profile's, then its own."""
        stack = self.stack.variants.get(variant.name, {}) if self.stack else {}
        return {**stack, **variant.params}

    def host_stacks(self) -> dict[str, HostStack]:
        """The hosts that run another stack (``stack.hosts``), by host name.

        A host runs the stack its flows' variant names (study A: a Compound flow's
        sender is a Windows 7 host, for its sending and its receiving sockets).

        Raises
        ------
        ConfigError
            When two flows of one host ask for different host stacks.
        """
        if self.stack is None or not self.stack.hosts:
            return {}
        chosen: dict[str, tuple[str, HostStack]] = {}
        entries = [(name, flow.variant.name) for name, flow in self.flows.items()]
        entries += [
            (name, gen.variant.name)
            for name, gen in self.traffic.items()
            if hasattr(gen, "variant")
        ]
        for name, variant in entries:
            host_stack = self.stack.hosts.get(variant)
            if host_stack is None:
                continue
            host = self.endpoints_of(name)[0]
            seen = chosen.get(host)
            if seen is not None and seen[1] != host_stack:
                raise ConfigError(
                    f"stack.hosts: host {host!r} sends {seen[0]} and {variant} flows, whose "
                    "stacks differ"
                )
            chosen[host] = (variant, host_stack)
        return {host: entry for host, (_, entry) in chosen.items()}

    def growth_counting(self, variant: str, host: str) -> tuple[str | None, str | None]:
        """What a flow's window growth counts, (slow start, congestion avoidance).

        Each phase: ``"ack"``, ``"segment"``, or None for the ns-3 model's own rule. The
        sending host's stack (``stack.hosts``) decides first, then the stack's rule for the
        variant (``stack.counting``), then ``tcp.ack_counting``.
        """
        host_stack = self.host_stacks().get(host)
        if host_stack is not None and host_stack.ack_counting is not None:
            return host_stack.ack_counting, host_stack.ack_counting
        rule = self.stack.counting.get(variant) if self.stack else None
        phases = []
        for phase in ("slow_start", "congestion_avoidance"):
            value = getattr(rule, phase) if rule is not None else None
            value = self.tcp.ack_counting if value is None else value
            phases.append(None if value == "model" else value)
        return phases[0], phases[1]

    def ns3_variant_defaults(self) -> dict[str, dict[str, str]]:
        """The registry's fixed ns-3 attributes of each variant the scenario runs (if any)."""
        return {
            name: dict(get_variant(name).ns3_defaults)
            for name in self.variants_used()
            if get_variant(name).ns3_defaults
        }

    def cpp_models(self) -> frozenset[str]:
        """The tcprepro C++ model sources that the scenario's variants and queue discs use."""
        used: list[Variant | Qdisc] = [get_variant(name) for name in self.variants_used()]
        used += [get_qdisc(name) for name in _values_of("qdisc", self.topology.model_dump())]
        return frozenset(entry.cpp_source for entry in used if entry.cpp_source)

    def rng(self, rep: int) -> np.random.Generator:
        """The random generator of repetition ``rep`` (start times, traffic)."""
        return np.random.default_rng([self.seed, rep])

    def check_rep(self, rep: int) -> None:
        """Raise ConfigError unless 0 <= rep < repetitions."""
        if not 0 <= rep < self.repetitions:
            raise ConfigError(f"rep: {rep} is outside 0..{self.repetitions - 1}")


def _values_of(key: str, tree: Any) -> set[str]:
    """Every value stored under ``key`` at any depth of a dumped model."""
    if isinstance(tree, dict):
        found = {tree[key]} if isinstance(tree.get(key), str) else set()
        return found.union(*(_values_of(key, value) for value in tree.values()))
    if isinstance(tree, list | tuple):
        return set().union(*(_values_of(key, value) for value in tree))
    return set()


def goodput_capacity_bps(rate_bps: float, tcp: TcpSettings, l2_bytes: int = 0) -> float:
    """Highest TCP goodput of a link: rate x MSS / (MSS + TCP/IP headers + L2 header).

    ``l2_bytes`` is what the link counts per packet on top of the IP packet: ns-3's
    point-to-point devices add a 2-byte PPP header, htb counts a 14-byte Ethernet
    header; 0 gives the capacity at the IP layer.
    """
    return rate_bps * tcp.mss / (tcp.packet_bytes + l2_bytes)
