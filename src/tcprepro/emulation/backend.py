"""The Mininet backend: run one repetition of a scenario with real Linux TCP.

This module owns one emulated run, on the kernel it runs on (the native
route, or inside the VM of :mod:`tcprepro.emulation.vm` -- the code is the same),
and the order of its steps:

1. capability checks (:func:`check_scenario`): root, Mininet, iperf3, ethtool,
   tc, every qdisc and congestion control the scenario names -- one error
   listing everything missing, before anything starts;
2. the network (:class:`tcprepro.emulation.network.Emulation`): a Mininet
   topology from :func:`tcprepro.network_plan.build_plan`, shaped interfaces,
   routes, sysctls;
3. the fidelity probes (:mod:`tcprepro.emulation.probe`, judged by
   :mod:`tcprepro.emulation.fidelity`);
4. the traffic: one server per flow on its destination, one client per flow on
   its source started at the planned time (command lines in
   :mod:`tcprepro.emulation.iperf`: iperf3, or iperf 2 when a run's send and
   receive buffers must differ, ``EmulationOptions.traffic_tool = "iperf2"``),
   and each ``poisson_packets`` generator's UDP sender and sink
   (:mod:`tcprepro.emulation.background`; counts and measured loads in the
   dataset's ``background`` attribute and ``background_*_load`` variables), and
   each ``poisson_transfers`` generator's planned TCP transfers
   (:mod:`tcprepro.emulation.transfers`; the dataset's ``transfer_*`` variables);
5. the traces: one sampler per namespace (:mod:`tcprepro.emulation.sampler`)
   reading ``ss -tin`` (cwnd, smoothed RTT, segments, retransmissions, bytes
   received, bytes in flight) and ``tc -s qdisc`` (queue, drops, bytes sent)
   every interval, read back by :mod:`tcprepro.emulation.traces`;
   iperf3's JSON gives each flow's totals and the congestion control it used;
6. teardown, always (success, error, Ctrl-C, SIGTERM): every process killed,
   the Mininet hosts stopped (their namespaces and veths vanish with them),
   host-wide sysctls restored;
7. the dataset, in the schema of :mod:`tcprepro.store`.

What the emulation cannot measure is present as NaN and explained in the
``emulation_notes`` attribute: per-flow drop counts (``tc`` counts drops per
queue, not per flow), and random-loss counts when a loss rate is set.
"""

from __future__ import annotations

import contextlib
import json
import math
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from tcprepro import provenance
from tcprepro.emulation import background, capabilities, iperf, linux, traces, transfers
from tcprepro.emulation.fidelity import CpuMonitor, FidelityReport, Tolerances, sleep_until
from tcprepro.emulation.network import Emulation, sigterm_as_interrupt
from tcprepro.emulation.probe import probe_links
from tcprepro.emulation.sampler import start_argv
from tcprepro.emulation.topo import qdisc_tree, relay_name, with_relays
from tcprepro.errors import CapabilityError
from tcprepro.network_plan import NetworkPlan, build_plan
from tcprepro.scenario import Scenario, TransferGenerator
from tcprepro.store import RawTraces, link_info, make_run_dataset, run_attributes
from tcprepro.traffic import expand_transfers

__all__ = [
    "BACKEND",
    "L2_OVERHEAD_BYTES",
    "EmulationOptions",
    "check_scenario",
    "run_scenario",
]

BACKEND = "mininet"
#: htb and tc count the Ethernet header (no preamble, FCS or gap) on veth links
L2_OVERHEAD_BYTES = linux.ETHERNET_HEADER_BYTES

