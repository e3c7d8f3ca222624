"""Study A (Braud & Heusse, antiparallel TCP): numbers derived from A1-A4 datasets.

A1/A2 combined datasets have dimensions ``up``, ``down`` (the two directions'
variants) and ``rep``; A3/A4 add the transfers of the web traffic. Cells whose runs
are missing (pending models) are NaN.

The transfers of A3/A4 are drawn from a random stream seeded by the scenario, the
repetition and the generator (:mod:`tcprepro.traffic`), so every cell of one
repetition and load usually draws the same transfers. What was *drawn* (the size
histogram, the offered load) is therefore counted over distinct draws
(:func:`distinct_draws`): runs whose transfers are identical count once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics, traffic
from tcprepro.analysis.common import (
    generator_calibration,
    run_configs,
    run_scenario,
    transfers_offered_load,
)

__all__ = [
    "MIN_BIN_TRANSFERS",
    "SIZE_CLASSES",
    "binned_means",
    "cell_mechanism",
    "cell_table",
    "distinct_draws",
    "drawn_size_summary",
    "matched_mean",
    "measured_offered_load",
    "pick",
    "response_summary",
    "response_times",
    "size_edges",
    "size_histogram",
    "slow_start_limit_bytes",
]


def cell_table(ds: xr.Dataset) -> xr.Dataset:
    """Per-cell statistics of an A1/A2 combined dataset.

    Returns a dataset over (``up``, ``down``) with the mean and standard deviation
    (ddof = 1) over repetitions of the download and upload utilisation, in
    percent, and the mean RTT over both flows in ms.
    """
    util = metrics.utilisation(ds) * 100.0
    down = util.sel(flow="down", drop=True)
    up = util.sel(flow="up", drop=True)
    rtt = metrics.mean_rtt_s(ds) * 1000.0
    return xr.Dataset(
        {
            "down_pct": down.mean("rep"),
            "down_std": down.std("rep", ddof=1),
            "up_pct": up.mean("rep"),
            "up_std": up.std("rep", ddof=1),
            "rtt_ms": rtt.mean("flow").mean("rep"),
        }
    )


def pick(values: xr.DataArray, **labels: str) -> xr.DataArray:
    """``values.sel(**labels)``, NaN when a label is not in this build's sweep."""
    for dim, label in labels.items():
        values = values.reindex({dim: [label]}).isel({dim: 0}, drop=True)
    return values


def response_times(ds: xr.Dataset, load: float) -> xr.DataArray:
    """Response time (s) of every transfer, NaN when censored, at one offered load."""
    if "load" in ds.dims:
        if not np.isclose(ds["load"].values.astype(float), load).any():
            return xr.DataArray(np.nan)
        ds = ds.sel(load=ds["load"].values[np.isclose(ds["load"].values.astype(float), load)][0])
    return ds["transfer_end_s"] - ds["transfer_start_s"]


def matched_mean(*arrays: xr.DataArray, dims: Sequence[str]) -> list[float]:
    """Means of each array over ``dims``, on the entries finite in every array."""
    both = np.isfinite(arrays[0])
    for array in arrays[1:]:
        both = both & np.isfinite(array)
    return [float(array.where(both).mean(dims)) for array in arrays]


def cell_mechanism(run: xr.Dataset) -> dict[str, xr.DataArray | float]:
    """What one cell's traces show, averaged over the measurement window and the reps.

    ``queue_pkts`` and ``queue_delay_ms`` (the queueing delay the mean backlog implies
    at the link rate) per link; ``rtt_ms``, ``loss_pct`` (data loss) and ``retx_pct``
    (retransmitted) per flow; ``lost_acks_down``: ACKs of the download dropped per run
    (in the uplink queue). Losses are NaN where a run does not record drops per flow
    (an emulated run), never 0.
    """
    mask = metrics.window(run)
    queue_bytes = run["queue_bytes"].where(mask).mean(["time", "rep"])
    return {
        "queue_pkts": run["queue_pkts"].where(mask).mean(["time", "rep"]),
        "queue_delay_ms": queue_bytes * 8 / run["link_rate_bps"].isel(rep=0) * 1000,
        "rtt_ms": (metrics.mean_rtt_s(run) * 1000).mean("rep"),
        "loss_pct": metrics.loss_rate(run).mean("rep") * 100,
        "retx_pct": metrics.retransmission_rate(run).mean("rep") * 100,
        "lost_acks_down": float(
            run["lost_ack_pkts"].sel(flow="down").where(mask).sum(["time"], min_count=1).mean("rep")
        ),
    }


#: the fewest completed transfers a size bin needs, in every cell compared, for its mean
#: response time to enter a claim's reading (A-c8, A-c9: the size-conditional curves)
MIN_BIN_TRANSFERS = 10


def size_edges(*datasets: xr.Dataset, per_decade: int = 4) -> np.ndarray:
    """The figures' logarithmic size bins (bytes) over every transfer of ``datasets``."""
    sizes = np.concatenate(
        [np.asarray(ds["transfer_size_bytes"].values, dtype=float).ravel() for ds in datasets]
    )
    return metrics.size_bins(sizes[np.isfinite(sizes) & (sizes > 0)], per_decade)


