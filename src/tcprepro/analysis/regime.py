"""Whether a run is in the regime a claim speaks about: the measures its criteria read.

A claim about long-run TCP behaviour (a mean throughput over congestion epochs, a
fairness index, a response time averaged over many transfers) can only be decided by
runs that reached that regime. This module computes, from the traces, the numbers the
claims registry's *regime criteria* are stated in; the thresholds themselves belong to
the registry (:mod:`tcprepro.claims`), which :mod:`tcprepro.claims.cells` checks a
claim's cells against. Every function works on a single run and, unchanged, on a
combined dataset with sweep and ``rep`` dimensions, like :mod:`tcprepro.metrics`.

Definitions
-----------
loss event
    a congestion (or random-loss) episode of a flow: data segments of the flow dropped
    at a traced queue or destroyed by a random-loss model. The traces count losses per
    sampling interval, so the number of events in the measurement window is bounded
    from below in three ways, and the largest bound is reported: the number of maximal
    runs of consecutive intervals with a loss (each run holds at least one event); the
    number of intervals with a loss divided by ``ceil(RTT / interval) + 1`` (the
    intervals one event can span, when its drops fall within one RTT, as a window's
    overflow does); and the segments lost in the window divided by the largest
    congestion window of the run (one event loses at most one window). It is exact when
    events are more than two intervals apart; with coarse sampling and frequent losses
    it is an undercount. Where a flow's drops are not recorded (emulated runs: Linux's
    qdiscs count drops per queue, not per flow, so ``lost_data_pkts`` is NaN), the
    segments its sender retransmitted stand for the lost ones (every loss is
    retransmitted; ``retx_pkts`` also counts the rare spurious retransmission).
first slow start over
    the flow left its first slow start before the measurement window began: it lost or
    retransmitted a segment, had a retransmission timeout, or its congestion window
    decreased between two samples, at or before the end of the warm-up. (A flow that
    never lost anything nor reduced its window is still in its first slow start, or
    window-limited from the start.)
measured RTTs
    the length of the measurement window divided by the flow's mean RTT in it.
completed transfers
    generated transfers whose last byte arrived before the end of the run.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from tcprepro import metrics

__all__ = [
    "cell_summary",
    "completed_transfers",
    "first_slow_start_over",
    "interval_s",
    "loss_events",
    "lost_segments",
    "measured_rtts",
    "mss_bytes",
    "present_flows",
    "window_s",
]


def _series(ds: xr.Dataset, name: str) -> xr.DataArray:
    """A per-interval flow counter, zeros where the run does not record it."""
    if name in ds:
        return ds[name].fillna(0.0)
    return xr.zeros_like(ds["cwnd_bytes"]).fillna(0.0)


def present_flows(ds: xr.Dataset) -> xr.DataArray:
    """Boolean over ``flow`` (and the run dims): the flow exists in that run (has a window)."""
    return ds["cwnd_bytes"].notnull().any("time")


def interval_s(ds: xr.Dataset) -> float:
    """The sampling interval of the traces (s)."""
    if "interval_s" in ds.attrs:
        return float(ds.attrs["interval_s"])
    times = np.asarray(ds["time"].values, dtype=float)
    return float(np.median(np.diff(times))) if times.size > 1 else float(times[0])


def window_s(ds: xr.Dataset) -> float:
    """Length of the measurement window (s): duration minus warm-up."""
    return float(ds.attrs["duration_s"]) - float(ds.attrs["warmup_s"])


def loss_events(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Lower bound of each flow's loss events in the measurement window (see the module doc)."""
    mask = metrics.window(ds, warmup_s)
    lost = lost_segments(ds)
    hit = (lost > 0) & mask
    runs = (hit & ~hit.shift(time=1, fill_value=False)).sum("time")
    rtt = metrics.mean_rtt_s(ds, warmup_s).fillna(0.0)
    span = np.ceil(rtt / interval_s(ds)) + 1.0
    spread = np.floor(hit.sum("time") / span)
    bound = xr.where(runs > spread, runs, spread)
    mss = mss_bytes(ds)
    if np.isfinite(mss):
        window_pkts = (ds["cwnd_bytes"].max("time") / mss).where(lambda w: w >= 1)
        by_count = np.floor(lost.where(mask).sum("time") / window_pkts).fillna(0.0)
        bound = xr.where(by_count > bound, by_count, bound)
    return bound.where(present_flows(ds)).rename("loss_events")


