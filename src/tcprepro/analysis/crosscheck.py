"""Simulation vs emulation: the cross-check table of a figure run by both backends.

This module owns the comparison of a figure's combined ns-3 dataset with its
combined emulated dataset, cell by cell and flow by flow: utilisation of each
direction (percent of each backend's own goodput capacity, mean over
repetitions) and mean RTT, the differences, and whether each lies within the
figure's stated tolerance (``crosscheck`` in ``workflow/config.yaml``:
percentage points of utilisation, relative RTT difference). A figure whose own
metric is the link's efficiency (C3.1) also compares each cell's total
utilisation, all flows together (row ``flow = "total"``, no RTT; with study B's
background, the bottlenecked flows' share (1 - rho_b) phi). Generated traffic
(a ``traffic:`` generator's flows) is not compared flow by flow; a figure whose
background of TCP transfers is part of its metric (X12) compares the load each
transfer generator carried (row ``flow = <generator>``, no RTT), read from the
``transfer_*`` variables both backends record alike. Emulated cells
that the fidelity gate flagged are marked, never silently counted as agreeing
or disagreeing. :func:`tcprepro.plotting.crosscheck_scatter` draws the table.

A twin whose catalogue figure has views drawn from the same runs (X2: C3.1, and
C3.2's Jain index, C3.5's loss and queue) compares those views' own
metrics too, cell by cell (:func:`compare_views`, ``crosscheck.views``), each with
its stated tolerance: an absolute difference, or a factor either way for a metric
read on a log scale.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics
from tcprepro.analysis import study_c
from tcprepro.analysis.common import transfers_carried_load
from tcprepro.emulation.routes import REGISTRY
from tcprepro.latex import escape as tex
from tcprepro.units import format_quantity
from tcprepro.variants import variant_label

__all__ = [
    "TOTAL",
    "VIEW_COLUMNS",
    "VIEW_METRICS",
    "cell_metrics",
    "compare",
    "compare_figure",
    "compare_views",
    "emulation_name",
    "flow_label",
    "flow_names",
    "ns3_column",
    "summary",
    "write_csv",
    "write_tex",
]

#: the ``flow`` of a cell's total-utilisation row
TOTAL = "total"


#: the views a cross-check can compare (``crosscheck.views``): view -> (the function
#: giving its metrics per cell and repetition from a combined dataset, those metrics)
VIEW_METRICS: dict[str, tuple[Callable[[xr.Dataset], xr.Dataset], tuple[str, ...]]] = {
    "C3.2": (study_c.pair_metrics, ("jain",)),
    "C3.5": (
        study_c.pair_metrics,
        ("loss_probability", "retransmission_probability", "queue_fraction"),
    ),
}


#: the columns of :func:`compare_views` after the cell's sweep dimensions
VIEW_COLUMNS = ("view", "metric", "ns3", "emu", "difference", "tolerance", "within", "fidelity")


#: flow kinds of generated traffic (tcprepro.traffic): not compared flow by flow
GENERATED_KINDS = ("transfers", "packets")


def flow_names(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    """What each flow of a combined dataset is, by flow name.

    Its congestion control, and for an instance of a counted flow group (B5.1's
    ``reno: {count: 4}`` gives ``reno0`` to ``reno3``) its group and number from 1,
    read from the runs' scenarios.

    A flow absent from some cells (an empty ``flow_variant`` there) takes its variant
    from the cells that have it; a flow whose variant is swept (X1's ``up``) has none.
    """
    groups: set[str] = set()
    for text in np.atleast_1d(ds["run_config"].values).ravel() if "run_config" in ds else ():
        if str(text).startswith("{"):  # a cell without runs has no scenario
            flows = json.loads(str(text)).get("flows") or {}
            groups |= {name for name, flow in flows.items() if (flow or {}).get("count")}
    names: dict[str, dict[str, Any]] = {}
    for flow in (str(f) for f in ds["flow"].values) if "flow" in ds.dims else ():
        variants = ds["flow_variant"].sel(flow=flow).values if "flow_variant" in ds else []
        distinct = {str(v) for v in np.ravel(variants)} - {""}
        entry: dict[str, Any] = {"variant": distinct.pop() if len(distinct) == 1 else ""}
        match = re.fullmatch(r"(.+?)(\d+)", flow)
        if match and match.group(1) in groups:
            entry.update(group=match.group(1), number=int(match.group(2)) + 1)
        names[flow] = entry
    return names


def flow_label(table: pd.DataFrame, flow: str) -> str:
    """A cross-check row's flow as its legend names it.

    An instance of a counted flow group (``reno1``) is its variant and number
    (``Reno, flow 2``); a cell's total row is ``all flows together``; a transfer
    generator's row (``bg``) is the load its transfers carried. A flow the scenario
    names itself (X1's ``up``, study C's ``f1``) keeps its name.
    """
    if flow == TOTAL:
        return "all flows together"
    if flow in table.attrs.get("generators", []):
        return f"{flow} transfers, load carried"
    about = table.attrs.get("flows", {}).get(flow, {})
    variant = variant_label(about.get("variant", ""))
    if "number" in about:
        return f"{variant}, flow {about['number']}" if variant else f"flow {about['number']}"
    return flow


def emulation_name(table: pd.DataFrame) -> str:
    """The emulation a cross-check table compares with, by the route its runs came by.

    ``Mininet on the UML route, real Linux TCP``; the route as the runs recorded it
    (:func:`compare`'s ``attrs["route"]``), ``route not recorded`` when they did not,
    and ``no emulated runs`` for a table of the ns-3 side only.
    """
    if "route" not in table.attrs:
        return "no emulated runs"
    name = str(table.attrs["route"])
    if not name:
        return "Mininet, real Linux TCP, route not recorded"
    route = REGISTRY.get(name)
    return f"Mininet on the {route.title if route else f'{name} route'}, real Linux TCP"


def _scenario_flows(ds: xr.Dataset) -> xr.Dataset:
    """The scenario's own flows: a generator's traffic is not compared flow by flow.

    ns-3 records a generator's packets as a flow; the emulation records its counts
    and measured load (``background_*``) instead, so a row would compare nothing.
    """
    if "flow_kind" not in ds or "flow" not in ds.dims:
        return ds
    generated = ds["flow_kind"].isin(list(GENERATED_KINDS))
    others = [d for d in generated.dims if d != "flow"]
    if others:
        generated = generated.any(others)
    return ds.sel(flow=~generated.values)


def _absent_flows(ds: xr.Dataset, keep: list[str]) -> pd.DataFrame | None:
    """(cell, flow) pairs of a combined dataset whose cell has no such flow.

    A sweep of the flow count (X6's i) combines cells of 1 and 2 flows: the
    1-flow cells have the second flow's name with an empty ``flow_kind``.
    """
    if "flow_kind" not in ds or set(ds["flow_kind"].dims) <= {"flow"}:
        return None
    kind = ds["flow_kind"].astype(str)
    absent = (kind == "") | (kind == "nan")
    if "rep" in absent.dims:
        absent = absent.all("rep")
    frame = absent.rename("absent").to_dataframe(dim_order=keep).reset_index()
    return frame[frame["absent"]][keep]


def _utilisation_pct(ds: xr.Dataset) -> xr.DataArray:
    """Each flow's utilisation (%).

    A bulk flow's is its mean goodput over the window; a sized flow's is its own
    throughput (:func:`tcprepro.metrics.sized_flow_rate_bps`, D4's measure) over the
    goodput capacity, which does not depend on the window's length.
    """
    bulk = metrics.utilisation(ds) * 100.0
    if "flow_size_bytes" not in ds:
        return bulk
    sized = metrics.sized_flow_rate_bps(ds) / metrics.flow_capacity_bps(ds) * 100.0
    return xr.where(ds["flow_size_bytes"] > 0, sized, bulk).rename("utilisation")


def _generators(ds: xr.Dataset) -> list[str]:
    """The transfer generators of a dataset's runs (sorted)."""
    if "transfer_generator" not in ds or ds.sizes.get("transfer", 0) == 0:
        return []
    names = np.unique(ds["transfer_generator"].values.ravel().astype(str))
    return [str(n) for n in names if n not in ("", "nan")]


def _cell_rows(util_pct: xr.DataArray, backend: str, dims: list[str], flow: str) -> pd.DataFrame:
    """One row per cell of a per-cell utilisation (%) under the name ``flow``, no RTT."""
    util_pct = util_pct.rename(f"{backend}_util_pct")
    rows = (
        util_pct.to_dataframe(dim_order=dims).reset_index()
        if dims
        else pd.DataFrame({f"{backend}_util_pct": [float(util_pct)]})
    )
    rows["flow"] = flow
    rows[f"{backend}_rtt_ms"] = np.nan
    return rows[[*dims, "flow", f"{backend}_util_pct", f"{backend}_rtt_ms"]]


def _carried_rows(ds: xr.Dataset, backend: str, dims: list[str]) -> pd.DataFrame:
    """One row per cell and transfer generator: the load it carried over the window (%)."""
    start, end = float(ds.attrs["warmup_s"]), float(ds.attrs["duration_s"])
    frames = [
        _cell_rows(
            (transfers_carried_load(ds, name, start, end) * 100.0).mean("rep"), backend, dims, name
        )
        for name in _generators(ds)
    ]
    return pd.concat(frames) if frames else pd.DataFrame()


def _cells(
    ds: xr.Dataset, backend: str, total: bool = False, transfers: bool = False
) -> pd.DataFrame:
    dims = json.loads(ds.attrs["sweep_dims"])
    carried = _carried_rows(ds, backend, dims) if transfers else None
    ds = _scenario_flows(ds)
    per_flow = _utilisation_pct(ds)
    util = per_flow.mean("rep").rename(f"{backend}_util_pct")
    rtt = (metrics.mean_rtt_s(ds) * 1000.0).mean("rep").rename(f"{backend}_rtt_ms")
    keep = [*dims, "flow"]
    frame = xr.merge([util, rtt]).to_dataframe(dim_order=keep).reset_index()
    frame = frame[[*keep, f"{backend}_util_pct", f"{backend}_rtt_ms"]]
    absent = _absent_flows(ds, keep)
    if absent is not None and len(absent):  # no row for a flow its cell does not have
        marked = frame.merge(absent.assign(_absent=True), on=keep, how="left")
        frame = frame[marked["_absent"].isna().to_numpy()].reset_index(drop=True)
    if total:
        # every flow of the cell together: its efficiency when the flows share one link
        summed = per_flow.sum("flow", min_count=1).mean("rep")
        frame = pd.concat([frame, _cell_rows(summed, backend, dims, TOTAL)])
        frame = frame.reset_index(drop=True)
    if carried is not None and len(carried):
        frame = pd.concat([frame, carried]).reset_index(drop=True)
    return _cell_by_cell(frame, dims)


def cell_metrics(
    ds: xr.Dataset, backend: str = "ns3", total: bool = False, transfers: bool = False
) -> pd.DataFrame:
    """One row per (cell, flow) of a combined dataset: what the cross-check compares.

    Columns: the sweep dimensions, ``flow``, ``<backend>_util_pct`` (utilisation, % of the
    backend's goodput capacity, mean over repetitions) and ``<backend>_rtt_ms`` (mean RTT);
    ``total`` and ``transfers`` add the rows :func:`compare` describes.
    """
    return _cells(ds, backend, total, transfers)


def _cell_by_cell(frame: pd.DataFrame, dims: list[str]) -> pd.DataFrame:
    """Rows grouped by cell, in the order the cells first appear.

    A cell's total and generator rows follow its own flows' rows rather than coming
    after every cell's flows.
    """
    if not dims or frame.empty:
        return frame
    cells = [tuple(row) for row in frame[dims].astype(str).to_numpy()]
    order = {cell: i for i, cell in enumerate(dict.fromkeys(cells))}
    position = np.array([order[cell] for cell in cells])
    return frame.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)


def compare(
    ns3: xr.Dataset,
    emulated: xr.Dataset | None,
    utilisation_pp: float,
    rtt_rel: float,
    total: bool = False,
    utilisation_rel: float | None = None,
    transfers: bool = False,
) -> pd.DataFrame:
    """One row per (cell, flow): both backends' utilisation and RTT, differences, verdicts.

    ``fidelity`` is ``ok``, ``flagged`` (a repetition failed the fidelity gate)
    or ``not run`` (the route's kernel does not offer a variant of the cell).
    With ``total``, each cell also has a row ``flow = "total"``: the sum of its
    flows' utilisations (no RTT; ``rtt_ok`` is missing there). With ``transfers``,
    each cell also has a row per transfer generator: the load it carried, in % of the
    goodput capacity (:func:`tcprepro.analysis.common.transfers_carried_load`; no RTT).
    With
    ``utilisation_rel``, a utilisation must also lie within that relative
    difference (a window-limited flow using a few percent of the link can double
    its throughput within a tolerance in percentage points).
    """
    dims = json.loads(ns3.attrs["sweep_dims"])
    left = _cells(ns3, "ns3", total, transfers)
    if emulated is None:  # nothing emulated (yet): every row "not run"
        right = left.rename(columns={"ns3_util_pct": "emu_util_pct", "ns3_rtt_ms": "emu_rtt_ms"})
        right[["emu_util_pct", "emu_rtt_ms"]] = np.nan
        emulated = xr.Dataset()
    else:
        right = _cells(emulated, "emu", total, transfers)
    table = left.merge(right, on=[*dims, "flow"], how="left")
    if "fidelity_ok" in emulated:
        gate = emulated["fidelity_ok"].min("rep").to_dataframe().reset_index()
        table = table.merge(gate[[*dims, "fidelity_ok"]], on=dims, how="left")
    else:
        table["fidelity_ok"] = np.nan
    table["diff_pp"] = table["emu_util_pct"] - table["ns3_util_pct"]
    table["rtt_diff_rel"] = table["emu_rtt_ms"] / table["ns3_rtt_ms"] - 1.0
    ran = table["emu_util_pct"].notna()
    table["util_rel"] = table["emu_util_pct"] / table["ns3_util_pct"] - 1.0
    within = table["diff_pp"].abs() <= utilisation_pp
    if utilisation_rel is not None:
        within &= table["util_rel"].abs() <= utilisation_rel
    table["util_ok"] = within.where(ran)
    table["rtt_ok"] = (table["rtt_diff_rel"].abs() <= rtt_rel).where(
        ran & table["rtt_diff_rel"].notna()
    )
    table["fidelity"] = np.where(
        ~ran, "not run", np.where(table["fidelity_ok"] == 1, "ok", "flagged")
    )
    table.attrs.update(
        {"utilisation_pp": utilisation_pp, "rtt_rel": rtt_rel, "utilisation_rel": utilisation_rel}
    )
    table.attrs["provenance"] = _provenance(emulated)
    if emulated.data_vars:  # the route its runs came by ("" when they do not record it)
        table.attrs["route"] = str(emulated.attrs.get("route", ""))
    table.attrs["flows"] = flow_names(ns3)
    table.attrs["generators"] = sorted(_generators(ns3)) if transfers else []
    return table


def compare_figure(
    ns3: xr.Dataset, emulated: xr.Dataset | None, tolerance: Mapping[str, Any]
) -> pd.DataFrame:
    """:func:`compare` with a figure's ``crosscheck`` block of ``workflow/config.yaml``.

    The block's ``mark`` (optional) names a sweep dimension whose values the figure
    draws with distinct marker shapes (X10: ``pacing``); it is kept in the table's
    ``attrs["mark"]``.

    Raises
    ------
    ValueError
        When ``mark`` is not a sweep dimension of the figure (naming ``crosscheck.mark``).
    """
    table = compare(
        ns3,
        emulated,
        float(tolerance["utilisation_pp"]),
        float(tolerance["rtt_rel"]),
        total=bool(tolerance.get("total_utilisation", False)),
        utilisation_rel=(
            float(tolerance["utilisation_rel"]) if "utilisation_rel" in tolerance else None
        ),
        transfers=bool(tolerance.get("transfers", False)),
    )
    mark = tolerance.get("mark")
    if mark is not None and mark not in json.loads(ns3.attrs["sweep_dims"]):
        raise ValueError(f"crosscheck.mark: {mark!r} is not a sweep dimension of the figure")
    table.attrs["mark"] = mark
    return table


def check_views(views: Mapping[str, Mapping[str, Mapping[str, float]]]) -> None:
    """Check a ``crosscheck.views`` block before any run.

    Raises ValueError naming the field for a view or a metric the cross-check cannot
    compare, or a tolerance that is neither ``abs`` nor ``factor``.
    """
    for view, wanted in views.items():
        if view not in VIEW_METRICS:
            known = ", ".join(VIEW_METRICS)
            raise ValueError(f"crosscheck.views: {view!r} is not a view it compares ({known})")
        for metric, tolerance in wanted.items():
            if metric not in VIEW_METRICS[view][1]:
                known = ", ".join(VIEW_METRICS[view][1])
                raise ValueError(
                    f"crosscheck.views.{view}: {metric!r} is not one of its metrics ({known})"
                )
            if len(tolerance) != 1 or next(iter(tolerance)) not in ("abs", "factor"):
                raise ValueError(
                    f"crosscheck.views.{view}.{metric}: give one tolerance, abs or factor"
                )


def _view_values(ds: xr.Dataset, view: str, metric: str, dims: list[str]) -> pd.Series:
    function, _ = VIEW_METRICS[view]
    values = function(ds)[metric].mean("rep")
    frame = values.rename("value").to_dataframe(dim_order=dims).reset_index()
    return frame.set_index(dims)["value"] if dims else frame["value"]


def compare_views(
    ns3: xr.Dataset,
    emulated: xr.Dataset | None,
    views: Mapping[str, Mapping[str, Mapping[str, float]]],
) -> pd.DataFrame:
    """The views' metrics of a twin in both backends: one row per (cell, view, metric).

    Each row has both backends' value (mean over repetitions), their difference
    (``abs``: emulated - ns-3) or ratio (``factor``: emulated / ns-3), and whether it
    lies within the stated tolerance.

    Two zeros agree; a zero against a non-zero value does not (a loss probability of
    0 where the other stack lost packets). ``fidelity`` is as in :func:`compare`, or
    ``not measured`` where a backend does not record the metric (drops per flow in an
    emulated run): such a row is neither within nor outside.
    """
    check_views(views)
    dims = json.loads(ns3.attrs["sweep_dims"])
    frames = []
    for view, wanted in views.items():
        for metric, tolerance in wanted.items():
            [(kind, bound)] = tolerance.items()
            left = _view_values(ns3, view, metric, dims).rename("ns3")
            if emulated is None:
                right = left.rename("emu") * np.nan
            else:
                right = _view_values(emulated, view, metric, dims).rename("emu")
            frame = pd.concat([left, right], axis=1, join="outer").reset_index()
            frame = frame[frame["ns3"].notna() | frame["emu"].notna()]
            frame.insert(len(dims), "view", view)
            frame.insert(len(dims) + 1, "metric", metric)
            if kind == "abs":
                frame["difference"] = frame["emu"] - frame["ns3"]
                within = frame["difference"].abs() <= bound
            else:
                frame["difference"] = frame["emu"] / frame["ns3"]
                both_zero = (frame["emu"] == 0) & (frame["ns3"] == 0)
                ratio = np.fmax(frame["difference"], 1.0 / frame["difference"])
                within = both_zero | (ratio <= bound)
            frame["tolerance"] = f"{kind} {bound:g}"
            frame["within"] = within.where(frame["emu"].notna() & frame["ns3"].notna())
            frames.append(frame)
    table = pd.concat(frames).reset_index(drop=True)
    if emulated is not None and "fidelity_ok" in emulated:
        gate = emulated["fidelity_ok"].min("rep").to_dataframe().reset_index()
        table = table.merge(gate[[*dims, "fidelity_ok"]], on=dims, how="left")
    else:
        table["fidelity_ok"] = np.nan
    ran = table["fidelity_ok"].notna()
    table["fidelity"] = np.select(
        [~ran, table["ns3"].isna() | table["emu"].isna(), table["fidelity_ok"] == 1],
        ["not run", "not measured", "ok"],
        "flagged",
    )
    return table.drop(columns="fidelity_ok")


def _provenance(emulated: xr.Dataset) -> str:
    """Route, kernel, accelerator and traffic tools of the emulated runs (for the caption)."""
    if "run_kernel" not in emulated:
        return ""
    kernels = sorted({str(k) for k in emulated["run_kernel"].values.ravel() if k})
    parts = [f"{emulated.attrs.get('route', '?')} route", f"kernel {', '.join(kernels)}"]
    if "vm_accel" in emulated.attrs:
        parts.append(f"QEMU {str(emulated.attrs['vm_accel']).upper()}")
    tool = str(emulated.attrs.get("traffic_tool", "iperf3"))
    # runs that time their stages (``stage_*``, the same change) or name their probe's
    # tool send the probe with their traffic tool; a combined dataset keeps only the
    # attributes its runs share, so any one of these marks it
    probed_by_tool = emulated.attrs.get("probe_tool") == tool or any(
        key.startswith("stage_") for key in emulated.attrs
    )
    if tool == "iperf3":
        parts.append(f"iperf3 {emulated.attrs.get('iperf3_version', '?')}")
    elif probed_by_tool:  # iperf 2 sends the flows and the probe
        parts.append(f"{tool} {emulated.attrs.get('traffic_tool_version', '?')}")
    else:  # runs made before iperf 2 sent the probe too: iperf3 sent the gate's UDP probe
        version = emulated.attrs.get("traffic_tool_version", "?")
        parts.append(
            f"{tool} {version} (probe: iperf3 {emulated.attrs.get('iperf3_version', '?')})"
        )
    if "flow_write_bytes" in emulated.attrs:  # the same for every run of the dataset
        sizes = sorted(set(json.loads(str(emulated.attrs["flow_write_bytes"])).values()))
        parts.append(f"writes of {' and '.join(f'{b / 1024:g} KiB' for b in sizes)}")
    return ", ".join(parts)


def summary(table: pd.DataFrame) -> dict[str, int]:
    """Counts: rows compared, within tolerance (utilisation, RTT), flagged, not run.

    ``compared`` counts the rows that passed the gate, ``rtt_compared`` those of
    them that have an RTT (a cell's total row has none).
    """
    usable = table[table["fidelity"] == "ok"]
    with_rtt = usable[usable["rtt_ok"].notna()]
    return {
        "rows": len(table),
        "compared": len(usable),
        "rtt_compared": len(with_rtt),
        "util_within": int(usable["util_ok"].astype(bool).sum()),
        "rtt_within": int(with_rtt["rtt_ok"].astype(bool).sum()),
        "flagged": int((table["fidelity"] == "flagged").sum()),
        "not_run": int((table["fidelity"] == "not run").sum()),
    }


def _atomic(path: str | os.PathLike[str], text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def write_csv(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """The table as CSV (atomically)."""
    return _atomic(path, table.to_csv(index=False, float_format="%.4g"))


#: a percent sign in LaTeX
_PERCENT = "\\%"


def _fmt(value: float, spec: str, unit: str = "") -> str:
    if value is None or not np.isfinite(value):
        return "--"
    digits = re.search(r"\.(\d+)f", spec)
    if digits and round(value, int(digits.group(1))) == 0:
        value = 0.0  # -0.3 % shows as "+0%", not "-0%"
    return format(value, spec) + unit


def _fmt_ms(value: float) -> str:
    """An RTT in ms, to about three significant digits (8.50, 26.8, 277)."""
    return _fmt(value, ".0f" if abs(value) >= 100 else ".1f" if abs(value) >= 10 else ".2f")


#: how a view's metric is named and printed in the paper's table
_VIEW_LABELS = {
    "jain": ("Jain index", ".3f"),
    "loss_probability": ("loss probability", ".2e"),
    "retransmission_probability": ("retransmitted / sent", ".2e"),
    "queue_fraction": ("mean queue / buffer", ".3f"),
}


def _tolerance_tex(metric: str, tolerance: str) -> str:
    kind, bound = tolerance.split()
    label = _VIEW_LABELS[metric][0]
    return f"{label} $\\pm${bound}" if kind == "abs" else f"{label} within a factor {bound}"


def _longtable(columns: str, caption: str, header: str, rows: list[str]) -> list[str]:
    """A cross-check longtable around its rows.

    The caption (with its label, on the first page only: a table that runs over
    pages repeats its header, not its label), the header and the footnote marking
    the values outside the stated tolerance; ``columns``' length is the table's
    column count.
    """
    # eleven columns (X3's three swept dimensions) overran the text width by 14 pt
    narrow = [r"\setlength{\tabcolsep}{4pt}"] if len(columns) >= 10 else []
    return [
        r"\begingroup\small",
        *narrow,
        r"\begin{longtable}{@{}" + columns + "@{}}",
        caption + r"\\",
        rf"\toprule {header} \\ \midrule",
        r"\endfirsthead",
        rf"\toprule {header} \\ \midrule",
        r"\endhead",
        *rows,
        r"\bottomrule",
        r"\multicolumn{" + str(len(columns)) + r"}{@{}l}{$^\ast$ outside the stated tolerance.}\\",
        r"\end{longtable}",
        r"\endgroup",
    ]


#: a sweep value with a unit (``14ms``, ``16MiB``, ``1Gbps``): printed as the report does
_QUANTITY = re.compile(r"\d[\d.]*[A-Za-z/]+")


def cell_text(table: pd.DataFrame, dim: str, value: object) -> str:
    """A cell's sweep value as the report prints it.

    A flow by its legend name (:func:`flow_label`), a variant by its report name
    (``YeahPaper`` -> ``YeAH``), a quantity with its unit apart (``14ms`` -> ``14 ms``);
    anything else as it is.
    """
    text = str(value)
    if dim == "flow":
        return flow_label(table, text)
    if _QUANTITY.fullmatch(text):
        return format_quantity(text)
    return variant_label(text)


def _head(dims: list[str]) -> str:
    """The sweep columns' header: ``recv_buffer`` -> ``recv buffer``."""
    return " & ".join(tex(d.replace("_", " ")) for d in dims)


def _views_tex(views: pd.DataFrame, figure: str) -> list[str]:
    """The views' table (:func:`compare_views`) as a second longtable."""
    dims = list(views.columns[: list(views.columns).index("view")])
    usable = views[views["fidelity"] == "ok"]
    names = ", ".join(
        f"{view} ({', '.join(_VIEW_LABELS[m][0] for m in group['metric'].unique())})"
        for view, group in views.groupby("view", sort=False)
    )
    pairs = views[["metric", "tolerance"]].drop_duplicates().itertuples(index=False)
    tolerances = "; ".join(_tolerance_tex(metric, tolerance) for metric, tolerance in pairs)
    head = _head(dims)
    star = r"$^\ast$"
    caption = (
        rf"\caption{{\textbf{{{tex(figure)}, its views.}} ns-3 vs emulation on the same runs: "
        rf"{tex(names)} per cell. Tolerance: {tolerances}. Within tolerance: "
        rf"{int(usable['within'].astype(bool).sum())} of {len(usable)} among runs that passed "
        rf"the fidelity gate.}}\label{{tab:crosscheck-{figure}-views}}"
    )
    rows = []
    for _, row in views.iterrows():
        label, spec = _VIEW_LABELS[row["metric"]]
        outside = row["fidelity"] == "ok" and row["within"] is not np.nan and not row["within"]
        if row["tolerance"].startswith("factor"):
            change = _fmt(row["difference"], ".2f")
            change = change if change == "--" else rf"$\times${change}"
        else:
            change = _fmt(row["difference"], "+" + spec)
        cells = " & ".join(tex(cell_text(views, d, row[d])) for d in dims)
        rows.append(
            f"{cells} & {tex(label)} & {_fmt(row['ns3'], spec)} & {_fmt(row['emu'], spec)} & "
            f"{change}{star if outside else ''} & {tex(row['fidelity'])} " + r"\\"
        )
    header = f"{head} & metric & ns-3 & emu. & $\\Delta$ or ratio & gate"
    return _longtable("l" * len(dims) + "lrrrl", caption, header, rows)


def ns3_column(figure: str) -> str:
    """What a cross-check table's ns-3 column is: the twin's own ns-3 runs.

    The rule compares ``data/combined/<figure>.nc`` with its emulated runs: the scenario
    both backends run, not the runs of the catalogue figure it cross-checks. The same
    cell there is another run (the twin's scenario may differ in what its notes state,
    in hosts no flow uses or in its trace interval, and so in its random draws), so its
    values may differ from that figure's though both use the same metrics.
    """
    return (
        f"The ns-3 column: {figure}'s own ns-3 runs of the scenario both backends run, not "
        "the runs of the figure it cross-checks, whose values for the same cell may differ "
        "(other runs: other random draws, and what the twin's notes change)."
    )


def write_tex(
    table: pd.DataFrame,
    path: str | os.PathLike[str],
    figure: str,
    views: pd.DataFrame | None = None,
) -> Path:
    """The table as a LaTeX longtable for the paper (atomically).

    With ``views`` (:func:`compare_views`), a second longtable of the views' metrics
    follows it.
    """
    dims = [c for c in table.columns if c not in _VALUE_COLUMNS]
    counts = summary(table)
    tol_pp, tol_rtt = table.attrs["utilisation_pp"], table.attrs["rtt_rel"]
    tol_rel = table.attrs.get("utilisation_rel")
    tol_util = rf"$\pm${tol_pp:g} percentage points" + (
        rf" and $\pm${tol_rel * 100:g}\% of the ns-3 value" if tol_rel is not None else ""
    )
    head = _head(dims)
    rel_head = r" (\%)" if tol_rel is not None else ""
    caption = (
        rf"\caption{{\textbf{{{tex(figure)}.}} ns-3 vs emulation ({tex(emulation_name(table))}): "
        rf"utilisation (\%) and mean RTT (ms) per flow. {tex(ns3_column(figure))} "
        rf"Tolerance: {tol_util}, "
        rf"$\pm${tol_rtt * 100:g}\% RTT. Within tolerance: {counts['util_within']} of "
        rf"{counts['compared']} utilisations, {counts['rtt_within']} of {counts['rtt_compared']} "
        rf"RTTs among runs that passed the fidelity gate; {counts['flagged']} rows flagged by the "
        rf"gate, {counts['not_run']} not run (variant not offered by the kernel). "
        rf"Emulation: {tex(table.attrs.get('provenance', ''))}.}}"
        rf"\label{{tab:crosscheck-{figure}}}"
    )
    header = (
        rf"{head} & ns-3 & emu. & $\Delta$ pp{rel_head} & RTT ns-3 & RTT emu. & $\Delta$ RTT & gate"
    )
    rows = []
    for _, row in table.iterrows():
        outside = row["fidelity"] == "ok"
        mark_u = (
            r"$^\ast$" if outside and row["util_ok"] is not np.nan and not row["util_ok"] else ""
        )
        mark_r = r"$^\ast$" if outside and row["rtt_ok"] is not np.nan and not row["rtt_ok"] else ""
        cells = " & ".join(tex(cell_text(table, d, row[d])) for d in dims)
        util = f"{_fmt(row['ns3_util_pct'], '.1f')} & {_fmt(row['emu_util_pct'], '.1f')}"
        rtt = f"{_fmt_ms(row['ns3_rtt_ms'])} & {_fmt_ms(row['emu_rtt_ms'])}"
        diff = _fmt(row["diff_pp"], "+.1f")
        if tol_rel is not None and np.isfinite(row["util_rel"]):  # the bound that may bind
            diff += f" ({_fmt(row['util_rel'] * 100, '+.0f', unit=_PERCENT)})"
        rows.append(
            f"{cells} & {util} & {diff}{mark_u} & {rtt} & "
            f"{_fmt(row['rtt_diff_rel'] * 100, '+.0f', unit=_PERCENT)}{mark_r} & "
            rf"{tex(row['fidelity'])} \\"
        )
    lines = _longtable("l" * len(dims) + "rrrrrrl", caption, header, rows)
    if views is not None and len(views):
        lines += _views_tex(views, figure)
    return _atomic(path, "\n".join(lines) + "\n")


_VALUE_COLUMNS = {
    "ns3_util_pct",
    "ns3_rtt_ms",
    "emu_util_pct",
    "emu_rtt_ms",
    "fidelity_ok",
    "diff_pp",
    "util_rel",
    "rtt_diff_rel",
    "util_ok",
    "rtt_ok",
    "fidelity",
}