NOTES = {
    "goodput_bps": "from ss bytes_received of the receiving socket at each sample "
    "(iperf3 JSON totals are in the iperf3 attribute)",
    "rtt_s": "the sender's smoothed RTT (ss rtt) at each sample: one sample per interval",
    "cwnd_bytes": "ss cwnd x mss of the sending socket",
    "lost_data_pkts": "NaN: tc counts drops per queue, not per flow",
    "lost_ack_pkts": "NaN: tc counts drops per queue, not per flow",
    "random_lost_pkts": "netem's drops on the one lossy direction the flow's data crosses "
    "when no other flow crosses it (netem counts per direction); NaN otherwise",
    "random_drops_pkts": "netem's drops (its limit never binds: the random losses); 0 without "
    "a loss rate",
    "rto_count": "TcpExt TCPTimeouts of the sender's namespace (/proc/net/netstat) when the "
    "flow is its only sender; NaN otherwise",
    "link_queue_max_pkts": "largest occupancy among the samples (not between them)",
    "flow_connected_s": "first sample at which the data connection was established; a sized "
    "flow's: the sender's end of the handshake, timed in the guest",
    "flow_end_s": "a sized flow's last byte read by its sink, timed in the guest "
    "(tcprepro.emulation.transfers: one planned transfer on the flow's ports, with a 12-byte "
    "header before its bytes), not a sample",
    "unacked_bytes": "the sender's bytes in flight at each sample (ss bytes_sent - "
    "bytes_retrans - bytes_acked, see tcprepro.emulation.linux.in_flight_bytes), held over "
    "the interval: a sampled average, not a time integral",
    "transfer_end_s": "the sink's read of the transfer's last byte, timed in the guest "
    "(tcprepro.emulation.transfers), not a sample; each connection carries a 12-byte header "
    "(index, size) before its bytes",
    "transfer_tx_data_pkts": "NaN: Linux does not count segments per closed connection",
    "transfer_lost_data_pkts": "NaN: tc counts drops per queue, not per flow",
}


@dataclass(frozen=True)
class EmulationOptions:
    """How an emulated run is made (not part of the scenario)."""

    route: str = "native"
    probe_s: float = 2.0
    #: ``iperf3`` (both sockets get min(send_buffer, recv_buffer)) or ``iperf2`` (the
    #: server gets recv_buffer, the client send_buffer): see :mod:`tcprepro.emulation.iperf`
    traffic_tool: str = "iperf3"
    tolerances: Tolerances = field(default_factory=Tolerances)
    extra_attrs: Mapping[str, Any] = field(default_factory=dict)
    #: the host's wall clock in seconds (inside a UML guest the process clock is virtual:
    #: :func:`tcprepro.emulation.uml.host_wall_clock`); None: this process's clock
    wall_clock: Callable[[], float] | None = None
    #: versions keying the run, from its route (:meth:`tcprepro.emulation.routes.Route.versions`);
    #: None: those of the running kernel (a run on this host)
    versions: Mapping[str, str] | None = None


class _StageTimer:
    """Guest and wall seconds of each stage of a run (``stage_<name>_guest_s``, ``_wall_s``).

    Set-up, probe, traffic, collect, teardown, dataset. On a virtual clock a stage's wall
    time is what it costs: the set-up's commands take host time and little guest time.
    """

    def __init__(self, wall_clock: Callable[[], float] | None) -> None:
        self.wall_clock = wall_clock or time.perf_counter
        self.laps: dict[str, tuple[float, float]] = {}
        self._last = (time.perf_counter(), self.wall_clock())

    def lap(self, name: str) -> None:
        now = (time.perf_counter(), self.wall_clock())
        self.laps[name] = (now[0] - self._last[0], now[1] - self._last[1])
        self._last = now

    def attrs(self) -> dict[str, float]:
        out = {}
        for name, (guest, wall) in self.laps.items():
            out[f"stage_{name}_guest_s"] = round(guest, 3)
            out[f"stage_{name}_wall_s"] = round(wall, 3)
        return out


def check_scenario(scenario: Scenario, tool: str = "iperf3") -> capabilities.Needs:
    """Refuse, before anything starts, a scenario this kernel cannot emulate natively.

    Raises
    ------
    ConfigError
        A variant or queue discipline without a Linux mapping (naming the field).
    CapabilityError
        Listing every missing capability (root, programs, qdiscs, congestion controls).
    """
    needs = capabilities.scenario_needs(scenario) | capabilities.tool_needs(tool)
    missing = capabilities.native_missing(needs)
    if missing:
        lines = "\n  ".join(str(m) for m in missing)
        raise CapabilityError(f"cannot emulate {scenario.id} on this kernel:\n  {lines}")
    return needs


#: a started sink or sender: its process, ready file and log
_Started = tuple[subprocess.Popen, Path, Path]


