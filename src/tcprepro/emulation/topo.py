"""Mininet topologies built from a network plan: hosts and Linux routers on veth links.

This module owns the emulated network of one run: :class:`PlanTopo` (a Mininet
``Topo`` whose ``build()`` adds one host per plan node and one veth link per
plan link, no switch, no Open vSwitch), :class:`ShapedIntf` (an interface that
configures itself: MTU, offloads off and checked, and the ``tc`` tree of the
direction it sends), the IPv4 addressing, the static routes (with the
scenario's initial window and minimum RTO as route metrics) and the
per-namespace TCP sysctls.

Field meanings match ns-3 (see :mod:`tcprepro.network_plan`): the queue of a
direction sits at the egress of its *sending* side, so link ``a``--``b``
shapes ``a_to_b`` on ``a``'s interface and ``b_to_a`` on ``b``'s. One exception
(:func:`with_relays`): a traced direction leaving an end host is shaped one hop
further, on a relay node, because Linux keeps a sender's own egress queue nearly
empty (TCP small queues).
"""

from __future__ import annotations

import functools
import subprocess
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tcprepro.emulation import linux
from tcprepro.errors import CapabilityError
from tcprepro.network_plan import NetworkPlan, PlannedDirection, PlannedLink
from tcprepro.scenario import Scenario, StackSettings, TcpSettings

__all__ = [
    "Addressing",
    "NetworkFacts",
    "configure_network",
    "make_topo",
    "shaped_intf_class",
    "verify_offloads",
    "with_relays",
]

#: offloads that would let a "packet" be a 64 KB super-packet in a queue
OFFLOADS = {
    "tso": "tcp-segmentation-offload",
    "gso": "generic-segmentation-offload",
    "gro": "generic-receive-offload",
}


#: the relay hop in front of a shaped end host: fast, no delay, an ample FIFO
RELAY_DIRECTION = PlannedDirection(10e9, 0.0, 1000, "fifo")


def relay_name(host: str) -> str:
    """The node that carries ``host``'s shaped egress (see :func:`with_relays`)."""
    return f"{host}_nic"


def with_relays(plan: NetworkPlan) -> NetworkPlan:
    """The plan with a relay node wherever a traced direction leaves an end host.

    ns-3 queues a direction's packets at the egress of its sending node, and so
    does Linux, but a Linux sender's own egress queue is not a link buffer: TCP
    small queues let each socket keep only about two packets (1 ms at its pacing
    rate) in its host's qdiscs, so a bottleneck shaped on the sender's interface
    never fills its FIFO, and the packets it holds are GSO packets of many segments
    (segmented only at transmission). Measured on the UML route: a lone upload of
    A1's 2 Mb/s uplink at zero delay had 52 segments in flight as two 26-segment
    packets in the 40-packet FIFO, and an RTT of 315 ms against ns-3's 195 ms; with
    GSO capped to one segment (``gso_max_segs 1``), 2-3 segments and 18 ms. The cap
    is no fix: it also changes how many bytes a send buffer holds (Linux counts each
    packet's overhead), which study D measures. The paper's ADSL modem is a box
    of its own: so is the relay. The link ``host``--``x`` whose ``host`` side is
    traced becomes ``host``--relay (fast, unshaped in effect) and relay--``x``
    (the original directions), so the traced queue sees forwarded packets, one
    segment each, whatever their sender's socket does.
    """
    hosts = set(plan.hosts)
    links: list[PlannedLink] = []
    relays: list[str] = []
    for link in plan.links:
        if link.a in hosts and link.a_to_b.trace_name:
            relay = relay_name(link.a)
            relays.append(relay)
            links.append(PlannedLink(link.a, relay, RELAY_DIRECTION, RELAY_DIRECTION))
            links.append(replace(link, a=relay))
        elif link.b in hosts and link.b_to_a.trace_name:
            relay = relay_name(link.b)
            relays.append(relay)
            links.append(PlannedLink(relay, link.b, RELAY_DIRECTION, RELAY_DIRECTION))
            links.append(replace(link, b=relay))
        else:
            links.append(link)
    if not relays:
        return plan
    return replace(plan, routers=(*plan.routers, *relays), links=tuple(links))


def _check(node: Any, argv: list[str]) -> str:
    """Run ``argv`` in the node's namespace; raise with its stderr when it fails."""
    out, err, code = node.pexec(argv)
    if code != 0:
        raise RuntimeError(f"{node.name}: `{' '.join(argv)}` failed ({code}): {err.strip()}")
    return out


