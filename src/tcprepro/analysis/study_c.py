"""Study C (YeAH-TCP, Baiocchi, Castellani, Vacirca, PFLDnet 2007): per-cell measurements.

This module owns the numbers study C's figures, table and claims quote, computed
from combined datasets with the definitions of :mod:`tcprepro.metrics`:

- :func:`pair_metrics` (figures C3.1, C3.2, C3.5 and Table C2; two flows ``f1``,
  ``f2`` of one protocol): utilisation of the bottleneck by the two flows,
  Jain index of their goodputs, their buffer-overflow loss probability, the
  mean bottleneck queue in packets and as a fraction of the buffer;
- :func:`rtt_fairness` (C3.3): goodput of the long-RTT flow ``f2`` over that of
  the short-RTT flow ``f1``;
- :func:`reno_share` (C3.4): share of the protocol's flow ``f1`` against one
  Reno flow;
- :func:`robustness` (C3.6): utilisation of one flow and the measured random
  loss rate;
- :func:`loss_table` (C2): Table I's layout, reproduced next to the values the
  seed's Table I lets us read (:func:`paper_table_i`);
- :func:`cwnd_pkts`, :func:`convergence_time_s` and :func:`reno_detection`
  (C1): the congestion-window traces of Fig. 1 and what the paper says of them.

Every function keeps the sweep dimensions and ``rep``; missing cells are NaN.
Sweep coordinates stay as the workflow wrote them (``"14ms"``); :func:`ms`
converts RTT labels to numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics, reference, units

__all__ = [
    "HIGH_SPEED",
    "LABELS",
    "PROTOCOLS",
    "convergence_time_s",
    "cwnd_pkts",
    "format_loss_table",
    "loss_table",
    "ms",
    "pair_metrics",
    "paper_table_i",
    "path_rtt_s",
    "reno_detection",
    "reno_share",
    "robustness",
    "rtt_fairness",
]

#: protocols of the comparison, in the figures' order (TCP Africa is not built)
PROTOCOLS = ("Cubic", "HighSpeed", "Htcp", "Compound", "YeahPaper", "NewReno")
#: the high-speed variants YeAH is compared with (Reno is the legacy reference)
HIGH_SPEED = ("Cubic", "HighSpeed", "Htcp", "Compound")
#: names as the paper writes them
LABELS = {
    "Cubic": "CUBIC",
    "HighSpeed": "HSTCP",
    "Htcp": "H-TCP",
    "Compound": "Compound",
    "YeahPaper": "YeAH",
    "Yeah": "YeAH (ns-3)",
    "NewReno": "Reno",
}


def paper_table_i() -> dict[str, dict[str, float]]:
    """Table I of the paper as far as the seed (a text extraction) lets it be read.

    RTT label -> protocol -> loss probability, from the reference file's C2 rows
    (``tcprepro.reference.stated``): the header shows "...ica CUBIC HS-TCP" and two rows
    "RTT 14" and "RTT 650", each with two values, read as the CUBIC and HS-TCP columns
    (the other columns are not legible).
    """
    table: dict[str, dict[str, float]] = {}
    for mark in reference.stated("C2", "loss_probability"):
        (rtt,), (protocol,) = mark.where["rtt"], mark.where["protocol"]
        table.setdefault(rtt, {})[protocol] = mark.value
    return table


_PAIR = ("f1", "f2")
_BOTTLENECK = "bottleneck"


def ms(labels: Sequence[object]) -> np.ndarray:
    """RTT sweep labels (``"14ms"``) as milliseconds."""
    return np.array([units.parse_duration(str(label)) * 1000.0 for label in labels])


def pair_metrics(ds: xr.Dataset) -> xr.Dataset:
    """Two flows of one protocol sharing the bottleneck (C3.1 runs), per cell and rep.

    Variables: ``utilisation`` (summed goodput of f1 and f2 / goodput capacity),
    ``jain`` (Jain index of their goodputs), ``loss_probability`` (their data segments
    dropped by the bottleneck buffer / sent; NaN where drops are not recorded per
    flow, an emulated run), ``retransmission_probability`` (their data segments
    retransmitted / sent, recorded by both backends), ``queue_pkts`` (time-mean queue)
    and ``queue_fraction`` (``queue_pkts`` / buffer), all over the measurement window.
    """
    flows = list(_PAIR)
    queue = metrics.mean_queue_pkts(ds).sel(link=_BOTTLENECK, drop=True)
    buffer = ds["link_buffer_pkts"].sel(link=_BOTTLENECK, drop=True)
    if "rep" in buffer.dims:  # the buffer is a property of the cell
        buffer = buffer.max("rep")
    return xr.Dataset(
        {
            "utilisation": metrics.total_utilisation(ds, flows),
            "jain": metrics.jain_index(metrics.goodput_bps(ds).sel(flow=flows)),
            "loss_probability": metrics.loss_probability(ds, flows),
            "retransmission_probability": metrics.retransmission_probability(ds, flows),
            "queue_pkts": queue,
            "queue_fraction": queue / buffer,
        }
    )


def rtt_fairness(ds: xr.Dataset) -> xr.DataArray:
    """Goodput of f2 (longer RTT2) over that of f1 (RTT1), per cell and rep (C3.3)."""
    return metrics.rtt_fairness_ratio(ds, long_flow="f2", short_flow="f1")


def reno_share(ds: xr.Dataset) -> xr.DataArray:
    """Share of f1 (protocol under test) in the goodput of f1 and the Reno flow f2 (C3.4)."""
    return metrics.throughput_share(ds, "f1", flows=list(_PAIR))


def robustness(ds: xr.Dataset) -> xr.Dataset:
    """One flow under random loss (C3.6): its utilisation and the measured loss rate."""
    return xr.Dataset(
        {
            "utilisation": metrics.utilisation(ds).sel(flow="f1", drop=True),
            "random_loss_rate": metrics.random_loss_rate(ds, ["f1"]),
        }
    )


def _nearest(values: Sequence[float], target: float) -> int:
    return int(np.argmin(np.abs(np.asarray(values, dtype=float) - target)))


def loss_table(ds: xr.Dataset, buffer: float = 1.0) -> pd.DataFrame:
    """Table C2: loss probability per protocol at the shortest and longest RTT of C3.1.

    Uses the buffer (fraction of the BDP) of the dataset closest to ``buffer``; each
    value is the mean over repetitions. Columns: ``Protocol``, then for each of the
    two RTTs the paper's value (NaN where Table I is not legible) and ours.
    """
    table = pair_metrics(ds)["loss_probability"]
    buffers = [float(b) for b in ds["buffer"].values]
    chosen = ds["buffer"].values[_nearest(buffers, buffer)]
    rtts = list(ds["rtt"].values)
    order = np.argsort(ms(rtts))
    short, long = str(rtts[order[0]]), str(rtts[order[-1]])
    mean = table.sel(buffer=chosen).mean("rep")
    rows = []
    paper = paper_table_i()
    for protocol in (str(p) for p in ds["protocol"].values):
        row: dict[str, object] = {"Protocol": LABELS.get(protocol, protocol)}
        for rtt in (short, long):
            label = f"RTT {ms([rtt])[0]:g} ms"
            row[f"{label}, paper"] = paper.get(rtt, {}).get(protocol, np.nan)
            row[f"{label}, here"] = float(mean.sel(protocol=protocol, rtt=rtt))
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["buffer_bdp"] = float(chosen)
    return frame


def format_loss_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table C2 as text for the paper.

    Three significant digits, "--" for no loss (the paper's dash), "n/l" where the
    seed's Table I is not legible, "not run" for a cell without runs.
    """

    def text(column: str, value: float) -> str:
        if np.isnan(value):
            return "n/l" if column.endswith("paper") else "not run"
        return "--" if value == 0 else f"{value:.3g}"

    out = frame.copy()
    for column in frame.columns[1:]:
        out[column] = [text(column, float(v)) for v in frame[column]]
    return out