def _traffic(emu: Emulation, cpu: CpuMonitor, progress: bool, rep: int = 0) -> dict[str, Any]:
    scenario = emu.scenario
    interval = scenario.trace.interval
    count = round(scenario.duration / interval)
    workdir = emu.workdir
    # a sized flow is one planned transfer (tcprepro.emulation.transfers): its sink times
    # the last byte; iperf carries the bulk flows
    sized = [i for i, flow in enumerate(emu.plan.flows) if flow.size_bytes]
    bulk = [i for i in range(len(emu.plan.flows)) if i not in sized]
    for index in bulk:
        flow = emu.plan.flows[index]
        emu.popen(flow.dst, iperf.server_argv(emu, index), workdir / f"server{index}.json")
    for index in bulk:
        emu.wait_listening(emu.plan.flows[index].dst, iperf.flow_ports(index)[0])
    go = workdir / "go"
    samplers = _start_samplers(emu, go, interval, count)
    generators = _start_generators(emu, rep, go, sized)
    _wait_ready(workdir, samplers, generators)
    t0 = time.monotonic() + 0.3
    go.write_text(f"{t0!r}\n")
    starts, clients = _start_clients(emu, cpu, bulk, t0)
    end = t0 + scenario.duration
    if progress:
        print(f"{scenario.id}: emulating {scenario.duration:g} s in real time", file=sys.stderr)
    sleep_until(end, cpu)
    _wait_finished(samplers, clients, generators, interval)
    reports = {index: _reports(workdir, "sized", index) for index in sized}
    for index, (sent, _) in reports.items():
        opened = sent.get("transfers", {}).get("0", {}).get("opened_s")
        if opened is not None:
            starts[index] = float(opened)
    return {
        "starts": starts,
        "count": count,
        "samplers": list(samplers),
        "background": _background_summary(scenario, workdir),
        "transfers": _transfer_info(scenario, rep, workdir),
        "sized": reports,
    }


def _start_samplers(
    emu: Emulation, go: Path, interval: float, count: int
) -> dict[str, subprocess.Popen]:
    """Start each node's trace sampler: ``count`` samples ``interval`` apart after ``go``."""
    workdir = emu.workdir
    samplers = {}
    for node, what in traces.sampler_plan(emu).items():
        argv = [
            sys.executable,
            "-m",
            "tcprepro.emulation.sampler",
            *start_argv(
                {
                    "ready": workdir / f"ready-{node}",
                    "go": go,
                    "out": workdir / f"samples-{node}.jsonl",
                }
            ),
            "--interval",
            repr(interval),
            "--count",
            str(count),
        ]
        if what["ss"]:
            argv.append("--ss")
        if what["tc"]:
            argv += ["--tc", *what["tc"].values()]
        samplers[node] = emu.popen(node, argv, workdir / f"sampler-{node}.log")
    return samplers


def _start_generators(emu: Emulation, rep: int, go: Path, sized: list[int]) -> dict[str, _Started]:
    """Start each generator's, then each sized flow's, sink and sender (process, ready, log)."""
    scenario = emu.scenario
    workdir = emu.workdir
    # generated traffic (poisson_packets, poisson_transfers): a sink on the destination, a
    # sender on the source, both waiting for the same go file as the samplers
    generators = {}
    for index, name in enumerate(background.check_generators(scenario)):
        files = _pair_files(workdir, go, "background", name)
        commands = _generator_commands(emu, rep, name, index, files)
        for role, started in _start_pair(emu, "background", name, commands, files).items():
            generators[f"{role}-{name}"] = started
    for index in sized:
        files = _pair_files(workdir, go, "sized", index)
        commands = _sized_flow_commands(emu, index, files)
        for role, started in _start_pair(emu, "sized", index, commands, files).items():
            generators[f"{role} of flow {emu.plan.flows[index].name}"] = started
    return generators


def _wait_ready(
    workdir: Path, samplers: dict[str, subprocess.Popen], generators: dict[str, _Started]
) -> None:
    """Wait (120 s at most) for every sampler's and generator's ready file; else raise."""
    waiting = {
        **{
            f"sampler in {node}": (proc, workdir / f"ready-{node}", workdir / f"sampler-{node}.log")
            for node, proc in samplers.items()
        },
        **{f"background {key}": value for key, value in generators.items()},
    }
    deadline = time.monotonic() + 120.0
    while not all(ready.exists() for _, ready, _ in waiting.values()):
        if time.monotonic() > deadline:
            raise RuntimeError("the trace samplers (or background) did not start within 120 s")
        for what, (proc, _, log) in waiting.items():
            if proc.poll() is not None:
                text = log.read_text(errors="replace")[-1000:]
                raise RuntimeError(f"{what} exited early: {text}")
        time.sleep(0.02)


