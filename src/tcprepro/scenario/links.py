"""The topology of a scenario: its links, each direction's rate, delay and queue.

The access topology (a client behind a down- and uplink, a server link) and the dumbbell
(sender groups, a bottleneck, a receiver).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from tcprepro.scenario.base import Duration, Rate, Scalar, _Strict
from tcprepro.variants import get_qdisc


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
    label: str | None = Field(
        default=None,
        min_length=1,
        exclude=True,
        description="what the report calls the group's hosts, in the paper's terms (e.g. "
        "'hosts 1 and 2'; default: 'senders <name>'). Words for a reader, not a parameter: "
        "left out of the resolved scenario, so naming a group changes no cache key",
    )
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

    @property
    def shown_name(self) -> str:
        """The group as the report names it: its ``label``, else ``senders <name>``."""
        return self.label or f"senders {self.name}"

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
