"""Compound TCP: the delay window grows below gamma, shrinks beyond it; Reno below Low_Window."""

import math

import numpy as np
import pytest

from conftest import DUMBBELL
from model_checks import drivers, simulate

GAMMA = 30.0
ALPHA, BETA, K, ETA = 0.125, 0.5, 0.75, 1.0
MSS = 1000


@pytest.mark.slow
def test_delay_window_grows_below_gamma_and_shrinks_beyond_it():
    # BDP 150 packets, buffer 60 > gamma: after the slow-start loss the queue drains, the
    # delay window grows until the backlog exceeds gamma, then shrinks
    ds = simulate(
        DUMBBELL,
        [
            "duration=25s",
            "warmup=0s",
            "trace.interval=10ms",
            "topology.bottleneck.rate=20Mbps",
            "topology.bottleneck.delay=40ms",
            "topology.bottleneck.buffer_pkts=60",
            "flows.f0.variant=Compound",
        ],
        congestion_state=["DelayWindow", "Backlog"],
    )
    dwnd = ds["cc_DelayWindow"].sel(flow="f0").values
    backlog = ds["cc_Backlog"].sel(flow="f0").values
    retransmitted = ds["retx_pkts"].sel(flow="f0").values
    # intervals with one end-of-round update (a new backlog estimate) and no loss recovery
    updated = (np.diff(backlog) != 0) & ~np.isnan(backlog[1:]) & (retransmitted[1:] == 0)
    change = np.diff(dwnd)[updated]
    estimate = backlog[1:][updated]
    after = dwnd[1:][updated]
    below, beyond = estimate < GAMMA, estimate >= GAMMA
    assert below.sum() >= 20, below.sum()
    assert beyond.sum() >= 20, beyond.sum()
    assert np.all(change[below] > 0), estimate[below][change[below] <= 0]
    assert np.all((change[beyond] < 0) | (after[beyond] == 0))
    assert np.nanmax(dwnd) > 20  # the delay component did act on this path


@pytest.mark.slow
def test_below_the_low_window_compound_is_reno():
    # BDP 21 packets + buffer 15: the window stays below Low_Window = 38 packets
    overrides = [
        "duration=20s",
        "warmup=0s",
        "trace.interval=10ms",
        "topology.bottleneck.rate=5Mbps",
        "topology.bottleneck.buffer_pkts=15",
    ]
    ctcp = simulate(
        DUMBBELL, [*overrides, "flows.f0.variant=Compound"], congestion_state=["DelayWindow"]
    )
    reno = simulate(DUMBBELL, [*overrides, "flows.f0.variant=NewReno"])
    assert float(ctcp["drops_pkts"].sum()) > 5
    assert np.nanmax(ctcp["cc_DelayWindow"].values) == 0
    np.testing.assert_array_equal(ctcp["cwnd_bytes"].values, reno["cwnd_bytes"].values)


def _driver(cwnd_segments=200):
    return drivers().CongestionOpsDriver("ns3::TcpCompound", MSS, cwnd_segments, 1)


def _ack_until_update(driver, rtt_s, limit=2000):
    """ACK segment by segment until dwnd changes: (window at the update, old, new dwnd)."""
    for _ in range(limit):
        before_cwnd, before_dwnd = driver.CwndBytes(), driver.State("DelayWindow")
        driver.Ack(1, rtt_s)
        if driver.State("DelayWindow") != before_dwnd:
            adder = max(1, (MSS * MSS) // before_cwnd)  # this ACK's Reno step, bytes
            return (before_cwnd + adder) / MSS, before_dwnd, driver.State("DelayWindow")
    raise AssertionError("dwnd never changed")


def test_rules_of_the_delay_window():
    driver = _driver()
    driver.Round(0.1, 1)  # baseRTT = 100 ms
    # no queueing: diff = 0 < gamma -> dwnd += alpha * win^k - 1 once per round
    window, old, new = _ack_until_update(driver, 0.1)
    assert driver.State("Backlog") == pytest.approx(0.0, abs=1e-9)
    assert new - old == pytest.approx(ALPHA * window**K - 1, abs=2 / MSS)
    window, old, new = _ack_until_update(driver, 0.1)
    assert new - old == pytest.approx(ALPHA * window**K - 1, abs=2 / MSS)
    # 25 ms of queueing on 100 ms: diff = win * (1 - 100/125), beyond gamma
    window, old, new = _ack_until_update(driver, 0.125)
    diff = window * (1 - 0.1 / 0.125)
    assert diff > GAMMA
    assert driver.State("Backlog") == pytest.approx(diff, rel=1e-6)
    assert new == pytest.approx(max(0.0, old - ETA * diff), abs=2 / MSS)


def test_loss_and_timeout_rules():
    driver = _driver()
    driver.Round(0.1, 1)
    for _ in range(3):
        _ack_until_update(driver, 0.1)
    window, dwnd = driver.CwndBytes() / MSS, driver.State("DelayWindow")
    assert dwnd > 5
    ssthresh = driver.Loss() / MSS
    # cwnd is halved; dwnd = (win (1 - beta) - cwnd/2)+; the window becomes win * (1 - beta)
    assert driver.State("DelayWindow") == pytest.approx(
        window * (1 - BETA) - (window - dwnd) / 2, abs=2 / MSS
    )
    assert ssthresh == pytest.approx(window * (1 - BETA), abs=2 / MSS)
    driver.Timeout()
    assert driver.State("DelayWindow") == 0


def test_rules_below_the_low_window():
    compound, reno = _driver(30), drivers().CongestionOpsDriver("ns3::TcpNewReno", MSS, 30, 1)
    for driver in (compound, reno):
        for _ in range(6):  # 30 -> 36 packets: below Low_Window = 38
            driver.Round(0.1, 1)
        driver.Loss()
        driver.Round(0.1, 1)
    assert compound.State("DelayWindow") == 0
    assert math.isnan(compound.State("Backlog"))  # no estimate below Low_Window
    assert compound.CwndBytes() == reno.CwndBytes()
    assert compound.SsThreshBytes() == reno.SsThreshBytes()