# ---------------------------------------------------------------------------
# C1: congestion windows


def cwnd_pkts(ds: xr.Dataset) -> xr.DataArray:
    """Congestion windows in segments of the dataset's MSS (from its run config)."""
    configs = ds["run_config"].values.ravel() if "run_config" in ds else [ds.attrs["config"]]
    mss = {json.loads(str(c))["tcp"]["mss"] for c in configs if str(c)}
    if len(mss) != 1:
        raise ValueError(f"runs with different MSS: {sorted(mss)}")
    return (ds["cwnd_bytes"] / units.parse_size(mss.pop())).rename("cwnd_pkts")


def path_rtt_s(config: str, group: str = "s") -> float:
    """Round-trip propagation time of a sender group, from a run's resolved config (JSON)."""
    from tcprepro.scenario_io import load_scenario_dict

    topology = load_scenario_dict(json.loads(config)).topology
    return topology.path_rtt_s(group)


def _smoothed(series: xr.DataArray, smooth_s: float) -> xr.DataArray:
    interval = float(series["time"].diff("time").median())
    width = max(1, round(smooth_s / interval))
    return series.rolling(time=width, min_periods=width).mean()


def convergence_time_s(
    run: xr.Dataset,
    factor: float,
    smooth_s: float,
    first: str = "f1",
    second: str = "f2",
) -> float:
    """Seconds from ``second``'s start until its window is within ``factor`` of ``first``'s.

    ``run`` holds one run (dims flow, time). Both windows are averaged over a
    trailing ``smooth_s`` seconds; the flows have converged at the first sample
    where max(w1, w2) / min(w1, w2) <= ``factor``. NaN when that never happens.
    """
    cwnd = cwnd_pkts(run)
    start = float(run["flow_start_s"].sel(flow=second))
    a = _smoothed(cwnd.sel(flow=first), smooth_s)
    b = _smoothed(cwnd.sel(flow=second), smooth_s)
    after = run["time"] > start + smooth_s
    ratio = np.maximum(a, b) / np.minimum(a, b)
    hits = run["time"].where(after & (ratio <= factor)).dropna("time")
    return float(hits[0]) - start if hits.size else float("nan")