def binned_means(
    cells: dict[str, xr.DataArray], sizes: xr.DataArray, edges: np.ndarray
) -> pd.DataFrame:
    """Mean response time per size bin of each cell, on the transfers completed in all.

    ``cells``: response times (NaN: censored) over the same transfers (``rep``,
    ``transfer``, and any pooled dimension such as ``up``), by a cell's name; ``sizes``:
    those transfers' sizes. One row per bin: ``bin_low``, ``bin_high``, ``n`` (transfers
    completed in every cell) and one column per cell, the mean over those transfers.
    """
    names = list(cells)
    arrays = [np.asarray(cells[name].values, dtype=float).ravel() for name in names]
    size = np.broadcast_to(np.asarray(sizes.values, dtype=float), cells[names[0]].shape).ravel()
    done = np.logical_and.reduce([np.isfinite(a) for a in arrays]) & np.isfinite(size)
    index = np.digitize(size, edges) - 1
    rows = []
    for b in range(len(edges) - 1):
        chosen = done & (index == b)
        row = {"bin_low": edges[b], "bin_high": edges[b + 1], "n": int(chosen.sum())}
        for name, values in zip(names, arrays, strict=True):
            row[name] = float(values[chosen].mean()) if chosen.any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def slow_start_limit_bytes(ds: xr.Dataset) -> float:
    """Bytes a download can send before its window fills the downlink: BDP plus buffer.

    The downlink's rate times the path's round-trip propagation time, plus its buffer of
    full-sized packets; a transfer larger than this cannot finish in its first slow start
    without filling the path, the boundary of study A's "short to medium transfers, when
    slow start still matters" (the paper's section 4).
    """
    configs = run_configs(ds)
    text = next(str(c) for c in np.asarray(configs.values).ravel() if str(c))
    scenario = run_scenario(text)
    topo = scenario.topology
    rtt = 2 * (topo.downlink.delay + topo.uplink.delay + topo.server_link.delay)
    return topo.downlink.rate * rtt / 8 + topo.downlink.buffer_pkts * scenario.packet_bytes


#: size classes of the response-time summary (bytes): short, medium, long transfers
SIZE_CLASSES = ((0.0, 1e5), (1e5, 1e6), (1e6, np.inf))


def response_summary(ds: xr.Dataset, load: float) -> pd.DataFrame:
    """Completed and censored transfers and mean response times per (up, down) and size class.

    One row per (``up``, ``down``): ``completed``, ``censored`` (still running at the end),
    ``mean_s`` over every completed transfer and ``mean_s_<low>`` for each size class of
    :data:`SIZE_CLASSES` (``<100kB``, ``100kB-1MB``, ``>1MB``), repetitions pooled.
    """
    if "load" in ds.dims:
        loads = np.asarray(ds["load"].values, dtype=float)
        if not np.isclose(loads, load).any():
            return pd.DataFrame()
        ds = ds.sel(load=ds["load"].values[np.isclose(loads, load)][0], drop=True)
    table = metrics.transfer_table(ds)
    names = ("<100kB", "100kB-1MB", ">1MB")
    rows = []
    for (up, down), group in table.groupby(["up", "down"], sort=False):
        done = group[group["completed"]]
        row = {
            "up": up,
            "down": down,
            "completed": len(done),
            "censored": int((~group["completed"]).sum()),
            "mean_s": float(done["response_s"].mean()) if len(done) else np.nan,
        }
        for name, (low, high) in zip(names, SIZE_CLASSES, strict=True):
            part = done[(done["size_bytes"] >= low) & (done["size_bytes"] < high)]
            row[f"n_{name}"] = len(part)
            row[f"mean_s_{name}"] = float(part["response_s"].mean()) if len(part) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _run_dims(ds: xr.Dataset) -> list[str]:
    """The dimensions that tell runs apart: the sweep dimensions and ``rep``."""
    return [str(d) for d in ds["transfer_start_s"].dims if d != "transfer"]


def _runs(ds: xr.Dataset, generator: str) -> pd.DataFrame:
    """One row per run present, with the number of the transfers it drew.

    Columns: its sweep values and ``rep``, its resolved scenario (``config``) and
    ``draw`` (runs with identical transfers of ``generator``, the same arrival times and
    sizes, share one number).
    """
    dims = _run_dims(ds)
    configs = run_configs(ds)
    if dims:
        runs = configs.rename("config").to_dataframe().reset_index()[[*dims, "config"]]
    else:
        runs = pd.DataFrame({"config": [str(configs.item())]})
    runs = runs[runs["config"].str.startswith("{")].reset_index(drop=True)
    table = metrics.transfer_table(ds)
    table = table[table["generator"] == generator]
    keys: dict[tuple[object, ...], int] = {}
    draws = []
    grouped = dict(list(table.groupby(dims, sort=False))) if dims else {(): table}
    for _, run in runs.iterrows():
        part = grouped.get(tuple(run[d] for d in dims), table.iloc[:0]).sort_values("start_s")
        key = (tuple(part["start_s"].round(9)), tuple(part["size_bytes"]))
        draws.append(keys.setdefault(key, len(keys)))
    runs["draw"] = draws
    return runs


