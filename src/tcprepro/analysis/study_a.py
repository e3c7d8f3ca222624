"""Study A (Braud & Heusse, antiparallel TCP): numbers derived from A1-A4 datasets.

A1/A2 combined datasets have dimensions ``up``, ``down`` (the two directions'
variants) and ``rep``; A3/A4 add the transfers of the web traffic. Cells whose runs
are missing (pending models) are NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics

__all__ = [
    "SIZE_CLASSES",
    "cell_mechanism",
    "cell_table",
    "matched_mean",
    "pick",
    "response_summary",
    "response_times",
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
    at the link rate) per link; ``rtt_ms`` and ``loss_pct`` (data loss) per flow;
    ``lost_acks_down``: ACKs of the download dropped per run (in the uplink queue).
    """
    mask = metrics.window(run)
    queue_bytes = run["queue_bytes"].where(mask).mean(["time", "rep"])
    return {
        "queue_pkts": run["queue_pkts"].where(mask).mean(["time", "rep"]),
        "queue_delay_ms": queue_bytes * 8 / run["link_rate_bps"].isel(rep=0) * 1000,
        "rtt_ms": (metrics.mean_rtt_s(run) * 1000).mean("rep"),
        "loss_pct": metrics.loss_rate(run).mean("rep") * 100,
        "lost_acks_down": float(
            run["lost_ack_pkts"].sel(flow="down").where(mask).sum(["time"]).mean("rep")
        ),
    }


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
