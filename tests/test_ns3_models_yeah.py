"""ns-3's TcpYeah and tcprepro's TcpYeahPaper against the rules of the YeAH paper, section III.

The paper (seed 003): Q = RTT_queue * cwnd / RTT_min with RTT_queue = RTT_min - RTT_base;
"Fast" mode (Scalable increase) when Q < Q_max and L = RTT_queue / RTT_base < 1/phi, else
"Slow" mode (Reno increase) with a precautionary decongestion (cwnd -= Q, ssthresh = cwnd/2)
when Q > Q_max; on three duplicate ACKs cwnd -= min(max(cwnd/8, Q), cwnd/2), or cwnd/2 when
competing with Reno (many consecutive Slow RTTs). Q_max = 80, phi = 8 (both models' defaults).

Each rule is checked on both models through the C++ driver (RTT samples are chosen, no
network). Where ns-3 departs from the paper the test pins ns-3's behaviour down, so that the
deviation documented in docs/variants.md cannot change unnoticed.
"""

import pytest

from model_checks import drivers

MSS = 1000
BOTH = ["ns3::TcpYeah", "ns3::TcpYeahPaper"]
BASE_RTT = 0.1


def _yeah(type_id, cwnd=1000):
    driver = drivers().CongestionOpsDriver(type_id, MSS, cwnd, 1)  # congestion avoidance
    for _ in range(3):
        driver.Round(BASE_RTT, 1)  # RTT_base = 100 ms, Fast mode
    return driver


def _growth_per_round(driver, rtt_s, rounds=4):
    """Window growth (segments) in the last of `rounds` round trips at `rtt_s`."""
    for _ in range(rounds - 1):
        driver.Round(rtt_s, 1)
    before = driver.CwndBytes()
    driver.Round(rtt_s, 1)
    return (driver.CwndBytes() - before) / MSS


@pytest.mark.parametrize("type_id", BOTH)
def test_fast_mode_without_queueing_uses_the_scalable_increase(type_id):
    # Q = 0, L = 0: Fast; Scalable adds 1 segment per 100 ACKed: 10 per round at cwnd 1000
    assert _growth_per_round(_yeah(type_id), BASE_RTT) == pytest.approx(10.5, abs=0.6)


@pytest.mark.parametrize("type_id", BOTH)
def test_slow_mode_when_the_queueing_delay_exceeds_base_over_phi(type_id):
    # RTT 115 ms: L = 0.15 > 1/8 while Q = 13 < 80 -> Slow: Reno's one segment per round
    assert _growth_per_round(_yeah(type_id, 100), 0.115) == pytest.approx(1.0, abs=0.15)


def test_small_queueing_delay_keeps_fast_mode_in_the_paper_model():
    # RTT 105 ms at cwnd 1000: L = 0.05 < 1/8 and Q = 48 < 80 -> Fast mode
    driver = _yeah("ns3::TcpYeahPaper")
    assert _growth_per_round(driver, 0.105) == pytest.approx(10.5, abs=0.6)
    assert driver.State("FastMode") == 1
    assert driver.State("Queue") == pytest.approx(
        0.005 * driver.CwndBytes() / MSS / 0.105, rel=0.02
    )


def test_ns3_yeah_ignores_its_stcp_ai_factor_attribute():
    # Deviation of ns-3 3.44: the Scalable helper is built in the constructor, before the
    # attributes are applied, so StcpAiFactor stays 100 whatever the configuration says.
    for type_id, expected in (("ns3::TcpYeah", 10.5), ("ns3::TcpYeahPaper", 21)):
        driver = drivers().CongestionOpsDriver(type_id, MSS, 1000, 1)
        assert driver.Set("StcpAiFactor", "50") == ""
        assert _growth_per_round(driver, BASE_RTT) == pytest.approx(expected, abs=1), type_id


def test_ns3_yeah_leaves_fast_mode_at_any_queueing_delay():
    # Deviation of ns-3 3.44 (tcp-yeah.cc): the Slow test is `L > 1 / m_phy` with an
    # integer m_phy, so 1/8 == 0 and any L > 0 means Slow mode (Reno increase).
    assert _growth_per_round(_yeah("ns3::TcpYeah"), 0.105) == pytest.approx(1.0, abs=0.15)


def _ack_until_cut(driver, rtt_s, limit=5000):
    """ACK one segment at a time until cwnd drops: (cwnd before, cwnd after) in segments."""
    for _ in range(limit):
        before = driver.CwndBytes()
        driver.Ack(1, rtt_s)
        if driver.CwndBytes() < before:
            return before / MSS, driver.CwndBytes() / MSS
    raise AssertionError("no decongestion")


@pytest.mark.parametrize("type_id", BOTH)
def test_precautionary_decongestion_removes_the_queue_estimate(type_id):
    # RTT 120 ms at cwnd ~1000: Q = 0.02 * cwnd / 0.12 ~ 170 > 80 -> Slow mode, cwnd -= Q
    driver = _yeah(type_id)
    before, after = _ack_until_cut(driver, 0.12)
    queue = 0.02 * before / 0.12
    assert after == pytest.approx(before - queue, abs=1.5)
    if type_id == "ns3::TcpYeahPaper":
        assert driver.SsThreshBytes() / MSS == pytest.approx(after / 2, abs=1)  # ssthresh = cwnd/2
    else:
        assert driver.SsThreshBytes() / MSS == pytest.approx(after, abs=1)  # ns-3: ssthresh = cwnd


def test_decongestion_does_not_go_below_count_reno():
    driver = _yeah("ns3::TcpYeahPaper")
    # a queueing delay of 300 ms: Q is most of the window, so only count_reno bounds the cut
    for _ in range(3):
        driver.Round(0.4, 1)
        assert driver.CwndBytes() / MSS >= driver.State("RenoCount") - 1


@pytest.mark.parametrize("type_id", BOTH)
@pytest.mark.parametrize(
    ("rtt_s", "cwnd", "expected"),
    [
        (BASE_RTT, 1000, "cwnd/8"),  # Q = 0: max(cwnd/8, Q) = cwnd/8
        (0.15, 200, "Q"),  # Q = 67: cwnd/8 = 25 < Q < min(Q_max, cwnd/2)
        (0.25, 100, "cwnd/2"),  # Q = 60 < Q_max but > cwnd/2 = 50
    ],
)
def test_loss_rule_when_not_competing_with_reno(type_id, rtt_s, cwnd, expected):
    driver = _yeah(type_id, cwnd)
    driver.Round(rtt_s, 1)
    driver.Round(rtt_s, 1)
    window = driver.CwndBytes() // MSS
    queue = int((rtt_s - BASE_RTT) * window / rtt_s) if expected == "Q" else None
    cut = {"cwnd/8": window // 8, "cwnd/2": window // 2}.get(expected, queue)
    # Q is estimated at the end of a round; the window may have grown by a segment since
    assert window - driver.Loss() // MSS == pytest.approx(cut, abs=2), expected


@pytest.mark.parametrize("type_id", BOTH)
def test_loss_halves_the_window_when_competing_with_reno(type_id):
    driver = _yeah(type_id)
    for _ in range(20):  # 20 consecutive Slow rounds (> 16): Reno competition
        driver.Round(0.115, 1)
    window = driver.CwndBytes() // MSS
    assert driver.Loss() // MSS == pytest.approx(window / 2, abs=1)