def distinct_draws(ds: xr.Dataset, generator: str = "web") -> pd.DataFrame:
    """The transfers of ``generator`` that were drawn, each distinct draw once.

    The rows of :func:`tcprepro.metrics.transfer_table` for the first run of each draw
    (see the module docstring), with the run's ``draw`` number, ``shared_by`` (how many
    runs drew these transfers) and ``config`` (its resolved scenario).
    """
    runs = _runs(ds, generator)
    dims = _run_dims(ds)
    shared = runs.groupby("draw")["draw"].transform("size").rename("shared_by")
    first = runs.assign(shared_by=shared).drop_duplicates("draw")
    table = metrics.transfer_table(ds)
    table = table[table["generator"] == generator]
    if dims:
        return table.merge(first, on=dims, how="inner").reset_index(drop=True)
    return table.assign(**first.iloc[0].to_dict()).reset_index(drop=True)


def size_histogram(ds: xr.Dataset, edges: np.ndarray, generator: str = "web") -> pd.DataFrame:
    """Histogram of the transfer sizes drawn, next to the count the size law expects.

    One row per size bin [``bin_low``, ``bin_high``) of ``edges`` (bytes): ``count``, the
    transfers of the distinct draws (:func:`distinct_draws`) in the bin, and
    ``expected``, the sum over those draws of their number of transfers times the
    probability that their law puts on the bin, the law as each run calibrated it
    (:func:`tcprepro.traffic.size_law_cdf` with the solved scale of
    :func:`~tcprepro.analysis.common.generator_calibration`) and rounded to whole bytes
    as drawn.
    """
    edges = np.asarray(edges, dtype=float)
    drawn = distinct_draws(ds, generator)
    index = np.digitize(drawn["size_bytes"], edges) - 1
    inside = (index >= 0) & (index < len(edges) - 1)
    counts = np.bincount(index[inside], minlength=len(edges) - 1)
    # a size is drawn then rounded: it lands in [a, b) when the draw is in
    # [ceil(a) - 0.5, ceil(b) - 0.5)
    cuts = np.ceil(edges) - 0.5
    expected = np.zeros(len(edges) - 1)
    for _, draw in drawn.groupby("draw", sort=False):
        config = str(draw["config"].iloc[0])
        law = run_scenario(config).traffic[generator].size
        cal = generator_calibration(config, generator)
        cdf = traffic.size_law_cdf(law, cuts, cal.pareto_min_bytes)
        expected += len(draw) * np.diff(cdf)
    return pd.DataFrame(
        {"bin_low": edges[:-1], "bin_high": edges[1:], "count": counts, "expected": expected}
    )


def drawn_size_summary(
    ds: xr.Dataset, generator: str = "web", small_bytes: float = SIZE_CLASSES[0][1]
) -> dict[str, float]:
    """Number of distinct transfers drawn, the share below ``small_bytes`` and the median size."""
    sizes = distinct_draws(ds, generator)["size_bytes"].to_numpy(dtype=float)
    if not sizes.size:
        return {"transfers": 0, "share_small": float("nan"), "median_bytes": float("nan")}
    return {
        "transfers": int(sizes.size),
        "share_small": float((sizes < small_bytes).mean()),
        "median_bytes": float(np.median(sizes)),
    }


def measured_offered_load(
    ds: xr.Dataset, generator: str = "web", warmup_s: float | None = None
) -> pd.DataFrame:
    """The load each run's transfers offered over the measurement window, next to the target.

    One row per run present: its sweep values and ``rep``, ``offered_load`` (the bytes of
    the transfers that arrived between the end of the warm-up and the end of the run over
    that window x the goodput capacity of the load calibration:
    :func:`~tcprepro.analysis.common.transfers_offered_load`), ``target_load`` (the load the
    run was calibrated to), ``capacity_bps``, ``pareto_min_bytes`` (the solved scale of the
    size law; NaN for other laws), ``window_s`` and ``draw`` (runs with the same ``draw``
    drew the same transfers, :func:`distinct_draws`).
    """
    start = float(ds.attrs["warmup_s"]) if warmup_s is None else warmup_s
    end = float(ds.attrs["duration_s"])
    offered = transfers_offered_load(ds, generator, start, end)
    runs = _runs(ds, generator)
    dims = _run_dims(ds)
    if dims:
        values = offered.to_dataframe().reset_index()[[*dims, "offered_load"]]
        frame = runs.merge(values, on=dims, how="left")
    else:
        frame = runs.assign(offered_load=float(offered))
    cals = [generator_calibration(c, generator) for c in runs["config"]]
    frame["target_load"] = [cal.load for cal in cals]
    frame["capacity_bps"] = [cal.capacity_bps for cal in cals]
    frame["pareto_min_bytes"] = [
        np.nan if cal.pareto_min_bytes is None else cal.pareto_min_bytes for cal in cals
    ]
    frame["window_s"] = end - start
    return frame.drop(columns="config")