def _start_clients(
    emu: Emulation, cpu: CpuMonitor, bulk: list[int], t0: float
) -> tuple[dict[int, float], dict[int, subprocess.Popen]]:
    """Start each bulk flow's iperf client at its start after ``t0``: its start, its process."""
    workdir = emu.workdir
    starts: dict[int, float] = {}
    clients = {}
    order = sorted(bulk, key=lambda i: emu.plan.flows[i].start_s)
    for index in order:
        flow = emu.plan.flows[index]
        sleep_until(t0 + flow.start_s, cpu)
        starts[index] = time.monotonic() - t0
        clients[index] = emu.popen(
            flow.src, iperf.client_argv(emu, index), workdir / f"client{index}.json"
        )
    return starts, clients


def _wait_finished(
    samplers: dict[str, subprocess.Popen],
    clients: dict[int, subprocess.Popen],
    generators: dict[str, _Started],
    interval: float,
) -> None:
    """Wait for the samplers, the iperf clients (15 s at most), the generators; else raise."""
    for node, proc in samplers.items():
        try:
            proc.wait(timeout=30.0 + 5 * interval)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"the sampler in {node} did not finish") from exc
    grace = time.monotonic() + 15.0
    for proc in clients.values():
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.05, grace - time.monotonic()))
    for key, (proc, _, _) in generators.items():
        try:
            proc.wait(timeout=30.0 + background.SINK_GRACE_S)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"the background {key} did not finish") from exc


def _sized_flow_commands(
    emu: Emulation, index: int, files: dict[str, dict[str, Path]]
) -> dict[str, tuple[str, list[str]]]:
    """Node and guest command of a sized flow's sink and sender, the sink first.

    The flow is one planned transfer of its size at its start, on the flow's ports (the
    samplers find its sockets there), with the scenario's send buffer at the sender
    and receive buffer at the sink, each set apart as iperf 2 sets them.
    """
    flow = emu.plan.flows[index]
    plan = emu.workdir / f"sized-plan-{index}.json"
    cc = linux.congestion_control(flow.variant, f"flows.{flow.name}.variant")
    transfers.write_plan(plan, [flow], cc)
    port, cport = iperf.flow_ports(index)
    src_ip, dst_ip = emu.addressing.host_ip(flow.src), emu.addressing.host_ip(flow.dst)
    send_buffer, recv_buffer = iperf.requested_buffers(emu.scenario.tcp, "iperf2")
    until = emu.scenario.duration
    sender = transfers.sender_argv(
        plan,
        dst_ip,
        port,
        until,
        files["send"],
        source=(src_ip, cport),
        send_buffer=send_buffer,
        pacing_bps=iperf.PACING_MAX_BPS if flow.pacing else None,
        write_bytes=flow.write_bytes,
    )
    sink = transfers.sink_argv(dst_ip, port, until, files["sink"], recv_buffer=recv_buffer)
    return {"sink": (flow.dst, sink), "send": (flow.src, sender)}


def _pair_files(workdir: Path, go: Path, prefix: str, key: object) -> dict[str, dict[str, Path]]:
    """The start files (ready, go, out) of a sink and a sender.

    A generator's pair or a sized flow's, named ``<prefix>-<role>-<key>``.
    """
    return {
        role: {
            "ready": workdir / f"ready-{prefix}-{role}-{key}",
            "go": go,
            "out": workdir / f"{prefix}-{role}-{key}.json",
        }
        for role in ("sink", "send")
    }


def _start_pair(
    emu: Emulation,
    prefix: str,
    key: object,
    commands: dict[str, tuple[str, list[str]]],
    files: dict[str, dict[str, Path]],
) -> dict[str, tuple[subprocess.Popen, Path, Path]]:
    """Start a sink and a sender (``commands``, the sink first).

    Returns each role's process, ready file and log.
    """
    started = {}
    for role, (node, argv) in commands.items():
        log = emu.workdir / f"{prefix}-{role}-{key}.log"
        started[role] = (emu.popen(node, argv, log), files[role]["ready"], log)
    return started


