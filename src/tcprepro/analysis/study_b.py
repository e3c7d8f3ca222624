r"""Measurements of study B (Augé, thesis ch. 5) computed from run or combined datasets.

This module owns the numbers study B's figures and claims quote that are not
generic metrics (:mod:`tcprepro.metrics` holds those): the two traffic classes
(*bottlenecked* flows: the scenario's bulk flows; *background*: the traffic
generators), the capacity the background leaves, :math:`\phi` (the
throughput of the bottlenecked flows over that capacity), loss rates per class
over time, the number of background transfers in progress, the per-transfer
loss picture, fairness and leadership changes among bottlenecked flows, and
the checks of the background generators (offered load, hosts shared by two
transfers). Like :mod:`tcprepro.metrics`, every function works on a single run
and, unchanged, on a combined dataset with sweep and ``rep`` dimensions, and
averages over the measurement window (``time > warmup_s``) unless it returns
a time series.

Definitions
-----------
background load :math:`\rho_b`
    the configured ``load`` of the scenario's traffic generators crossing the
    bottleneck (read from each run's resolved scenario).
available capacity, the fair target
    :math:`(1 - \rho_b)` times the goodput capacity of the bottleneck
    (``link_goodput_capacity_bps``, the link rate net of the headers): the TCP
    goodput the background leaves, which the bottlenecked flows would fairly get
    (:func:`available_capacity_bps`; :func:`fair_target_mbps`, its mean over the
    runs of a cell or grid, is the figures' dashed line and the value the claims quote).
:math:`\phi`
    mean total goodput of the bottlenecked flows over the window divided by the
    available capacity (thesis §5.4.3: the fraction of the capacity left by the
    background that :math:`i` flows achieve).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics, traffic
from tcprepro.analysis.common import transfers_offered_load
from tcprepro.scenario import goodput_capacity_bps
from tcprepro.scenario_io import load_scenario_dict

__all__ = [
    "available_capacity_bps",
    "background_load",
    "binned",
    "bottlenecked",
    "class_loss_rate",
    "fair_target_mbps",
    "flows_in_progress",
    "host_sharing",
    "jain",
    "leader_changes",
    "loss_synchrony",
    "offered_load",
    "phi",
    "phi_table",
    "throughput_bps",
    "transfer_losses",
]

BOTTLENECK = "bottleneck"


def bottlenecked(ds: xr.Dataset) -> xr.DataArray:
    """Boolean over ``flow``: the scenario's bulk flows (the bottlenecked class)."""
    return ds["flow_kind"] == "bulk"


def _background(ds: xr.Dataset) -> xr.DataArray:
    return ds["flow_kind"].isin(["transfers", "packets"])


def _config_load(config: object) -> float:
    """Sum of the ``load`` of the generators of one resolved scenario (JSON text)."""
    if not isinstance(config, str) or not config:
        return float("nan")
    traffic = json.loads(config).get("traffic", {})
    return float(sum(g.get("load") or 0.0 for g in traffic.values()))


def background_load(ds: xr.Dataset) -> xr.DataArray | float:
    """The configured background load ρ_b of each run (over the sweep dims of a combined set)."""
    if "run_config" in ds:
        loads = np.vectorize(_config_load, otypes=[float])(ds["run_config"].values)
        return xr.DataArray(loads, dims=ds["run_config"].dims, coords=ds["run_config"].coords)
    return _config_load(ds.attrs.get("config", ""))


def available_capacity_bps(ds: xr.Dataset) -> xr.DataArray:
    """Goodput capacity of the bottleneck left by the background: (1 − ρ_b) x capacity."""
    capacity = ds["link_goodput_capacity_bps"].sel(link=BOTTLENECK, drop=True)
    return (capacity * (1.0 - background_load(ds))).rename("available_capacity_bps")


def fair_target_mbps(ds: xr.Dataset) -> float:
    """The fair target (Mb/s): the available capacity's mean over the runs of ``ds``."""
    return float(available_capacity_bps(ds).mean()) / 1e6