def reno_detection(run: xr.Dataset, yeah: str = "f1", reno: str = "f2") -> dict[str, float]:
    """What C1's lower panel shows: YeAH against a Reno flow that starts later.

    Returns ``detected_s`` (seconds after Reno's start until YeAH's window first falls
    below its count_reno estimate; NaN if never), ``slow_fraction`` (fraction of the
    samples after that moment in which YeAH is in Slow mode) and ``share`` (YeAH's
    share of the two flows' goodput over the second half of the run). ``run`` holds
    one run with the ``cc_FastMode`` and ``cc_RenoCount`` samples.
    """
    start = float(run["flow_start_s"].sel(flow=reno))
    cwnd = cwnd_pkts(run).sel(flow=yeah)
    count_reno = run["cc_RenoCount"].sel(flow=yeah)
    below = run["time"].where((run["time"] > start) & (cwnd < count_reno)).dropna("time")
    half = float(run["time"].max()) / 2.0
    share = float(metrics.throughput_share(run, yeah, [yeah, reno], warmup_s=half))
    if not below.size:
        return {"detected_s": float("nan"), "slow_fraction": float("nan"), "share": share}
    detected = float(below[0])
    fast = run["cc_FastMode"].sel(flow=yeah).where(run["time"] > detected).dropna("time")
    return {
        "detected_s": detected - start,
        "slow_fraction": float((fast == 0).mean()) if fast.size else float("nan"),
        "share": share,
    }
