"""Generalised AIMD(alpha, beta) / MIMD(alpha, beta) (study B): special cases and factors."""

import itertools

import numpy as np
import pytest

from conftest import DUMBBELL
from model_checks import cwnd_segments, drivers, simulate

pytestmark = pytest.mark.slow

#: a lossy single-flow path: BDP about 86 packets, buffer 30; one ACK per segment
#: and classic recovery, so that cwnd after a loss is exactly ssthresh
LOSSY = [
    "duration=20s",
    "warmup=0s",
    "trace.interval=10ms",
    "tcp.delayed_ack_count=1",
    "tcp.recovery=classic",
    "topology.bottleneck.rate=20Mbps",
    "topology.bottleneck.buffer_pkts=30",
]


def _cwnd_trace(variant, extra=()):
    ds = simulate(DUMBBELL, [*LOSSY, f"flows.f0.variant={variant}", *extra])
    assert float(ds["drops_pkts"].sum()) > 10  # the comparison covers loss events
    return ds


@pytest.mark.parametrize(
    ("general", "special"),
    [
        ("{name: AIMD, params: {Alpha: 1, Beta: 2}}", "NewReno"),
        ("{name: MIMD, params: {Alpha: 50, Beta: 3}}", "Scalable"),
    ],
)
def test_reno_and_scalable_are_special_cases(general, special):
    # two segments per ACK, both growing by the same rule (per acknowledged segment): the
    # generalised models and ns-3's Reno and Scalable give the same trace
    extra = ["tcp.delayed_ack_count=2", "tcp.recovery=prr", "tcp.ack_counting=segment"]
    model = _cwnd_trace(general, extra)
    builtin = _cwnd_trace(special, extra)
    assert model["flow_cc_type"].item() != builtin["flow_cc_type"].item()
    np.testing.assert_array_equal(model["cwnd_bytes"].values, builtin["cwnd_bytes"].values)
    np.testing.assert_array_equal(model["drops_pkts"].values, builtin["drops_pkts"].values)


def _loss_cycles(ds):
    """(peak, trough, peak index, trough index) of each loss event after slow start."""
    window = cwnd_segments(ds, "f0")
    times = ds["time"].values
    drops = np.where(np.diff(window) < -2)[0]
    events = []
    for i in drops:
        if times[i] < 3.0 or (events and i - events[-1] < 20):  # one event per 200 ms
            continue
        events.append(i)
    cycles = []
    for first, second in itertools.pairwise(events):
        after = window[first + 1 : first + 20]
        # the window stays at ssthresh during the recovery: growth starts at its last sample
        trough = first + 1 + int(np.flatnonzero(after == np.nanmin(after))[-1])
        cycles.append((window[first], window[trough], first, trough, second))
    assert len(cycles) >= 10, len(cycles)
    return window, cycles


def _rtts_between(ds, start, end):
    """Round-trip times elapsed between two sample indices (sum of dt / RTT)."""
    rtt = ds["rtt_s"].sel(flow="f0").to_series().ffill().values
    dt = np.diff(ds["time"].values, prepend=0.0)
    return float(np.sum(dt[start + 1 : end + 1] / rtt[start + 1 : end + 1]))


@pytest.mark.parametrize(("alpha", "beta"), [(4, 5), (2, 3)])
def test_aimd_increase_and_decrease_follow_alpha_and_beta(alpha, beta):
    ds = _cwnd_trace(f"{{name: AIMD, params: {{Alpha: {alpha}, Beta: {beta}}}}}")
    window, cycles = _loss_cycles(ds)
    ratios = [trough / peak for peak, trough, *_ in cycles]
    assert np.median(ratios) == pytest.approx(1 - 1 / beta, abs=0.03), ratios
    slopes = [
        (window[next_peak] - trough) / _rtts_between(ds, trough_i, next_peak)
        for _, trough, _, trough_i, next_peak in cycles
    ]
    # cwnd += alpha/cwnd per ACK = alpha segments per RTT (ns-3 rounds each step down to bytes)
    assert np.median(slopes) == pytest.approx(alpha, rel=0.1), slopes


