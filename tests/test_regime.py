"""The regime measures of tcprepro.analysis.regime on synthetic traces with known answers."""

import numpy as np
import pytest

from synthetic import synthetic_pair
from tcprepro.analysis import regime


def _cumulative(per_interval):
    return np.cumsum(np.asarray(per_interval, dtype=float), axis=0)


def test_loss_events_are_bounded_from_below_three_ways():
    # 0.5-s intervals, 2 s of warm-up, RTT 0.1 s: an event spans at most 2 intervals
    times = np.arange(1, 41) * 0.5
    n = times.size
    lost = np.zeros((n, 2))
    lost[[6, 7, 12, 20, 21, 22], 0] = 1.0  # three separate runs of lossy intervals
    lost[5:, 1] = 1.0  # a loss in every interval of the window: one run, 35 intervals
    ds = synthetic_pair(lost_pkts=(0.0, 0.0), warmup_lost_pkts=(0.0, 0.0), duration_s=20.0)
    ds["lost_data_pkts"] = (("flow", "time"), lost.T)
    events = regime.loss_events(ds)
    assert events.sel(flow="f1") == 3  # the runs
    assert events.sel(flow="f2") == 17  # 35 lossy intervals / 2 intervals per event
    # coarse sampling: one lossy interval, but 700 segments lost with a 100-segment window
    coarse = synthetic_pair(duration_s=20.0, interval_s=5.0, lost_pkts=(700.0, 0.0))
    assert regime.loss_events(coarse).sel(flow="f1") >= 7
    # no loss in the window: no event, whatever happened in the warm-up
    quiet = synthetic_pair(lost_pkts=(0.0, 0.0), warmup_lost_pkts=(5.0, 5.0), duration_s=20.0)
    assert (regime.loss_events(quiet) == 0).all()


def test_an_emulated_flows_losses_are_its_retransmissions():
    """Linux's qdiscs do not say whose packets they dropped (lost_data_pkts is NaN in an
    emulated run): the sender's retransmissions count instead. Where drops are recorded
    (ns-3), retransmissions are not counted on top of them."""
    times = np.arange(1, 41) * 0.5
    retx = np.zeros((times.size, 2))
    retx[[6, 12, 20], 0] = 2.0  # three retransmission episodes in the window
    retx[[8, 30], 1] = 1.0
    emulated = synthetic_pair(lost_pkts=(0.0, 0.0), warmup_lost_pkts=(0.0, 0.0), duration_s=20.0)
    emulated["lost_data_pkts"] = (("flow", "time"), np.full((2, times.size), np.nan))
    emulated["random_lost_pkts"] = (("flow", "time"), np.full((2, times.size), np.nan))
    emulated["retx_pkts"] = (("flow", "time"), retx.T)
    assert regime.loss_events(emulated).values.tolist() == [3.0, 2.0]
    simulated = emulated.copy()
    simulated["lost_data_pkts"] = (("flow", "time"), np.zeros((2, times.size)))
    assert regime.loss_events(simulated).values.tolist() == [0.0, 0.0]


def test_first_slow_start_is_over_after_a_loss_or_a_window_reduction():
    lossy = synthetic_pair(lost_pkts=(0.0, 0.0), warmup_lost_pkts=(3.0, 0.0), duration_s=20.0)
    over = regime.first_slow_start_over(lossy)
    assert bool(over.sel(flow="f1"))
    assert not bool(over.sel(flow="f2"))
    times = np.arange(1, 41) * 0.5
    cwnd = np.column_stack([np.where(times < 1.5, 50.0, 30.0), np.minimum(times * 20, 400.0)])
    reduced = synthetic_pair(
        lost_pkts=(0.0, 0.0), warmup_lost_pkts=(0.0, 0.0), cwnd_pkts=cwnd, duration_s=20.0
    )
    over = regime.first_slow_start_over(reduced)
    assert bool(over.sel(flow="f1"))  # its window fell at 1.5 s, inside the warm-up
    assert not bool(over.sel(flow="f2"))  # still growing


def test_measured_rtts_and_completed_transfers():
    ds = synthetic_pair(duration_s=20.0)  # 18 s measured at a 0.1-s RTT
    assert regime.measured_rtts(ds).values == pytest.approx([180.0, 180.0])
    assert int(regime.completed_transfers(ds)) == 0
