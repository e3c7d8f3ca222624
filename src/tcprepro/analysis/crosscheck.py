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
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro import metrics
from tcprepro.analysis.common import transfers_carried_load
from tcprepro.latex import escape as tex

__all__ = ["TOTAL", "compare", "compare_figure", "summary", "write_csv", "write_tex"]

#: the ``flow`` of a cell's total-utilisation row
TOTAL = "total"


#: flow kinds of generated traffic (tcprepro.traffic): not compared flow by flow
GENERATED_KINDS = ("transfers", "packets")


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
    return frame


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


def write_tex(table: pd.DataFrame, path: str | os.PathLike[str], figure: str) -> Path:
    """The table as a LaTeX longtable for the paper (atomically)."""
    dims = [c for c in table.columns if c not in _VALUE_COLUMNS]
    counts = summary(table)
    tol_pp, tol_rtt = table.attrs["utilisation_pp"], table.attrs["rtt_rel"]
    tol_rel = table.attrs.get("utilisation_rel")
    tol_util = rf"$\pm${tol_pp:g} percentage points" + (
        rf" and $\pm${tol_rel * 100:g}\% of the ns-3 value" if tol_rel is not None else ""
    )
    head = " & ".join(tex(d) for d in dims)
    rel_head = r" (\%)" if tol_rel is not None else ""
    lines = [
        r"\begingroup\small",
        r"\begin{longtable}{@{}" + "l" * len(dims) + "rrrrrrl@{}}",
        rf"\caption{{\textbf{{{tex(figure)}.}} ns-3 vs emulation (Mininet, real Linux TCP): "
        rf"utilisation (\%) and mean RTT (ms) per flow. Tolerance: {tol_util}, "
        rf"$\pm${tol_rtt * 100:g}\% RTT. Within tolerance: {counts['util_within']} of "
        rf"{counts['compared']} utilisations, {counts['rtt_within']} of {counts['rtt_compared']} "
        rf"RTTs among runs that passed the fidelity gate; {counts['flagged']} rows flagged by the "
        rf"gate, {counts['not_run']} not run (variant not offered by the kernel). "
        rf"Emulation: {tex(table.attrs.get('provenance', ''))}.}}"
        rf"\label{{tab:crosscheck-{figure}}}\\",
        rf"\toprule {head} & ns-3 & emu. & $\Delta$ pp{rel_head} & RTT ns-3 & RTT emu. & "
        r"$\Delta$ RTT & "
        r"gate \\ \midrule",
        r"\endhead",
    ]
    for _, row in table.iterrows():
        outside = row["fidelity"] == "ok"
        mark_u = (
            r"$^\ast$" if outside and row["util_ok"] is not np.nan and not row["util_ok"] else ""
        )
        mark_r = r"$^\ast$" if outside and row["rtt_ok"] is not np.nan and not row["rtt_ok"] else ""
        cells = " & ".join(tex(str(row[d])) for d in dims)
        util = f"{_fmt(row['ns3_util_pct'], '.1f')} & {_fmt(row['emu_util_pct'], '.1f')}"
        rtt = f"{_fmt_ms(row['ns3_rtt_ms'])} & {_fmt_ms(row['emu_rtt_ms'])}"
        diff = _fmt(row["diff_pp"], "+.1f")
        if tol_rel is not None and np.isfinite(row["util_rel"]):  # the bound that may bind
            diff += f" ({_fmt(row['util_rel'] * 100, '+.0f', unit=_PERCENT)})"
        lines.append(
            f"{cells} & {util} & {diff}{mark_u} & {rtt} & "
            f"{_fmt(row['rtt_diff_rel'] * 100, '+.0f', unit=_PERCENT)}{mark_r} & "
            rf"{tex(row['fidelity'])} \\"
        )
    lines += [
        r"\bottomrule",
        r"\multicolumn{" + str(len(dims) + 7) + r"}{@{}l}{$^\ast$ outside the stated tolerance.}\\",
        r"\end{longtable}",
        r"\endgroup",
    ]
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