def throughput_bps(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Mean total goodput of the bottlenecked flows over the window (bit/s)."""
    goodput = metrics.goodput_bps(ds, warmup_s).where(bottlenecked(ds))
    return goodput.sum("flow", min_count=1).rename("throughput_bps")


def phi(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """φ: total goodput of the bottlenecked flows / capacity the background leaves."""
    return (throughput_bps(ds, warmup_s) / available_capacity_bps(ds)).rename("phi")


def class_totals(ds: xr.Dataset, warmup_s: float | None = None) -> xr.Dataset:
    """Window totals of each class: data segments sent, lost at traced queues, retransmitted."""
    mask = metrics.window(ds, warmup_s)
    out = {}
    for name, members in (("bottlenecked", bottlenecked(ds)), ("background", _background(ds))):
        for var in ("tx_data_pkts", "lost_data_pkts", "retx_pkts"):
            out[f"{name}_{var}"] = ds[var].where(mask & members).sum(("flow", "time"), min_count=1)
    return xr.Dataset(out)


def loss_rate(ds: xr.Dataset, cls: str, warmup_s: float | None = None) -> xr.DataArray:
    """Fraction of a class's data segments lost at traced queues over the window."""
    totals = class_totals(ds, warmup_s)
    sent = totals[f"{cls}_tx_data_pkts"]
    return (totals[f"{cls}_lost_data_pkts"] / sent.where(sent > 0)).rename(f"{cls}_loss_rate")


def loss_summary(ds: xr.Dataset, cls: str, warmup_s: float | None = None) -> str:
    """A class's loss over the window as a report line states it (mean over repetitions).

    The segments lost at traced queues per segment sent; where the run does not record
    drops per flow (an emulated run: Linux's qdiscs count drops per queue), the segments
    its senders retransmitted, named as such; "not recorded" when neither is known.
    """
    totals = class_totals(ds, warmup_s)
    sent = totals[f"{cls}_tx_data_pkts"]
    lost = float((totals[f"{cls}_lost_data_pkts"] / sent.where(sent > 0)).mean())
    if np.isfinite(lost):
        return f"{lost:.2e} ({cls})"
    retx = float((totals[f"{cls}_retx_pkts"] / sent.where(sent > 0)).mean())
    if np.isfinite(retx):
        return f"{retx:.2e} retransmitted ({cls}; drops not recorded per flow)"
    return f"not recorded ({cls})"


def phi_table(ds: xr.Dataset, warmup_s: float | None = None) -> xr.Dataset:
    """φ and the bottlenecked class's loss rate, mean and std over repetitions."""
    values = phi(ds, warmup_s)
    loss = loss_rate(ds, "bottlenecked", warmup_s)
    out = xr.Dataset({"phi": values.mean("rep"), "loss_rate": loss.mean("rep")})
    if ds.sizes.get("rep", 1) > 1:
        out["phi_std"] = values.std("rep", ddof=1)
    return out


def binned(series: xr.DataArray, bin_s: float, how: str = "mean") -> xr.DataArray:
    """Aggregate a per-interval series over bins of ``bin_s`` seconds (time = end of bin)."""
    times = series["time"].values
    interval = float(np.median(np.diff(times))) if times.size > 1 else float(times[0])
    width = max(1, round(bin_s / interval))
    coarse = series.coarsen(time=width, boundary="trim")
    out = coarse.sum() if how == "sum" else coarse.mean()
    return out.assign_coords(time=series["time"].values[width - 1 :: width][: out.sizes["time"]])


def class_loss_rate(ds: xr.Dataset, bin_s: float = 1.0) -> xr.Dataset:
    """Loss rate of each class over time (``bin_s`` bins): lost / sent data segments."""
    out = {}
    for name, members in (("bottlenecked", bottlenecked(ds)), ("background", _background(ds))):
        lost = binned(ds["lost_data_pkts"].where(members).sum("flow"), bin_s, "sum")
        sent = binned(ds["tx_data_pkts"].where(members).sum("flow"), bin_s, "sum")
        out[name] = lost / sent.where(sent > 0)
    return xr.Dataset(out)


def flows_in_progress(ds: xr.Dataset) -> xr.DataArray:
    """Number of background transfers in progress at each sample time.

    A transfer is in progress from its arrival (connection opened) until its
    last byte arrives; a censored transfer (no end) until the end of the run.
    """
    start = ds["transfer_start_s"]
    end = ds["transfer_end_s"].fillna(np.inf)
    valid = start.notnull()
    active = (start <= ds["time"]) & (ds["time"] < end) & valid
    return active.sum("transfer").rename("transfers_in_progress")


def transfers_in_progress_mean(run: xr.Dataset, generator: str = "bg") -> float:
    """Mean number of a generator's transfers in progress if each ran at its access rate.

    The M/G/infinity reference of figure B5.3: arrival rate x mean size / the goodput
    capacity of the generator's sender group's access link (ns-3's 2-byte PPP header
    included), from the run's resolved scenario and the generator's calibration.
    """
    scenario = load_scenario_dict(json.loads(run.attrs["config"]))
    cal = traffic.calibrate(scenario, generator)
    group = {g.name: g for g in scenario.topology.senders}[generator]
    peak_bps = goodput_capacity_bps(group.rate, scenario.tcp, int(run.attrs["l2_overhead_bytes"]))
    return cal.arrival_rate_per_s * cal.mean_size_bytes * 8 / peak_bps


def transfer_losses(ds: xr.Dataset) -> pd.DataFrame:
    """One row per background transfer of one run: arrival, end, mean rate, loss rate.

    Columns: ``start_s``, ``end_s`` (the end of the run when censored),
    ``rate_bps`` (bytes received x 8 / duration), ``loss_rate`` (data segments
    lost at traced queues / sent; NaN when it sent nothing), ``censored``.
    """
    duration = float(ds.attrs.get("duration_s", float(ds["time"].max())))
    frame = pd.DataFrame(
        {
            "start_s": ds["transfer_start_s"].values,
            "end_s": ds["transfer_end_s"].values,
            "rx_bytes": ds["transfer_rx_bytes"].values,
            "tx_pkts": ds["transfer_tx_data_pkts"].values,
            "lost_pkts": ds["transfer_lost_data_pkts"].values,
        }
    ).dropna(subset=["start_s"])
    frame["censored"] = frame["end_s"].isna()
    frame["end_s"] = frame["end_s"].fillna(duration)
    elapsed = (frame["end_s"] - frame["start_s"]).where(lambda v: v > 0)
    frame["rate_bps"] = frame["rx_bytes"] * 8.0 / elapsed
    frame["loss_rate"] = frame["lost_pkts"] / frame["tx_pkts"].where(frame["tx_pkts"] > 0)
    return frame.reset_index(drop=True)


def host_sharing(ds: xr.Dataset) -> float:
    """Fraction of background transfers that arrive while another one runs on the same host.

    Such a transfer shares its host's access link (and its 1 Mb/s peak rate)
    with the other; a censored transfer runs until the end of the run.
    """
    frame = pd.DataFrame(
        {
            "src": ds["transfer_src"].values.ravel(),
            "start": ds["transfer_start_s"].values.ravel(),
            "end": ds["transfer_end_s"].fillna(np.inf).values.ravel(),
            "run": np.repeat(
                np.arange(int(np.prod(ds["transfer_src"].shape[:-1]))),
                ds.sizes["transfer"],
            ),
        }
    )
    frame = frame[(frame["src"] != "") & frame["start"].notna()]
    if frame.empty:
        return float("nan")
    shared = 0
    for _, host in frame.sort_values("start").groupby(["run", "src"]):
        latest_end = np.maximum.accumulate(host["end"].to_numpy())
        shared += int((host["start"].to_numpy()[1:] < latest_end[:-1]).sum())
    return shared / len(frame)


def offered_load(ds: xr.Dataset, warmup_s: float | None = None) -> dict[str, float]:
    """Measured offered load of each generator of one run over the window.

    ``packets`` generators: IP bytes they sent / (window x link rate) — what
    ns-3 generated. ``transfers`` generators: the bytes of the transfers that
    arrived in the window / (window x goodput capacity at the scenario's MSS
    and TCP/IP headers, :func:`~tcprepro.analysis.common.transfers_offered_load`) — the
    load the Poisson process offered. Both are the definitions of ``load`` in the
    scenario schema.
    """
    config = json.loads(ds.attrs["config"])
    start = float(ds.attrs["warmup_s"]) if warmup_s is None else warmup_s
    end = float(ds.attrs["duration_s"])
    mask = metrics.window(ds, start)
    out = {}
    for name, gen in config["traffic"].items():
        if gen["kind"] == "poisson_packets":
            rate = float(ds["link_rate_bps"].sel(link=BOTTLENECK))
            size = float(str(gen["packet_size"]).removesuffix("B"))
            sent = float(ds["tx_data_pkts"].sel(flow=name).where(mask).sum())
            out[name] = sent * size * 8.0 / ((end - start) * rate)
        else:
            out[name] = float(transfers_offered_load(ds, name, start, end))
    return out


def jain(ds: xr.Dataset, warmup_s: float | None = None) -> xr.DataArray:
    """Jain's index of the bottlenecked flows' mean goodputs over the window."""
    goodput = metrics.goodput_bps(ds, warmup_s).where(bottlenecked(ds))
    return metrics.jain_index(goodput)


def leader_changes(ds: xr.Dataset, bin_s: float = 5.0, warmup_s: float | None = None) -> int:
    """How often the bottlenecked flow with the most goodput changes, over ``bin_s`` bins.

    One run only (no sweep dimensions): the number of bins whose leader differs
    from the previous bin's.
    """
    mask = metrics.window(ds, warmup_s)
    goodput = ds["goodput_bps"].where(bottlenecked(ds), drop=True).where(mask, drop=True)
    series = binned(goodput, bin_s)
    if series.sizes["flow"] < 2 or series.sizes["time"] < 2:
        return 0
    leaders = series.fillna(-1).argmax("flow").values
    return int((leaders[1:] != leaders[:-1]).sum())


def loss_synchrony(ds: xr.Dataset, warmup_s: float | None = None) -> float:
    """Fraction of loss intervals in which at least two bottlenecked flows lost a packet.

    Among the sample intervals of the window where a bottlenecked flow lost a
    packet (one run), those where two or more did; NaN without losses.
    """
    mask = metrics.window(ds, warmup_s)
    lost = ds["lost_data_pkts"].where(bottlenecked(ds), drop=True).where(mask, drop=True)
    losers = (lost > 0).sum("flow")
    any_loss = int((losers >= 1).sum())
    return float((losers >= 2).sum()) / any_loss if any_loss else float("nan")
