"""ns-3 integration: tiny scenarios with physics checks that can fail."""

import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from conftest import ACCESS, DUMBBELL, ROOT
from tcprepro import metrics
from tcprepro.scenario_io import apply_overrides, load_scenario_dict
from tcprepro.store import open_dataset, validate_run_dataset

pytestmark = pytest.mark.slow


def run(data, overrides=(), rep=0):
    from tcprepro.ns3.backend import run_scenario

    return run_scenario(load_scenario_dict(apply_overrides(data, overrides)), rep)


def test_single_newreno_flow_fills_a_link_whose_buffer_exceeds_the_bdp():
    # RTT = 2 x (5 + 20) ms = 50 ms; BDP = 10 Mb/s x 50 ms = 42 packets < 100-packet buffer
    ds = run(DUMBBELL, ["duration=30s", "warmup=5s"])
    assert validate_run_dataset(ds) == []
    util = float(metrics.utilisation(ds).sel(flow="f0"))
    assert util >= 0.95, util
    assert float(ds["link_queue_max_pkts"].sel(link="bottleneck")) <= 100


def test_queue_never_exceeds_its_buffer_and_overflow_drops():
    ds = run(DUMBBELL, ["duration=30s", "warmup=5s", "topology.bottleneck.buffer_pkts=10"])
    assert float(ds["link_queue_max_pkts"].sel(link="bottleneck")) <= 10
    assert float(ds["queue_pkts"].sel(link="bottleneck").max()) <= 10
    assert float(ds["drops_pkts"].sel(link="bottleneck").sum()) > 0
    assert float(ds["lost_data_pkts"].sel(flow="f0").sum()) == float(
        ds["drops_pkts"].sel(link="bottleneck").sum()
    )


def test_oversized_uplink_buffer_starves_the_download():
    # study A, A2 setting: NewReno both ways, uplink buffer 250 packets
    ds = run(ACCESS, ["duration=60s", "warmup=10s", "topology.uplink.buffer_pkts=250"])
    util = metrics.utilisation(ds)
    up, down = float(util.sel(flow="up")), float(util.sel(flow="down"))
    assert up > 0.8, up
    assert down < 0.7 * up, (down, up)


def test_one_way_delays_are_asymmetric():
    # a 1000-byte download from the server: SYN down (42 ms), SYN-ACK up (52 ms),
    # data down (42 ms) plus serialisation; symmetric 47/47 ms would give 141 ms.
    ds = run(ACCESS, ["flows={down: {direction: down, variant: NewReno, size: 1000B}}"])
    elapsed = float(ds["flow_end_s"].sel(flow="down") - ds["flow_start_s"].sel(flow="down"))
    assert elapsed == pytest.approx(0.042 + 0.052 + 0.042, abs=0.002)
    handshake = float(ds["flow_connected_s"].sel(flow="down") - ds["flow_start_s"].sel(flow="down"))
    assert handshake == pytest.approx(0.094, abs=0.001)


def test_congestion_control_is_set_per_socket():
    ds = run(
        DUMBBELL,
        [
            "duration=10s",
            "warmup=1s",
            "flows={a: {src: s0, variant: Vegas}, b: {src: s0, variant: Cubic}, "
            "c: {src: s0, variant: HighSpeed}}",
        ],
    )
    assert list(ds["flow_cc_type"].values) == [
        "ns3::TcpVegas",
        "ns3::TcpCubic",
        "ns3::TcpHighSpeed",
    ]
    assert (metrics.goodput_bps(ds) > 0).all()


def test_vegas_keeps_the_queue_short_where_newreno_fills_it():
    vegas = run(DUMBBELL, ["duration=30s", "warmup=10s", "flows.f0.variant=Vegas"])
    reno = run(DUMBBELL, ["duration=30s", "warmup=10s"])
    q_vegas = float(metrics.mean_queue_pkts(vegas).sel(link="bottleneck"))
    q_reno = float(metrics.mean_queue_pkts(reno).sel(link="bottleneck"))
    assert q_vegas < 10 < q_reno, (q_vegas, q_reno)


def _data(ds):
    return ds.drop_attrs(deep=False)


