"""The trace store: one xarray dataset per run, combined datasets per figure.

This module owns the dataset schema every backend writes (:data:`SCHEMA`),
provenance attributes, atomic writes and the per-figure combination.

Per-run dataset
---------------
Dimensions: ``time`` (end of each sampling interval, seconds), ``flow``
(the scenario's flows, then one entity per traffic generator, whose series
sum its members), ``link`` (traced link directions, e.g. ``down``/``up`` or
``bottleneck``/``reverse``) and ``transfer`` (every finite TCP transfer a
generator made, with its size, arrival and completion; transfers still
running at the end have ``transfer_end_s`` = NaN: censored, never dropped).
Per-interval variables hold
what happened *during* the interval that ends at ``time``; ``cwnd_bytes`` and
``queue_*`` are instantaneous values at ``time``. See :data:`SCHEMA` for every
variable with its unit (those in :data:`OPTIONAL` only in some runs). A run may
also carry ``cc_<Name>`` (flow, time): the traced value ``Name`` of each flow's
congestion-control model, sampled when requested (``run_scenario(...,
congestion_state=[Name])``), in the unit the model documents.

Attributes: ``config`` (the resolved scenario as JSON, SI units), ``seed``,
``rep``, ``backend``, ``cache_key``, ``interval_s``, ``warmup_s``,
``duration_s`` and the provenance of :func:`tcprepro.provenance.static_provenance`.
A run made for a figure also carries ``figure``, ``sweep`` (this run's swept
values, JSON) and ``sweep_values`` (every value of every swept dimension).

Combined dataset
----------------
:func:`combine_runs` stacks the runs of one figure into one dataset with one
dimension per swept parameter plus ``rep``; per-run attributes that differ
become ``run_*`` variables over those dimensions.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro.scenario import goodput_capacity_bps

if TYPE_CHECKING:
    from tcprepro.scenario import Scenario, TcpSettings

__all__ = [
    "OPTIONAL",
    "SCHEMA",
    "RawTraces",
    "combine_runs",
    "link_info",
    "make_run_dataset",
    "open_dataset",
    "run_attributes",
    "validate_run_dataset",
    "write_dataset",
]

#: variable -> (dimensions, unit, description)
SCHEMA: dict[str, tuple[tuple[str, ...], str, str]] = {
    "goodput_bps": (("flow", "time"), "bit/s", "application bytes received in the interval"),
    "cwnd_bytes": (("flow", "time"), "byte", "congestion window at the sample time"),
    "rtt_s": (("flow", "time"), "s", "mean of the RTT samples taken in the interval"),
    "rtt_samples": (("flow", "time"), "1", "number of RTT samples in the interval"),
    "tx_data_pkts": (("flow", "time"), "packet", "data segments sent (incl. retransmissions)"),
    "retx_pkts": (("flow", "time"), "packet", "retransmitted data segments"),
    "lost_data_pkts": (("flow", "time"), "packet", "data segments dropped at a traced queue"),
    "lost_ack_pkts": (
        ("flow", "time"),
        "packet",
        "pure ACKs of the flow dropped at a traced queue",
    ),
    "random_lost_pkts": (
        ("flow", "time"),
        "packet",
        "data segments destroyed by the random-loss model of a traced direction",
    ),
    "backlog_pkts": (
        ("flow", "time"),
        "packet",
        "data packets of the flow stored in a traced PFQ/LQD queue at the sample time "
        "(present only when a traced link uses pfq_lqd)",
    ),
    # study D: the send window in use and the timeouts (backends that measure them)
    "unacked_bytes": (
        ("flow", "time"),
        "byte",
        "time average over the interval of the bytes sent but not yet cumulatively ACKed",
    ),
    "rto_count": (
        ("flow", "time"),
        "1",
        "retransmission timeouts that expired in the interval (back-offs included)",
    ),
    "queue_pkts": (("link", "time"), "packet", "queue occupancy at the sample time"),
    "queue_bytes": (("link", "time"), "byte", "queue occupancy at the sample time"),
    "drops_pkts": (("link", "time"), "packet", "packets dropped by the queue in the interval"),
    "tx_bytes": (("link", "time"), "byte", "bytes put on the wire in the interval (L2)"),
    "random_drops_pkts": (
        ("link", "time"),
        "packet",
        "packets destroyed by the random-loss model in the interval",
    ),
    "flow_kind": (
        ("flow",),
        "",
        "bulk or sized (one connection), transfers or packets (a generator's aggregate)",
    ),
    "flow_variant": (("flow",), "", "congestion control ('udp' for packet generators)"),
    "flow_cc_type": (("flow",), "", "ns-3 type of the congestion control the socket used"),
    "flow_src": (("flow",), "", "sending host"),
    "flow_dst": (("flow",), "", "receiving host"),
    "flow_label": (("flow",), "", "direction label (down/up) or src->dst"),
    "flow_link": (("flow",), "", "traced link direction the flow's data crosses"),
    "flow_start_s": (("flow",), "s", "time the connection was opened"),
    "flow_connected_s": (("flow",), "s", "time the handshake completed (NaN: never)"),
    "flow_end_s": (("flow",), "s", "time the last byte arrived (sized flows; NaN: not done)"),
    "flow_size_bytes": (("flow",), "byte", "bytes to transfer (0: bulk)"),
    "flow_rx_bytes": (("flow",), "byte", "application bytes received in the whole run"),
    "flow_initial_ssthresh_bytes": (
        ("flow",),
        "byte",
        "slow-start threshold the connection started from, seeded by the host cache "
        "(tcp.host_cache); NaN: unbounded",
    ),
    "transfer_generator": (("transfer",), "", "traffic generator that made the transfer"),
    "transfer_src": (("transfer",), "", "sending host"),
    "transfer_dst": (("transfer",), "", "receiving host"),
    "transfer_start_s": (("transfer",), "s", "arrival: the connection is opened"),
    "transfer_size_bytes": (("transfer",), "byte", "bytes to transfer"),
    "transfer_connected_s": (("transfer",), "s", "handshake completed (NaN: never)"),
    "transfer_end_s": (
        ("transfer",),
        "s",
        "last byte received; NaN: still running when the run ended (censored)",
    ),
    "transfer_rx_bytes": (("transfer",), "byte", "bytes received by the end of the run"),
    "transfer_tx_data_pkts": (
        ("transfer",),
        "packet",
        "data segments the transfer sent in the whole run (incl. retransmissions)",
    ),
    "transfer_lost_data_pkts": (
        ("transfer",),
        "packet",
        "data segments of the transfer dropped at a traced queue in the whole run",
    ),
    "transfer_initial_ssthresh_bytes": (
        ("transfer",),
        "byte",
        "slow-start threshold the transfer started from, seeded by the host cache "
        "(tcp.host_cache); NaN: unbounded",
    ),
    "link_rate_bps": (("link",), "bit/s", "configured rate"),
    "link_delay_s": (("link",), "s", "configured one-way delay"),
    "link_buffer_pkts": (("link",), "packet", "configured buffer"),
    "link_qdisc": (("link",), "", "queue discipline"),
    "link_loss_rate": (("link",), "1", "configured random packet-loss probability"),
    "link_queue_max_pkts": (("link",), "packet", "largest occupancy seen in the run"),
    "link_goodput_capacity_bps": (
        ("link",),
        "bit/s",
        "highest TCP goodput the link can carry: rate x MSS / (MSS + TCP/IP + L2 headers)",
    ),
}

#: variables of :data:`SCHEMA` that only some runs have
OPTIONAL = frozenset(
    {
        "backlog_pkts",
        "unacked_bytes",
        "rto_count",
        "transfer_tx_data_pkts",
        "transfer_lost_data_pkts",
        "flow_initial_ssthresh_bytes",
        "transfer_initial_ssthresh_bytes",
    }
)

#: per-interval counters the backends report as cumulative totals
CUMULATIVE_FLOW = (
    "tx_data_pkts",
    "retx_pkts",
    "lost_data_pkts",
    "lost_ack_pkts",
    "random_lost_pkts",
)
CUMULATIVE_LINK = ("drops_pkts", "tx_bytes", "random_drops_pkts")


@dataclass
class RawTraces:
    """What a backend hands to :func:`make_run_dataset` (arrays are [sample, entity]).

    Cumulative counters (``rx_bytes``, ``rtt_sum_s``, ``rtt_count`` and the
    names in :data:`CUMULATIVE_FLOW` / :data:`CUMULATIVE_LINK`) are totals since
    the start of the run; the store turns them into per-interval values.
    Optional series: ``unacked_byte_s``, the time integral (byte x s) of the
    unacknowledged bytes since the start (it becomes ``unacked_bytes``, the
    average of each interval), and ``rto_count`` (cumulative).
    """

    times_s: np.ndarray
    flow_names: Sequence[str]
    link_names: Sequence[str]
    flow_series: dict[str, np.ndarray]
    link_series: dict[str, np.ndarray]
    flow_info: dict[str, Sequence[Any]]
    link_info: dict[str, Sequence[Any]]
    attrs: dict[str, Any] = field(default_factory=dict)
    transfer_info: dict[str, Sequence[Any]] = field(default_factory=dict)


class ConfiguredDirection(Protocol):
    """What :func:`link_info` reads of a traced link direction (a planned direction)."""

    rate_bps: float
    delay_s: float
    buffer_pkts: int
    qdisc: str
    loss_rate: float


def link_info(
    directions: Sequence[ConfiguredDirection],
    tcp: TcpSettings,
    l2_bytes: int,
    queue_max_pkts: Sequence[float],
) -> dict[str, Sequence[Any]]:
    """The per-link facts of a run (``link_*`` variables), the same for every backend.

    ``l2_bytes`` is the backend's layer-2 header per packet (it sets the goodput
    capacity); ``queue_max_pkts`` the largest occupancy each direction reached.
    """
    return {
        "link_rate_bps": [d.rate_bps for d in directions],
        "link_delay_s": [d.delay_s for d in directions],
        "link_buffer_pkts": [d.buffer_pkts for d in directions],
        "link_qdisc": [d.qdisc for d in directions],
        "link_loss_rate": [d.loss_rate for d in directions],
        "link_queue_max_pkts": queue_max_pkts,
        "link_goodput_capacity_bps": [
            goodput_capacity_bps(d.rate_bps, tcp, l2_bytes) for d in directions
        ],
    }


def run_attributes(
    scenario: Scenario, rep: int, backend: str, versions: dict[str, str], l2_bytes: int
) -> dict[str, Any]:
    """The attributes every run dataset starts with: what was run, and its cache key."""
    return {
        "scenario_id": scenario.id,
        "study": scenario.study or "",
        "config": scenario.to_json(),
        "seed": scenario.seed,
        "rep": rep,
        "backend": backend,
        "cache_key": scenario.cache_key(rep, backend, versions),
        "interval_s": scenario.trace.interval,
        "warmup_s": scenario.warmup,
        "duration_s": scenario.duration,
        "l2_overhead_bytes": l2_bytes,
    }


def _per_interval(cumulative: np.ndarray) -> np.ndarray:
    return np.diff(cumulative, axis=0, prepend=np.zeros((1, *cumulative.shape[1:])))


def make_run_dataset(raw: RawTraces) -> xr.Dataset:
    """Build a run dataset following :data:`SCHEMA` from a backend's raw traces."""
    times = np.asarray(raw.times_s, dtype=float)
    n_samples = times.size
    intervals = np.diff(times, prepend=0.0)
    data: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}

    def flow_array(name: str) -> np.ndarray:
        arr = np.asarray(raw.flow_series[name], dtype=float)
        return arr.reshape(n_samples, len(raw.flow_names))

    def link_array(name: str) -> np.ndarray:
        arr = np.asarray(raw.link_series[name], dtype=float)
        return arr.reshape(n_samples, len(raw.link_names))

    if raw.flow_names:
        rx = _per_interval(flow_array("rx_bytes"))
        with np.errstate(invalid="ignore", divide="ignore"):
            goodput = rx * 8.0 / intervals[:, None]
            rtt_count = _per_interval(flow_array("rtt_count"))
            rtt = np.where(
                rtt_count > 0, _per_interval(flow_array("rtt_sum_s")) / rtt_count, np.nan
            )
        data["goodput_bps"] = (("flow", "time"), goodput.T)
        data["cwnd_bytes"] = (("flow", "time"), flow_array("cwnd_bytes").T)
        if "backlog_pkts" in raw.flow_series:
            data["backlog_pkts"] = (("flow", "time"), flow_array("backlog_pkts").T)
        for name in raw.flow_series:
            if name.startswith("cc:"):
                data[f"cc_{name[3:]}"] = (("flow", "time"), flow_array(name).T)
        data["rtt_s"] = (("flow", "time"), rtt.T)
        data["rtt_samples"] = (("flow", "time"), rtt_count.T)
        for name in CUMULATIVE_FLOW:
            data[name] = (("flow", "time"), _per_interval(flow_array(name)).T)
        if "unacked_byte_s" in raw.flow_series:
            with np.errstate(invalid="ignore", divide="ignore"):
                unacked = _per_interval(flow_array("unacked_byte_s")) / intervals[:, None]
            data["unacked_bytes"] = (("flow", "time"), unacked.T)
        if "rto_count" in raw.flow_series:
            data["rto_count"] = (("flow", "time"), _per_interval(flow_array("rto_count")).T)
    if raw.link_names:
        data["queue_pkts"] = (("link", "time"), link_array("queue_pkts").T)
        data["queue_bytes"] = (("link", "time"), link_array("queue_bytes").T)
        for name in CUMULATIVE_LINK:
            data[name] = (("link", "time"), _per_interval(link_array(name)).T)
    for name, values in raw.flow_info.items():
        data[name] = (("flow",), np.asarray(values))
    for name, values in raw.link_info.items():
        data[name] = (("link",), np.asarray(values))
    for name, (dims, _, _) in SCHEMA.items():  # a run without generated transfers
        if dims == ("transfer",) and name not in raw.transfer_info and name not in OPTIONAL:
            is_text = name in ("transfer_generator", "transfer_src", "transfer_dst")
            data[name] = (("transfer",), np.asarray([], dtype=str if is_text else float))
    for name, values in raw.transfer_info.items():
        data[name] = (("transfer",), np.asarray(values))

    ds = xr.Dataset(
        {name: xr.Variable(dims, values) for name, (dims, values) in data.items()},
        coords={
            "time": ("time", times, {"units": "s", "long_name": "end of sampling interval"}),
            "flow": ("flow", np.asarray(raw.flow_names, dtype=str)),
            "link": ("link", np.asarray(raw.link_names, dtype=str)),
            "transfer": ("transfer", np.arange(len(next(iter(raw.transfer_info.values()), [])))),
        },
        attrs=dict(raw.attrs),
    )
    for name, (_, unit, description) in SCHEMA.items():
        if name in ds:
            ds[name].attrs.update({"units": unit, "description": description})
    for name in ds.data_vars:
        if str(name).startswith("cc_"):
            ds[name].attrs["description"] = (
                f"traced value {str(name)[3:]} of the flow's congestion-control model "
                "(unit: see the model's documentation)"
            )
    return ds