def _generator_commands(
    emu: Emulation, rep: int, name: str, index: int, files: dict[str, dict[str, Path]]
) -> dict[str, tuple[str, list[str]]]:
    """Node and guest command of a generator's sink and sender, the sink first.

    The sink is then listening when the sender starts.
    """
    scenario = emu.scenario
    src, dst = scenario.endpoints_of(name)
    src_ip, dst_ip = emu.addressing.host_ip(src), emu.addressing.host_ip(dst)
    gen = scenario.traffic[name]
    if isinstance(gen, TransferGenerator):
        plan = emu.workdir / f"transfers-plan-{name}.json"
        cc = linux.congestion_control(gen.variant, f"traffic.{name}.variant")
        transfers.write_plan(plan, expand_transfers(scenario, name, rep), cc)
        port = transfers.SINK_BASE_PORT + index
        until = scenario.duration
        pacing = None if gen.max_rate is None else int(gen.max_rate)
        sender = transfers.sender_argv(plan, dst_ip, port, until, files["send"], pacing_bps=pacing)
        return {
            "sink": (dst, transfers.sink_argv(dst_ip, port, until, files["sink"])),
            "send": (src, sender),
        }
    return {
        "sink": (dst, background.sink_argv(scenario, index, dst_ip, files["sink"])),
        "send": (
            src,
            background.sender_argv(scenario, rep, name, index, src_ip, dst_ip, files["send"]),
        ),
    }


def _reports(workdir: Path, prefix: str, key: object) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sender's and the sink's reports of a pair (:func:`_pair_files`)."""
    sent, received = (
        json.loads((workdir / f"{prefix}-{role}-{key}.json").read_text())
        for role in ("send", "sink")
    )
    return sent, received


def _background_summary(scenario: Scenario, workdir: Path) -> dict[str, dict[str, Any]]:
    """Each packet generator's counts and measured loads (sender's and sink's reports)."""
    return {
        name: background.summary(scenario, name, *_reports(workdir, "background", name))
        for name in background.packet_generators(scenario)
    }


def _transfer_info(
    scenario: Scenario, rep: int, workdir: Path
) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
    """The dataset's ``transfer_*`` values and each transfer generator's summary.

    Values: every planned transfer, generator by generator; summaries:
    :func:`tcprepro.emulation.transfers.summary`.
    """
    values: dict[str, list[Any]] = {}
    summaries = {}
    for name in background.transfer_generators(scenario):
        planned = expand_transfers(scenario, name, rep)
        reports = _reports(workdir, "background", name)
        until = scenario.duration
        for key, column in transfers.transfer_info(planned, *reports, until).items():
            values.setdefault(key, []).extend(column)
        summaries[name] = transfers.summary(planned, *reports, until)
    return values, summaries


