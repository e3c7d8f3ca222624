"""Backend-neutral network plans built from a scenario.

This module owns the translation of a validated :class:`~tcprepro.scenario.Scenario`
into a flat :class:`NetworkPlan`: the hosts and routers, every link with the
settings of each direction, which link directions are traced (and under
which name), and every flow with its endpoints and its start time for one
repetition. The ns-3 backend and the Mininet backend both build from the same
plan, so a field means the same thing in both.

Queue placement: the buffer of a direction sits at the *sending* side of that
direction (the router's egress for ``down``, the client's egress for ``up``),
exactly where Dummynet or a DSLAM/modem holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcprepro.scenario import (
    AccessTopology,
    DumbbellTopology,
    LinkDirection,
    PacketGenerator,
    Scenario,
    UniformStart,
    VariantConfig,
)
from tcprepro.traffic import (
    PlannedPacketSource,
    PlannedTransfer,
    expand_packets,
    expand_transfers,
)

__all__ = [
    "FlowPath",
    "NetworkPlan",
    "PlannedDirection",
    "PlannedFlow",
    "PlannedGenerator",
    "PlannedLink",
    "build_plan",
    "flow_path",
]


@dataclass(frozen=True)
class PlannedDirection:
    """One direction of a link, in SI units."""

    rate_bps: float
    delay_s: float
    buffer_pkts: int
    qdisc: str
    qdisc_params: tuple[tuple[str, object], ...] = ()
    trace_name: str | None = None
    loss_rate: float = 0.0

    @classmethod
    def from_config(cls, cfg: LinkDirection, trace_name: str | None = None) -> PlannedDirection:
        """Build from a validated scenario link direction."""
        return cls(
            rate_bps=cfg.rate,
            delay_s=cfg.delay,
            buffer_pkts=cfg.buffer_pkts,
            qdisc=cfg.qdisc,
            qdisc_params=tuple(sorted(cfg.qdisc_params.items())),
            trace_name=trace_name,
            loss_rate=cfg.loss_rate,
        )


@dataclass(frozen=True)
class PlannedLink:
    """A full-duplex link between hosts ``a`` and ``b``."""

    a: str
    b: str
    a_to_b: PlannedDirection
    b_to_a: PlannedDirection


@dataclass(frozen=True)
class PlannedFlow:
    """One TCP connection of one repetition."""

    name: str
    src: str
    dst: str
    variant: VariantConfig
    start_s: float
    size_bytes: int  # 0 = bulk
    pacing: bool
    label: str  # "down"/"up" for the access topology, else "src->dst"
    bottleneck: str  # trace name of the link direction its data crosses
    write_bytes: int = 0  # bytes per application write (emulation); 0 = the tool's default


@dataclass(frozen=True)
class PlannedGenerator:
    """A traffic generator of one repetition and what it expanded into."""

    name: str
    kind: str  # "transfers" (TCP) or "packets" (UDP)
    variant: VariantConfig | None
    src: str  # host or sender group
    dst: str
    label: str
    bottleneck: str
    start_s: float
    transfers: tuple[PlannedTransfer, ...] = ()
    packet_sources: tuple[PlannedPacketSource, ...] = ()
    max_rate_bps: float | None = None  # each transfer's socket paced at most at this rate
    request_bytes: int | None = None  # each transfer's receiver asks with this many bytes first


@dataclass(frozen=True)
class NetworkPlan:
    """Everything a backend needs to instantiate one repetition of a scenario."""

    hosts: tuple[str, ...]
    routers: tuple[str, ...]
    links: tuple[PlannedLink, ...]
    flows: tuple[PlannedFlow, ...]
    generators: tuple[PlannedGenerator, ...] = ()

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node, hosts first."""
        return (*self.hosts, *self.routers)

    @property
    def transfers(self) -> tuple[PlannedTransfer, ...]:
        """Every TCP transfer of every generator, in generator order."""
        return tuple(t for g in self.generators for t in g.transfers)

    def entity_info(self) -> dict[str, list[object]]:
        """Static facts of each series entity: the flows, then one per generator.

        Keys are the dataset's ``flow_*`` variables that a plan determines; the
        backend adds what it measures (connection and end times, bytes received).
        """
        rows = [
            (
                f.name,
                f.variant.name,
                f.src,
                f.dst,
                f.label,
                f.bottleneck,
                f.start_s,
                f.size_bytes,
                "bulk" if f.size_bytes == 0 else "sized",
            )
            for f in self.flows
        ] + [
            (
                g.name,
                g.variant.name if g.variant else "udp",
                g.src,
                g.dst,
                g.label,
                g.bottleneck,
                g.start_s,
                0,
                g.kind,
            )
            for g in self.generators
        ]
        keys = (
            "flow",
            "flow_variant",
            "flow_src",
            "flow_dst",
            "flow_label",
            "flow_link",
            "flow_start_s",
            "flow_size_bytes",
            "flow_kind",
        )
        return {key: [row[i] for row in rows] for i, key in enumerate(keys)}

    def transfer_info(self) -> dict[str, list[object]]:
        """Static facts of each generated TCP transfer (dataset ``transfer_*`` variables)."""
        transfers = self.transfers
        return {
            "transfer_generator": [t.generator for t in transfers],
            "transfer_src": [t.src for t in transfers],
            "transfer_dst": [t.dst for t in transfers],
            "transfer_start_s": [t.start_s for t in transfers],
            "transfer_size_bytes": [t.size_bytes for t in transfers],
        }

    @property
    def traced(self) -> dict[str, PlannedDirection]:
        """Traced link directions by trace name, in link order."""
        out: dict[str, PlannedDirection] = {}
        for link in self.links:
            for direction in (link.a_to_b, link.b_to_a):
                if direction.trace_name:
                    out[direction.trace_name] = direction
        return out


