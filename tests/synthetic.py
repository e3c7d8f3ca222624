"""Synthetic run datasets with known answers (no simulator involved)."""

from __future__ import annotations

import json

import numpy as np

from tcprepro.store import RawTraces, make_run_dataset


def synthetic_run(
    goodput_bps=(8e6, 1e6),
    rtt_s=(0.2, 0.3),
    duration_s=10.0,
    interval_s=0.5,
    warmup_s=2.0,
    capacity_bps=(9.6e6, 1.92e6),
    attrs=None,
    transfers=0,
    extra_flow_series=None,
):
    """Two flows (down, up) on two links (down, up) with constant rates.

    ``extra_flow_series`` maps a raw per-flow series name to a function of the
    sample times returning its [sample, flow] array (e.g. ``unacked_byte_s``).

    During the warm-up the flows send at a tenth of their rate and see twice
    their RTT, so a metric that forgets the window gets a different answer.
    """
    times = np.arange(1, round(duration_s / interval_s) + 1) * interval_s
    n = times.size
    warm = times <= warmup_s
    rate = np.array(goodput_bps)[None, :] * np.where(warm[:, None], 0.1, 1.0)
    rx = np.cumsum(rate * interval_s / 8.0, axis=0)
    rtt = np.array(rtt_s)[None, :] * np.where(warm[:, None], 2.0, 1.0)
    samples = np.full((n, 2), 10.0)
    samples[1::2, 1] = 30.0  # uneven sample counts: the mean must be weighted
    flow_series = {
        "rx_bytes": rx,
        "cwnd_bytes": np.full((n, 2), 10_000.0),
        "rtt_sum_s": np.cumsum(rtt * samples, axis=0),
        "rtt_count": np.cumsum(samples, axis=0),
        "tx_data_pkts": np.cumsum(np.full((n, 2), 100.0), axis=0),
        "retx_pkts": np.zeros((n, 2)),
        "lost_data_pkts": np.cumsum(np.tile([1.0, 2.0], (n, 1)), axis=0),
        "lost_ack_pkts": np.zeros((n, 2)),
        "random_lost_pkts": np.zeros((n, 2)),
        **{name: make(times) for name, make in (extra_flow_series or {}).items()},
    }
    link_series = {
        "queue_pkts": np.tile([5.0, 20.0], (n, 1)),
        "queue_bytes": np.tile([7500.0, 30000.0], (n, 1)),
        "drops_pkts": np.cumsum(np.tile([1.0, 2.0], (n, 1)), axis=0),
        "tx_bytes": np.cumsum(np.tile([5e6, 1e6], (n, 1)) * interval_s / 8.0, axis=0),
        "random_drops_pkts": np.zeros((n, 2)),
    }
    raw = RawTraces(
        times_s=times,
        flow_names=["down", "up"],
        link_names=["down", "up"],
        flow_series=flow_series,
        link_series=link_series,
        flow_info={
            "flow_kind": ["bulk", "bulk"],
            "flow_variant": ["NewReno", "Cubic"],
            "flow_cc_type": ["ns3::TcpNewReno", "ns3::TcpCubic"],
            "flow_src": ["server", "client"],
            "flow_dst": ["client", "server"],
            "flow_label": ["down", "up"],
            "flow_link": ["down", "up"],
            "flow_start_s": [0.0, 0.0],
            "flow_connected_s": [0.1, 0.1],
            "flow_end_s": [np.nan, np.nan],
            "flow_size_bytes": [0, 0],
            "flow_rx_bytes": rx[-1],
        },
        link_info={
            "link_rate_bps": [10e6, 2e6],
            "link_delay_s": [0.042, 0.052],
            "link_buffer_pkts": [250, 40],
            "link_qdisc": ["fifo", "fifo"],
            "link_loss_rate": [0.0, 0.0],
            "link_queue_max_pkts": [5.0, 20.0],
            "link_goodput_capacity_bps": list(capacity_bps),
        },
        transfer_info={
            "transfer_generator": ["web"] * transfers,
            "transfer_src": ["server"] * transfers,
            "transfer_dst": ["client"] * transfers,
            "transfer_start_s": list(np.arange(transfers, dtype=float)),
            "transfer_size_bytes": [1000.0] * transfers,
            "transfer_connected_s": list(np.arange(transfers) + 0.1),
            "transfer_end_s": [*(np.arange(transfers - 1) + 0.5), np.nan][:transfers],
            "transfer_rx_bytes": [1000.0] * transfers,
        }
        if transfers
        else {},
        attrs=_attrs({"id": "synthetic"}, interval_s, warmup_s, duration_s, attrs),
    )
    return make_run_dataset(raw)


def _attrs(config, interval_s, warmup_s, duration_s, extra):
    """Run attributes (provenance) of a synthetic dataset."""
    return {
        "config": json.dumps(config),
        "seed": 1,
        "rep": 0,
        "backend": "synthetic",
        "cache_key": "0" * 20,
        "interval_s": interval_s,
        "warmup_s": warmup_s,
        "duration_s": duration_s,
        "tcprepro_version": "test",
        "git_commit": "test",
        "kernel": "test",
        "created": "2026-01-01T00:00:00+00:00",
        **(extra or {}),
    }