def run_scenario(
    scenario: Scenario,
    rep: int = 0,
    *,
    options: EmulationOptions | None = None,
    progress: bool = False,
    keep_workdir: Path | None = None,
) -> xr.Dataset:
    """Emulate repetition ``rep`` of ``scenario`` on this kernel and return its dataset.

    Parameters
    ----------
    scenario
        A validated scenario.
    rep
        Repetition index: it selects the random start times (as in ns-3).
    options
        Route (recorded), probe duration, tolerances, extra dataset attributes.
    progress
        Print what happens on stderr.
    keep_workdir
        Copy the raw traces (sampler output, iperf3 JSON) there (debugging).

    Raises
    ------
    CapabilityError
        Before anything starts, listing every missing capability.
    """
    options = options or EmulationOptions()
    scenario.check_rep(rep)
    needs = check_scenario(scenario, options.traffic_tool)
    plan = with_relays(build_plan(scenario, rep))
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="tcprepro-emu-"))
    try:
        stages = _StageTimer(options.wall_clock)
        with (
            sigterm_as_interrupt(),
            Emulation(scenario, plan, workdir, options.traffic_tool) as emu,
        ):
            stages.lap("setup")
            report = probe_links(emu, options.probe_s, options.tolerances, options.traffic_tool)
            stages.lap("probe")
            cpu = CpuMonitor()
            info = _traffic(emu, cpu, progress, rep)
            stages.lap("traffic")
            report.cpu_mean_busy, report.cpu_saturated_fraction = cpu.summary(
                options.tolerances.cpu_busy
            )
            count = info["count"]
            samples = {
                node: traces.read_samples(workdir / f"samples-{node}.jsonl", count)
                for node in info["samplers"]
            }
            trees = {}
            for index, link in enumerate(plan.links):
                for node, direction in ((link.a, link.a_to_b), (link.b, link.b_to_a)):
                    if direction.trace_name:
                        trees[direction.trace_name] = qdisc_tree(
                            emu.node(node), emu.addressing.interface(index)
                        )
            sysctls = emu.sysctls
            module_parameters = dict(emu.module_parameters)
            stages.lap("collect")
        stages.lap("teardown")
        report.sample_late_fraction, report.sample_max_late_s = traces.sampling_lateness(
            samples, scenario.trace.interval
        )
        report.judge()
        dataset = _dataset(
            scenario, rep, plan, needs, options, samples, info, report, trees, sysctls, workdir
        )
        stages.lap("dataset")
        dataset.attrs["wall_time_s"] = round(time.perf_counter() - started, 3)
        dataset.attrs.update(stages.attrs())
        if module_parameters:  # the testbed profile's, as the kernel read them back
            dataset.attrs["module_parameters"] = json.dumps(module_parameters, sort_keys=True)
        return dataset
    finally:
        if keep_workdir is not None:
            shutil.copytree(workdir, keep_workdir, dirs_exist_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)


def _dataset(
    scenario: Scenario,
    rep: int,
    plan: NetworkPlan,
    needs: capabilities.Needs,
    options: EmulationOptions,
    samples: dict[str, list],
    info: dict[str, Any],
    report: FidelityReport,
    trees: dict[str, str],
    sysctls: dict[str, dict[str, str]],
    workdir: Path,
) -> xr.Dataset:
    interval = scenario.trace.interval
    count = info["count"]
    tool = options.traffic_tool
    emu_view = traces.View(scenario, plan, tool)
    flow_series, flow_facts = traces.flow_series(emu_view, samples, count)
    link_names, link_series = traces.link_series(emu_view, samples, count)
    flow_series["random_lost_pkts"] = traces.flow_random_losses(
        emu_view, link_names, link_series, count
    )
    sized = info["sized"]
    iperf3 = _tool_summaries(plan, tool, sized, workdir)
    connected_s, end_s = _sized_flow_results(
        scenario, plan, sized, count, flow_series, flow_facts, iperf3
    )
    times = interval * np.arange(1, count + 1)
    raw = RawTraces(
        times_s=times,
        flow_names=[f.name for f in plan.flows],
        link_names=link_names,
        flow_series={k: v[1:] for k, v in flow_series.items()},
        link_series={k: v[1:] for k, v in link_series.items()},
        flow_info=_flow_info(plan, info, flow_series, flow_facts, connected_s, end_s),
        link_info={},
        transfer_info=info["transfers"][0],
    )
    raw.link_info = _link_info(scenario, plan, link_names, link_series)
    raw.attrs = _run_attrs(
        scenario, rep, plan, needs, options, flow_facts, report, trees, sysctls, iperf3
    )
    ds = make_run_dataset(raw)
    _add_probe_variables(ds, report, link_names)
    _add_generated_traffic(ds, info)
    return ds


def _tool_summaries(
    plan: NetworkPlan, tool: str, sized: dict[int, Any], workdir: Path
) -> dict[str, dict[str, Any]]:
    """Each bulk flow's summary of its iperf server's and client's reports."""
    summarise = iperf.iperf3_summary if tool == "iperf3" else iperf.iperf2_summary
    iperf3 = {
        flow.name: summarise(workdir / f"server{i}.json")
        for i, flow in enumerate(plan.flows)
        if i not in sized
    }
    senders = {
        flow.name: summarise(workdir / f"client{i}.json")
        for i, flow in enumerate(plan.flows)
        if i not in sized
    }
    for name, summary in senders.items():
        if tool == "iperf2":  # the two ends report different facts: keep both
            iperf3[name] = {"server": iperf3[name], "client": summary}
            continue
        iperf3[name] = {**iperf3[name], **{k: v for k, v in summary.items() if v is not None}}
    return iperf3


