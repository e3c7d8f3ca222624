"""Measurements computed from run or combined datasets.

This module owns the definitions of the numbers figures and claims quote:
utilisation, goodput, mean RTT, loss rates, queue statistics, fairness. Every
function works on a single-run dataset and, unchanged, on a combined dataset
with extra sweep and ``rep`` dimensions (xarray broadcasting), and averages
over the *measurement window* only: samples whose interval ends after the
warm-up (``time > warmup_s``).

Definitions
-----------
utilisation
    mean goodput of a flow over the window divided by the goodput capacity of
    the link direction its data crosses (``link_goodput_capacity_bps``: the
    link rate times MSS / (MSS + TCP/IP + layer-2 headers)). 1.0 means the
    link carried nothing but this flow's payload and its headers.
mean RTT
    mean of every RTT sample (one per ACK that produced a sample) in the window.
response time
    of a generated transfer: from the opening of its connection (SYN) to the
    arrival of its last byte. Transfers still running at the end of the run
    are *censored*: counted, never averaged.
loss probability (buffer overflow)
    of a set of flows: data segments of those flows dropped by traced queues
    divided by the data segments they sent (retransmissions included), both
    summed over the flows and the window. Segments destroyed by a random-loss
    model are not overflow losses and are counted apart (random loss rate:
    destroyed / data segments that left the queue).
RTT fairness ratio, throughput share
    ratios of window-mean goodputs: a long-RTT flow's over a short-RTT flow's
    (1 = RTT-fair), one flow's over the sum of a set of flows (its share).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

__all__ = [
    "conditional_response",
    "flow_capacity_bps",
    "goodput_bps",
    "jain_index",
    "link_utilisation",
    "loss_probability",
    "loss_rate",
    "mean_queue_pkts",
    "mean_rtt_s",
    "random_loss_rate",
    "retransmission_probability",
    "retransmission_rate",
    "rtt_fairness_ratio",
    "size_bins",
    "sized_flow_rate_bps",
    "throughput_share",
    "total_utilisation",
    "transfer_table",
    "utilisation",
    "window",
]


def window(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Boolean mask over ``time``: samples inside the measurement window."""
    if warmup_s is None:
        try:
            warmup_s = float(ds.attrs["warmup_s"])
        except KeyError:
            raise ValueError("dataset has no warmup_s attribute; pass warmup_s") from None
    return ds["time"] > warmup_s


