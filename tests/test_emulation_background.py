"""PFQ/LQD's Linux twin (sfq) and the emulated Poisson UDP background (no root).

The sfq arguments and their limits, the generator's timing law (exponential gaps at
the configured rate, deterministic from the seed), which generators the emulation runs
and refuses, and one sender and sink exchanging packets over loopback.
"""

import json
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy import stats

from conftest import ROOT
from tcprepro.emulation import background, capabilities, linux
from tcprepro.errors import ConfigError
from tcprepro.network_plan import PlannedDirection, build_plan
from tcprepro.scenario import TcpSettings
from tcprepro.scenario_io import load_scenario

X6 = ROOT / "workflow" / "scenarios" / "X6.yaml"
B510 = ROOT / "workflow" / "scenarios" / "B5.10.yaml"


def _bottleneck(buffer_pkts: int) -> PlannedDirection:
    return PlannedDirection(50e6, 0.04, buffer_pkts, "pfq_lqd", trace_name="bottleneck")


# ---------------------------------------------------------------------------
# sfq, PFQ/LQD's twin


def test_pfq_lqd_maps_to_sfq_with_a_shared_buffer_fixed_hash_and_one_frame_quantum():
    frame = linux.frame_bytes(TcpSettings(mss="948B"))  # study B: 1000-byte packets
    assert frame == 1014
    args = linux.leaf_qdisc(_bottleneck(20), "topology (bottleneck) qdisc", frame)
    options = dict(zip(args[1::2], args[2::2], strict=True))
    assert args[0] == "sfq"
    assert options == {
        "limit": "20",  # one buffer of B packets for every flow (LQD's shared buffer)
        "depth": "20",  # one flow may fill all of it
        "flows": "128",
        "divisor": "65536",
        "perturb": "0",  # no rehash during a run
        "quantum": "1014",
    }
    assert "headdrop" not in args  # tail drop from the longest flow: DropFront = false
    commands = [" ".join(c) for c in linux.egress_commands("eth0", _bottleneck(100), TCP)]
    assert commands[-1].endswith(
        "parent 2:1 handle 3: sfq limit 100 depth 100 flows 128 divisor 65536 perturb 0 "
        "quantum 1514"
    )


def test_the_qdisc_table_is_the_registrys():
    assert linux.emulated_qdiscs() == ["fifo", "codel", "fq_codel", "pfq_lqd"]
    fifo = PlannedDirection(10e6, 0.0, 40, "fifo")
    assert linux.leaf_qdisc(fifo) == ["pfifo", "limit", "40"]


def test_pfq_lqd_buffer_above_sfqs_depth_is_a_config_error_naming_the_field():
    assert linux.leaf_qdisc(_bottleneck(127))[:3] == ["sfq", "limit", "127"]
    with pytest.raises(ConfigError, match=r"topology \(bottleneck\) buffer_pkts: 625 packets"):
        linux.leaf_qdisc(_bottleneck(625), "topology (bottleneck) qdisc")
    scenario = load_scenario(X6, ["topology.bottleneck.buffer_pkts=625"])
    with pytest.raises(ConfigError, match=r"buffer_pkts: 625 .* at most 127 packets per flow"):
        capabilities.scenario_needs(scenario)


def test_x6_needs_sfq_and_runs_the_poisson_background():
    scenario = load_scenario(X6)
    needs = capabilities.scenario_needs(scenario)
    assert "sfq" in needs.qdiscs
    assert background.check_generators(scenario) == ["bg"]


def _with_web(tmp_path, web):
    path = tmp_path / "web.yaml"
    path.write_text(f"base: {B510}\ntraffic:\n  web: {web}\n")
    return load_scenario(path)


def test_generated_tcp_transfers_are_emulated_with_their_congestion_control(tmp_path):
    scenario = _with_web(
        tmp_path,
        "{kind: poisson_transfers, src: u, load: 0.2, variant: Htcp, "
        "size: {law: exponential, mean: 100kB}}",
    )
    assert background.transfer_generators(scenario) == ["web"]
    assert background.packet_generators(scenario) == ["bg"]
    assert "htcp" in capabilities.scenario_needs(scenario).congestion_controls


@pytest.mark.parametrize(
    ("web", "message"),
    [
        (
            "{kind: poisson_transfers, src: u, load: 0.2, variant: Compound, "
            "size: {law: exponential, mean: 100kB}}",
            r"traffic.web.variant: Compound has no Linux implementation",
        ),
        (
            "{kind: poisson_transfers, src: u, load: 0.2, variant: {name: Cubic, params: {C: 1}},"
            " size: {law: exponential, mean: 100kB}}",
            r"traffic.web.variant.params: Cubic with C=1 has no Linux module",
        ),
        (
            "{kind: poisson_transfers, src: s, load: 0.2, variant: NewReno, "
            "size: {law: exponential, mean: 100kB}}",
            r"traffic.web.src: s is a group of \d+ hosts",
        ),
    ],
)
def test_a_transfer_generator_the_emulation_cannot_run_is_a_config_error(tmp_path, web, message):
    with pytest.raises(ConfigError, match=message):
        capabilities.scenario_needs(_with_web(tmp_path, web))


