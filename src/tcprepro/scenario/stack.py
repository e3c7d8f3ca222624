"""The TCP stack of a scenario: settings shared by every socket, and the testbed's own.

``tcp:`` (:class:`TcpSettings`) and the testbed profile's ``stack:``
(:class:`StackSettings`), with :func:`goodput_capacity_bps`, the highest goodput a link
gives such a stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from tcprepro.scenario.base import Duration, Scalar, Size, _Strict, _without_unset
from tcprepro.variants import canonical_variant, get_qdisc

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


def goodput_capacity_bps(rate_bps: float, tcp: TcpSettings, l2_bytes: int = 0) -> float:
    """Highest TCP goodput of a link: rate x MSS / (MSS + TCP/IP headers + L2 header).

    ``l2_bytes`` is what the link counts per packet on top of the IP packet: ns-3's
    point-to-point devices add a 2-byte PPP header, htb counts a 14-byte Ethernet
    header; 0 gives the capacity at the IP layer.
    """
    return rate_bps * tcp.mss / (tcp.packet_bytes + l2_bytes)
