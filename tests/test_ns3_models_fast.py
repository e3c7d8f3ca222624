"""FAST TCP: the window update rule, and alpha packets of standing queue per flow."""

import pytest

from conftest import DUMBBELL
from model_checks import drivers, simulate
from tcprepro import metrics

MSS = 1000


@pytest.mark.slow
@pytest.mark.parametrize(("flows", "alpha"), [(1, 20), (2, 15)])
def test_standing_queue_is_alpha_packets_per_flow(flows, alpha):
    # 10 Mb/s, RTT 50 ms (BDP 43 packets), a buffer of 200 that FAST should not fill
    ds = simulate(
        DUMBBELL,
        [
            "duration=30s",
            "warmup=10s",
            "topology.bottleneck.buffer_pkts=200",
            f"topology.senders=[{{name: s, count: {flows}, delay: 5ms}}]",
            "flows={"
            + ", ".join(
                f"f{i}: {{src: s{i}, variant: {{name: Fast, params: {{Alpha: {alpha}}}}}}}"
                for i in range(flows)
            )
            + "}",
        ],
    )
    queue = float(metrics.mean_queue_pkts(ds).sel(link="bottleneck"))
    assert queue == pytest.approx(flows * alpha, rel=0.2), queue
    assert float(ds["drops_pkts"].sum()) == 0
    assert float(metrics.utilisation(ds).sum()) > 0.95
    if flows > 1:
        assert float(metrics.jain_index(metrics.goodput_bps(ds))) > 0.95


def test_window_update_rule():
    driver = drivers().CongestionOpsDriver("ns3::TcpFast", MSS, 100, 1000)
    assert driver.Set("Alpha", "20") == ""
    assert driver.Set("Gamma", "0.5") == ""
    # the first ACK opens a round; its end (one window later) applies the update:
    # RTT = baseRTT -> min{2w, w/2 + (w + alpha)/2} = w + alpha/2
    driver.Round(0.1, 1)
    assert driver.CwndBytes() == 110 * MSS
    driver.Round(0.125, 1)  # 25 ms of queueing: w/2 + (0.8 w + alpha)/2
    assert driver.CwndBytes() / MSS == pytest.approx(0.5 * 110 + 0.5 * (0.8 * 110 + 20), abs=0.01)
    assert driver.State("Backlog") == pytest.approx(110 * 0.2, rel=1e-6)
    # far from equilibrium the window at most doubles per RTT (FAST's slow start)
    fast = drivers().CongestionOpsDriver("ns3::TcpFast", MSS, 10, 1000)
    assert fast.Set("Alpha", "500") == ""
    fast.Round(0.1, 1)
    assert fast.CwndBytes() == 20 * MSS
    fast.Round(0.1, 1)
    assert fast.CwndBytes() == 40 * MSS
    assert fast.Loss() == 20 * MSS  # a loss halves the window
