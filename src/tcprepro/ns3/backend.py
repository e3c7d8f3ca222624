"""The ns-3 backend: run one repetition of a scenario and return its dataset.

This module owns the mapping from a :class:`~tcprepro.network_plan.NetworkPlan` to
calls on the C++ ``tcprepro::Simulation`` builder (see ``cpp/tcprepro.h``):
ns-3 defaults for the TCP settings, nodes, links with a queue disc per
direction, flows with a congestion control per socket. It runs the event
loop in chunks (for a progress bar and Ctrl-C), then reads the C++ trace
arrays once and hands them to :func:`tcprepro.store.make_run_dataset`.

Python is never called per packet: applications, trace sinks and the sampler
are C++.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import xarray as xr

from tcprepro import provenance
from tcprepro.errors import ConfigError
from tcprepro.network_plan import NetworkPlan, PlannedDirection, build_plan
from tcprepro.ns3 import build
from tcprepro.scenario import Scenario, TcpSettings, VariantConfig
from tcprepro.store import RawTraces, link_info, make_run_dataset, run_attributes
from tcprepro.variants import get_qdisc, get_variant

__all__ = [
    "BACKEND",
    "L2_OVERHEAD_BYTES",
    "CallRecorder",
    "check_scenario",
    "record_calls",
    "run_scenario",
]

BACKEND = "ns3"
#: ns-3's point-to-point devices add a 2-byte PPP header to each IP packet
L2_OVERHEAD_BYTES = 2

FLOW_SERIES = (
    "rx_bytes",
    "cwnd_bytes",
    "rtt_sum_s",
    "rtt_count",
    "tx_data_pkts",
    "retx_pkts",
    "lost_data_pkts",
    "lost_ack_pkts",
    "random_lost_pkts",
    "unacked_byte_s",
    "rto_count",
)
LINK_SERIES = ("queue_pkts", "queue_bytes", "drops_pkts", "tx_bytes", "random_drops_pkts")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _attributes(pairs: Mapping[str, object] | tuple[tuple[str, object], ...]) -> str:
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return "|".join(f"{name}={_text(value)}" for name, value in items)


def variant_attributes(variant: VariantConfig, scenario: Scenario | None = None) -> tuple[str, str]:
    """ns-3 (TypeId, attribute string) of a congestion-control config.

    The registry's fixed attributes, then the scenario's stack profile's for that variant
    (:meth:`Scenario.variant_params`: FreeBSD's CUBIC beta, ...), then the flow's own.
    """
    registered = get_variant(variant.name)
    params = scenario.variant_params(variant) if scenario is not None else variant.params
    return registered.ns3_type, _attributes({**registered.ns3_defaults, **params})


#: FlowSpec.ss_counting / ca_counting of each growth rule (None: the model's own)
ACK_COUNTING = {None: 0, "ack": 1, "segment": 2}


#: packets the point-to-point device holds below the queue disc (while it sends another)
DEVICE_QUEUE_PKTS = 1


def qdisc_attributes(direction: PlannedDirection) -> tuple[str, str]:
    """ns-3 (TypeId, attribute string) of a link direction's queue disc.

    ``buffer_pkts`` counts every packet waiting at the egress: the queue disc
    gets ``buffer_pkts - 1`` and the device's own one-packet queue the last
    slot, so at most ``buffer_pkts`` packets wait while one is on the wire.
    """
    qdisc = get_qdisc(direction.qdisc)
    limit = max(1, direction.buffer_pkts - DEVICE_QUEUE_PKTS)
    params = {qdisc.ns3_limit_attribute: f"{limit}p", **dict(direction.qdisc_params)}
    return qdisc.ns3_type, _attributes(params)


def tcp_defaults(tcp: TcpSettings) -> dict[str, str]:
    """ns-3 attribute defaults implementing the scenario's TCP settings."""
    recovery = {"prr": "ns3::TcpPrrRecovery", "classic": "ns3::TcpClassicRecovery"}[tcp.recovery]
    defaults = {
        "ns3::TcpSocket::SegmentSize": str(tcp.mss),
        "ns3::TcpSocket::DelAckCount": str(tcp.delayed_ack_count),
        "ns3::TcpSocket::DelAckTimeout": f"{tcp.delayed_ack_timeout!r}s",
        "ns3::TcpSocket::InitialCwnd": str(tcp.initial_cwnd_pkts),
        "ns3::TcpSocket::SndBufSize": str(tcp.send_buffer),
        "ns3::TcpSocket::RcvBufSize": str(tcp.recv_buffer),
        "ns3::TcpSocketBase::Sack": _text(tcp.sack),
        "ns3::TcpSocketBase::Timestamp": _text(tcp.timestamps),
        "ns3::TcpSocketBase::WindowScaling": _text(tcp.window_scaling),
        "ns3::TcpSocketBase::MinRto": f"{tcp.min_rto!r}s",
        "ns3::TcpL4Protocol::RecoveryType": recovery,
    }
    optional = {
        "ns3::TcpSocketBase::ClockGranularity": (
            None if tcp.rto_granularity is None else f"{tcp.rto_granularity!r}s"
        ),
        "ns3::TcpSocketState::PacingSsRatio": tcp.pacing_ss_ratio,
        "ns3::TcpSocketState::PacingCaRatio": tcp.pacing_ca_ratio,
    }
    return {**defaults, **{path: str(v) for path, v in optional.items() if v is not None}}


#: the text ns-3's Time parser reads (a number and an optional unit; none means seconds);
#: it aborts the whole process on anything else instead of reporting it
_NS3_TIME_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?(y|d|h|min|s|ms|us|ns|ps|fs)?")


def _unreadable_text(type_name: str, attributes: str) -> str:
    """Why ns-3 would abort on a Time or enum attribute of ``attributes`` ("" if it would not).

    Checked before ns-3's own attribute check, which reads such a value by constructing
    it and so ends the process on bad text instead of reporting it. Only values that are
    not plain numbers are looked up (ns-3's type information costs a header include,
    about a second, once per process).
    """
    texts = {}
    for pair in filter(None, attributes.split("|")):
        name, _, value = pair.partition("=")
        try:
            float(value)
        except ValueError:
            texts[name] = value
    if not texts:
        return ""
    ns3 = _ns3_type_information()
    tid = ns3.TypeId()
    if not ns3.TypeId.LookupByNameFailSafe(type_name, tid):
        return ""  # ns-3's own check names the unknown type
    for name, value in texts.items():
        info = ns3.TypeId.AttributeInformation()
        if not tid.LookupAttributeByName(name, info):
            continue  # ns-3's own check names it
        kind = str(info.checker.GetValueTypeName())
        if kind == "ns3::TimeValue" and not _NS3_TIME_TEXT.fullmatch(value):
            return (
                f"{type_name}::{name}: invalid value {value!r} (a time: a number and one of "
                "the units s, ms, us, ns, min, h)"
            )
        choices = str(info.checker.GetUnderlyingTypeInformation()).split("|")
        if kind.startswith("ns3::EnumValue") and value not in choices:
            return f"{type_name}::{name}: invalid value {value!r} (one of {', '.join(choices)})"
    return ""


@functools.cache
def _ns3_type_information() -> Any:
    """ns-3's ``TypeId`` through cppyy (its header, on top of tcprepro's library)."""
    import cppyy

    from tcprepro.installation import find_wheel

    build.load()
    cppyy.add_include_path(str(find_wheel().include_dir))
    cppyy.include("ns3/type-id.h")
    return cppyy.gbl.ns3


def check_scenario(scenario: Scenario) -> None:
    """Check every ns-3 type and attribute the scenario uses, before anything runs.

    Raises
    ------
    ConfigError
        Naming the scenario field whose variant or queue parameters ns-3 rejects.
    """
    lib = build.load()

    def check(type_name: str, attributes: str) -> str:
        return _unreadable_text(type_name, attributes) or lib.CheckAttributes(type_name, attributes)

    def check_variant(variant: VariantConfig, field: str) -> None:
        error = check(*variant_attributes(variant))
        if error:
            raise ConfigError(f"{field}.variant.params: {error}")
        error = check(*variant_attributes(variant, scenario))
        if error:  # the stack profile's parameters of this variant
            raise ConfigError(f"stack.variants.{variant.name} (for {field}): {error}")

    for name, flow in scenario.flows.items():
        check_variant(flow.variant, f"flows.{name}")
    for name, generator in scenario.traffic.items():
        variant = getattr(generator, "variant", None)
        if variant is not None:
            check_variant(variant, f"traffic.{name}")
    for host, host_stack in scenario.host_stacks().items():
        error = check("ns3::TcpSocketBase", _attributes(host_stack.socket))
        if error:
            raise ConfigError(f"stack.hosts (the stack of host {host}): {error}")
    plan = build_plan(scenario, 0)
    for link in plan.links:
        for direction in (link.a_to_b, link.b_to_a):
            error = check(*qdisc_attributes(direction))
            if error:
                where = direction.trace_name or f"{link.a}-{link.b}"
                raise ConfigError(f"topology ({where}) qdisc_params: {error}")


def _direction_spec(lib: Any, direction: PlannedDirection) -> Any:
    spec = lib.DirectionSpec()
    spec.rate_bps = direction.rate_bps
    spec.delay_s = direction.delay_s
    spec.qdisc_type, spec.qdisc_attributes = qdisc_attributes(direction)
    spec.device_queue_pkts = DEVICE_QUEUE_PKTS
    spec.loss_rate = direction.loss_rate
    spec.trace_name = direction.trace_name or ""
    return spec


def _as_array(vector: Any) -> np.ndarray:
    size = int(vector.size())
    if size == 0:
        return np.empty(0)
    return np.frombuffer(vector.data(), dtype=np.float64, count=size).copy()


@contextlib.contextmanager
def _simulation(lib: Any, seed: int, run: int) -> Iterator[Any]:
    sim = lib.Simulation(seed, run)
    try:
        yield sim
    finally:
        sim.__destruct__()  # Simulator::Destroy(): the next run starts clean


def _instantiate(lib: Any, sim: Any, scenario: Scenario, plan: NetworkPlan) -> None:
    for path, value in tcp_defaults(scenario.tcp).items():
        sim.SetDefault(path, value)
    index = {name: sim.AddNode(name) for name in plan.nodes}
    for host, host_stack in scenario.host_stacks().items():
        if host_stack.socket:
            sim.SetNodeSocketAttributes(index[host], _attributes(host_stack.socket))
    for link in plan.links:
        sim.AddLink(
            index[link.a],
            index[link.b],
            _direction_spec(lib, link.a_to_b),
            _direction_spec(lib, link.b_to_a),
        )

    def tcp_flow(
        name: str,
        src: str,
        dst: str,
        variant: VariantConfig,
        start_s: float,
        size_bytes: int,
        pacing: bool = False,
        group: int = -1,
        max_pacing_bps: float = 0.0,
        request_bytes: int = 0,
    ) -> None:
        spec = lib.FlowSpec()
        spec.name = name
        spec.src = index[src]
        spec.dst = index[dst]
        spec.cc_type, spec.cc_attributes = variant_attributes(variant, scenario)
        spec.socket_attributes = ""
        spec.start_s = start_s
        spec.bytes = size_bytes
        spec.pacing = pacing
        spec.max_pacing_bps = max_pacing_bps
        spec.group = group
        spec.max_ssthresh_pkts = scenario.tcp.max_ssthresh_pkts or 0
        spec.ss_counting, spec.ca_counting = (
            ACK_COUNTING[rule] for rule in scenario.growth_counting(variant.name, src)
        )
        spec.ss_ack_limit = scenario.tcp.slow_start_ack_limit or 0
        spec.host_cache = bool(scenario.tcp.host_cache)
        spec.request_bytes = request_bytes
        sim.AddFlow(spec)

    for flow in plan.flows:
        tcp_flow(
            flow.name, flow.src, flow.dst, flow.variant, flow.start_s, flow.size_bytes, flow.pacing
        )
    for generator in plan.generators:
        group = sim.AddGroup(generator.name)
        for transfer in generator.transfers:
            tcp_flow(
                f"{generator.name}#{transfer.index}",
                transfer.src,
                transfer.dst,
                generator.variant,
                transfer.start_s,
                transfer.size_bytes,
                group=group,
                max_pacing_bps=generator.max_rate_bps or 0.0,
                request_bytes=generator.request_bytes or 0,
            )
        for source in generator.packet_sources:
            spec = lib.FlowSpec()
            spec.name = f"{generator.name}#{source.index}"
            spec.src, spec.dst = index[source.src], index[source.dst]
            spec.udp = True
            spec.start_s, spec.stop_s = source.start_s, source.stop_s
            spec.rate_bps = source.rate_bps
            spec.packet_bytes = source.packet_size_bytes
            spec.group = group
            sim.AddFlow(spec)
    sim.Build(scenario.trace.interval)


class CallRecorder:
    """Stands in for both the cppyy library and a ``Simulation``: records builder calls.

    :func:`record_calls` uses it to write the exact sequence of builder calls a run
    makes, one tab-separated line per call, which ``benchmarks/replay.cc`` replays
    in a native C++ program against the same library (same results, no Python).
    """

    _DIRECTION_FIELDS = (
        "rate_bps",
        "delay_s",
        "qdisc_type",
        "qdisc_attributes",
        "device_queue_pkts",
        "loss_rate",
        "trace_name",
    )
    _FLOW_FIELDS = (
        "name",
        "src",
        "dst",
        "cc_type",
        "cc_attributes",
        "socket_attributes",
        "start_s",
        "bytes",
        "pacing",
        "group",
        "udp",
        "rate_bps",
        "packet_bytes",
        "stop_s",
        "max_ssthresh_pkts",
        "max_pacing_bps",
        "ss_counting",
        "ca_counting",
        "ss_ack_limit",
        "host_cache",
        "request_bytes",
    )

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._nodes = 0
        self._groups = 0

    @staticmethod
    def DirectionSpec() -> SimpleNamespace:
        """A blank direction spec (C++ defaults)."""
        return SimpleNamespace(
            rate_bps=0.0,
            delay_s=0.0,
            qdisc_type="",
            qdisc_attributes="",
            device_queue_pkts=1,
            loss_rate=0.0,
            trace_name="",
        )

    @staticmethod
    def FlowSpec() -> SimpleNamespace:
        """A blank flow spec (C++ defaults)."""
        return SimpleNamespace(
            name="",
            src=-1,
            dst=-1,
            cc_type="",
            cc_attributes="",
            socket_attributes="",
            start_s=0.0,
            bytes=0,
            pacing=False,
            group=-1,
            udp=False,
            rate_bps=0.0,
            packet_bytes=0,
            stop_s=0.0,
            max_ssthresh_pkts=0,
            max_pacing_bps=0.0,
            ss_counting=0,
            ca_counting=0,
            ss_ack_limit=0,
            host_cache=False,
            request_bytes=0,
        )

    def _line(self, *fields: object) -> None:
        self.lines.append(
            "\t".join(
                _text(f) if isinstance(f, bool) else repr(f) if isinstance(f, float) else str(f)
                for f in fields
            )
        )

    def SetDefault(self, path: str, value: str) -> None:  # noqa: D102
        self._line("default", path, value)

    def AddNode(self, name: str) -> int:  # noqa: D102
        self._line("node", name)
        self._nodes += 1
        return self._nodes - 1

    def SetNodeSocketAttributes(self, node: int, attributes: str) -> None:  # noqa: D102
        self._line("node_sockets", node, attributes)

    def AddLink(self, a: int, b: int, ab: SimpleNamespace, ba: SimpleNamespace) -> None:  # noqa: D102
        self._line(
            "link",
            a,
            b,
            *(getattr(ab, f) for f in self._DIRECTION_FIELDS),
            *(getattr(ba, f) for f in self._DIRECTION_FIELDS),
        )

    def AddGroup(self, name: str) -> int:  # noqa: D102
        self._line("group", name)
        self._groups += 1
        return self._groups - 1

    def AddFlow(self, spec: SimpleNamespace) -> None:  # noqa: D102
        self._line("flow", *(getattr(spec, f) for f in self._FLOW_FIELDS))

    def Build(self, interval_s: float) -> None:  # noqa: D102
        self._line("build", interval_s)


def record_calls(scenario: Scenario, rep: int = 0) -> str:
    """The builder calls of one run as text (see :class:`CallRecorder`), ending with the run."""
    scenario.check_rep(rep)
    recorder = CallRecorder()
    _instantiate(recorder, recorder, scenario, build_plan(scenario, rep))
    recorder._line("seed", scenario.seed, rep + 1)
    recorder._line("run", scenario.duration, max(scenario.duration / 200.0, 0.5))
    return "\n".join(recorder.lines) + "\n"


def _advance(
    sim: Any, duration_s: float, label: str, progress: bool | Callable[[float], None]
) -> None:
    chunk = max(duration_s / 200.0, 0.5)
    bar = None
    report = progress if callable(progress) else None
    if progress is True:
        from tqdm import tqdm

        interactive = sys.stderr.isatty()
        bar = tqdm(
            total=round(duration_s, 3),
            desc=label,
            unit="sim-s",
            mininterval=0.5 if interactive else 15.0,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} sim-s "
            "[{elapsed}<{remaining}]",
            file=sys.stderr,
        )
    now = 0.0
    try:
        while now < duration_s:
            target = min(duration_s, now + chunk)
            sim.RunUntil(target)
            if bar is not None:
                bar.update(round(target - now, 3))
            if report is not None:
                report(target)
            now = target
    finally:
        if bar is not None:
            bar.close()