@pytest.mark.parametrize(("alpha", "beta"), [(25, 2), (40, 1)])
def test_mimd_increase_and_decrease_follow_alpha_and_beta(alpha, beta):
    ds = _cwnd_trace(f"{{name: MIMD, params: {{Alpha: {alpha}, Beta: {beta}}}}}")
    window, cycles = _loss_cycles(ds)
    assert min(trough for _, trough, *_ in cycles) > alpha  # the multiplicative regime
    ratios = [trough / peak for peak, trough, *_ in cycles]
    assert np.median(ratios) == pytest.approx(1 - 2.0**-beta, abs=0.03), ratios
    # cwnd += 1/alpha per ACKed segment: ln(cwnd) grows by 1/alpha per RTT
    rates = [
        np.log(window[next_peak] / trough) / _rtts_between(ds, trough_i, next_peak)
        for _, trough, _, trough_i, next_peak in cycles
    ]
    assert np.median(rates) == pytest.approx(1 / alpha, rel=0.15), rates


def test_rules_per_ack_and_per_loss_are_exact():
    # rule level, without a network: 1000-byte segments
    lib = drivers()
    aimd = lib.CongestionOpsDriver("ns3::TcpGeneralizedAimd", 1000, 100, 1)
    assert aimd.Set("Alpha", "5") == ""
    assert aimd.Set("Beta", "10") == ""
    aimd.Ack(1, 0.1)
    assert aimd.CwndBytes() == 100_000 + 50  # + Alpha * MSS^2 / cwnd bytes
    aimd.Ack(2, 0.1)  # an ACK of two segments counts both, as MIMD counts them
    grown = 100_050 + int(2 * 5 * 1000**2 / 100_050)
    assert aimd.CwndBytes() == grown
    assert aimd.Loss() == int(grown * 0.9)  # cwnd -= cwnd / Beta
    mimd = lib.CongestionOpsDriver("ns3::TcpGeneralizedMimd", 1000, 100, 1)
    assert mimd.Set("Alpha", "20") == ""
    assert mimd.Set("Beta", "1") == ""
    for _ in range(19):
        mimd.Ack(1, 0.1)
    assert mimd.CwndBytes() == 100_000  # one segment per Alpha ACKed segments ...
    mimd.Ack(1, 0.1)
    assert mimd.CwndBytes() == 101_000
    assert mimd.Loss() == 50_000  # ... and cwnd -= cwnd * 2^-Beta (floor(101 / 2) segments)


@pytest.mark.parametrize(
    ("general", "special"),
    [
        ("ns3::TcpGeneralizedAimd", "ns3::TcpNewReno"),
        ("ns3::TcpGeneralizedMimd", "ns3::TcpScalable"),
    ],
)
def test_default_parameters_are_reno_and_scalable(general, special):
    # one segment per ACK: per ACK and per acknowledged segment are the same rule
    lib = drivers()
    model, builtin = (lib.CongestionOpsDriver(t, 1448, 60, 1) for t in (general, special))
    for driver in (model, builtin):
        for rtt_s in (0.05, 0.06, 0.07):
            driver.Round(rtt_s, 1)
        driver.Loss()
        driver.Round(0.05, 1)
    assert model.CwndBytes() == builtin.CwndBytes()
    assert model.SsThreshBytes() == builtin.SsThreshBytes()


def test_aimd_counts_acknowledged_segments_where_ns3_reno_counts_acks():
    # two segments per ACK, each model with its own rule, from congestion avoidance on a
    # path that never loses: AIMD(1, 2) grows one segment per RTT (per acknowledged
    # segment, as MIMD counts), TcpNewReno half a segment (per ACK)
    rates = {}
    for name, variant in (
        ("AIMD", "{name: AIMD, params: {Alpha: 1, Beta: 2}}"),
        ("NewReno", "NewReno"),
    ):
        ds = simulate(
            DUMBBELL,
            [
                "duration=8s",
                "warmup=0s",
                "trace.interval=100ms",
                "tcp.delayed_ack_count=2",
                "topology.bottleneck.rate=100Mbps",
                "topology.bottleneck.buffer_pkts=2000",
                f"flows.f0.variant={variant}",
                # start in congestion avoidance: ssthresh 20 segments on the sender
                f"stack={{testbed: t, hosts: {{{name}: {{testbed: t, socket: "
                "{InitialSlowStartThreshold: 28960}}}}",
            ],
        )
        window = cwnd_segments(ds, "f0")
        rates[name] = (window[70] - window[20]) / _rtts_between(ds, 20, 70)
    assert rates["AIMD"] == pytest.approx(1.0, rel=0.1), rates
    assert rates["NewReno"] == pytest.approx(0.5, rel=0.1), rates
