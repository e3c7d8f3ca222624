"""tcprepro's Hybla (ns3::TcpHyblaMinRtt) against the published algorithm.

Caini and Firrincieli (2004): with rho = max(RTT / RTT0, 1), every ACK adds 2^rho - 1
segments in slow start and rho^2 / cwnd in congestion avoidance; a loss halves the
window as Reno does. RTT is the smallest smoothed RTT seen (Linux's reading), RTT0 25 ms.
The rules are checked one ACK at a time through the C++ driver of ``model-checks.h``;
a simulation then shows that rho reaches the socket, which ns-3's own TcpHybla does not
do (``test_ns3_models_variants.py``).
"""

import math

import numpy as np
import pytest

from conftest import DUMBBELL
from model_checks import drivers, simulate

pytestmark = pytest.mark.slow

MSS = 1448


def driver(cwnd, ssthresh, rrtt=None):
    model = drivers().CongestionOpsDriver("ns3::TcpHyblaMinRtt", MSS, cwnd, ssthresh)
    if rrtt is not None:
        assert model.Set("RRTT", rrtt) == ""
    return model


def segments(model):
    return model.CwndBytes() / MSS


@pytest.mark.parametrize(("rrtt", "rho"), [(None, 4.0), ("50ms", 2.0), ("10ms", 10.0)])
def test_rho_is_the_rtt_over_the_reference_rtt(rrtt, rho):
    model = driver(10, 10_000, rrtt)
    model.Ack(1, 0.100)
    assert model.State("Rho") == pytest.approx(rho)


def test_rho_follows_the_smallest_rtt_and_a_short_path_grows_as_reno():
    model = driver(10, 10_000)
    model.Ack(1, 0.100)
    model.Ack(1, 0.050)
    assert model.State("Rho") == pytest.approx(2.0)
    model.Ack(1, 0.200)  # a larger RTT later does not lower the scaling
    assert model.State("Rho") == pytest.approx(2.0)
    short = driver(10, 10_000)
    for _ in range(5):
        short.Ack(1, 0.010)  # below RTT0: rho = 1, one segment per ACK in slow start
    assert segments(short) == 15
    assert math.isnan(short.State("Rho"))  # never moved from 1


def test_slow_start_adds_two_to_the_rho_minus_one_per_ack_up_to_ssthresh():
    model = driver(10, 100)
    model.Ack(1, 0.100)  # rho = 4: 15 segments per ACK
    assert segments(model) == 25
    model.Ack(2, 0.100)  # per ACK, not per segment acknowledged
    assert segments(model) == 40
    for _ in range(10):
        model.Ack(1, 0.100)
    assert segments(model) == 100  # slow start stops at ssthresh


def test_congestion_avoidance_adds_rho_squared_over_cwnd_per_ack():
    model = driver(100, 50)
    model.Ack(1, 0.050)  # rho = 2
    expected = 100 + 4 / 100
    window_before_round = segments(model)
    model.Round(0.050, 1)  # one ACK per segment of the window in flight
    acks = int(window_before_round)
    for _ in range(acks):
        expected += 4 / int(expected)
    # about rho^2 = 4 segments per round trip, to the segment of the published rule
    assert abs(segments(model) - expected) <= 1
    assert 3 <= segments(model) - window_before_round <= 5


def test_a_loss_halves_the_window_as_reno():
    model = driver(100, 50)
    model.Ack(1, 0.100)
    flight = segments(model)
    assert model.Loss() / MSS == pytest.approx(flight / 2, abs=1)


def test_rho_reaches_the_socket_in_a_simulation():
    """At the dumbbell's 50-ms RTT, RRTT 5 ms (rho 10) and 50 ms (rho 1, Reno) differ, and
    rho 10 fills the window much faster: ns-3's TcpHybla gives identical runs here. Half a
    second holds the first slow start; rho 10's window then reaches 37 MB, which makes
    each further simulated second cost ns-3 about ten seconds."""
    runs = {
        rrtt: simulate(
            DUMBBELL,
            [
                "duration=0.5s",
                "warmup=0s",
                f"flows.f0.variant={{name: Hybla, params: {{RRTT: {rrtt}}}}}",
            ],
        )
        for rrtt in ("5ms", "50ms")
    }
    cwnd = {rrtt: ds["cwnd_bytes"].sel(flow="f0").values for rrtt, ds in runs.items()}
    assert not np.array_equal(cwnd["5ms"], cwnd["50ms"], equal_nan=True)
    reno = simulate(DUMBBELL, ["duration=0.5s", "warmup=0s", "flows.f0.variant=NewReno"])
    early = slice(0, 3)  # the first samples (0.1-0.3 s): the first slow start
    assert np.nanmax(cwnd["5ms"][early]) > 2 * np.nanmax(reno["cwnd_bytes"].sel(flow="f0")[early])
