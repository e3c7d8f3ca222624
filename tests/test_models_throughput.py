"""The analytical throughput models against values worked out by hand."""

import math

import numpy as np
import pytest

from tcprepro import reference
from tcprepro.models.throughput import (
    THESIS_C_E,
    THESIS_C_R,
    application_throughput_bps,
    linux_receive_window_share,
    mathis_constant,
    mathis_throughput_bps,
    padhye_throughput_bps,
    transfer_throughput_bps,
    transfer_time_s,
)


def test_mathis_constant_every_packet_and_delayed_acks():
    # C = sqrt(3 / (2b)): b = 1 -> sqrt(1.5) = 1.224745; b = 2 -> sqrt(0.75) = 0.866025
    assert mathis_constant(1) == pytest.approx(1.224745, rel=1e-6)
    assert mathis_constant(2) == pytest.approx(0.866025, rel=1e-6)
    with pytest.raises(ValueError, match="b"):
        mathis_constant(0)


def test_mathis_by_hand():
    # MSS 1448 B, RTT 100 ms, p = 1 %, b = 1:
    #   MSS/RTT = 1448 * 8 / 0.1 = 115 840 bit/s; C / sqrt(p) = 1.224745 / 0.1 = 12.24745
    #   BW = 115 840 * 12.24745 = 1 418 744 bit/s
    assert mathis_throughput_bps(1448, 0.1, 0.01) == pytest.approx(1_418_744, rel=1e-6)
    # delayed ACKs (b = 2): C = 0.866025 -> 115 840 * 8.66025 = 1 003 204 bit/s
    assert mathis_throughput_bps(1448, 0.1, 0.01, acked_per_ack=2) == pytest.approx(
        1_003_204, rel=1e-6
    )
    # an explicit C overrides b: C = 1 -> 115 840 * 10 = 1 158 400 bit/s
    assert mathis_throughput_bps(1448, 0.1, 0.01, constant=1.0) == pytest.approx(1_158_400)


def test_mathis_scales_as_one_over_rtt_and_sqrt_p():
    base = mathis_throughput_bps(1000, 0.05, 1e-3)
    assert mathis_throughput_bps(1000, 0.1, 1e-3) == pytest.approx(base / 2)
    assert mathis_throughput_bps(1000, 0.05, 4e-3) == pytest.approx(base / 2)


def test_padhye_by_hand_moderate_loss():
    # MSS 1000 B, RTT 0.1 s, p = 0.01, b = 2, T0 = 1 s, no window cap:
    #   RTT sqrt(2bp/3) = 0.1 * sqrt(0.04/3) = 0.1 * 0.1154701 = 0.01154701
    #   min(1, 3 sqrt(3bp/8)) = 3 * sqrt(0.0075) = 3 * 0.0866025 = 0.2598076
    #   p (1 + 32 p^2) = 0.01 * 1.0032 = 0.010032
    #   timeout term = 1 * 0.2598076 * 0.010032 = 0.00260639
    #   B = 1 / (0.01154701 + 0.00260639) = 70.6544 packets/s = 565 235 bit/s
    assert padhye_throughput_bps(1000, 0.1, 0.01, 1.0, np.inf, 2) == pytest.approx(
        565_235, rel=1e-5
    )


def test_padhye_by_hand_heavy_loss_timeouts_dominate():
    # p = 0.1, b = 1, RTT 0.1 s, T0 = 1 s:
    #   RTT sqrt(2p/3) = 0.1 * 0.2581989 = 0.02581989
    #   min(1, 3 sqrt(3p/8)) = 3 * 0.1936492 = 0.5809475; p (1 + 32 p^2) = 0.1 * 1.32 = 0.132
    #   timeout term = 0.5809475 * 0.132 = 0.07668507 (three times the RTT term)
    #   B = 1 / 0.10250496 = 9.75562 packets/s -> x 8000 bit = 78 045 bit/s
    assert padhye_throughput_bps(1000, 0.1, 0.1, 1.0, np.inf, 1) == pytest.approx(78_045, rel=1e-5)
    # Mathis ignores the timeouts: 80 000 * 1.224745 / 0.316228 = 309 839 bit/s, 4x more
    assert mathis_throughput_bps(1000, 0.1, 0.1) == pytest.approx(309_839, rel=1e-5)


def test_padhye_is_the_window_cap_at_zero_loss_and_at_tiny_loss():
    # p = 0: W_m / RTT = 100 packets / 0.1 s = 1000 packets/s = 8 Mbit/s with 1000-byte packets
    assert padhye_throughput_bps(1000, 0.1, 0.0, 1.0, 100, 2) == pytest.approx(8e6)
    # p = 1e-8: the loss term (about 2.4e4 packets/s) exceeds the cap: still W_m / RTT
    assert padhye_throughput_bps(1000, 0.1, 1e-8, 1.0, 100, 2) == pytest.approx(8e6)
    # no cap and no loss: infinite, without a warning
    with np.errstate(all="raise"):
        assert np.isinf(padhye_throughput_bps(1000, 0.1, 0.0, 1.0, np.inf, 2))


def test_padhye_reduces_to_mathis_when_timeouts_vanish():
    # T0 = 0: 1 / (RTT sqrt(2bp/3)) = sqrt(3/(2b)) / (RTT sqrt(p)): exactly Mathis's form
    for b in (1, 2):
        assert padhye_throughput_bps(1448, 0.05, 1e-3, 0.0, np.inf, b) == pytest.approx(
            mathis_throughput_bps(1448, 0.05, 1e-3, acked_per_ack=b)
        )


