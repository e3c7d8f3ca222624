"""Analytical TCP throughput models (study D: Makassikis 2006 and the models it builds on).

This module owns the closed-form predictions that study D compares with
measured throughput. Every function is vectorised (numpy broadcasting over
all arguments), takes SI units (bytes, seconds, probabilities) and returns
the *goodput* in bit/s (payload bits per second), the quantity
``goodput_bps`` of the datasets.

Models
------
Mathis et al. (1997)
    ``BW = (MSS / RTT) * C / sqrt(p)``, periodic loss, no timeouts;
    ``C = sqrt(3 / (2 b))`` with ``b`` packets per ACK: sqrt(3/2) when every
    packet is acknowledged, sqrt(3/4) with delayed ACKs (b = 2).
Padhye et al. (2000), approximate model (their eq. 33, the thesis's eq. 1.4)
    ``B = min(W_m / RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))``
    in packets per second: the window cap ``W_m`` and the retransmission
    timeouts (``T0``) that the Mathis model leaves out.
Makassikis (2006), application-level model (the thesis's eq. 3.5)
    ``BW = min(BR * C_r, BE * C_e) / RTT`` for a loss-free path: the send
    window is a fixed share ``C_e`` of the send buffer ``BE`` and the receive
    window a share ``C_r`` of the receive buffer ``BR``. On Linux 2.6.12 the
    thesis found ``C_e ~ 0.55`` (measured) and ``C_r = 3/8`` (from
    ``tcp_adv_win_scale = 2``, see :func:`linux_receive_window_share`). ns-3
    keeps no bookkeeping overhead in its buffers, so there ``C_e = C_r = 1``.

Sources
-------
.. [Mathis1997] M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of
   the TCP congestion avoidance algorithm", ACM SIGCOMM CCR 27(3), 1997.
.. [Padhye2000] J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno
   performance: a simple model and its empirical validation", IEEE/ACM ToN 8(2), 2000.
.. [Makassikis2006] C. Makassikis, "Modèle de coût des communications TCP à un niveau
   applicatif", Master's thesis, Université Louis Pasteur, 2006 (eqs. 1.2-1.4, 3.2-3.5).
.. [Cardwell2000] N. Cardwell, S. Savage, T. Anderson, "Modeling TCP latency",
   IEEE INFOCOM 2000 (slow start without loss, used by :func:`transfer_time_s`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "THESIS_C_E",
    "THESIS_C_R",
    "application_throughput_bps",
    "linux_receive_window_share",
    "mathis_constant",
    "mathis_throughput_bps",
    "padhye_throughput_bps",
    "transfer_throughput_bps",
    "transfer_time_s",
]

ArrayLike = npt.ArrayLike

#: send-window share of the send buffer the thesis used for Linux 2.6.12 (text of section 3.3)
THESIS_C_E = 0.55
#: receive-window share of the receive buffer for Linux 2.6.12, tcp_adv_win_scale = 2 (eq. 3.3)
THESIS_C_R = 3.0 / 8.0


def _float(value: ArrayLike) -> np.ndarray:
    return np.asarray(value, dtype=float)


def mathis_constant(acked_per_ack: ArrayLike = 1) -> np.ndarray:
    """Mathis's constant ``C = sqrt(3 / (2 b))`` for periodic loss.

    Parameters
    ----------
    acked_per_ack
        ``b``, packets acknowledged by each ACK: 1 (every packet ACKed,
        C = sqrt(3/2) ~ 1.22) or 2 (delayed ACKs, C = sqrt(3/4) ~ 0.87).

    References
    ----------
    [Mathis1997]_, section 2; [Makassikis2006]_, section 1.4.1.
    """
    b = _float(acked_per_ack)
    if np.any(b <= 0):
        raise ValueError("acked_per_ack (b) must be > 0")
    return np.sqrt(3.0 / (2.0 * b))


def mathis_throughput_bps(
    mss_bytes: ArrayLike,
    rtt_s: ArrayLike,
    loss_rate: ArrayLike,
    constant: ArrayLike | None = None,
    acked_per_ack: ArrayLike = 1,
) -> np.ndarray:
    """Mathis et al.'s throughput ``(MSS / RTT) * C / sqrt(p)``, in bit/s.

    Parameters
    ----------
    mss_bytes
        Segment payload (bytes).
    rtt_s
        Round-trip time (s).
    loss_rate
        Packet loss probability ``p`` (> 0; ``p = 0`` gives ``inf``).
    constant
        ``C``; by default :func:`mathis_constant` of ``acked_per_ack``.
    acked_per_ack
        ``b``, used only when ``constant`` is None.

    Returns
    -------
    numpy.ndarray
        Goodput (bit/s), broadcast over the arguments.

    References
    ----------
    [Mathis1997]_, eq. (3); [Makassikis2006]_, eq. (1.2).
    """
    c = mathis_constant(acked_per_ack) if constant is None else _float(constant)
    p = _float(loss_rate)
    if np.any(p < 0):
        raise ValueError("loss_rate must be >= 0")
    with np.errstate(divide="ignore"):
        return 8.0 * _float(mss_bytes) / _float(rtt_s) * c / np.sqrt(p)


def padhye_throughput_bps(
    mss_bytes: ArrayLike,
    rtt_s: ArrayLike,
    loss_rate: ArrayLike,
    rto_s: ArrayLike,
    max_window_pkts: ArrayLike = np.inf,
    acked_per_ack: ArrayLike = 2,
) -> np.ndarray:
    """Padhye et al.'s approximate Reno throughput (with timeouts and window cap), in bit/s.

    ``B = min(W_m / RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))``
    packets per second, times ``8 * MSS``. At ``p = 0`` it is ``W_m / RTT``.

    Parameters
    ----------
    mss_bytes
        Segment payload (bytes).
    rtt_s
        Round-trip time (s).
    loss_rate
        Packet loss probability ``p`` (>= 0).
    rto_s
        ``T0``, the duration of a first retransmission timeout (s).
    max_window_pkts
        ``W_m``, the largest window the receiver (or the send buffer) allows,
        in packets; ``inf`` for no cap.
    acked_per_ack
        ``b``, packets acknowledged by each ACK (2 with delayed ACKs).

    Returns
    -------
    numpy.ndarray
        Goodput (bit/s), broadcast over the arguments.

    References
    ----------
    [Padhye2000]_, eq. (33); [Makassikis2006]_, eq. (1.4).
    """
    p = _float(loss_rate)
    b = _float(acked_per_ack)
    rtt = _float(rtt_s)
    if np.any(p < 0) or np.any(p >= 1):
        raise ValueError("loss_rate must be in [0, 1)")
    if np.any(b <= 0):
        raise ValueError("acked_per_ack (b) must be > 0")
    timeout_share = np.minimum(1.0, 3.0 * np.sqrt(3.0 * b * p / 8.0))
    denominator = rtt * np.sqrt(2.0 * b * p / 3.0) + _float(rto_s) * timeout_share * p * (
        1.0 + 32.0 * p**2
    )
    with np.errstate(divide="ignore"):
        loss_limited_pps = 1.0 / denominator
    window_limited_pps = _float(max_window_pkts) / rtt
    return 8.0 * _float(mss_bytes) * np.minimum(window_limited_pps, loss_limited_pps)


def linux_receive_window_share(adv_win_scale: ArrayLike = 2) -> np.ndarray:
    """Share ``C_r`` of a Linux 2.6 receive buffer that the advertised window reaches.

    The overhead is ``BR / 2**s`` for ``s = tcp_adv_win_scale > 0`` and
    ``BR - BR / 2**(-s)`` otherwise (tcp(7), the thesis's eq. 3.2); the
    thesis measured the largest advertised window at *half* of what remains,
    ``(BR - overhead) / 2`` (eq. 3.3). With the default ``s = 2``: 3/8.

    References
    ----------
    [Makassikis2006]_, eqs. (3.2) and (3.3).
    """
    s = _float(adv_win_scale)
    usable = np.where(s > 0, 1.0 - 2.0 ** (-s), 2.0 ** np.minimum(s, 0.0))
    return usable / 2.0


def application_throughput_bps(
    send_buffer_bytes: ArrayLike,
    recv_buffer_bytes: ArrayLike,
    rtt_s: ArrayLike,
    c_e: ArrayLike = THESIS_C_E,
    c_r: ArrayLike = THESIS_C_R,
    capacity_bps: ArrayLike | None = None,
) -> np.ndarray:
    """The thesis's application-level model ``min(BR * C_r, BE * C_e) / RTT``, in bit/s.

    Parameters
    ----------
    send_buffer_bytes
        ``BE``, the send buffer the application set (bytes).
    recv_buffer_bytes
        ``BR``, the receive buffer (bytes).
    rtt_s
        Round-trip time (s).
    c_e, c_r
        Shares of the send and receive buffers usable as window (thesis: 0.55
        and 3/8 for Linux 2.6.12; ns-3: 1 and 1).
    capacity_bps
        If given, the prediction is capped at this goodput (the path's
        capacity). The thesis's model has no cap (None).

    References
    ----------
    [Makassikis2006]_, eqs. (3.4) and (3.5).
    """
    window_bytes = np.minimum(_float(recv_buffer_bytes) * c_r, _float(send_buffer_bytes) * c_e)
    rate = 8.0 * window_bytes / _float(rtt_s)
    if capacity_bps is not None:
        rate = np.minimum(rate, _float(capacity_bps))
    return rate


def transfer_time_s(
    size_bytes: ArrayLike,
    rtt_s: ArrayLike,
    capacity_bps: ArrayLike,
    mss_bytes: ArrayLike,
    initial_window_pkts: ArrayLike = 3,
    window_cap_bytes: ArrayLike = np.inf,
    growth_per_rtt: ArrayLike = 1.5,
) -> np.ndarray:
    """Loss-free time from the end of the handshake to the last byte at the receiver (s).

    A round-based slow-start model after [Cardwell2000]_ (no loss, no
    handshake): round ``k`` sends ``w_k = min(IW * MSS * g**k, window_cap)``
    bytes and lasts one RTT, until a window fills the pipe (``w_k`` at least
    ``capacity * RTT``), after which the rest flows at ``capacity``. The last
    round costs half an RTT (the one-way trip of the last byte) plus its
    serialisation. ``g`` is the slow-start growth per RTT: 2 when every
    segment is ACKed, 1.5 with delayed ACKs and one MSS per ACK (ns-3's
    NewReno). This model is ours, not the thesis's; study D uses it as the
    reference curve of the throughput-against-volume figure (D4).

    Parameters
    ----------
    size_bytes
        Bytes to transfer (> 0).
    rtt_s
        Round-trip time (s).
    capacity_bps
        Goodput capacity of the path (bit/s).
    mss_bytes
        Segment payload (bytes).
    initial_window_pkts
        Initial congestion window (segments).
    window_cap_bytes
        Largest window the buffers allow (bytes).
    growth_per_rtt
        Window growth factor per round in slow start (> 1).
    """
    size, rtt, rate, mss, iw, cap, growth = np.broadcast_arrays(
        *(
            _float(v)
            for v in (
                size_bytes,
                rtt_s,
                capacity_bps,
                mss_bytes,
                initial_window_pkts,
                window_cap_bytes,
                growth_per_rtt,
            )
        )
    )
    if np.any(size <= 0) or np.any(growth <= 1.0):
        raise ValueError("size_bytes must be > 0 and growth_per_rtt > 1")
    remaining = size.copy()
    elapsed = np.zeros_like(size)
    done = np.zeros(size.shape, dtype=bool)
    window = np.minimum(iw * mss, cap)
    pipe_bytes = rate * rtt / 8.0
    for _ in range(200):  # the window grows by growth_per_rtt until it stops: few rounds
        active = ~done
        if not active.any():
            break
        full_pipe = active & (window >= pipe_bytes)
        # pipe full: the rest streams at the capacity, then the last byte's one-way trip
        elapsed[full_pipe] += remaining[full_pipe] * 8.0 / rate[full_pipe] + rtt[full_pipe] / 2.0
        done |= full_pipe
        # window capped below the pipe: one window per RTT until the last (partial) round
        capped = active & ~done & (window >= cap)
        rounds = np.ceil(remaining[capped] / window[capped])
        elapsed[capped] += (
            (rounds - 1.0) * rtt[capped]
            + rtt[capped] / 2.0
            + (remaining[capped] - (rounds - 1.0) * window[capped]) * 8.0 / rate[capped]
        )
        done |= capped
        last = active & ~done & (remaining <= window)
        elapsed[last] += rtt[last] / 2.0 + remaining[last] * 8.0 / rate[last]
        done |= last
        more = active & ~done
        elapsed[more] += rtt[more]
        remaining[more] -= window[more]
        window = np.where(more, np.minimum(window * growth, cap), window)
    if not done.all():
        raise ValueError("transfer_time_s: the window did not reach its cap in 200 rounds")
    return elapsed


def transfer_throughput_bps(
    size_bytes: ArrayLike,
    rtt_s: ArrayLike,
    capacity_bps: ArrayLike,
    mss_bytes: ArrayLike,
    initial_window_pkts: ArrayLike = 3,
    window_cap_bytes: ArrayLike = np.inf,
    growth_per_rtt: ArrayLike = 1.5,
) -> np.ndarray:
    """Volume divided by :func:`transfer_time_s`: what a receiver-side tool reports (bit/s)."""
    time_s = transfer_time_s(
        size_bytes,
        rtt_s,
        capacity_bps,
        mss_bytes,
        initial_window_pkts,
        window_cap_bytes,
        growth_per_rtt,
    )
    return 8.0 * _float(size_bytes) / time_s
