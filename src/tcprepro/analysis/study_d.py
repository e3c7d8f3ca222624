"""Measured throughput against the analytical models, per sweep cell (study D).

This module owns the per-cell tables behind study D's figures, paper tables
and claims: it reads a figure's combined dataset, recovers each cell's
parameters from the resolved scenario the run recorded (``run_config``:
socket buffers, MSS, delayed ACKs, minimum RTO, the propagation RTT and
loss of the flow's path), measures the flow (mean goodput, mean send window,
retransmission timeouts, completion time) and puts the matching model
prediction of :mod:`tcprepro.models.throughput` next to it.

Every table is a :class:`pandas.DataFrame` with one row per cell (the sweep
dimensions as columns, plus ``backend``), so that datasets of several
backends (the ns-3 one now, an emulated one with ``backend = "mininet"``
later) stack into one frame, and figures, LaTeX tables and claim checks
group by ``backend``.

Definitions
-----------
RTT
    the propagation round trip of the flow's path (sum of the one-way delays
    there and back), the thesis's ping RTT; measured RTTs are reported too.
send window FE
    time average of the unacknowledged bytes (``unacked_bytes``) over the
    measurement window; for a backend without that trace, throughput x mean
    measured RTT (Little's law).
buffer-limited cell
    the model's prediction (with the backend's ``C_e``, ``C_r``) is below the
    link's goodput capacity: the window, not the link, should limit the flow.
equivalent RTT
    the RTT at the thesis's 1 Gb/s with the same bandwidth-delay product
    (``rtt_s x path rate / 1 Gb/s``): a time-scaled emulation (D1.1: 10 Mb/s,
    RTT 400 ms) meets the thesis's rows (4 ms) through it.
timeout share
    ``rto_count x T0 / measured time``: a lower bound on the share of the time
    the sender spent waiting for retransmission timers (back-offs last longer).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics
from tcprepro.models.throughput import (
    THESIS_C_E,
    THESIS_C_R,
    application_throughput_bps,
    mathis_throughput_bps,
    padhye_throughput_bps,
    transfer_throughput_bps,
)
from tcprepro.network_plan import build_plan, flow_path
from tcprepro.scenario import Scenario
from tcprepro.scenario_io import load_scenario_dict

__all__ = [
    "BACKEND_COEFFICIENTS",
    "LINUX_SKB_MAX_PAYLOAD",
    "buffer_table",
    "by_backend",
    "cell_parameters",
    "fit_buffer_coefficients",
    "loss_table",
    "refit_buffer_coefficients",
    "reliable_volumes",
    "stack_tables",
    "throughput_comparison",
    "volume_table",
    "window_comparison",
]

#: the thesis's link rate: equivalent RTTs are taken at it (see the module docstring)
THESIS_RATE_BPS = 1e9

#: (C_e, C_r) of the application-level model per backend, fixed before any run:
#: ns-3 buffers hold payload only (1, 1); emulated Linux is checked against the thesis's values
BACKEND_COEFFICIENTS: dict[str, tuple[float, float]] = {
    "ns3": (1.0, 1.0),
    "mininet": (THESIS_C_E, THESIS_C_R),
}


#: ns-3's TcpSocketBase::ClockGranularity default: the RTO's variance floor when the
#: scenario's stack sets none (tcp.rto_granularity)
NS3_CLOCK_GRANULARITY_S = 0.001

#: the most payload one Linux skb carries (the IPv4 GSO limit): the data a sender may have
#: admitted beyond its send buffer at the last check (see :func:`buffer_table`)
LINUX_SKB_MAX_PAYLOAD = 64 * 1024

#: the send buffer each backend grants for a requested BE: ns-3's ``SndBufSize`` is the
#: payload it holds; Linux doubles SO_SNDBUF for its bookkeeping (``sk_sndbuf``, which
#: iperf 2 reports per run as its "TCP window size")
SNDBUF_GRANTED_FACTOR: dict[str, float] = {"ns3": 1.0, "mininet": 2.0}


def _backend(ds: xr.Dataset) -> str:
    return str(ds.attrs.get("backend", "ns3"))


def _flow_name(ds: xr.Dataset, flow: str | None) -> str:
    names = [str(f) for f in ds["flow"].values]
    if flow is None:
        if len(names) != 1:
            raise ValueError(f"dataset has flows {names}: name the one to analyse")
        return names[0]
    if flow not in names:
        raise ValueError(f"dataset has no flow {flow!r} (flows: {names})")
    return flow


def _sweep_dims(ds: xr.Dataset) -> list[str]:
    return list(json.loads(ds.attrs.get("sweep_dims", "[]")))


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _cells(ds: xr.Dataset) -> Iterable[tuple[dict[str, Any], Scenario]]:
    """Each cell that has a run: its sweep values and its (first repetition's) scenario."""
    dims = _sweep_dims(ds)
    configs = ds["run_config"].isel(rep=0) if "rep" in ds["run_config"].dims else ds["run_config"]
    for index in np.ndindex(configs.shape):
        text = configs.values[index]
        if not isinstance(text, str) or not text:
            continue  # a pending cell (empty, or NaN where the combined grid has no run)
        cell = {dim: _scalar(configs[dim].values[i]) for dim, i in zip(dims, index, strict=True)}
        yield cell, load_scenario_dict(json.loads(text), "run_config")


def cell_parameters(ds: xr.Dataset, flow: str | None = None) -> pd.DataFrame:
    """The parameters of each cell that has a run, from its resolved scenario.

    Columns: the sweep dimensions, ``backend``, ``send_buffer_bytes``,
    ``recv_buffer_bytes``, ``mss_bytes``, ``acked_per_ack`` (delayed ACK count),
    ``sack``, ``min_rto_s``, ``rto_granularity_s`` (the floor of the RTO's variance term,
    ns-3's ClockGranularity: 1 ms unless the stack sets it), ``initial_window_pkts``,
    ``rtt_s`` (propagation),
    ``loss_rate`` (of the data path), ``path_rate_bps`` and ``size_bytes``
    (0: bulk).
    """
    name = _flow_name(ds, flow)
    rows = []
    for cell, scenario in _cells(ds):
        plan = build_plan(scenario, 0)
        planned = next(f for f in plan.flows if f.name == name)
        path = flow_path(plan, planned)
        tcp = scenario.tcp
        rows.append(
            {
                **cell,
                "backend": _backend(ds),
                "send_buffer_bytes": tcp.send_buffer,
                "recv_buffer_bytes": tcp.recv_buffer,
                "mss_bytes": tcp.mss,
                "acked_per_ack": tcp.delayed_ack_count,
                "sack": tcp.sack,
                "min_rto_s": tcp.min_rto,
                "rto_granularity_s": tcp.rto_granularity or NS3_CLOCK_GRANULARITY_S,
                "initial_window_pkts": tcp.initial_cwnd_pkts,
                "rtt_s": path.rtt_s,
                "loss_rate": path.loss_rate,
                "path_rate_bps": path.rate_bps,
                "size_bytes": planned.size_bytes,
            }
        )
    return pd.DataFrame(rows)


def _per_cell(values: xr.DataArray, dims: Sequence[str], name: str) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1, NaN for one repetition) over ``rep``."""
    mean = values.mean("rep")
    std = values.std("rep", ddof=1) if values.sizes["rep"] > 1 else mean * np.nan
    frame = xr.Dataset({name: mean, f"{name}_std": std}).to_dataframe()
    return frame.reset_index()[[*dims, name, f"{name}_std"]]


def _measured_seconds(ds: xr.Dataset, flow: str) -> xr.DataArray:
    """Seconds of the measurement window each run of each cell covers."""
    interval_s = ds["time"] - ds["time"].shift(time=1, fill_value=0.0)
    sampled = ds["goodput_bps"].sel(flow=flow, drop=True).notnull() & metrics.window(ds)
    return interval_s.where(sampled).sum("time")


def _flow_capacity_bps(ds: xr.Dataset, flow: str) -> xr.DataArray:
    link = ds["flow_link"].sel(flow=flow)
    first = str(np.asarray(link.values).ravel()[0])
    return ds["link_goodput_capacity_bps"].sel(link=first, drop=True)


def _merge(params: pd.DataFrame, *frames: pd.DataFrame, dims: Sequence[str]) -> pd.DataFrame:
    out = params
    for frame in frames:
        for dim in dims:  # coordinates come back as numpy scalars or strings: align the types
            frame[dim] = frame[dim].astype(out[dim].dtype)
        out = out.merge(frame, on=list(dims), how="left")
    return out


def buffer_table(
    ds: xr.Dataset,
    flow: str | None = None,
    coefficients: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """Throughput and send window of each socket-buffer cell (figures D1/D2).

    Parameters
    ----------
    ds
        Combined dataset of D1 (sweep over the buffers and the delay).
    coefficients
        ``(C_e, C_r)`` of the prediction; default: :data:`BACKEND_COEFFICIENTS`
        of the dataset's backend.

    Returns
    -------
    pandas.DataFrame
        :func:`cell_parameters` plus ``measured_bps`` (mean goodput over the
        measurement window, mean over repetitions) and ``measured_bps_std``,
        ``window_bytes`` (FE), ``fe_over_be``, ``window_little_bytes`` (throughput x
        mean measured RTT: the bytes sent per RTT), ``mean_rtt_s`` (measured),
        ``thesis_rtt_s`` (equivalent RTT), ``fidelity_ok`` (1 for ns-3),
        ``capacity_bps``, ``bdp_bytes``, ``c_e``, ``c_r``, ``predicted_bps``
        (the uncapped model), ``error_pct`` ((D_p - D_m) / D_m in %),
        ``buffer_limited`` and ``limit`` ("send buffer", "receive buffer" or
        "link"); ``sndbuf_granted_bytes`` (the send buffer the backend grants for BE),
        ``peak_window_bytes`` (the largest interval mean of the bytes in flight over the
        measurement window and the repetitions), ``send_buffer_held`` and ``write_bytes``
        (the application's bytes per write, emulated runs only).

    Notes
    -----
    ``send_buffer_held`` says whether the sender kept to its send buffer, the premise of
    the model. ns-3 does by construction. Linux admits new data while the memory it has
    queued is below the granted buffer, and one skb carries at most
    :data:`LINUX_SKB_MAX_PAYLOAD`; a sender held to its buffer therefore has at most the
    granted buffer plus the skbs admitted at the last check in flight (one or two were
    measured: 66 and 132 KB at BE 16 KiB, 1 Gb/s, RTT 4-100 ms, Linux 6.1 in UML, with
    iperf 2's 128-KiB writes). A cell above ``granted + 2 x 64 KiB`` was not held to BE:
    Linux 6.1 let a 16-KiB socket keep 0.4-2 MB in flight at RTT 400 ms (D1.1's time
    scale), with its queued memory 35-80 times its buffer (``ss -m``), in UML and in QEMU
    alike; with 8-KiB writes (the thesis's iperf 2.0 default, the scenarios' write_size),
    even at 1 Gb/s and RTT 4 ms (see docs/emulation.md).
    """
    name = _flow_name(ds, flow)
    dims = _sweep_dims(ds)
    params = cell_parameters(ds, name)
    backend = _backend(ds)
    c_e, c_r = coefficients if coefficients is not None else BACKEND_COEFFICIENTS[backend]
    mask = metrics.window(ds)
    measured = _per_cell(metrics.goodput_bps(ds).sel(flow=name, drop=True), dims, "measured_bps")
    mean_rtt = metrics.mean_rtt_s(ds).sel(flow=name, drop=True)
    if "unacked_bytes" in ds:
        in_flight = ds["unacked_bytes"].sel(flow=name, drop=True).where(mask)
        unacked = in_flight.mean("time")
        peak = in_flight.max(["time", "rep"])
    else:  # a backend without the trace: Little's law, window = throughput x RTT; no peak
        unacked = metrics.goodput_bps(ds).sel(flow=name, drop=True) * mean_rtt / 8.0
        peak = (unacked * np.nan).max("rep")
    window = _per_cell(unacked, dims, "window_bytes")
    peak_frame = peak.to_dataframe(name="peak_window_bytes").reset_index()
    rtt = _per_cell(mean_rtt, dims, "mean_rtt_s")
    capacity = _per_cell(_flow_capacity_bps(ds, name), dims, "capacity_bps")
    frames = [
        measured,
        window,
        rtt,
        capacity[[*dims, "capacity_bps"]],
        peak_frame[[*dims, "peak_window_bytes"]],
    ]
    if "fidelity_ok" in ds and "rep" in ds["fidelity_ok"].dims:
        # emulated runs: 0 where the fidelity gate flagged a repetition of the cell
        gate = ds["fidelity_ok"].fillna(0).min("rep").to_dataframe(name="fidelity_ok")
        frames.append(gate.reset_index()[[*dims, "fidelity_ok"]])
    table = _merge(params, *frames, dims=dims)
    if "fidelity_ok" not in table:
        table["fidelity_ok"] = 1
    table["fidelity_ok"] = table["fidelity_ok"].fillna(0).astype(int)
    table["thesis_rtt_s"] = table["rtt_s"] * table["path_rate_bps"] / THESIS_RATE_BPS
    table["fe_over_be"] = table["window_bytes"] / table["send_buffer_bytes"]
    # the bytes sent per RTT (the thesis's own FE: its bursts), from throughput x mean RTT
    table["window_little_bytes"] = table["measured_bps"] * table["mean_rtt_s"] / 8.0
    table["bdp_bytes"] = table["capacity_bps"] * table["rtt_s"] / 8.0
    table["sndbuf_granted_bytes"] = table["send_buffer_bytes"] * SNDBUF_GRANTED_FACTOR[backend]
    # bytes per application write (emulated runs; ns-3's sender keeps its buffer full)
    writes = json.loads(str(ds.attrs.get("flow_write_bytes", "{}")))
    table["write_bytes"] = float(writes.get(name, math.nan))
    if backend == "ns3":
        table["send_buffer_held"] = True
    else:  # no trace of the bytes in flight: nothing shows the buffer was exceeded
        bound = table["sndbuf_granted_bytes"] + 2 * LINUX_SKB_MAX_PAYLOAD
        table["send_buffer_held"] = ~(table["peak_window_bytes"] > bound)
    return _classify(table, c_e, c_r)


def refit_buffer_coefficients(
    table: pd.DataFrame, max_rounds: int = 10
) -> tuple[float, float, pd.DataFrame]:
    """Refit ``(C_e, C_r)`` until the cells they classify stop changing.

    :func:`fit_buffer_coefficients` classifies the cells (send-limited,
    receive-limited, link-limited) with the table's coefficients, which for
    today's kernel are the thesis's (fixed before the runs). This repeats the
    fit with the classification of the previous fit until it is stable, using
    only runs the fidelity gate accepted (``fidelity_ok``) whose sender kept to its
    send buffer (``send_buffer_held``, the model's premise). A coefficient
    without any cell to fit it stays at the table's value.

    Returns
    -------
    (c_e, c_r, table)
        The fitted coefficients and the accepted cells reclassified with them
        (``predicted_bps``, ``error_pct``, ``buffer_limited``, ``limit`` redone).
    """
    current = table[table["fidelity_ok"] == 1] if "fidelity_ok" in table else table
    if "send_buffer_held" in current:
        current = current[current["send_buffer_held"].astype(bool)]
    current = current[current["measured_bps"].notna()].copy()
    if current.empty:
        return math.nan, math.nan, current
    c_e, c_r = float(current["c_e"].iloc[0]), float(current["c_r"].iloc[0])
    for _ in range(max_rounds):
        fit_e, fit_r = fit_buffer_coefficients(current)
        fit_e = c_e if math.isnan(fit_e) else fit_e
        fit_r = c_r if math.isnan(fit_r) else fit_r
        previous = current["limit"].tolist()
        current = _classify(current, fit_e, fit_r)
        c_e, c_r = fit_e, fit_r
        if current["limit"].tolist() == previous:
            break
    return c_e, c_r, current


def _classify(table: pd.DataFrame, c_e: float, c_r: float) -> pd.DataFrame:
    """The model columns of :func:`buffer_table` recomputed with other coefficients."""
    out = table.copy()
    out["c_e"], out["c_r"] = c_e, c_r
    out["predicted_bps"] = application_throughput_bps(
        out["send_buffer_bytes"], out["recv_buffer_bytes"], out["rtt_s"], c_e, c_r
    )
    out["error_pct"] = (out["predicted_bps"] / out["measured_bps"] - 1.0) * 100.0
    out["buffer_limited"] = out["predicted_bps"] < out["capacity_bps"]
    send_limited = out["send_buffer_bytes"] * c_e <= out["recv_buffer_bytes"] * c_r
    out["limit"] = np.where(
        ~out["buffer_limited"], "link", np.where(send_limited, "send buffer", "receive buffer")
    )
    return out


def fit_buffer_coefficients(table: pd.DataFrame) -> tuple[float, float]:
    """Refit ``(C_e, C_r)`` from measured send windows, as the thesis did for Linux.

    ``C_e`` is the median of FE / BE over the buffer-limited cells the send
    buffer limits, ``C_r`` the median of FE / BR over those the receive buffer
    limits (NaN when no such cell). Cells are classified with the table's own
    coefficients; run it again with the fitted ones if they differ much.
    """
    limited = table[table["buffer_limited"]]
    send = limited[limited["limit"] == "send buffer"]
    receive = limited[limited["limit"] == "receive buffer"]
    c_e = (send["window_bytes"] / send["send_buffer_bytes"]).median()
    c_r = (receive["window_bytes"] / receive["recv_buffer_bytes"]).median()
    return float(c_e), float(c_r)  # the median of an empty series is NaN


def loss_table(ds: xr.Dataset, flow: str | None = None) -> pd.DataFrame:
    """Throughput under random loss against the Mathis and Padhye models (figure D3).

    Returns
    -------
    pandas.DataFrame
        :func:`cell_parameters` plus ``measured_bps`` (mean over repetitions)
        and ``measured_bps_std``, ``measured_loss`` (destroyed / sent data
        segments), ``rto_count`` (expiries per run), ``timeout_share`` (see the
        module docstring), ``t0_s`` (T0 = max(min RTO, RTT + G), G the RTO's
        granularity), ``w_m_pkts``
        (smaller socket buffer / MSS), ``mathis_bps``, ``padhye_bps``,
        ``window_capped`` (Padhye's window term is the smaller),
        ``mathis_ratio`` and ``padhye_ratio`` (measured / model).
    """
    name = _flow_name(ds, flow)
    dims = _sweep_dims(ds)
    params = cell_parameters(ds, name)
    mask = metrics.window(ds)
    flow_ds = ds.sel(flow=name, drop=True)
    measured = _per_cell(metrics.goodput_bps(ds).sel(flow=name, drop=True), dims, "measured_bps")
    lost = flow_ds["random_lost_pkts"].where(mask).sum("time")
    sent = flow_ds["tx_data_pkts"].where(mask).sum("time")
    loss = _per_cell(lost / sent.where(sent > 0), dims, "measured_loss")
    if "rto_count" in flow_ds:
        expiries = flow_ds["rto_count"].where(mask).sum("time")
    else:  # a backend without the counter
        expiries = xr.full_like(lost, np.nan)
    rto = _per_cell(expiries, dims, "rto_count")
    seconds = _per_cell(_measured_seconds(ds, name), dims, "measured_s")
    table = _merge(params, measured, loss, rto, seconds[[*dims, "measured_s"]], dims=dims)
    # the first timeout's duration: RTO = max(min RTO, srtt + max(G, 4 rttvar)), with the
    # variance term at its floor G (ns-3's and Linux's form; srtt at least the propagation RTT)
    table["t0_s"] = np.maximum(table["min_rto_s"], table["rtt_s"] + table["rto_granularity_s"])
    table["w_m_pkts"] = (
        np.minimum(table["send_buffer_bytes"], table["recv_buffer_bytes"]) / table["mss_bytes"]
    )
    table["timeout_share"] = table["rto_count"] * table["t0_s"] / table["measured_s"]
    table["mathis_bps"] = mathis_throughput_bps(
        table["mss_bytes"], table["rtt_s"], table["loss_rate"], acked_per_ack=table["acked_per_ack"]
    )
    table["padhye_bps"] = padhye_throughput_bps(
        table["mss_bytes"],
        table["rtt_s"],
        table["loss_rate"],
        table["t0_s"],
        table["w_m_pkts"],
        table["acked_per_ack"],
    )
    uncapped = padhye_throughput_bps(
        table["mss_bytes"],
        table["rtt_s"],
        table["loss_rate"],
        table["t0_s"],
        np.inf,
        table["acked_per_ack"],
    )
    table["window_capped"] = table["padhye_bps"] < uncapped
    table["mathis_ratio"] = table["measured_bps"] / table["mathis_bps"]
    table["padhye_ratio"] = table["measured_bps"] / table["padhye_bps"]
    return table


def volume_table(ds: xr.Dataset, flow: str | None = None) -> pd.DataFrame:
    """Throughput of one sized transfer against its volume (figure D4).

    The throughput is the volume over the time from the end of the handshake
    to the last byte at the receiver. The model is
    :func:`~tcprepro.models.throughput.transfer_throughput_bps` with the
    cell's RTT, goodput capacity, MSS, initial window, window cap (the
    smaller buffer) and a slow-start growth of ``1 + 1/b`` per RTT.

    Returns
    -------
    pandas.DataFrame
        :func:`cell_parameters` plus ``elapsed_s``, ``measured_bps`` (mean over
        repetitions), ``finished`` (every repetition delivered the volume),
        ``capacity_bps`` and ``model_bps``.
    """
    name = _flow_name(ds, flow)
    dims = _sweep_dims(ds)
    params = cell_parameters(ds, name)
    if (params["size_bytes"] <= 0).any():
        raise ValueError("volume_table needs sized flows (flows.<name>.size)")
    flow_ds = ds.sel(flow=name, drop=True)
    elapsed = flow_ds["flow_end_s"] - flow_ds["flow_connected_s"]
    rate = metrics.sized_flow_rate_bps(flow_ds)
    frames = [
        _per_cell(elapsed, dims, "elapsed_s"),
        _per_cell(rate, dims, "measured_bps"),
        _per_cell(_flow_capacity_bps(ds, name), dims, "capacity_bps")[[*dims, "capacity_bps"]],
    ]
    done = elapsed.notnull().all("rep").to_dataframe(name="finished").reset_index()
    table = _merge(params, *frames, done[[*dims, "finished"]], dims=dims)
    table["model_bps"] = transfer_throughput_bps(
        table["size_bytes"],
        table["rtt_s"],
        table["capacity_bps"],
        table["mss_bytes"],
        table["initial_window_pkts"],
        np.minimum(table["send_buffer_bytes"], table["recv_buffer_bytes"]),
        1.0 + 1.0 / table["acked_per_ack"],
    )
    return table.sort_values([d for d in dims if d != "size"] + ["size_bytes"]).reset_index(
        drop=True
    )


def reliable_volumes(
    table: pd.DataFrame, by: Sequence[str] = ("backend", "recv_buffer"), tolerance: float = 0.1
) -> pd.DataFrame:
    """Smallest volume from which every larger transfer is within ``tolerance`` of the largest.

    Per group of ``by``, the reference is the throughput of the largest volume
    of the group (the thesis: "reliable above 16 MB"). Returns one row per
    group with ``reference_bps`` and ``reliable_from_bytes`` (NaN if only the
    largest volume qualifies).
    """
    rows = []
    keys = [k for k in by if k in table.columns]
    for group, frame in table.groupby(keys, sort=False):
        frame = frame.sort_values("size_bytes")
        reference = float(frame["measured_bps"].iloc[-1])
        close = np.abs(frame["measured_bps"].to_numpy() / reference - 1.0) <= tolerance
        # the first index from which all later volumes are close
        start = len(close)
        for i in range(len(close) - 1, -1, -1):
            if not close[i]:
                break
            start = i
        values = group if isinstance(group, tuple) else (group,)
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "reference_bps": reference,
                "reliable_from_bytes": float(frame["size_bytes"].iloc[start])
                if start < len(close) - 1
                else np.nan,
            }
        )
    return pd.DataFrame(rows)


def stack_tables(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Stack the per-backend tables of one figure (e.g. ns-3 and emulated) into one frame."""
    frames = [t for t in tables if len(t)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def by_backend(datasets: Mapping[str, xr.Dataset] | Iterable[xr.Dataset]) -> dict[str, xr.Dataset]:
    """Index datasets by their ``backend`` attribute (two datasets of one backend: an error)."""
    items = datasets.values() if isinstance(datasets, Mapping) else datasets
    out: dict[str, xr.Dataset] = {}
    for ds in items:
        backend = _backend(ds)
        if backend in out:
            raise ValueError(f"two datasets of backend {backend!r}")
        out[backend] = ds
    return out


# ---------------------------------------------------------------------------
# The thesis's tables, reproduced: formatted rows next to the thesis's own values
# (figure notebooks write them with tcprepro.paper.write_tabular)

_KIB = 1024.0


def _optional(values: pd.Series, fmt: str) -> pd.Series:
    return values.map(lambda v: "" if not np.isfinite(v) else fmt.format(v))


def _thesis_keys(table: pd.DataFrame) -> pd.DataFrame:
    out = table.assign(
        rtt_ms=(table["rtt_s"] * 1000).round(3),
        thesis_rtt_ms=(table["thesis_rtt_s"] * 1000).round(3),
        be_kib=table["send_buffer_bytes"] / _KIB,
        br_kib=table["recv_buffer_bytes"] / _KIB,
        backend_label=table["backend"].map(
            lambda b: {"ns3": "ns-3", "mininet": "Linux (emulated)"}.get(b, b)
        ),
    )
    return out.sort_values(
        ["backend", "rtt_ms", "br_kib", "be_kib"], ascending=[True, False, False, True]
    )


def window_comparison(table: pd.DataFrame) -> pd.DataFrame:
    """Figure D1 as the thesis's Tables 3.1-3.3: throughput, FE and FE/BE per cell.

    Parameters
    ----------
    table
        :func:`buffer_table` of one or more backends (:func:`stack_tables`).

    Returns
    -------
    pandas.DataFrame
        Formatted cells; ``Thesis FE/BE`` is the thesis's value for the same RTT,
        BR and BE where it has one (Tables 3.1-3.3, Linux 2.6.12).
    """
    from tcprepro import reference

    thesis = reference.load("makassikis2006_windows")
    merged = _thesis_keys(table).merge(
        thesis[["rtt_ms", "br_kib", "be_kib", "fe_over_be"]].rename(
            columns={"fe_over_be": "thesis_fe_over_be", "rtt_ms": "thesis_rtt_ms"}
        ),
        on=["thesis_rtt_ms", "br_kib", "be_kib"],
        how="left",
    )
    return pd.DataFrame(
        {
            "Backend": merged["backend_label"],
            "RTT (ms)": merged["rtt_ms"].map("{:g}".format),
            "BR (KiB)": merged["br_kib"].map("{:g}".format),
            "BE (KiB)": merged["be_kib"].map("{:g}".format),
            "Throughput (Mb/s)": (merged["measured_bps"] / 1e6).map("{:.2f}".format),
            "FE (KiB)": (merged["window_bytes"] / _KIB).map("{:.1f}".format),
            "FE/BE": merged["fe_over_be"].map("{:.3f}".format),
            "Limit": _limit_column(merged),
            "Thesis FE/BE": _optional(merged["thesis_fe_over_be"], "{:.3f}"),
            **_little_column(merged),
            **_gate_column(merged),
        }
    )


def throughput_comparison(table: pd.DataFrame) -> pd.DataFrame:
    """Figure D2 as the thesis's Tables 3.4-3.5: measured, predicted, relative error.

    Only the buffer-limited cells, each next to the thesis's row with the same
    RTT, BE and BR where it has one (its D_m, D_p and error).
    """
    from tcprepro import reference

    thesis = reference.load("makassikis2006_throughput")
    limited = table[table["buffer_limited"]]
    merged = _thesis_keys(limited).merge(
        thesis[["rtt_ms", "br_kib", "be_kib", "dm_mbps", "dp_mbps", "err_pct"]].rename(
            columns={"rtt_ms": "thesis_rtt_ms"}
        ),
        on=["thesis_rtt_ms", "br_kib", "be_kib"],
        how="left",
    )
    return pd.DataFrame(
        {
            "Backend": merged["backend_label"],
            "RTT (ms)": merged["rtt_ms"].map("{:g}".format),
            "BE (KiB)": merged["be_kib"].map("{:g}".format),
            "BR (KiB)": merged["br_kib"].map("{:g}".format),
            "C_e, C_r": [
                f"{e:g}, {r:g}" for e, r in zip(merged["c_e"], merged["c_r"], strict=True)
            ],
            "D_m (Mb/s)": (merged["measured_bps"] / 1e6).map("{:.2f}".format),
            "D_p (Mb/s)": (merged["predicted_bps"] / 1e6).map("{:.2f}".format),
            "Error (%)": merged["error_pct"].map("{:+.2f}".format),
            "Thesis D_m": _optional(merged["dm_mbps"], "{:g}"),
            "Thesis D_p": _optional(merged["dp_mbps"], "{:g}"),
            "Thesis error (%)": _optional(merged["err_pct"], "{:+.2f}"),
            **_gate_column(merged),
        }
    )


def _little_column(merged: pd.DataFrame) -> dict[str, pd.Series]:
    """For emulated rows: D_m x RTT / BE, the send window as bytes sent per RTT."""
    if (merged["backend"] == "ns3").all():
        return {}
    ratio = merged["window_little_bytes"] / merged["send_buffer_bytes"]
    return {"D_m RTT/BE": ratio.map("{:.3f}".format)}


def _limit_column(merged: pd.DataFrame) -> pd.Series:
    """The model's limit of each cell, or "BE not held" where the sender exceeded its buffer."""
    held = merged["send_buffer_held"].astype(bool) if "send_buffer_held" in merged else True
    return pd.Series(np.where(held, merged["limit"], "BE not held"), index=merged.index)


def _gate_column(merged: pd.DataFrame) -> dict[str, pd.Series]:
    """A "Fidelity gate" column for emulated rows (none for a simulation-only table)."""
    if (merged["backend"] == "ns3").all():
        return {}
    verdict = np.where(
        merged["backend"] == "ns3",
        "",
        np.where(merged["fidelity_ok"] == 1, "passed", "flagged"),
    )
    return {"Fidelity gate": pd.Series(verdict, index=merged.index)}


def thesis_table(name: str) -> pd.DataFrame:
    """A table of the thesis's published values (``tcprepro.reference``), e.g. its windows."""
    from tcprepro import reference

    return reference.load(name)