# ---------------------------------------------------------------------------
# The generator's timing law


def test_schedule_has_exponential_gaps_at_the_configured_rate():
    rate = 3125.0  # rho_b = 0.5 of 50 Mb/s in 1000-byte packets
    times, sockets = background.poisson_schedule([1, 0, 42], rate, 100, 0.0, 200.0)
    assert times.size == pytest.approx(rate * 200.0, rel=0.01)
    assert times.min() >= 0.0
    assert times.max() < 200.0
    assert np.all(np.diff(times) > 0)
    gaps = np.diff(times)
    assert gaps.mean() == pytest.approx(1.0 / rate, rel=0.01)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.02)  # exponential: CV = 1
    # Kolmogorov-Smirnov against the exponential law of mean 1 / rate
    assert stats.kstest(gaps, "expon", args=(0, 1.0 / rate)).pvalue > 1e-3
    # every socket gets its share: 100 flows of rate / 100
    counts = np.bincount(sockets, minlength=100)
    assert counts.size == 100
    assert counts.min() > 0.85 * times.size / 100
    assert counts.max() < 1.15 * times.size / 100


def test_schedule_is_deterministic_from_the_seed_and_respects_start_and_stop():
    first = background.poisson_schedule([1, 0, 7], 500.0, 4, 2.0, 10.0)
    again = background.poisson_schedule([1, 0, 7], 500.0, 4, 2.0, 10.0)
    other = background.poisson_schedule([2, 0, 7], 500.0, 4, 2.0, 10.0)
    assert np.array_equal(first[0], again[0])
    assert np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0][:100], other[0][:100])
    assert first[0].min() >= 2.0
    assert first[0].max() < 10.0


def test_packet_rate_and_seed_come_from_the_scenario():
    scenario = load_scenario(X6)
    assert background.packet_rate_pps(scenario, "bg") == pytest.approx(3125.0)
    argv = background.sender_argv(
        scenario, 1, "bg", 0, "10.0.0.1", "10.0.1.1", {"ready": "r", "go": "g", "out": "o"}
    )
    seed = argv[argv.index("--seed") + 1 : argv.index("--window")]
    assert int(seed[0]) == scenario.seed
    assert int(seed[1]) == 1
    assert argv[argv.index("--flows") + 1] == "100"


def test_sender_and_sink_exchange_the_scheduled_packets_over_loopback(tmp_path):
    go = tmp_path / "go"
    files = {role: tmp_path / f"{role}.json" for role in ("send", "sink")}
    common = ["--window", "0.2", "1.2", "--go", str(go)]
    module = [sys.executable, "-m", "tcprepro.emulation.background"]
    sink = subprocess.Popen(
        [
            *module,
            "sink",
            "--bind",
            "127.0.0.1",
            "--port",
            "39123",
            "--until",
            "1.7",
            *common,
            "--ready",
            str(tmp_path / "r1"),
            "--out",
            str(files["sink"]),
        ]
    )
    send = subprocess.Popen(
        [
            *module,
            "send",
            "--src",
            "127.0.0.1",
            "--dst",
            "127.0.0.1",
            "--port",
            "39123",
            "--base-port",
            "39200",
            "--flows",
            "10",
            "--packet-size",
            "1000",
            "--rate-pps",
            "2000",
            "--start",
            "0",
            "--stop",
            "1.2",
            "--seed",
            "3",
            "0",
            "1",
            *common,
            "--ready",
            str(tmp_path / "r2"),
            "--out",
            str(files["send"]),
        ]
    )
    deadline = time.monotonic() + 60
    while not ((tmp_path / "r1").exists() and (tmp_path / "r2").exists()):
        assert time.monotonic() < deadline, "sender or sink did not start"
        time.sleep(0.05)
    go.write_text(f"{time.monotonic() + 0.2!r}\n")
    assert send.wait(timeout=30) == 0
    assert sink.wait(timeout=30) == 0
    sent, received = (json.loads(files[r].read_text()) for r in ("send", "sink"))
    times, _ = background.poisson_schedule([3, 0, 1], 2000.0, 10, 0.0, 1.2)
    assert sent["scheduled"] == sent["sent"] == times.size
    assert sent["sent_window"] == int(np.count_nonzero(times >= 0.2))
    assert received["received"] == sent["sent"]  # loopback loses nothing
    assert received["received_window"] == pytest.approx(sent["sent_window"], abs=20)


TCP = TcpSettings()


def test_plan_of_x6_has_the_background_host_and_an_sfq_bottleneck():
    scenario = load_scenario(X6)
    plan = build_plan(scenario, 0)
    assert "u" in plan.hosts
    assert plan.traced["bottleneck"].qdisc == "pfq_lqd"