def goodput_bps(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Mean goodput of each flow over the measurement window (bit/s)."""
    mask = window(ds, warmup_s)
    return ds["goodput_bps"].where(mask).mean("time").rename("goodput_bps")


def flow_capacity_bps(ds: xr.Dataset) -> xr.DataArray:
    """Goodput capacity of each flow's bottleneck direction (bit/s)."""
    capacity = xr.zeros_like(ds["flow_start_s"], dtype=float) * np.nan
    for link in ds["link"].values:
        on_link = ds["flow_link"] == link
        capacity = xr.where(on_link, ds["link_goodput_capacity_bps"].sel(link=link), capacity)
    return capacity


def utilisation(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Mean goodput of each flow / goodput capacity of its bottleneck direction (0..1)."""
    return (goodput_bps(ds, warmup_s) / flow_capacity_bps(ds)).rename("utilisation")


def sized_flow_rate_bps(ds: xr.Dataset) -> xr.DataArray:
    """A sized flow's throughput (bit/s; NaN for a bulk flow or one still running).

    Its volume over the time from the end of its handshake to its last byte at the
    receiver: the measure of study D's figure D4 (a receiver-side tool's report). The
    mean goodput over a window (:func:`utilisation`) depends on the window's length for
    such a flow.
    """
    elapsed = ds["flow_end_s"] - ds["flow_connected_s"]
    rate = 8.0 * ds["flow_size_bytes"] / elapsed.where(elapsed > 0)
    return rate.where(ds["flow_size_bytes"] > 0).rename("sized_flow_rate_bps")


def mean_rtt_s(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Mean of the RTT samples of each flow over the window (s), weighted by sample count."""
    mask = window(ds, warmup_s)
    count = ds["rtt_samples"].where(mask)
    total = (ds["rtt_s"].fillna(0.0) * count).sum("time")
    n = count.sum("time")
    return (total / n.where(n > 0)).rename("rtt_s")


def loss_rate(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Fraction of each flow's data segments dropped at traced queues in the window.

    NaN where the run did not record drops per flow (an emulated run: Linux's qdiscs
    count drops per queue), never 0.
    """
    mask = window(ds, warmup_s)
    lost = ds["lost_data_pkts"].where(mask).sum("time", min_count=1)
    sent = ds["tx_data_pkts"].where(mask).sum("time")
    return (lost / sent.where(sent > 0)).rename("loss_rate")


def retransmission_rate(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Fraction of each flow's data segments that were retransmissions, in the window.

    Recorded by both backends; the stand-in for :func:`loss_rate` where drops are not
    recorded per flow (spurious retransmissions count too).
    """
    mask = window(ds, warmup_s)
    retx = ds["retx_pkts"].where(mask).sum("time", min_count=1)
    sent = ds["tx_data_pkts"].where(mask).sum("time")
    return (retx / sent.where(sent > 0)).rename("retransmission_rate")


def link_utilisation(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Fraction of each traced link direction's rate used on the wire (all packets, L2)."""
    mask = window(ds, warmup_s)
    interval_s = ds["time"] - ds["time"].shift(time=1, fill_value=0.0)
    seconds = interval_s.where(mask).sum("time")
    sent_bits = ds["tx_bytes"].where(mask).sum("time") * 8.0
    return (sent_bits / (seconds * ds["link_rate_bps"])).rename("link_utilisation")


def mean_queue_pkts(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Time-average queue occupancy of each traced link direction (packets)."""
    mask = window(ds, warmup_s)
    return ds["queue_pkts"].where(mask).mean("time").rename("queue_pkts")


def jain_index(values: xr.DataArray, dim: str = "flow") -> xr.DataArray:
    """Jain's fairness index (sum x)^2 / (n sum x^2) along ``dim``; 1 = perfectly fair."""
    n = values.count(dim)
    return (values.sum(dim) ** 2 / (n * (values**2).sum(dim))).rename("jain_index")


def _flows(ds: xr.Dataset, flows: Sequence[str] | None) -> list[str]:
    return [str(f) for f in ds["flow"].values] if flows is None else list(flows)


def loss_probability(
    ds: xr.Dataset, flows: Sequence[str] | None = None, warmup_s: float | None = None
) -> xr.DataArray:
    """Buffer-overflow loss probability of ``flows`` together (all flows by default).

    Data segments the flows lost at traced queues divided by the data segments they
    sent, both summed over the flows and the measurement window; NaN when they sent
    nothing, or when the run did not record drops per flow (an emulated run), never 0.
    """
    mask = window(ds, warmup_s)
    chosen = ds.sel(flow=_flows(ds, flows))
    lost = chosen["lost_data_pkts"].where(mask).sum(("flow", "time"), min_count=1)
    sent = chosen["tx_data_pkts"].where(mask).sum(("flow", "time"))
    return (lost / sent.where(sent > 0)).rename("loss_probability").assign_attrs(units="1")


def retransmission_probability(
    ds: xr.Dataset, flows: Sequence[str] | None = None, warmup_s: float | None = None
) -> xr.DataArray:
    """Data segments ``flows`` retransmitted over the data segments they sent.

    Summed over the flows and the measurement window, as :func:`loss_probability`:
    what both backends record alike (ns-3's trace sinks, Linux's ``ss`` counters), and
    the stand-in for the loss probability where drops are not recorded per flow
    (spurious retransmissions count too).
    """
    mask = window(ds, warmup_s)
    chosen = ds.sel(flow=_flows(ds, flows))
    retx = chosen["retx_pkts"].where(mask).sum(("flow", "time"), min_count=1)
    sent = chosen["tx_data_pkts"].where(mask).sum(("flow", "time"))
    return (
        (retx / sent.where(sent > 0)).rename("retransmission_probability").assign_attrs(units="1")
    )


def random_loss_rate(
    ds: xr.Dataset, flows: Sequence[str] | None = None, warmup_s: float | None = None
) -> xr.DataArray:
    """Measured random-loss probability seen by ``flows`` (all flows by default).

    Data segments destroyed by random-loss models divided by the data segments that
    left the queues (sent minus dropped by a queue), summed over flows and window.
    """
    mask = window(ds, warmup_s)
    chosen = ds.sel(flow=_flows(ds, flows))
    destroyed = chosen["random_lost_pkts"].where(mask).sum(("flow", "time"))
    passed = (chosen["tx_data_pkts"] - chosen["lost_data_pkts"]).where(mask).sum(("flow", "time"))
    return (destroyed / passed.where(passed > 0)).rename("random_loss_rate").assign_attrs(units="1")


def total_utilisation(
    ds: xr.Dataset, flows: Sequence[str] | None = None, warmup_s: float | None = None
) -> xr.DataArray:
    """Summed utilisation of ``flows`` that cross the same link direction (0..1)."""
    chosen = _flows(ds, flows)
    links = {str(ds["flow_link"].sel(flow=f).values.ravel()[0]) for f in chosen}
    if len(links) != 1:
        raise ValueError(f"flows {chosen} do not share one link direction: {sorted(links)}")
    return utilisation(ds, warmup_s).sel(flow=chosen).sum("flow").rename("utilisation")


def throughput_share(
    ds: xr.Dataset, flow: str, flows: Sequence[str] | None = None, warmup_s: float | None = None
) -> xr.DataArray:
    """Goodput of ``flow`` divided by the summed goodput of ``flows`` (all by default)."""
    goodput = goodput_bps(ds, warmup_s)
    total = goodput.sel(flow=_flows(ds, flows)).sum("flow")
    return (goodput.sel(flow=flow, drop=True) / total.where(total > 0)).rename("share")


def rtt_fairness_ratio(
    ds: xr.Dataset, long_flow: str, short_flow: str, warmup_s: float | None = None
) -> xr.DataArray:
    """Goodput of the longer-RTT flow divided by that of the shorter-RTT flow (1 = fair)."""
    goodput = goodput_bps(ds, warmup_s)
    short = goodput.sel(flow=short_flow, drop=True)
    return (goodput.sel(flow=long_flow, drop=True) / short.where(short > 0)).rename(
        "rtt_fairness_ratio"
    )


_TRANSFER_VARS = ("transfer_generator", "transfer_size_bytes", "transfer_start_s", "transfer_end_s")


def transfer_table(ds: xr.Dataset) -> pd.DataFrame:
    """One row per generated transfer, with every sweep coordinate and ``rep``.

    Columns: the dataset's other dimensions (e.g. ``up``, ``down``, ``rep``),
    ``generator``, ``size_bytes``, ``start_s``, ``end_s``, ``response_s`` (NaN
    when censored) and ``completed``.
    """
    frame = ds[list(_TRANSFER_VARS)].to_dataframe().reset_index()
    frame = frame[frame["transfer_size_bytes"].notna() & (frame["transfer_generator"] != "")]
    frame = frame.rename(columns={name: name.removeprefix("transfer_") for name in _TRANSFER_VARS})
    frame = frame.drop(columns=["transfer"])
    frame["response_s"] = frame["end_s"] - frame["start_s"]
    frame["completed"] = frame["response_s"].notna()
    return frame.reset_index(drop=True)


def size_bins(sizes: Sequence[float], per_decade: int = 4) -> np.ndarray:
    """Logarithmic bin edges (bytes) covering ``sizes``, ``per_decade`` bins per decade."""
    sizes = np.asarray(sizes, dtype=float)
    low = np.floor(np.log10(sizes.min()) * per_decade) / per_decade
    high = np.ceil(np.log10(sizes.max()) * per_decade + 1e-9) / per_decade
    return 10 ** np.arange(low, high + 0.5 / per_decade, 1.0 / per_decade)


def conditional_response(
    table: pd.DataFrame,
    by: Sequence[str],
    edges: np.ndarray | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean response time conditioned on size: one row per group of ``by`` and size bin.

    Completed transfers of all repetitions are pooled. Columns: ``bin_low``,
    ``bin_high``, ``size_center_bytes`` (geometric bin centre), ``n`` (completed),
    ``censored`` (still running at the end), ``mean_s``, ``ci_low_s``/``ci_high_s``
    (Student-t interval at ``confidence``; NaN with fewer than 2 transfers).
    """
    if edges is None:
        edges = size_bins(table["size_bytes"])
    table = table.assign(bin=np.digitize(table["size_bytes"], edges) - 1)
    rows = []
    for key, group in table.groupby([*by, "bin"], sort=True):
        *labels, index = key if isinstance(key, tuple) else (key,)
        done = group.loc[group["completed"], "response_s"].to_numpy()
        mean = done.mean() if done.size else np.nan
        half = np.nan
        if done.size >= 2:
            from scipy import stats  # here: importing scipy.stats costs a second a process

            sem = done.std(ddof=1) / np.sqrt(done.size)
            half = stats.t.ppf(0.5 + confidence / 2, done.size - 1) * sem
        low_edge, high_edge = edges[index], edges[min(index + 1, len(edges) - 1)]
        rows.append(
            {
                **dict(zip(by, labels, strict=True)),
                "bin_low": low_edge,
                "bin_high": high_edge,
                "size_center_bytes": float(np.sqrt(low_edge * high_edge)),
                "n": int(done.size),
                "censored": int((~group["completed"]).sum()),
                "mean_s": mean,
                "ci_low_s": mean - half,
                "ci_high_s": mean + half,
            }
        )
    return pd.DataFrame(rows)