def test_same_seed_same_dataset_in_process_and_in_a_fresh_process(tmp_path):
    # random loss too: an error model draws from ns-3's automatic random streams, whose
    # process-wide counter must not carry over from one run to the next in a worker
    overrides = [
        "duration=15s",
        "flows.up.start={uniform: [0s, 3s]}",
        "flows.up.variant=Cubic",
        "topology.downlink.loss_rate=0.002",
    ]
    first = run(ACCESS, overrides)
    run(DUMBBELL, ["duration=2s", "warmup=0s", "topology.bottleneck.loss_rate=0.01"])
    second = run(ACCESS, overrides)  # in the same process, after another run
    xr.testing.assert_identical(_data(first), _data(second))
    assert first.attrs["cache_key"] == second.attrs["cache_key"]

    scenario = tmp_path / "s.yaml"
    import yaml

    scenario.write_text(yaml.safe_dump(apply_overrides(ACCESS, overrides)))
    out = tmp_path / "fresh.nc"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tcprepro.cli",
            "simulate",
            str(scenario),
            "-o",
            str(out),
            "--quiet",
        ],
        check=True,
        cwd=ROOT,
    )
    xr.testing.assert_identical(_data(open_dataset(out)), _data(first).drop_vars([]))


def test_another_repetition_gives_another_dataset():
    overrides = ["duration=15s", "repetitions=2", "flows.up.start={uniform: [0s, 3s]}"]
    rep0, rep1 = run(ACCESS, overrides, 0), run(ACCESS, overrides, 1)
    assert rep0.attrs["cache_key"] != rep1.attrs["cache_key"]
    assert not np.array_equal(rep0["goodput_bps"].values, rep1["goodput_bps"].values)


def test_provenance_attributes():
    ds = run(DUMBBELL, ["duration=2s", "warmup=0s"])
    for attr in (
        "config",
        "tcprepro_version",
        "ns3_version",
        "git_commit",
        "kernel",
        "created",
        "cache_key",
    ):
        assert ds.attrs[attr] != ""
    assert ds.attrs["ns3_version"].startswith("3.44")
    # the recorded configuration is the resolved scenario, and loads again as it is
    config = load_scenario_dict(json.loads(ds.attrs["config"]))
    assert config.duration == 2.0
    assert config.to_json() == ds.attrs["config"]


def test_bad_ns3_attribute_is_refused_before_running():
    from tcprepro.errors import ConfigError

    with pytest.raises(
        ConfigError,
        match=r"flows.f0.variant.params: ns3::TcpVegas has no "
        r"attribute 'Alfa'",
    ):
        run(DUMBBELL, ["flows.f0.variant={name: Vegas, params: {Alfa: 1}}"])
    with pytest.raises(ConfigError, match="invalid value"):
        run(DUMBBELL, ["flows.f0.variant={name: Vegas, params: {Alpha: -3}}"])


def test_random_loss_rate_matches_the_configured_rate():
    ds = run(DUMBBELL, ["duration=30s", "warmup=0s", "topology.bottleneck.loss_rate=0.01"])
    destroyed = float(ds["random_drops_pkts"].sel(link="bottleneck").sum())
    # packets put on the wire of the bottleneck: all data segments (1500 B) plus the rest
    sent = float(
        ds["tx_data_pkts"].sel(flow="f0").sum() - ds["lost_data_pkts"].sel(flow="f0").sum()
    )
    assert destroyed == float(ds["random_lost_pkts"].sel(flow="f0").sum())  # all data segments
    rate = destroyed / sent
    # binomial standard error at p = 0.01 over ~thousands of packets is ~0.1 %; allow 4 sigma
    stderr = (0.01 * 0.99 / sent) ** 0.5
    assert abs(rate - 0.01) < 4 * stderr, (rate, sent)
    assert float(metrics.goodput_bps(ds).sel(flow="f0")) < 9e6  # losses cost throughput


def test_generated_transfers_are_recorded_and_censored_at_the_end():
    ds = run(
        ACCESS,
        [
            "duration=60s",
            "warmup=0s",
            "flows={}",
            "traffic={web: {kind: poisson_transfers, direction: down, variant: Cubic, "
            "arrival_rate: 2/s, size: {law: fixed, size: 150kB}}}",
        ],
    )
    assert validate_run_dataset(ds) == []
    assert list(ds["flow"].values) == ["web"]
    assert ds["flow_kind"].item() == "transfers"
    n = ds.sizes["transfer"]
    assert 90 < n < 150  # Poisson(120)
    done = np.isfinite(ds["transfer_end_s"].values)
    assert done.sum() >= n - 3  # at 40 % load, only the last few can still be running
    assert (ds["transfer_rx_bytes"].values[done] == 150_000).all()
    censored = ~done
    assert (ds["transfer_start_s"].values[censored] > 55).all()
    assert (ds["transfer_end_s"].values[done] > ds["transfer_start_s"].values[done]).all()
    # the generator's aggregate goodput equals the bytes its transfers received
    total = float((ds["goodput_bps"].sel(flow="web") * 0.1).sum() / 8)
    assert total == pytest.approx(float(ds["transfer_rx_bytes"].sum()), rel=1e-9)


