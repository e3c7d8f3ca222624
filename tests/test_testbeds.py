"""Testbed stack profiles: every scenario on its study's testbed, and each knob on a trace.

The knob tests run one short flow in ns-3 on a study's profile and read the behaviour the
profile promises off its trace: the initial window, the growth per RTT with delayed ACKs,
CUBIC's decrease, the first timeout, the host cache, a client's request.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import ACCESS, DUMBBELL, ROOT
from model_checks import simulate
from tcprepro import testbeds
from tcprepro.errors import ConfigError
from tcprepro.ns3.backend import run_scenario
from tcprepro.scenario_io import load_scenario, load_scenario_dict

TESTBEDS = ROOT / "workflow" / "testbeds"
FREEBSD = str(TESTBEDS / "freebsd-9.2.yaml")
STUDY_TESTBED = {
    "A": "freebsd-9.2",
    "B": "ns2-tcp-linux",
    "C": "linux-2.6.16",
    "D": "linux-2.6.12",
}
MSS = 1448


def _scenario_files() -> list[Path]:
    # B_base.yaml is a base file (no flow of its own): it resolves through B5.x
    return sorted(p for p in (ROOT / "workflow" / "scenarios").glob("*.yaml") if p.stem != "B_base")


# ---------------------------------------------------------------------------
# the profiles as data


@pytest.mark.parametrize("path", _scenario_files(), ids=lambda p: p.stem)
def test_every_scenario_of_studies_a_to_d_resolves_with_its_testbed(path):
    scenario = load_scenario(path)
    assert scenario.study in STUDY_TESTBED, scenario.study
    assert scenario.stack is not None, f"{path.name} takes no testbed profile"
    assert scenario.stack.testbed == STUDY_TESTBED[scenario.study]


def test_docs_testbeds_md_is_generated_from_the_profile_files():
    traces = testbeds.load_knob_traces(ROOT / "workflow" / "knob-traces.yaml", TESTBEDS)
    assert traces, "workflow/knob-traces.yaml holds no trace"
    generated = testbeds.render_markdown(TESTBEDS.glob("*.yaml"), traces)
    committed = (ROOT / "docs" / "testbeds.md").read_text()
    assert committed == generated, (
        "docs/testbeds.md is stale: tcprepro testbeds --write docs/testbeds.md"
    )


def test_every_knob_names_its_source_and_both_backends():
    for path in TESTBEDS.glob("*.yaml"):
        profile = testbeds.load_profile(path)
        for knob in profile.knobs:
            for text in (knob.source, knob.ns3, knob.linux):
                assert text.strip(), knob.name


def test_a_profile_fills_what_the_scenario_leaves_and_the_scenario_wins():
    data = copy.deepcopy(ACCESS) | {"testbed": FREEBSD}
    scenario = load_scenario_dict(data)
    assert scenario.tcp.initial_cwnd_pkts == 3
    assert scenario.tcp.delayed_ack_timeout == pytest.approx(0.1)
    assert (scenario.tcp.min_rto, scenario.tcp.rto_granularity) == pytest.approx((0.03, 0.2))
    assert scenario.stack.variants["Cubic"]["Beta"] == pytest.approx(0.8)
    data["tcp"] = {"initial_cwnd_pkts": 10}
    assert load_scenario_dict(data).tcp.initial_cwnd_pkts == 10
    # the resolved form is a fixed point: loading it again gives the same scenario
    again = load_scenario_dict(json.loads(scenario.to_json()) | {"testbed": FREEBSD})
    assert again.to_json() == scenario.to_json()


def test_the_compound_end_runs_windows_7_on_its_host_only():
    data = copy.deepcopy(ACCESS) | {"testbed": FREEBSD}
    data["flows"]["up"]["variant"] = "Compound"  # the client sends Compound: a Windows 7 host
    scenario = load_scenario_dict(data)
    stacks = scenario.host_stacks()
    assert list(stacks) == ["client"]
    assert stacks["client"].testbed == "windows-7"
    assert stacks["client"].socket["MinRto"] == "300ms"
    assert scenario.growth_counting("Compound", "client") == ("ack", "ack")
    assert scenario.growth_counting("NewReno", "server") == ("segment", "segment")
    from tcprepro.ns3.backend import record_calls

    calls = record_calls(scenario)
    node_line = next(line for line in calls.splitlines() if line.startswith("node_sockets"))
    assert "MinRto=300ms" in node_line
    assert "DelAckTimeout=200ms" in node_line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "knobs: [{name: x, value: v, source: s, set: {bogus.key: 1}, ns3: n, linux: l}]",
            "must start with",
        ),
        ("knobs: [{name: x, value: v, source: s, ns3: set somehow, linux: l}]", "give 'set'"),
        ("knobs: []", "at least 1 item"),
    ],
)
def test_a_malformed_profile_is_refused_naming_the_field(tmp_path, text, message):
    path = tmp_path / "p.yaml"
    path.write_text(f"id: p\ntitle: t\nstudies: [A]\nstack: s\n{text}\n")
    with pytest.raises(ConfigError, match=message):
        testbeds.load_profile(path)


def test_a_scenario_naming_a_missing_or_host_profile_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="testbed profile not found"):
        load_scenario_dict(copy.deepcopy(ACCESS) | {"testbed": str(tmp_path / "none.yaml")})
    with pytest.raises(ConfigError, match="not a host"):
        load_scenario_dict(copy.deepcopy(ACCESS) | {"testbed": str(TESTBEDS / "windows-7.yaml")})
    bad = copy.deepcopy(ACCESS) | {
        "stack": {"testbed": "x", "linux_sysctls": {"net.ipv4.tcp_ecn": 0}}
    }
    with pytest.raises(ConfigError, match="slash form"):
        load_scenario_dict(bad)


def test_the_records_profile_digest_moves_with_a_setting_not_with_a_what_if(tmp_path):
    # the verdict records name a profile by its settings: a what-if's claims list or a
    # source edited in the file is no new profile, a knob's set value is
    for name in ("freebsd-9.2.yaml", "windows-7.yaml"):
        (tmp_path / name).write_text((TESTBEDS / name).read_text())
    path = tmp_path / "freebsd-9.2.yaml"
    before = testbeds.settings_digest(path)
    data = yaml.safe_load(path.read_text())
    data["what_if"][0]["claims"] = ["A-c1"]
    data["knobs"][0]["source"] = "another source"
    path.write_text(yaml.safe_dump(data))
    assert testbeds.settings_digest(path) == before
    host = yaml.safe_load((tmp_path / "windows-7.yaml").read_text())
    host["knobs"][0]["set"]["socket.MinRto"] = "1s"
    (tmp_path / "windows-7.yaml").write_text(yaml.safe_dump(host))
    assert testbeds.settings_digest(path) != before


def test_study_b_drops_at_the_head_of_the_longest_queue_and_the_what_if_at_its_tail():
    scenario = load_scenario(ROOT / "workflow/scenarios/B5.10.yaml")
    assert scenario.topology.bottleneck.qdisc_params["DropFront"] is True
    tail = load_scenario(
        ROOT / "workflow/scenarios/B5.10.yaml", ["stack.qdiscs.pfq_lqd.DropFront=false"]
    )
    assert tail.topology.bottleneck.qdisc_params["DropFront"] is False
    fifo = load_scenario(ROOT / "workflow/scenarios/B5.1.yaml")
    assert "DropFront" not in fifo.topology.bottleneck.qdisc_params


def test_the_emulated_guest_takes_the_profiles_sysctls_and_module_parameters():
    from tcprepro.emulation import linux

    scenario = load_scenario(ROOT / "workflow/scenarios/X1.yaml")
    sysctls = linux.host_sysctls(scenario.tcp, router=False, stack=scenario.stack)
    assert sysctls["net.ipv4.tcp_no_metrics_save"] == "0"  # FreeBSD's host cache
    assert sysctls["net.ipv4.tcp_no_ssthresh_metrics_save"] == "0"
    assert linux.route_metrics(scenario.tcp)[:4] == ["initcwnd", "3", "rto_min", "200ms"]
    cubic = load_scenario(
        ROOT / "workflow/scenarios/X1.yaml",
        ["flows.up.variant=Cubic", "flows.down.variant=NewReno"],
    )
    params = linux.module_parameters(cubic)
    assert params == {
        "/sys/module/tcp_cubic/parameters/beta": "819",
        "/sys/module/tcp_cubic/parameters/fast_convergence": "1",
        "/sys/module/tcp_cubic/parameters/hystart": "0",
        "/sys/module/tcp_cubic/parameters/tcp_friendliness": "1",
    }  # no Vegas flow: tcp_vegas's parameters are left alone
    assert "tcp_cubic.beta=819" in linux.boot_module_arguments(params)
    b = load_scenario(ROOT / "workflow/scenarios/X10.yaml")
    paced = linux.host_sysctls(b.tcp, router=False, stack=b.stack)
    assert paced["net.ipv4.tcp_pacing_ss_ratio"] == paced["net.ipv4.tcp_pacing_ca_ratio"] == "100"


def test_the_profiles_what_ifs_name_claims_of_the_registry():
    registry = {
        entry["id"]
        for entry in yaml.safe_load((ROOT / "src/tcprepro/claims/registry.yaml").read_text())
    }
    for path in TESTBEDS.glob("*.yaml"):
        for entry in testbeds.load_profile(path).what_if:
            assert set(entry.claims) <= registry, (entry.id, set(entry.claims) - registry)


# ---------------------------------------------------------------------------
# each knob on a trace (short ns-3 runs)


def _one_flow(overrides, variant="NewReno", testbed=FREEBSD, **extra):
    data = copy.deepcopy(DUMBBELL) | {"testbed": testbed} if testbed else copy.deepcopy(DUMBBELL)
    data["flows"]["f0"]["variant"] = variant
    return simulate(data, overrides, **extra)


@pytest.mark.slow
def test_a_freebsd_flow_sends_its_initial_window_in_the_first_rtt():
    overrides = ["duration=1s", "warmup=0s", "trace.interval=5ms"]
    for testbed, expected in ((FREEBSD, 3), (None, 10)):  # ns-3's default: 10 segments
        ds = _one_flow(overrides, testbed=testbed).sel(flow="f0")
        connected = float(ds["flow_connected_s"])
        rtt = 2 * (0.020 + 0.005)  # the first ACK of data comes back one RTT after it left
        first = (ds["time"] >= connected) & (ds["time"] <= connected + rtt - 0.010)
        assert float(ds["tx_data_pkts"].where(first).sum()) == expected


def _growth_per_rtt(ds):
    """Segments cwnd gains per round trip in congestion avoidance, and segments per ACK."""
    ds = ds.sel(flow="f0")
    cwnd = ds["cwnd_bytes"].values / MSS
    rtt = ds["rtt_s"].to_series().ffill().values
    dt = np.diff(ds["time"].values, prepend=0.0)
    start, end = 20, 80  # 1 s to 4 s: past the handshake, before any loss
    rounds = float(np.sum(dt[start + 1 : end + 1] / rtt[start + 1 : end + 1]))
    per_ack = float(ds["tx_data_pkts"][start:end].sum() / ds["rtt_samples"][start:end].sum())
    return (cwnd[end] - cwnd[start]) / rounds, per_ack


@pytest.mark.slow
def test_a_freebsd_flow_grows_one_segment_per_rtt_with_two_segments_per_ack():
    # congestion avoidance from the start (ssthresh 20 segments), a path that never loses
    overrides = [
        "duration=5s",
        "warmup=0s",
        "trace.interval=50ms",
        "topology.bottleneck.rate=100Mbps",
        "topology.bottleneck.buffer_pkts=1000",
        f"stack.hosts.NewReno={{testbed: t, socket: {{InitialSlowStartThreshold: {20 * MSS}}}}}",
    ]
    growth, per_ack = _growth_per_rtt(_one_flow(overrides))
    assert per_ack == pytest.approx(2.0, rel=0.1)  # the ACK count read from the trace
    assert growth == pytest.approx(1.0, rel=0.1)  # byte counting: one MSS per RTT
    # ns-3's own TcpNewReno grows per ACK: half a segment per RTT with the same ACKs
    growth, per_ack = _growth_per_rtt(
        _one_flow([*overrides, "stack.hosts.NewReno.ack_counting=ack"])
    )
    assert per_ack == pytest.approx(2.0, rel=0.1)
    assert growth == pytest.approx(0.5, rel=0.1)


def _decrease_ratios(ds):
    cwnd = ds["cwnd_bytes"].sel(flow="f0").values / MSS
    ratios = []
    for i in np.where(np.diff(cwnd) < -2)[0]:
        after = cwnd[i + 1 : i + 10]
        ratios.append(np.nanmin(after) / cwnd[i])
    return ratios[1:]  # the first loss ends slow start with many losses


@pytest.mark.slow
def test_after_a_loss_a_freebsd_cubic_window_keeps_four_fifths():
    lossy = [
        "duration=30s",
        "warmup=0s",
        "trace.interval=10ms",
        "tcp.recovery=classic",  # cwnd = ssthresh when the recovery ends
        "topology.bottleneck.rate=20Mbps",
        "topology.bottleneck.buffer_pkts=30",
    ]
    ratios = _decrease_ratios(_one_flow(lossy, variant="Cubic"))
    assert len(ratios) >= 5
    assert np.median(ratios) == pytest.approx(0.8, abs=0.03), ratios
    # ns-3's own CUBIC keeps 0.7 (RFC 9438)
    ns3 = _decrease_ratios(_one_flow(lossy, variant="Cubic", testbed=None))
    assert np.median(ns3) == pytest.approx(0.7, abs=0.03), ns3


def _timeout_gaps(ds):
    """Seconds from the last ACK of new data to each retransmission timeout it armed.

    Only timeouts with no retransmission since that ACK: a fast recovery's later partial
    ACKs do not re-arm the timer (RFC 6582), so the gap from them is not an RTO.
    """
    ds = ds.sel(flow="f0")
    times = ds["time"].values
    acked = np.flatnonzero(ds["rtt_samples"].values > 0)
    retransmitted = ds["retx_pkts"].values
    gaps = []
    for i in np.flatnonzero(ds["rto_count"].values > 0):
        before = acked[acked < i]
        if times[i] > 2.0 and before.size and not retransmitted[before[-1] + 1 : i].any():
            gaps.append(times[i] - times[before[-1]])
    return gaps


@pytest.mark.slow
def test_the_first_timeout_fires_after_the_profiles_minimum():
    # a path losing a fifth of its packets: timeouts, at an RTT of 50 ms
    lossy = [
        "duration=30s",
        "warmup=0s",
        "trace.interval=2ms",
        "topology.bottleneck.loss_rate=0.2",
    ]
    gaps = _timeout_gaps(_one_flow(lossy))
    assert len(gaps) >= 2, gaps
    # FreeBSD 9.2: RTO = max(30 ms, srtt + 4 rttvar) + 200 ms, modelled as
    # srtt + max(200 ms, 4 rttvar): at least 250 ms here, well under ns-3's 1-s minimum
    assert min(gaps) >= 0.25 - 0.004
    assert np.median(gaps) < 0.9, gaps
    ns3 = _timeout_gaps(_one_flow(lossy, testbed=None))
    assert ns3
    assert min(ns3) >= 1.0 - 0.004, ns3


@pytest.mark.slow
def test_a_timeout_keeps_its_back_off_until_an_rtt_sample_so_a_queue_cannot_lock_a_flow():
    # A1's Compound upload (Windows 7's 300-ms RTO floor) while a CUBIC download, started
    # at 30 s, fills the downlink queue its ACKs wait in: its RTT grows from about 0.2 s
    # to 0.47 s, past an RTO set from the earlier srtt. RFC 6298 (rule 5.5 and section
    # 5's note) keeps the doubled RTO until a new RTT sample; ns-3's TcpSocketBase
    # collapsed it on the next ACK, which after a timeout carries no sample, so the upload
    # timed out on every segment at a 1-segment window from about 60 s on (21-22 timeouts
    # per 10 s, 25 kb/s) until the run ended. tcprepro's sockets keep the back-off.
    overrides = [
        "flows.up.variant=Compound",
        "flows.down.variant=Cubic",
        "flows.up.start=0s",
        "flows.down.start=30s",
        "duration=120s",
        "warmup=0s",
    ]
    ds = run_scenario(load_scenario(ROOT / "workflow/scenarios/A1.yaml", overrides), 0)
    up = ds.sel(flow="up")
    late = ds["time"].values >= 60
    assert up["rto_count"].values[late].sum() <= 10
    assert np.nanmean(up["goodput_bps"].values[late]) > 0.3e6
    assert np.nanmean(up["cwnd_bytes"].values[late]) > 10 * 1448


@pytest.mark.slow
def test_a_second_transfer_to_the_same_host_starts_from_the_cached_ssthresh():
    base = [
        "duration=20s",
        "warmup=0s",
        "trace.interval=10ms",
        "topology.bottleneck.buffer_pkts=20",
        "flows.f0.size=3MB",
        "flows.f1={src: s0, variant: NewReno, size: 3MB, start: 12s}",
    ]
    ds = _one_flow(base)
    seeded = ds["flow_initial_ssthresh_bytes"]
    assert np.isnan(seeded.sel(flow="f0"))  # nothing cached yet: unbounded
    assert np.isfinite(ds["flow_end_s"].sel(flow="f0"))  # it closed before f1 opened
    value = float(seeded.sel(flow="f1"))
    # the first transfer's ssthresh after its losses: between 2 segments and its window
    peak = float(ds["cwnd_bytes"].sel(flow="f0").max())
    assert 2 * MSS <= value < peak
    without = _one_flow([*base, "tcp.host_cache=false"])
    assert "flow_initial_ssthresh_bytes" not in without


@pytest.mark.slow
def test_a_client_request_delays_each_download_by_a_round_trip():
    data = copy.deepcopy(ACCESS) | {"testbed": FREEBSD}
    data["flows"] = {}
    data["traffic"] = {
        "web": {
            "kind": "poisson_transfers",
            "direction": "down",
            "variant": "NewReno",
            "arrival_rate": "1/s",
            "size": {"law": "fixed", "size": "20kB"},
            "start": "1s",
            "stop": "15s",
        }
    }
    data["duration"] = "20s"
    data["warmup"] = "0s"
    times = {}
    for request in (None, "400B"):
        case = copy.deepcopy(data)
        if request:
            case["traffic"]["web"]["request_bytes"] = request
        ds = simulate(case, [])
        times[request] = ds["transfer_end_s"].values - ds["transfer_start_s"].values
    extra = np.nanmean(times["400B"]) - np.nanmean(times[None])
    # the request waits for the handshake's last ACK (42 ms down), crosses the 2 Mb/s
    # uplink (52 ms and its serialisation) before the first data leaves: about one RTT
    assert 0.08 < extra < 0.15, extra


def test_a_what_if_build_reruns_its_claims_cells_the_other_way(monkeypatch):
    from dataclasses import replace

    from tcprepro.campaign import WorkflowConfig

    monkeypatch.chdir(ROOT)  # the config's paths are relative to the repository
    base = WorkflowConfig(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))
    tail = replace(base, data={**base.data, "whatif": "lqd-tail-drop"}, _runs={})
    runs = [run for figure in tail.simulated_figures for run in tail.runs(figure, "verify")]
    assert runs
    assert {run.figure for run in runs} == {"B5.1", "B5.10"}
    for run in runs:  # only the fair-queueing cells, each run with the tail drop
        assert run.cell.endswith("_whatif-lqd-tail-drop")
        scenario = run.scenario()
        assert scenario.topology.bottleneck.qdisc == "pfq_lqd"
        assert scenario.topology.bottleneck.qdisc_params["DropFront"] is False
    # its combined datasets apart from the verify build's, which it would replace
    assert tail.combined_path("B5.1") == "data/combined/whatif/lqd-tail-drop/B5.1.nc"
    assert base.combined_path("B5.1") == "data/combined/B5.1.nc"
    # a Snakemake job names the run by its cell: found without the build's whatif
    found = base.run(runs[0].figure, runs[0].cell, runs[0].rep, "verify")
    assert found.cache_key() == runs[0].cache_key()
    # fewer repetitions when the what-if says so; only the cells with the variant it names
    slots = replace(base, data={**base.data, "whatif": "dummynet-slot-limit"}, _runs={})
    assert {run.rep for run in slots.runs("A2", "verify")} == {0, 1, 2}
    windows = replace(base, data={**base.data, "whatif": "windows-receiver"}, _runs={})
    cells = {run.cell for run in windows.runs("A1", "verify")}
    assert cells
    assert all("Compound" in cell for cell in cells)
    with pytest.raises(ConfigError, match="no what-if 'nope'"):
        replace(base, data={**base.data, "whatif": "nope"}, _runs={}).what_if()


def test_a_knob_trace_reruns_its_claims_deciding_cells_with_the_knob_set_back(monkeypatch):
    from dataclasses import replace

    from tcprepro.campaign import WorkflowConfig
    from tcprepro.campaign.config import what_ifs

    monkeypatch.chdir(ROOT)
    base = WorkflowConfig(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))
    registry = {
        entry["id"]
        for entry in yaml.safe_load((ROOT / "src/tcprepro/claims/registry.yaml").read_text())
    }
    traces = {key: entry for key, entry in what_ifs().items() if key.startswith("knob-")}
    assert "knob-a-compound-initial-window" in traces
    for key, entry in traces.items():
        assert set(entry.claims) <= registry, (key, set(entry.claims) - registry)
        build = replace(base, data={**base.data, "whatif": key}, _runs={})
        runs = [run for figure in build.simulated_figures for run in build.runs(figure, "verify")]
        assert runs, key
        for run in runs:  # every run resolves, with the trace's values on top of the profile
            scenario = run.scenario()
            assert run.cell.endswith(f"_whatif-{key}")
            assert entry.when_variant is None or entry.when_variant in scenario.variants_used()
    # one knob set back, the rest of the profile kept
    build = replace(base, data={**base.data, "whatif": "knob-a-compound-initial-window"}, _runs={})
    scenario = build.runs("A1", "verify")[0].scenario()
    compound = scenario.stack.hosts["Compound"].socket
    assert compound["InitialCwnd"] == 10
    assert compound["MinRto"] == "300ms"
    assert scenario.tcp.initial_cwnd_pkts == 3
    assert scenario.tcp.min_rto == pytest.approx(0.03)
    cubic = replace(base, data={**base.data, "whatif": "knob-a-cubic-constants"}, _runs={})
    scenario = cubic.runs("A1", "verify")[0].scenario()
    assert scenario.stack.variants["Cubic"]["Beta"] == 0.7
    assert scenario.stack.variants["Cubic"]["HyStart"] is True
    assert scenario.tcp.delayed_ack_timeout == pytest.approx(0.1)


def test_a_knob_trace_naming_a_knob_the_profile_lacks_is_refused(tmp_path):
    traces = tmp_path / "knob-traces.yaml"
    entry = {
        "id": "x",
        "knobs": ["freebsd-9.2/initial windw"],
        "before": "10",
        "why": "a test",
        "set": {"tcp.initial_cwnd_pkts": 10},
        "claims": ["A-c3"],
    }
    traces.write_text(yaml.safe_dump({"traces": [entry]}))
    with pytest.raises(ConfigError, match=r"freebsd-9\.2 has no knob 'initial windw'"):
        testbeds.load_knob_traces(traces, TESTBEDS)
    entry["knobs"] = ["initial window"]
    traces.write_text(yaml.safe_dump({"traces": [entry]}))
    wanted = r"traces\[0\]: knob 'initial window': write '<profile id>/<knob name>'"
    with pytest.raises(ConfigError, match=wanted):
        testbeds.load_knob_traces(traces, TESTBEDS)
    entry["knobs"], entry["set"] = ["freebsd-9.2/initial window"], {"initial_cwnd_pkts": 10}
    traces.write_text(yaml.safe_dump({"traces": [entry]}))
    with pytest.raises(ConfigError, match="set path 'initial_cwnd_pkts' must start with"):
        testbeds.load_knob_traces(traces, TESTBEDS)
