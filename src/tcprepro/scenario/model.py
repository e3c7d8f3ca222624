"""The scenario itself (:class:`Scenario`): its parts validated together, and its cache key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import (
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from tcprepro.errors import ConfigError
from tcprepro.scenario.base import Duration, Scalar, _Strict, _without_unset
from tcprepro.scenario.flows import FlowConfig, Generator, VariantConfig, _Endpoints
from tcprepro.scenario.links import AccessTopology, DumbbellTopology, LinkDirection, Topology
from tcprepro.scenario.stack import HostStack, StackSettings, TcpSettings
from tcprepro.variants import Qdisc, Variant, get_qdisc, get_variant


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
    tiers: list[str] | None = Field(
        default=None,
        min_length=1,
        exclude=True,
        description="the tiers whose report shows the note, for a note on one tier's "
        "settings (default: every tier's). Words for a reader, like a sender group's "
        "label: left out of the resolved scenario, so it changes no cache key",
    )

    def concerns(self, tier: str) -> bool:
        """Whether the report of ``tier`` shows this note."""
        return self.tiers is None or tier in self.tiers


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