def validate_run_dataset(ds: xr.Dataset) -> list[str]:
    """Return the ways ``ds`` departs from :data:`SCHEMA` (empty list: conforms)."""
    problems = []
    for name, (dims, unit, _) in SCHEMA.items():
        if name not in ds:
            if name not in OPTIONAL:
                problems.append(f"missing variable {name}")
        elif ds[name].dims != dims:
            problems.append(f"{name} has dims {ds[name].dims}, expected {dims}")
        elif ds[name].attrs.get("units") != unit:
            problems.append(f"{name} has units {ds[name].attrs.get('units')!r}, expected {unit!r}")
    for attr in (
        "config",
        "seed",
        "rep",
        "backend",
        "cache_key",
        "interval_s",
        "warmup_s",
        "duration_s",
        "tcprepro_version",
        "git_commit",
        "kernel",
        "created",
    ):
        if attr not in ds.attrs:
            problems.append(f"missing attribute {attr}")
    return problems


def _encoding(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    return {
        name: {"zlib": True, "complevel": 4}
        for name, var in ds.variables.items()
        if np.issubdtype(var.dtype, np.number) and var.ndim > 0
    }


def _netcdf_safe(ds: xr.Dataset) -> xr.Dataset:
    """Make object (string) arrays writable: missing entries become ''."""
    out = ds.copy()
    for name, var in ds.variables.items():
        if var.dtype == object:
            values = np.vectorize(lambda v: v if isinstance(v, str) else "", otypes=[object])(
                var.values
            )
            out[name] = var.copy(data=values.astype(str))
    return out


def write_dataset(ds: xr.Dataset, path: str | os.PathLike[str]) -> Path:
    """Write ``ds`` to NetCDF atomically: a temporary file in the same folder, then rename.

    A process killed mid-write leaves at most a hidden ``.*.tmp-<pid>`` file, never a
    truncated dataset under the final name.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        safe = _netcdf_safe(ds)
        safe.to_netcdf(tmp, engine="netcdf4", encoding=_encoding(safe))
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return path


def open_dataset(path: str | os.PathLike[str]) -> xr.Dataset:
    """Load a dataset fully into memory and close the file."""
    with xr.open_dataset(path, engine="netcdf4") as ds:
        return ds.load()


# ---------------------------------------------------------------------------
# Combination


_PER_RUN_ATTRS = (
    "config",
    "cache_key",
    "seed",
    "created",
    "git_commit",
    "git_dirty",
    "host",
    "kernel",
)


def _common_string_widths(pieces: list[xr.Dataset]) -> list[xr.Dataset]:
    """Give each fixed-width string variable (coordinate or data) one width across ``pieces``.

    ``xr.concat`` keeps the first piece's width: after a run whose flows are ``reno0, bg``
    (``<U5``) and whose qdisc is ``fifo`` (``<U4``), another run's ``hstcp0`` became
    ``hstcp`` and ``pfq_lqd`` became ``pfq_``.
    """
    widths: dict[str, int] = {}
    for ds in pieces:
        for name, var in ds.variables.items():
            if var.dtype.kind == "U":
                widths[name] = max(widths.get(name, 0), var.dtype.itemsize // 4)
    out = []
    for ds in pieces:
        wider = {n: f"<U{w}" for n, w in widths.items() if n in ds.variables}
        coords = {n: ds[n].astype(d) for n, d in wider.items() if n in ds.coords}
        data = {n: ds[n].variable.astype(d) for n, d in wider.items() if n in ds.data_vars}
        out.append(ds.assign_coords(coords).assign(data))
    return out


def combine_runs(
    runs: Iterable[str | os.PathLike[str] | xr.Dataset],
    sweep_values: Mapping[str, Sequence[Any]] | None = None,
) -> xr.Dataset:
    """Stack the run datasets (paths or in-memory) of one figure along its sweep and ``rep``.

    Each run must carry the ``figure``, ``sweep`` and ``sweep_values`` attributes
    that :mod:`tcprepro.campaign` sets. Dimension values keep the order of the
    workflow config; cells that have no run (e.g. a variant whose model is
    pending) are present and filled with NaN, and listed in the
    ``missing_cells`` attribute.

    ``sweep_values`` (the figure's values in the workflow's config now) replaces the
    first run's attribute, which records the config of the time that run was made: a
    run reused from the cache after a tier gained a value carries the shorter list.
    Either way a run whose cell lies outside the values is an error naming it, never
    silently left out.

    Raises
    ------
    ValueError
        For a run of another figure or sweep, two runs of one cell and repetition, or a
        run whose cell is not among the sweep's values.
    """
    items = list(runs)
    if not items:
        raise ValueError("combine_runs needs at least one run dataset")
    pieces: list[xr.Dataset] = []
    keys: list[tuple[Any, ...]] = []
    dims: list[str] | None = None
    given = None if sweep_values is None else {d: list(v) for d, v in sweep_values.items()}
    sweep_values = {}
    figure = None
    per_run: dict[str, list[Any]] = {name: [] for name in _PER_RUN_ATTRS}
    for i, item in enumerate(items):
        ds, path = (
            (item, f"dataset #{i}")
            if isinstance(item, xr.Dataset)
            else (open_dataset(item), str(item))
        )
        try:
            sweep = json.loads(ds.attrs["sweep"])
            values = json.loads(ds.attrs["sweep_values"])
        except KeyError as exc:
            raise ValueError(f"{path} was not produced for a figure (no {exc} attribute)") from None
        if dims is None:
            sweep_values = given if given is not None else values
            dims, figure = list(sweep_values), ds.attrs.get("figure")
        if list(values) != dims or ds.attrs.get("figure") != figure:
            raise ValueError(f"{path} belongs to another sweep than the first run")
        for d in dims:
            if sweep[d] not in sweep_values[d]:
                raise ValueError(
                    f"{path}: {d} = {sweep[d]!r} is not among the figure's values "
                    f"{sweep_values[d]} (a run of another tier or config?)"
                )
        keys.append((*(sweep[d] for d in dims), int(ds.attrs["rep"])))
        for name in _PER_RUN_ATTRS:
            per_run[name].append(ds.attrs.get(name, ""))
        pieces.append(ds)
    assert dims is not None
    pieces = _common_string_widths(pieces)
    stacked = xr.concat(
        pieces,
        dim="run",
        data_vars="all",
        coords="minimal",
        compat="override",
        join="outer",
        combine_attrs="drop_conflicts",
    )
    for name, values in per_run.items():
        stacked[f"run_{name}"] = ("run", np.asarray(values))
    index = pd.MultiIndex.from_tuples(keys, names=[*dims, "rep"])
    if index.has_duplicates:
        raise ValueError("two run datasets have the same sweep values and rep")
    if dims:
        stacked = stacked.assign_coords(xr.Coordinates.from_pandas_multiindex(index, "run"))
        combined = stacked.unstack("run")
    else:  # nothing swept: the runs differ by their repetition only
        combined = stacked.rename(run="rep").assign_coords(rep=[k[-1] for k in keys])
    reps = sorted({k[-1] for k in keys})
    combined = combined.reindex({**{d: sweep_values[d] for d in dims}, "rep": reps})
    combined = combined.transpose(*dims, "rep", ...)
    present = {k[:-1] for k in keys}
    cells = product(*(sweep_values[d] for d in dims))  # one empty cell when nothing is swept
    missing = [dict(zip(dims, cell, strict=True)) for cell in cells if tuple(cell) not in present]
    for name in ("sweep", "rep", "cache_key", "config", "seed", "created"):
        combined.attrs.pop(name, None)
    combined.attrs.update(
        {"sweep_dims": json.dumps(dims), "missing_cells": json.dumps(missing), "n_runs": len(items)}
    )
    return combined