def _sized_flow_results(
    scenario: Scenario,
    plan: NetworkPlan,
    sized: dict[int, Any],
    count: int,
    flow_series: dict[str, np.ndarray],
    flow_facts: dict[str, Any],
    iperf3: dict[str, dict[str, Any]],
) -> tuple[np.ndarray, np.ndarray]:
    """Each flow's connection and end times; fills in the sized flows' summaries and counts."""
    interval = scenario.trace.interval
    end_s = np.full(len(plan.flows), np.nan)
    connected_s = flow_facts["connected_k"] * interval
    send_buffer, recv_buffer = iperf.requested_buffers(scenario.tcp, "iperf2")
    for i, (sent, received) in sized.items():
        flow = plan.flows[i]
        iperf3[flow.name] = {  # what carried it: the transfer programs, with both buffers
            "transfers": transfers.summary([flow], sent, received, scenario.duration),
            "send_buffer_requested_bytes": send_buffer,
            "recv_buffer_requested_bytes": recv_buffer,
        }
        opened = sent.get("transfers", {}).get("0", {})
        arrived = received.get("transfers", {}).get("0", {})
        connected_s[i] = opened.get("connected_s", math.nan)
        end_s[i] = transfers.end_within(arrived, scenario.duration)
        if math.isfinite(end_s[i]):  # the sink's count stands from the last byte on
            after = np.arange(count + 1) * interval >= end_s[i]
            column = flow_series["rx_bytes"][:, i]
            column[after] = np.fmax(column[after], float(arrived.get("rx_bytes", 0)))
    return connected_s, end_s


def _flow_info(
    plan: NetworkPlan,
    info: dict[str, Any],
    flow_series: dict[str, np.ndarray],
    flow_facts: dict[str, Any],
    connected_s: np.ndarray,
    end_s: np.ndarray,
) -> dict[str, Any]:
    """The dataset's per-flow ``flow_*`` values."""
    rx_final = flow_series["rx_bytes"][-1] if plan.flows else np.empty(0)
    return {
        "flow_variant": [f.variant.name for f in plan.flows],
        "flow_cc_type": [f"linux:{cc}" if cc else "" for cc in flow_facts["cc"]],
        "flow_src": [f.src for f in plan.flows],
        "flow_dst": [f.dst for f in plan.flows],
        "flow_label": [f.label for f in plan.flows],
        "flow_link": [f.bottleneck for f in plan.flows],
        "flow_start_s": [info["starts"].get(i, math.nan) for i in range(len(plan.flows))],
        "flow_connected_s": connected_s,
        "flow_end_s": end_s,
        "flow_size_bytes": [f.size_bytes for f in plan.flows],
        "flow_kind": ["sized" if f.size_bytes else "bulk" for f in plan.flows],
        "flow_rx_bytes": rx_final,
    }


def _link_info(
    scenario: Scenario, plan: NetworkPlan, link_names: list[str], link_series: dict[str, np.ndarray]
) -> dict[str, Any]:
    """The dataset's per-link values of the traced directions, with each one's largest queue."""
    traced = plan.traced
    directions = [traced[name] for name in link_names]
    queue_max = [
        float(np.nanmax(link_series["queue_pkts"][:, j]))
        if np.isfinite(link_series["queue_pkts"][:, j]).any()
        else math.nan
        for j in range(len(link_names))
    ]
    return link_info(directions, scenario.tcp, L2_OVERHEAD_BYTES, queue_max)