def test_models_broadcast_over_arrays():
    p = np.array([1e-4, 1e-3, 1e-2])
    rtt = np.array([[0.02], [0.1]])
    assert mathis_throughput_bps(1448, rtt, p).shape == (2, 3)
    assert padhye_throughput_bps(1448, rtt, p, 1.0, 181, 2).shape == (2, 3)
    assert np.all(np.diff(padhye_throughput_bps(1448, 0.02, p, 1.0, 181, 2)) < 0)


def test_models_refuse_impossible_inputs():
    with pytest.raises(ValueError, match="loss_rate"):
        padhye_throughput_bps(1000, 0.1, 1.5, 1.0)
    with pytest.raises(ValueError, match="loss_rate"):
        mathis_throughput_bps(1000, 0.1, -0.1)


def test_linux_receive_window_share():
    # tcp_adv_win_scale = 2: overhead BR/4, window (BR - BR/4) / 2 = 3/8 BR (eqs. 3.2, 3.3)
    assert linux_receive_window_share(2) == pytest.approx(3 / 8)
    assert linux_receive_window_share(2) == pytest.approx(THESIS_C_R)
    # 1: overhead BR/2 -> BR/4; -2: overhead BR - BR/4 -> BR/8; 0: overhead 0 -> BR/2
    assert list(linux_receive_window_share([1, -2, 0])) == pytest.approx([1 / 4, 1 / 8, 1 / 2])


def test_application_model_by_hand():
    # Table 3.4, first row: RTT 12 ms, BE 8 KiB, BR 16 MiB, C_e 0.55, C_r 3/8:
    #   min(16 777 216 * 0.375, 8192 * 0.55) = min(6 291 456, 4505.6) = 4505.6 B
    #   4505.6 * 8 / 0.012 = 3 003 733 bit/s (the thesis prints 3 Mbps)
    assert application_throughput_bps(8192, 16 * 2**20, 0.012) == pytest.approx(3_003_733, rel=1e-6)
    # the receive buffer limits: BR 256 KiB -> 98 304 B -> 65 536 000 bit/s (printed 65.54)
    assert application_throughput_bps(16 * 2**20, 256 * 1024, 0.012) == pytest.approx(65_536_000)
    # ns-3 (C_e = C_r = 1): 64 KiB at 12 ms = 43 690 667 bit/s; capped at 40 Mbit/s if asked
    assert application_throughput_bps(65536, 2**24, 0.012, 1, 1) == pytest.approx(43_690_667)
    assert application_throughput_bps(65536, 2**24, 0.012, 1, 1, 40e6) == pytest.approx(40e6)
    assert (THESIS_C_E, THESIS_C_R) == (0.55, 0.375)


def test_application_model_reproduces_the_thesis_predictions():
    # Tables 3.4/3.5 print FE, FR and D_p = min(FE, FR) / RTT with Ko = 1024 B and
    # Mbps = 1e6 bit/s; our function with C_e = C_r = 1 on (FE, FR) must give D_p
    # to the printed precision (two decimals).
    table = reference.load("makassikis2006_throughput")
    predicted = application_throughput_bps(
        table["fe_kib"] * 1024, table["fr_kib"] * 1024, table["rtt_ms"] / 1000, 1.0, 1.0
    )
    assert np.allclose(predicted / 1e6, table["dp_mbps"], atol=0.006)
    # and the printed relative errors follow from D_p and D_m (within rounding)
    error = (table["dp_mbps"] / table["dm_mbps"] - 1) * 100
    assert np.allclose(error, table["err_pct"], atol=0.6)


def test_the_thesis_tables_use_c_e_0_6_not_the_0_55_of_its_text():
    # A fact worth knowing when comparing: FE = 0.6 BE in every row but the first.
    table = reference.load("makassikis2006_throughput")
    share = table["fe_kib"] / table["be_kib"]
    assert share.iloc[0] == pytest.approx(0.55)
    assert np.allclose(share.iloc[1:], 0.6)
    assert np.allclose(table["fr_kib"] / table["br_kib"], 3 / 8)


def test_transfer_time_by_hand():
    # 10 segments of 1000 B, IW 3, growth 2, RTT 0.1 s, 1 Gbit/s, no cap:
    #   rounds: 3, 6 (9 sent), last round 1 segment: 2 RTTs + RTT/2 + 1000*8/1e9
    #   = 0.25 + 8e-6 = 0.250008 s
    assert transfer_time_s(10_000, 0.1, 1e9, 1000, 3, np.inf, 2.0) == pytest.approx(0.250008)
    # window capped at 2000 B below the pipe (12.5 MB): 5 rounds of 2000 B,
    #   4 RTTs + RTT/2 + 2000 * 8 / 1e9 = 0.45 + 1.6e-5
    assert transfer_time_s(10_000, 0.1, 1e9, 1000, 3, 2000, 2.0) == pytest.approx(0.450016)
    # pipe full at once (1 Mbit/s x 0.1 s = 12 500 B < IW): serialisation + one-way trip
    #   10 000 * 8 / 1e6 + 0.05 = 0.13 s
    assert transfer_time_s(10_000, 0.1, 1e6, 1000, 20, np.inf, 2.0) == pytest.approx(0.13)


def test_transfer_throughput_converges_to_the_window_rate():
    volumes = 2.0 ** np.arange(13, 30)
    rate = transfer_throughput_bps(volumes, 0.0085, 964e6, 1448, 3, 32768, 1.5)
    assert np.all(np.diff(rate) > 0)
    assert rate[-1] == pytest.approx(32768 * 8 / 0.0085, rel=1e-3)
    assert rate[0] < 0.2 * rate[-1]
    assert math.isfinite(float(rate[0]))