def batch_lines(tool: str, commands: list[list[str]]) -> str:
    """The input of ``<tool> -batch -`` running ``commands`` (argv lists of ``tool``).

    Raises
    ------
    ValueError
        A command of another program, or an argument that a batch line cannot carry
        (empty, or holding white space or a quote).
    """
    lines = []
    for argv in commands:
        if not argv or argv[0] != tool:
            raise ValueError(f"not a `{tool}` command: {argv}")
        bad = [arg for arg in argv[1:] if not arg or any(c.isspace() or c in "\"'" for c in arg)]
        if bad:
            raise ValueError(f"`{' '.join(argv)}`: arguments a batch line cannot carry: {bad}")
        lines.append(" ".join(argv[1:]) + "\n")
    return "".join(lines)


def _check_batch(node: Any, tool: str, commands: list[list[str]]) -> None:
    """Run ``commands`` (``ip`` or ``tc`` argv lists) in one ``<tool> -batch -``.

    In the node's namespace, in order, stopping at the first that fails; raises naming
    it. One process instead of one per command: under User-mode Linux each command costs
    about 0.15 s of host time to start, and a 12-node network has hundreds of them.
    """
    if not commands:
        return
    text = batch_lines(tool, commands)
    proc = node.popen(
        [tool, "-batch", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = proc.communicate(text.encode())
    if proc.returncode != 0:
        raise RuntimeError(
            f"{node.name}: `{tool} -batch` failed ({proc.returncode}): "
            f"{err.decode(errors='replace').strip()}\ncommands:\n{text}"
        )


@dataclass(frozen=True)
class Addressing:
    """IPv4 addresses of one plan: link ``i`` is ``10.<i//250>.<i%250 + 1>.0/24``."""

    plan: NetworkPlan

    @staticmethod
    def subnet(index: int) -> str:
        """Network prefix (first three octets) of link ``index``."""
        return f"10.{index // 250}.{index % 250 + 1}"

    def address(self, index: int, side: str) -> str:
        """Address of side ``a`` (.1) or ``b`` (.2) of link ``index``."""
        return f"{self.subnet(index)}.{1 if side == 'a' else 2}"

    def interface(self, index: int) -> str:
        """Interface name of link ``index`` on both of its nodes (they are in two namespaces)."""
        return f"eth{index}"

    def host_ip(self, host: str) -> str:
        """The address flows use to reach ``host`` (its first link)."""
        for index, link in enumerate(self.plan.links):
            if link.a == host:
                return self.address(index, "a")
            if link.b == host:
                return self.address(index, "b")
        raise KeyError(host)

    def routes(self, node: str) -> list[tuple[str, str, str]]:
        """Static routes of ``node``: (destination /24, gateway, interface)."""
        links = self.plan.links
        neighbours: dict[str, list[tuple[str, int]]] = {}
        for index, link in enumerate(links):
            neighbours.setdefault(link.a, []).append((link.b, index))
            neighbours.setdefault(link.b, []).append((link.a, index))
        first_hop: dict[str, tuple[str, int]] = {}
        queue = deque([node])
        seen = {node}
        while queue:
            current = queue.popleft()
            for nxt, index in neighbours.get(current, []):
                if nxt in seen:
                    continue
                seen.add(nxt)
                first_hop[nxt] = first_hop.get(current, (nxt, index))
                queue.append(nxt)
        out = []
        for index, link in enumerate(links):
            if node in (link.a, link.b):
                continue
            target = min((link.a, link.b), key=lambda n: self.distance(node, n))
            hop, via_index = first_hop[target]
            via = links[via_index]
            gateway_side = "a" if via.a == hop else "b"
            out.append(
                (
                    f"{self.subnet(index)}.0/24",
                    self.address(via_index, gateway_side),
                    self.interface(via_index),
                )
            )
        return out

    def distance(self, src: str, dst: str) -> int:
        """Hop count between two nodes."""
        return len(self.path(src, dst))

    def path(self, src: str, dst: str) -> list[tuple[int, str]]:
        """Links crossed from ``src`` to ``dst``: (link index, direction ``a_to_b``/``b_to_a``)."""
        previous: dict[str, tuple[str, int, str]] = {}
        queue = deque([src])
        seen = {src}
        while queue:
            current = queue.popleft()
            if current == dst:
                break
            for index, link in enumerate(self.plan.links):
                for here, there, way in ((link.a, link.b, "a_to_b"), (link.b, link.a, "b_to_a")):
                    if here == current and there not in seen:
                        seen.add(there)
                        previous[there] = (current, index, way)
                        queue.append(there)
        hops = []
        node = dst
        while node != src:
            node, index, way = previous[node]
            hops.append((index, way))
        return hops[::-1]

    def path_directions(self, src: str, dst: str) -> list[PlannedDirection]:
        """The planned directions a packet from ``src`` to ``dst`` crosses."""
        return [getattr(self.plan.links[index], way) for index, way in self.path(src, dst)]


class NetworkFacts(Protocol):
    """What command lines and trace parsers read of an emulated network.

    The live network (:class:`tcprepro.emulation.network.Emulation`) and what is left
    of it after teardown (:class:`tcprepro.emulation.traces.View`) both provide it.
    """

    scenario: Scenario
    plan: NetworkPlan
    tool: str

    @property
    def addressing(self) -> Addressing:
        """How the hosts are numbered."""


def verify_offloads(node: Any, dev: str) -> None:
    """Raise unless TSO, GSO and GRO are off on ``dev`` (``ethtool -k``)."""
    text = _check(node, ["ethtool", "-k", dev])
    states = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        states[name.strip()] = value.strip()
    still_on = [name for name in OFFLOADS.values() if states.get(name, "").startswith("on")]
    if still_on:
        raise CapabilityError(f"{node.name} {dev}: offloads still on after ethtool: {still_on}")


@functools.cache
def shaped_intf_class() -> type:
    """The Mininet ``Intf`` subclass of every emulated interface (Mininet imported on use)."""
    from mininet.link import Intf

    class ShapedIntf(Intf):
        """A veth end that configures itself: MTU, offloads off (checked), egress shaping."""

        def config(
            self,
            egress: PlannedDirection | None = None,
            tcp: TcpSettings | None = None,
            prefix_len: int = 24,
            **params: Any,
        ) -> dict[str, Any]:
            ip = params.pop("ip", None)
            # Mininet would bring the interface up with ifconfig: the ip batch below does
            params["up"] = None
            result = super().config(**params)
            node = self.node
            # the ip and tc commands of the interface, each program's in one batch
            addresses = []
            if ip:
                addresses.append(["ip", "addr", "add", f"{ip}/{prefix_len}", "dev", self.name])
            if tcp is not None:
                mtu = str(linux.mtu_bytes(tcp))
                addresses.append(["ip", "link", "set", "dev", self.name, "mtu", mtu])
            addresses.append(["ip", "link", "set", "dev", self.name, "up"])
            _check_batch(node, "ip", addresses)
            if tcp is not None:
                features = [item for name in OFFLOADS for item in (name, "off")]
                _check(node, ["ethtool", "-K", self.name, *features])
                verify_offloads(node, self.name)
                # GSO off on the device does not stop Linux's TCP from building GSO
                # packets (segmented after the qdisc, at transmission): a sender's own
                # egress qdisc holds them whole. No bottleneck queue is there
                # (with_relays); the packets reach the next node one segment each.
            if egress is not None and tcp is not None:
                _check_batch(node, "tc", linux.egress_commands(self.name, egress, tcp))
            return result

    return ShapedIntf


def make_topo(plan: NetworkPlan, tcp: TcpSettings) -> Any:
    """A Mininet ``Topo`` of the plan (import of Mininet deferred to here)."""
    from mininet.topo import Topo

    addressing = Addressing(plan)

    class PlanTopo(Topo):
        """One host per plan node, one veth link per plan link, no switch."""

        def build(self) -> None:
            for name in plan.nodes:
                self.addHost(name, ip=None)
            for index, link in enumerate(plan.links):
                dev = addressing.interface(index)
                self.addLink(
                    link.a,
                    link.b,
                    intfName1=dev,
                    intfName2=dev,
                    params1={
                        "ip": addressing.address(index, "a"),
                        "egress": link.a_to_b,
                        "tcp": tcp,
                    },
                    params2={
                        "ip": addressing.address(index, "b"),
                        "egress": link.b_to_a,
                        "tcp": tcp,
                    },
                )

    return PlanTopo()


def configure_network(
    net: Any, plan: NetworkPlan, tcp: TcpSettings, stack: StackSettings | None = None
) -> dict[str, dict[str, str]]:
    """Sysctls and routes of every node; returns the sysctls set, by node (provenance)."""
    addressing = Addressing(plan)
    metrics = linux.route_metrics(tcp)  # the same on every route
    applied: dict[str, dict[str, str]] = {}
    for name in plan.nodes:
        node = net.get(name)
        sysctls = linux.host_sysctls(tcp, router=name in plan.routers, stack=stack)
        _check(node, ["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in sysctls.items())])
        applied[name] = sysctls
        _check_batch(
            node,
            "ip",
            [
                ["ip", "link", "set", "dev", "lo", "up"],
                *(
                    ["ip", "route", "add", destination, "via", gateway, "dev", dev, *metrics]
                    for destination, gateway, dev in addressing.routes(name)
                ),
            ],
        )
    return applied


def qdisc_tree(node: Any, dev: str) -> str:
    """``tc qdisc show`` of one interface, for provenance."""
    try:
        return _check(node, ["tc", "qdisc", "show", "dev", dev]).strip()
    except (RuntimeError, subprocess.SubprocessError) as exc:  # pragma: no cover - diagnostics
        return f"unavailable: {exc}"