def _symmetric(cfg: LinkDirection) -> tuple[PlannedDirection, PlannedDirection]:
    direction = PlannedDirection.from_config(cfg)
    return direction, direction


def _access(rate_bps: float, delay_s: float, buffer_pkts: int) -> tuple[PlannedDirection, ...]:
    direction = PlannedDirection(rate_bps, delay_s, buffer_pkts, "fifo")
    return direction, direction


def _links(scenario: Scenario) -> tuple[tuple[str, ...], tuple[str, ...], list[PlannedLink]]:
    topo = scenario.topology
    if isinstance(topo, AccessTopology):
        links = [
            PlannedLink(
                "client",
                "router",
                PlannedDirection.from_config(topo.uplink, "up"),
                PlannedDirection.from_config(topo.downlink, "down"),
            ),
            PlannedLink("router", "server", *_symmetric(topo.server_link)),
        ]
        return ("client", "server"), ("router",), links
    assert isinstance(topo, DumbbellTopology)
    if topo.reverse is not None:
        reverse = PlannedDirection.from_config(topo.reverse, "reverse")
    else:  # same rate and delay as the bottleneck, ample buffer
        bottleneck = topo.bottleneck
        reverse = PlannedDirection(bottleneck.rate, bottleneck.delay, 1000, "fifo", (), "reverse")
    links = [
        PlannedLink(
            "left", "right", PlannedDirection.from_config(topo.bottleneck, "bottleneck"), reverse
        )
    ]
    for group in topo.senders:
        for name in group.names():
            links.append(
                PlannedLink(name, "left", *_access(group.rate, group.delay, group.buffer_pkts))
            )
    receiver = topo.receiver
    links.append(
        PlannedLink(
            "right", receiver.name, *_access(receiver.rate, receiver.delay, receiver.buffer_pkts)
        )
    )
    return (*topo.sender_names, receiver.name), ("left", "right"), links


def _bottleneck_of(scenario: Scenario, src: str) -> str:
    topo = scenario.topology
    if isinstance(topo, AccessTopology):
        return "down" if src == "server" else "up"
    return "bottleneck" if src in topo.sender_names or src in topo.sender_groups else "reverse"