def test_a_generator_max_rate_paces_each_transfer_after_its_initial_window():
    """traffic.<name>.max_rate (X12's stand-in for B5.1's 1 Mb/s access links): each
    transfer's payload leaves at most at that rate once its initial window is out."""
    overrides = [
        "duration=20s",
        "warmup=0s",
        "flows={}",
        "traffic={web: {kind: poisson_transfers, direction: down, variant: NewReno, "
        "arrival_rate: 0.5/s, size: {law: fixed, size: 150kB}}}",
    ]
    free = run(ACCESS, overrides)
    paced = run(ACCESS, [*overrides, "traffic.web.max_rate=1Mbps"])
    assert paced.attrs["config"] != free.attrs["config"]
    for ds in (free, paced):
        assert np.isfinite(ds["transfer_end_s"].values).sum() >= 5
    elapsed = {
        name: ds["transfer_end_s"].values - ds["transfer_connected_s"].values
        for name, ds in (("free", free), ("paced", paced))
    }
    done = np.isfinite(elapsed["paced"])
    # 150 kB at 1 Mb/s is 1.2 s; the unpaced initial window (4 of the ~104 segments),
    # the last segment's own time and 42 ms of propagation keep it within 0.1 s of that
    assert (np.abs(elapsed["paced"][done] - 1.2) < 0.1).all(), elapsed["paced"]
    # unpaced, slow start over 10 Mb/s and an 84-ms RTT takes well under a second
    assert (elapsed["free"][np.isfinite(elapsed["free"])] < 0.9).all(), elapsed["free"]


def test_a_transfer_alone_takes_the_handshake_plus_serialisation_plus_propagation():
    # 10 segments = the initial window: SYN (42 ms), SYN-ACK (52 ms), then 10 x 1502-byte
    # frames at 10 Mb/s and 42 ms of propagation
    ds = run(ACCESS, ["flows={d: {direction: down, variant: NewReno, size: 14480B}}"])
    elapsed = float(ds["flow_end_s"].item() - ds["flow_start_s"].item())
    expected = 0.042 + 0.052 + 10 * 1502 * 8 / 10e6 + 0.042
    assert elapsed == pytest.approx(expected, abs=0.0005)


def test_poisson_packets_offer_their_load_and_lose_packets_when_overloaded():
    light = run(
        DUMBBELL,
        [
            "duration=30s",
            "warmup=5s",
            "flows={}",
            "traffic={p: {kind: poisson_packets, src: s0, load: 0.3, flows: 4}}",
        ],
    )
    payload_fraction = (1000 - 28) / 1000
    goodput = float(metrics.goodput_bps(light).sel(flow="p"))
    assert goodput == pytest.approx(0.3 * 10e6 * payload_fraction, rel=0.05)
    assert float(light["lost_data_pkts"].sum()) == 0
    heavy = run(
        DUMBBELL,
        [
            "duration=20s",
            "warmup=5s",
            "flows={}",
            "traffic={p: {kind: poisson_packets, src: s0, load: 1.3}}",
        ],
    )
    loss = float(metrics.loss_rate(heavy).sel(flow="p"))
    # an M/D/1/B queue at load 1.3 loses at least 1 - 1/1.3 = 23 % of the packets
    assert loss == pytest.approx(1 - 1 / 1.3 * (1000 / 1002), abs=0.03)


def test_one_rtt_sample_per_ack_of_new_data():
    # delayed ACKs (every second segment): about one new-data ACK per two data segments
    ds = run(DUMBBELL, ["duration=20s", "warmup=2s"])
    samples = float(ds["rtt_samples"].sel(flow="f0").sum())
    segments = float(ds["tx_data_pkts"].sel(flow="f0").sum())
    assert samples == pytest.approx(segments / 2, rel=0.1)
    # propagation RTT is 50 ms; the 100-packet queue adds at most 120 ms
    rtt = float(metrics.mean_rtt_s(ds).sel(flow="f0"))
    assert 0.05 < rtt < 0.05 + 100 * 1502 * 8 / 10e6