def _run_attrs(
    scenario: Scenario,
    rep: int,
    plan: NetworkPlan,
    needs: capabilities.Needs,
    options: EmulationOptions,
    flow_facts: dict[str, Any],
    report: FidelityReport,
    trees: dict[str, str],
    sysctls: dict[str, dict[str, str]],
    iperf3: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The dataset's attributes: the run, its route and tools, the stack, the fidelity gate."""
    tool = options.traffic_tool
    versions = (
        dict(options.versions)
        if options.versions is not None
        else capabilities.versions_record(options.route, platform.release(), tool)
    )
    return {
        **run_attributes(scenario, rep, BACKEND, versions, L2_OVERHEAD_BYTES),
        "route": options.route,
        "iperf3_version": capabilities.iperf3_version(),
        "mininet_version": capabilities.mininet_importable() or "",
        "qdiscs": json.dumps(trees, sort_keys=True),
        # a number: the kernel paced that flow's socket (tcprepro.emulation.iperf)
        "flow_max_pacing_bps": json.dumps(
            {
                f.name: None if math.isnan(rate) else rate
                for f, rate in zip(plan.flows, flow_facts["max_pacing_bps"], strict=True)
            }
        ),
        # bytes per application write of each flow (its write_size, else its tool's default)
        "flow_write_bytes": json.dumps({f.name: iperf.write_bytes(f, tool) for f in plan.flows}),
        "qdiscs_needed": " ".join(needs.qdiscs),
        "congestion_controls_available": " ".join(capabilities.congestion_controls()),
        "sysctls": json.dumps(sysctls, sort_keys=True),
        "offloads": "tso, gso, gro off on every emulated interface (checked with ethtool -k)",
        # nodes carrying a host's traced egress (topo.with_relays)
        "relays": " ".join(relay_name(h) for h in plan.hosts if relay_name(h) in plan.routers)
        or "none",
        "socket_buffer_bytes": iperf.socket_buffer_bytes(scenario.tcp),
        "traffic_tool": tool,
        "traffic_tool_version": capabilities.tool_version(tool),
        # the gate's UDP probe is sent by the run's traffic tool (probe.probe_links); kept
        # in a combined dataset where the per-run stage times are not (they differ)
        "probe_tool": tool,
        "send_buffer_requested_bytes": iperf.requested_buffers(scenario.tcp, tool)[0],
        "recv_buffer_requested_bytes": iperf.requested_buffers(scenario.tcp, tool)[1],
        "iperf3": json.dumps(iperf3, sort_keys=True),
        "fidelity": report.to_json(),
        "fidelity_ok": int(report.ok),
        "fidelity_flags": "; ".join(report.flags),
        "emulation_notes": json.dumps(NOTES, sort_keys=True),
        **provenance.static_provenance(),
        **dict(options.extra_attrs),
    }


def _add_probe_variables(ds: xr.Dataset, report: FidelityReport, link_names: list[str]) -> None:
    """Add each link's probe results (NaN if not probed) and the gate's verdict, described."""
    probes = {p.link: p for p in report.links}
    ds["link_probe_goodput_bps"] = (
        "link",
        [probes[n].probe_goodput_bps if n in probes else math.nan for n in link_names],
    )
    ds["link_probe_expected_bps"] = (
        "link",
        [probes[n].expected_goodput_bps if n in probes else math.nan for n in link_names],
    )
    ds["link_probe_rtt_s"] = (
        "link",
        [probes[n].probe_rtt_s if n in probes else math.nan for n in link_names],
    )
    ds["link_probe_configured_rtt_s"] = (
        "link",
        [probes[n].configured_rtt_s if n in probes else math.nan for n in link_names],
    )
    ds["fidelity_ok"] = ((), int(report.ok))
    for name in ("link_probe_goodput_bps", "link_probe_expected_bps"):
        ds[name].attrs["units"] = "bit/s"
    for name in ("link_probe_rtt_s", "link_probe_configured_rtt_s"):
        ds[name].attrs["units"] = "s"
    ds["fidelity_ok"].attrs["description"] = (
        "1: the run passed the fidelity gate (see attribute fidelity)"
    )


def _add_generated_traffic(ds: xr.Dataset, info: dict[str, Any]) -> None:
    """Add the generated background's loads and the generators' and transfers' summaries."""
    if info["background"]:
        # the generated background: did it run at its stated load? (all generators
        # together; each one's counts in the attribute ``background``)
        loads = info["background"].values()
        ds.attrs["background"] = json.dumps(info["background"], sort_keys=True)
        for name in ("offered_load", "received_load"):
            ds[f"background_{name}"] = ((), float(sum(g[name] for g in loads)))
            ds[f"background_{name}"].attrs["description"] = (
                f"generated background's {name.replace('_', ' ')}: IP bytes "
                f"{'sent' if name == 'offered_load' else 'received'} in the measurement "
                "window over its length and the bottleneck rate (configured: traffic.*.load)"
            )
    if info["transfers"][1]:
        # the generated transfers: opened on time, refused, delivered (per generator)
        ds.attrs["transfers"] = json.dumps(info["transfers"][1], sort_keys=True)