def build_plan(scenario: Scenario, rep: int) -> NetworkPlan:
    """Plan repetition ``rep`` of ``scenario`` (random start times drawn here)."""
    scenario.check_rep(rep)
    hosts, routers, links = _links(scenario)
    rng = scenario.rng(rep)
    flows = []
    groups = (
        scenario.topology.sender_groups if isinstance(scenario.topology, DumbbellTopology) else {}
    )
    for name, flow in scenario.flows.items():
        entry_src, dst = scenario.endpoints_of(name)
        if flow.count is None:  # one connection named after the entry
            instances = [(name, entry_src)]
        else:  # count connections name0.., spread over a sender group's hosts
            members = groups.get(entry_src, [entry_src])
            instances = [(f"{name}{k}", members[k % len(members)]) for k in range(flow.count)]
        for instance, src in instances:
            if isinstance(flow.start, UniformStart):
                low, high = flow.start.uniform
                start = float(rng.uniform(low, high))
            else:
                start = float(flow.start)
            flows.append(
                PlannedFlow(
                    name=instance,
                    src=src,
                    dst=dst,
                    variant=flow.variant,
                    start_s=start,
                    size_bytes=0 if flow.size == "bulk" else int(flow.size),
                    pacing=flow.pacing,
                    label=flow.direction or f"{src}->{dst}",
                    bottleneck=_bottleneck_of(scenario, src),
                    write_bytes=int(flow.write_size or 0),
                )
            )
    generators = []
    for name, gen in scenario.traffic.items():
        src, dst = scenario.endpoints_of(name)
        common = {
            "name": name,
            "src": src,
            "dst": dst,
            "label": gen.direction or f"{src}->{dst}",
            "bottleneck": _bottleneck_of(scenario, src),
            "start_s": gen.start,
        }
        if isinstance(gen, PacketGenerator):
            generators.append(
                PlannedGenerator(
                    kind="packets",
                    variant=None,
                    packet_sources=tuple(expand_packets(scenario, name, rep)),
                    **common,
                )
            )
        else:
            generators.append(
                PlannedGenerator(
                    kind="transfers",
                    variant=gen.variant,
                    transfers=tuple(expand_transfers(scenario, name, rep)),
                    max_rate_bps=gen.max_rate,
                    request_bytes=gen.request_bytes,
                    **common,
                )
            )
    return NetworkPlan(
        hosts=hosts,
        routers=routers,
        links=tuple(links),
        flows=tuple(flows),
        generators=tuple(generators),
    )


# ---------------------------------------------------------------------------
# Path of a flow (used by the throughput models of study D and the run-time estimate)


@dataclass(frozen=True)
class FlowPath:
    """What a flow's packets cross: the data direction and the ACK direction."""

    rtt_s: float  # propagation round trip: one-way delays there and back
    loss_rate: float  # probability that a data packet is destroyed on the way
    rate_bps: float  # slowest link direction on the data path


def flow_path(plan: NetworkPlan, flow: PlannedFlow) -> FlowPath:
    """Propagation RTT, random-loss probability and narrowest rate of a flow's path."""
    neighbours: dict[str, list[tuple[str, PlannedDirection, PlannedDirection]]] = {}
    for link in plan.links:
        neighbours.setdefault(link.a, []).append((link.b, link.a_to_b, link.b_to_a))
        neighbours.setdefault(link.b, []).append((link.a, link.b_to_a, link.a_to_b))
    previous: dict[str, tuple[str, PlannedDirection, PlannedDirection]] = {}
    frontier = [flow.src]
    while frontier and flow.dst not in previous:
        node = frontier.pop(0)
        for other, there, back in neighbours.get(node, []):
            if other != flow.src and other not in previous:
                previous[other] = (node, there, back)
                frontier.append(other)
    if flow.dst not in previous:
        raise ValueError(f"flow {flow.name}: no path from {flow.src} to {flow.dst}")
    rtt_s, rate_bps, losses = 0.0, float("inf"), []
    node = flow.dst
    while node != flow.src:
        node, there, back = previous[node]
        rtt_s += there.delay_s + back.delay_s
        rate_bps = min(rate_bps, there.rate_bps)
        if there.loss_rate > 0:
            losses.append(there.loss_rate)
    delivered = 1.0
    for loss in losses:
        delivered *= 1.0 - loss
    loss_rate = losses[0] if len(losses) == 1 else 1.0 - delivered
    return FlowPath(rtt_s=rtt_s, loss_rate=loss_rate, rate_bps=rate_bps)