def lost_segments(ds: xr.Dataset) -> xr.DataArray:
    """Each flow's lost data segments per interval (see "loss event" in the module doc).

    Drops at traced queues plus random losses where the run records drops per flow
    (ns-3); the sender's retransmissions where it does not (emulated runs).
    """
    recorded = ds["lost_data_pkts"].notnull().any("time") if "lost_data_pkts" in ds else False
    dropped = _series(ds, "lost_data_pkts") + _series(ds, "random_lost_pkts")
    return xr.where(recorded, dropped, _series(ds, "retx_pkts"))


def first_slow_start_over(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """True where the flow left its first slow start before the window (see the module doc)."""
    before = ~metrics.window(ds, warmup_s)
    signals = (
        _series(ds, "lost_data_pkts")
        + _series(ds, "random_lost_pkts")
        + _series(ds, "retx_pkts")
        + _series(ds, "rto_count")
    )
    lost_before = ((signals > 0) & before).any("time")
    cwnd = ds["cwnd_bytes"]
    reduced = ((cwnd < cwnd.shift(time=1)) & before).any("time")
    return (lost_before | reduced).where(present_flows(ds)).rename("first_slow_start_over")


def measured_rtts(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """The measurement window's length in each flow's mean RTT."""
    length = window_s(ds) if warmup_s is None else float(ds.attrs["duration_s"]) - warmup_s
    return (length / metrics.mean_rtt_s(ds, warmup_s)).rename("measured_rtts")


def completed_transfers(ds: xr.Dataset) -> xr.DataArray:
    """Generated transfers completed in each run (0 when the run made none)."""
    if "transfer_end_s" not in ds or ds.sizes.get("transfer", 0) == 0:
        return xr.zeros_like(ds["link_goodput_capacity_bps"].isel(link=0, drop=True))
    return ds["transfer_end_s"].notnull().sum("transfer").rename("completed_transfers")


def mss_bytes(run: xr.Dataset) -> float:
    """The MSS of a run's resolved scenario (``tcp.mss``), NaN when it is not recorded."""
    import json

    if "run_config" in run:
        text = next((str(c) for c in np.ravel(run["run_config"].values) if str(c)), "")
    else:
        text = str(run.attrs.get("config", ""))
    try:
        mss = json.loads(text)["tcp"]["mss"]
    except (ValueError, KeyError, TypeError):
        return float("nan")
    return float(str(mss).removesuffix("B"))


def cell_summary(run: xr.Dataset) -> dict[str, float]:
    """What one cell's traces show, means over its repetitions and bulk flows.

    ``goodput_mbps`` (sum over the bulk flows), ``cwnd_pkts`` (mean window per bulk
    flow, in segments of the run's MSS; NaN when the run does not record its MSS),
    ``cwnd_kb``, ``loss_events``, ``loss_pct`` (NaN where drops are not recorded per
    flow: an emulated run) and ``retx_pct`` (retransmitted segments, per bulk
    flow), ``rtts`` (measured window in mean RTTs), ``queue_pkts`` and ``buffer_pkts``
    of the most occupied traced queue, ``window_s``.
    """
    mask = metrics.window(run)
    bulk = (run["flow_kind"] == "bulk") & present_flows(run)
    mss = mss_bytes(run)
    goodput = metrics.goodput_bps(run).where(bulk).sum("flow", min_count=1)
    queue = run["queue_pkts"].where(mask).mean("time")
    reps = [d for d in queue.dims if d == "rep"]
    queue = queue.mean(reps) if reps else queue
    link = int(np.nanargmax(queue.values)) if np.isfinite(queue.values).any() else 0
    buffer = run["link_buffer_pkts"].isel(link=link)
    return {
        "goodput_mbps": float(goodput.mean()) / 1e6,
        "cwnd_pkts": float(run["cwnd_bytes"].where(mask & bulk).mean()) / mss,
        "cwnd_kb": float(run["cwnd_bytes"].where(mask & bulk).mean()) / 1e3,
        "loss_events": float(loss_events(run).where(bulk).mean()),
        "loss_pct": float(metrics.loss_rate(run).where(bulk).mean()) * 100.0,
        "retx_pct": float(metrics.retransmission_rate(run).where(bulk).mean()) * 100.0,
        "rtts": float(measured_rtts(run).where(bulk).mean()),
        "queue_pkts": float(queue.isel(link=link)),
        "queue_link": str(run["link"].values[link]),
        "buffer_pkts": float(buffer.max()),
        "window_s": window_s(run),
    }