def _member_slices(plan: NetworkPlan) -> list[tuple[int, int]]:
    """(offset, count) of each generator's members among all flows (AddFlow order)."""
    offset = len(plan.flows)
    out = []
    for generator in plan.generators:
        size = len(generator.transfers) + len(generator.packet_sources)
        out.append((offset, size))
        offset += size
    return out


def _transfer_positions(plan: NetworkPlan) -> list[int]:
    """Index, among all flows, of every TCP transfer (in plan.transfers order)."""
    return [
        offset + i
        for (offset, _), generator in zip(_member_slices(plan), plan.generators, strict=True)
        for i in range(len(generator.transfers))
    ]


def run_scenario(
    scenario: Scenario,
    rep: int = 0,
    *,
    progress: bool | Callable[[float], None] = False,
    extra_attrs: Mapping[str, Any] | None = None,
    congestion_state: Sequence[str] = (),
) -> xr.Dataset:
    """Simulate repetition ``rep`` of ``scenario`` in ns-3 and return its dataset.

    Parameters
    ----------
    scenario
        A validated scenario.
    rep
        Repetition index, ``0 <= rep < scenario.repetitions``; it selects the
        ns-3 RNG run number (``rep + 1``) and the random start times.
    progress
        ``True``: show a progress bar on stderr; a callable: called with the simulated
        seconds done after each of the event loop's chunks (a batch job's log lines).
    extra_attrs
        Attributes added to the dataset (e.g. the figure and sweep values).
    congestion_state
        Names of traced values of the flows' congestion-control models to sample
        (e.g. ``DelayWindow`` of Compound), in addition to the scenario's
        ``trace.congestion_state``; each becomes a ``cc_<name>`` variable over
        (flow, time), NaN for flows whose model lacks it.
    """
    scenario.check_rep(rep)
    check_scenario(scenario)
    lib = build.load()
    plan = build_plan(scenario, rep)
    # the scenario's own trace.congestion_state, then any the caller adds
    congestion_state = list(dict.fromkeys([*scenario.trace.congestion_state, *congestion_state]))
    started = time.perf_counter()
    with _simulation(lib, scenario.seed, rep + 1) as sim:
        _instantiate(lib, sim, scenario, plan)
        for source in congestion_state:
            sim.SampleCongestionState(source)
        loop_started = time.perf_counter()
        _advance(sim, scenario.duration, f"{scenario.id} rep {rep}", progress)
        loop_s = time.perf_counter() - loop_started
        wall_s = time.perf_counter() - started
        link_names = [str(n) for n in sim.LinkNames()]
        series_names = [str(n) for n in sim.SeriesNames()]
        scalar_names = ["connected_s", "end_s", "rx_bytes", "tx_data_pkts", "lost_data_pkts"]
        if scenario.tcp.host_cache:
            scalar_names.append("initial_ssthresh_bytes")
        scalars = {var: _as_array(sim.FlowScalars(var)) for var in scalar_names}
        cc_types = [str(name) for name in sim.FlowCongestionTypes()]
        times = _as_array(sim.SampleTimes())
        optional_series = [f"cc:{source}" for source in congestion_state]
        if any(plan.traced[name].qdisc == "pfq_lqd" for name in link_names):
            optional_series.append("backlog_pkts")
        flow_series = {
            var: _as_array(sim.FlowSeries(var)) for var in (*FLOW_SERIES, *optional_series)
        }
        link_series = {var: _as_array(sim.LinkSeries(var)) for var in LINK_SERIES}
        queue_max = _as_array(sim.LinkScalars("queue_max_pkts"))
        events = int(sim.EventCount())
    # FlowScalars cover every flow in AddFlow order: the scenario's flows, then each
    # generator's members; series entities are the flows, then one per generator.
    n_flows = len(plan.flows)
    entities = plan.entity_info()
    assert entities.pop("flow") == series_names
    generator_rx = [
        float(sum(scalars["rx_bytes"][offset : offset + size]))
        for offset, size in _member_slices(plan)
    ]
    nan = [float("nan")] * len(plan.generators)
    flow_info = {
        **entities,
        "flow_cc_type": cc_types[:n_flows] + [""] * len(plan.generators),
        "flow_connected_s": [*scalars["connected_s"][:n_flows], *nan],
        "flow_end_s": [*scalars["end_s"][:n_flows], *nan],
        "flow_rx_bytes": [*scalars["rx_bytes"][:n_flows], *generator_rx],
    }
    if "initial_ssthresh_bytes" in scalars:
        flow_info["flow_initial_ssthresh_bytes"] = [
            *scalars["initial_ssthresh_bytes"][:n_flows],
            *nan,
        ]
    positions = _transfer_positions(plan)
    transfer_info = {
        **plan.transfer_info(),
        "transfer_connected_s": [float(scalars["connected_s"][i]) for i in positions],
        "transfer_end_s": [float(scalars["end_s"][i]) for i in positions],
        "transfer_rx_bytes": [float(scalars["rx_bytes"][i]) for i in positions],
        "transfer_tx_data_pkts": [float(scalars["tx_data_pkts"][i]) for i in positions],
        "transfer_lost_data_pkts": [float(scalars["lost_data_pkts"][i]) for i in positions],
    }
    if "initial_ssthresh_bytes" in scalars:
        transfer_info["transfer_initial_ssthresh_bytes"] = [
            float(scalars["initial_ssthresh_bytes"][i]) for i in positions
        ]
    raw = RawTraces(
        times_s=times,
        flow_names=series_names,
        link_names=link_names,
        flow_series=flow_series,
        link_series=link_series,
        flow_info=flow_info,
        link_info={},
        transfer_info=transfer_info,
    )
    traced = plan.traced
    directions = [traced[name] for name in link_names]
    raw.link_info = link_info(directions, scenario.tcp, L2_OVERHEAD_BYTES, queue_max)
    versions = provenance.software_versions(scenario.cpp_models())
    raw.attrs = {
        **run_attributes(scenario, rep, BACKEND, versions, L2_OVERHEAD_BYTES),
        "wall_time_s": round(wall_s, 3),
        "event_loop_wall_s": round(loop_s, 4),
        "ns3_events": events,
        **provenance.static_provenance(),
        **dict(extra_attrs or {}),
    }
    return make_run_dataset(raw)