def synthetic_pair(
    goodput_bps=(30e6, 10e6),
    sent_pkts=(1000.0, 400.0),
    lost_pkts=(2.0, 1.0),
    random_lost_pkts=(0.0, 0.0),
    queue_pkts=40.0,
    cwnd_pkts=None,
    duration_s=10.0,
    interval_s=0.5,
    warmup_s=2.0,
    capacity_bps=48e6,
    buffer_pkts=100,
    variants=("YeahPaper", "YeahPaper"),
    attrs=None,
    warmup_lost_pkts=None,
):
    """Two flows f1, f2 sharing the traced ``bottleneck`` (study C), constant per interval.

    Per interval: each flow receives ``goodput_bps``, sends ``sent_pkts`` data segments,
    loses ``lost_pkts`` at the queue and ``random_lost_pkts`` to the random-loss model;
    the queue holds ``queue_pkts``. During the warm-up every flow sends at a tenth of its
    rate, loses ten times as much (or ``warmup_lost_pkts`` per interval) and the queue is
    full, so a metric that forgets the window gets a different answer. ``cwnd_pkts``
    (time, 2) overrides the windows.
    """
    times = np.arange(1, round(duration_s / interval_s) + 1) * interval_s
    n = times.size
    warm = (times <= warmup_s)[:, None]
    rate = np.where(warm, 0.1, 1.0) * np.array(goodput_bps)[None, :]
    sent = np.where(warm, 0.1, 1.0) * np.array(sent_pkts)[None, :]
    warm_lost = 10.0 * np.array(lost_pkts) if warmup_lost_pkts is None else warmup_lost_pkts
    lost = np.where(warm, np.array(warm_lost)[None, :], np.array(lost_pkts)[None, :])
    random_lost = np.tile(np.array(random_lost_pkts, dtype=float), (n, 1))
    mss = 1448
    cwnd = np.full((n, 2), 100.0 * mss) if cwnd_pkts is None else np.asarray(cwnd_pkts) * mss
    queue = np.where(warm[:, 0], float(buffer_pkts), queue_pkts)
    flow_series = {
        "rx_bytes": np.cumsum(rate * interval_s / 8.0, axis=0),
        "cwnd_bytes": cwnd,
        "rtt_sum_s": np.cumsum(np.full((n, 2), 0.1), axis=0),
        "rtt_count": np.cumsum(np.ones((n, 2)), axis=0),
        "tx_data_pkts": np.cumsum(sent, axis=0),
        "retx_pkts": np.cumsum(lost, axis=0),
        "lost_data_pkts": np.cumsum(lost, axis=0),
        "lost_ack_pkts": np.zeros((n, 2)),
        "random_lost_pkts": np.cumsum(random_lost, axis=0),
    }
    link_series = {
        "queue_pkts": queue[:, None],
        "queue_bytes": queue[:, None] * 1500.0,
        "drops_pkts": np.cumsum(lost.sum(axis=1, keepdims=True), axis=0),
        "tx_bytes": np.cumsum(np.full((n, 1), capacity_bps * interval_s / 8.0), axis=0),
        "random_drops_pkts": np.cumsum(random_lost.sum(axis=1, keepdims=True), axis=0),
    }
    raw = RawTraces(
        times_s=times,
        flow_names=["f1", "f2"],
        link_names=["bottleneck"],
        flow_series=flow_series,
        link_series=link_series,
        flow_info={
            "flow_kind": ["bulk", "bulk"],
            "flow_variant": list(variants),
            "flow_cc_type": [f"ns3::Tcp{v}" for v in variants],
            "flow_src": ["s0", "s1"],
            "flow_dst": ["receiver", "receiver"],
            "flow_label": ["s0->receiver", "s1->receiver"],
            "flow_link": ["bottleneck", "bottleneck"],
            "flow_start_s": [0.0, 1.0],
            "flow_connected_s": [0.1, 1.1],
            "flow_end_s": [np.nan, np.nan],
            "flow_size_bytes": [0, 0],
            "flow_rx_bytes": flow_series["rx_bytes"][-1],
        },
        link_info={
            "link_rate_bps": [capacity_bps * 1500 / 1448],
            "link_delay_s": [0.0],
            "link_buffer_pkts": [buffer_pkts],
            "link_qdisc": ["fifo"],
            "link_loss_rate": [0.0],
            "link_queue_max_pkts": [float(buffer_pkts)],
            "link_goodput_capacity_bps": [capacity_bps],
        },
        attrs=_attrs(
            {"id": "synthetic-pair", "tcp": {"mss": "1448B"}},
            interval_s,
            warmup_s,
            duration_s,
            attrs,
        ),
    )
    return make_run_dataset(raw)
