"""ns-3's TcpWestwoodPlus against the published Westwood+ algorithm, on a single-flow trace.

Westwood+ (Mascolo et al.; Linux's tcp_westwood.c, which the thesis's ns-2 TCP-Linux ran)
samples the delivery rate once per RTT, low-pass filters it into a bandwidth estimate
(BWE) and, after a loss, sets ssthresh = BWE x RTT_min. The trace is taken in C++
(``westwood_trace.cc``, compiled by cppyy against the ns-3 wheel): the socket's ssthresh
and RTT samples and the model's ``EstimatedBW`` (each estimate fires it twice: the raw
sample, then the filtered value).

Found: ssthresh after every loss is max(2 MSS, BWE x RTT_min) to the byte, as published.
The filter differs from Linux's: ns-3 filters b_k = 0.9 b_(k-1) + 0.05 (s_k + s_(k-1))
starting from b_0 = 0, so its first estimate is 5 % of the first sample, where Linux
starts its two 7/8 stages from the first sample itself. The estimate therefore lags more
in slow start: at a loss in the first slow start the BWE is a fraction of the delivery
rate and the flow restarts from a few segments (this trace: 0.23 of it, 4.6 segments);
once the filter has run for a few dozen RTTs the BWE is within 5 % of the delivery rate.
"""

from functools import cache
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
MSS = 1448
MODULES = ("core", "network", "stats", "bridge", "internet", "point-to-point", "applications")


@cache
def tracer():
    """The C++ single-flow tracer, compiled against the ns-3 wheel's headers."""
    import cppyy

    from tcprepro.installation import find_wheel
    from tcprepro.ns3 import build

    build.load()
    wheel = find_wheel()
    for module in (*MODULES, "traffic-control"):
        cppyy.load_library(
            str(wheel.lib_dir / f"libns{wheel.version}-{module}{wheel.lib_suffix}.so")
        )
    cppyy.add_include_path(str(wheel.include_dir))
    cppyy.cppdef("\n".join(f"#define {d} 1" for d in wheel.defines))
    cppyy.cppdef((HERE / "westwood_trace.cc").read_text())
    return cppyy.gbl.westwood_check


@cache
def westwood_trace():
    """30 s of one Westwood+ flow: 10 Mb/s, RTT 40 ms (BDP 35 segments), 20-packet buffer."""
    trace = tracer().Run("ns3::TcpWestwoodPlus", "10Mbps", "20ms", 20, MSS, 30.0)
    return {
        name: tuple(
            np.array(list(getattr(getattr(trace, name), part))) for part in ("time", "value")
        )
        for name in ("ssthresh", "cwnd", "bwe", "rtt", "acked")
    }


def _losses(trace):
    """(time, ssthresh set) at each loss: every ssthresh change after the initial value."""
    times, values = trace["ssthresh"]
    return list(zip(times[1:], values[1:], strict=True))


def _filtered_bwe(trace, at):
    """The model's filtered estimate in force at time ``at`` (the second of each pair)."""
    times, values = trace["bwe"]
    filtered_times, filtered = times[1::2], values[1::2]
    return float(filtered[filtered_times <= at][-1])


def test_ssthresh_after_a_loss_is_bwe_times_rtt_min():
    trace = westwood_trace()
    losses = _losses(trace)
    assert len(losses) >= 10  # the comparison covers many loss events
    rtt_times, rtts = trace["rtt"]
    for at, ssthresh in losses:
        bwe = _filtered_bwe(trace, at)
        rtt_min = rtts[rtt_times < at].min()
        expected = max(2 * MSS, int(bwe * rtt_min / 8))
        # stated tolerance: one byte (the model truncates to whole bytes)
        assert abs(ssthresh - expected) <= 1, (at, ssthresh, expected)


def _delivery_rate(trace, at, rtts=10):
    """Bytes cumulatively ACKed per second over the ``rtts`` RTTs before ``at`` (bit/s)."""
    times, acked = trace["acked"]
    rtt_times, rtt = trace["rtt"]
    span = rtts * float(np.median(rtt[(rtt_times < at) & (rtt_times > at - 1.0)]))
    first, last = np.searchsorted(times, at - span), np.searchsorted(times, at) - 1
    return (acked[last] - acked[first]) * 8 / (times[last] - times[first])


def test_the_bandwidth_filter_starts_from_zero_where_linux_starts_from_the_first_sample():
    trace = westwood_trace()
    _, values = trace["bwe"]
    raw, filtered = values[0::2], values[1::2]
    # ns-3: b_1 = 0.9 b_0 + 0.05 (s_1 + s_0) with b_0 = s_0 = 0; Linux would give b_1 = s_1
    assert filtered[0] == pytest.approx(0.05 * raw[0], abs=1.0)
    # and the later estimates follow the same recursion (1-bit/s rounding of DataRate)
    for k in range(1, 20):
        step = 0.9 * filtered[k - 1] + 0.05 * (raw[k] + raw[k - 1])
        assert filtered[k] == pytest.approx(step, abs=2.0)
    # the consequence: at the first loss, in slow start, the estimate is far below the
    # delivery rate, and the flow restarts from a few segments
    (first, ssthresh), *later = _losses(trace)
    assert _filtered_bwe(trace, first) < 0.5 * _delivery_rate(trace, first)
    assert ssthresh < 8 * MSS
    # once the filter has run, the estimate is the delivery rate within 5 %
    for at, _ in later[2:]:
        assert _filtered_bwe(trace, at) == pytest.approx(_delivery_rate(trace, at), rel=0.05)
