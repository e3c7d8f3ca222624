"""Checks of study A's claims (Braud & Heusse, antiparallel TCP).

Each function reads the combined datasets of figures A1/A2 (dimensions
``up``, ``down``, ``rep``) and returns a :class:`~tcprepro.claims.ClaimResult`.
Cells whose runs are missing (pending models) are NaN and are left out of
the verdict, and named in the coverage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from tcprepro.analysis.study_a import (
    cell_mechanism,
    cell_table,
    matched_mean,
    pick,
    response_summary,
    response_times,
)
from tcprepro.claims import ClaimResult, check, explainer


def _pm(mean: float, std: float) -> str:
    """``mean ± std``, or the mean alone when there is no spread to state (one repetition)."""
    return f"{mean:.0f} ± {std:.0f}" if np.isfinite(std) else f"{mean:.0f}"


def _coverage(values: xr.DataArray) -> tuple[int, int, str]:
    flat = values.stack(cell=values.dims)
    available = int(np.isfinite(flat).sum())
    total = int(flat.size)
    missing = sorted(
        {
            str(v)
            for cell, ok in zip(flat["cell"].values, np.isfinite(flat.values), strict=True)
            if not ok
            for v in cell
        }
    )
    text = f"{available}/{total} cells"
    if available < total:
        text += " (missing cells involve: " + ", ".join(missing) + ")"
    return available, total, text


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "not reproduced"


def _name(cell: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in cell.items())


@check
def a_download_utilisation_high(
    data: Mapping[str, xr.Dataset], figure: str, exclude_down: Sequence[str], min_pct: float
) -> ClaimResult:
    """Every non-excluded download variant reaches ``min_pct`` download utilisation."""
    table = cell_table(data[figure])
    down = table["down_pct"].where(~table["down"].isin(list(exclude_down)), drop=True)
    available, _, coverage = _coverage(down)
    if available == 0:
        return ClaimResult("—", "pending", coverage)
    stacked = down.stack(cell=("up", "down")).dropna("cell")
    worst = stacked.isel(cell=int(np.argmin(stacked.values)))
    up, dn = worst["cell"].item()
    value = f"min {float(worst):.0f} % (up={up}, down={dn}); mean {float(stacked.mean()):.0f} %"
    return ClaimResult(
        value,
        _verdict(float(worst) >= min_pct),
        coverage,
        statistic=("lowest download utilisation (%)", float(worst)),
    )


@check
def a_cubic_compound_lowest(data: Mapping[str, xr.Dataset], figure: str) -> ClaimResult:
    """The (Compound up, Cubic down) cell is the worst and most variable download."""
    table = cell_table(data[figure])
    target = {"up": "Compound", "down": "Cubic"}
    cell_mean = float(pick(table["down_pct"], **target))
    if not np.isfinite(cell_mean):
        return ClaimResult("—", "pending", "the (up=Compound, down=Cubic) cell has no run")
    non_vegas = table.where(table["down"] != "Vegas", drop=True)
    means = non_vegas["down_pct"].stack(cell=("up", "down")).dropna("cell")
    stds = non_vegas["down_std"].stack(cell=("up", "down")).dropna("cell")
    lowest = means.isel(cell=int(np.argmin(means.values)))["cell"].item()
    cell_std = float(pick(table["down_std"], **target))
    median_std = float(stds.median())
    ok = lowest == ("Compound", "Cubic") and cell_std >= 2 * median_std
    value = (
        f"{_pm(cell_mean, cell_std)} %; lowest cell: up={lowest[0]}, down={lowest[1]}; "
        f"median std {median_std:.1f}"
    )
    _, _, coverage = _coverage(means.unstack("cell"))
    return ClaimResult(
        value,
        _verdict(ok),
        coverage,
        statistic=("download utilisation of up=Compound, down=Cubic (%)", cell_mean),
    )


@check
def a_cubic_cuts_upload(
    data: Mapping[str, xr.Dataset], figure: str, min_pct: float, max_pct: float
) -> ClaimResult:
    """Relative drop of upload utilisation when the download switches NewReno -> Cubic."""
    table = cell_table(data[figure])
    reference = pick(table["up_pct"], down="NewReno")
    cubic = pick(table["up_pct"], down="Cubic")
    drop = (1.0 - cubic / reference) * 100.0
    available, _, coverage = _coverage(drop)
    if available == 0:
        return ClaimResult("—", "pending", coverage)
    valid = drop.dropna("up")
    worst_up = str(valid["up"].values[int(np.argmax(valid.values))])
    largest = float(valid.max())
    parts = ", ".join(
        f"{u}: {float(v):+.0f} %" for u, v in zip(valid["up"].values, -valid.values, strict=True)
    )
    value = f"largest drop {largest:.0f} % (up={worst_up}); change per upload variant: {parts}"
    return ClaimResult(
        value,
        _verdict(min_pct <= largest <= max_pct),
        coverage,
        statistic=("largest upload drop (%)", largest),
    )


@check
def a_vegas_download_collapses(
    data: Mapping[str, xr.Dataset], figures: Sequence[str], max_ratio: float
) -> ClaimResult:
    """Download utilisation with Vegas vs NewReno on the server, per non-Vegas upload."""
    ratios = []
    parts = []
    coverages = []
    for figure in figures:
        table = cell_table(data[figure])
        missing = [v for v in ("Vegas", "NewReno") if v not in table["down"].values]
        if missing:
            coverages.append(f"{figure}: no {' or '.join(missing)} download in this build")
            continue
        ratio = pick(table["down_pct"], down="Vegas") / pick(table["down_pct"], down="NewReno")
        ratio = ratio.where(ratio["up"] != "Vegas", drop=True)
        _, _, coverage = _coverage(ratio)
        coverages.append(f"{figure}: {coverage}")
        for up, value in zip(ratio["up"].values, ratio.values, strict=True):
            if np.isfinite(value):
                ratios.append(float(value))
                parts.append(f"{figure} up={up}: {value:.2f}")
    if not ratios:
        return ClaimResult("—", "pending", "; ".join(coverages))
    value = "Vegas/NewReno download ratio " + ", ".join(parts)
    return ClaimResult(
        value,
        _verdict(max(ratios) <= max_ratio),
        "; ".join(coverages),
        statistic=("largest Vegas/NewReno download ratio", max(ratios)),
    )


@check
def a_cell_utilisation(
    data: Mapping[str, xr.Dataset],
    figure: str,
    up: str,
    down: str,
    expected_up_pct: float,
    expected_down_pct: float,
    tolerance_pct: float,
) -> ClaimResult:
    """Utilisation of one cell against the paper's two values."""
    table = cell_table(data[figure])
    up_pct = float(pick(table["up_pct"], up=up, down=down))
    down_pct = float(pick(table["down_pct"], up=up, down=down))
    if not (np.isfinite(up_pct) and np.isfinite(down_pct)):
        return ClaimResult("—", "pending", f"cell up={up}, down={down} has no run")
    ok = (
        abs(up_pct - expected_up_pct) <= tolerance_pct
        and abs(down_pct - expected_down_pct) <= tolerance_pct
    )
    up_std = float(pick(table["up_std"], up=up, down=down))
    down_std = float(pick(table["down_std"], up=up, down=down))
    value = f"up {_pm(up_pct, up_std)} %, down {_pm(down_pct, down_std)} %"
    distance = max(abs(up_pct - expected_up_pct), abs(down_pct - expected_down_pct))
    return ClaimResult(
        value,
        _verdict(ok),
        "1/1 cells",
        statistic=("largest distance to the paper's values (points)", distance),
    )


@check
def a_vegas_upload_helps_download(
    data: Mapping[str, xr.Dataset], figure: str, min_gain_pct: float
) -> ClaimResult:
    """Download utilisation gain (points) of a Vegas upload over a NewReno upload."""
    table = cell_table(data[figure])
    gain = pick(table["down_pct"], up="Vegas") - pick(table["down_pct"], up="NewReno")
    gain = gain.where(gain["down"] != "Vegas", drop=True)
    available, _, coverage = _coverage(gain)
    if available == 0:
        return ClaimResult("—", "pending", coverage)
    valid = gain.dropna("down")
    parts = ", ".join(
        f"down={d}: {float(v):+.0f} pts"
        for d, v in zip(valid["down"].values, valid.values, strict=True)
    )
    return ClaimResult(
        parts,
        _verdict(float(valid.min()) >= min_gain_pct),
        coverage,
        statistic=("smallest download gain (points)", float(valid.min())),
    )


@check
def a_rtt_levels(data: Mapping[str, xr.Dataset], sized: str, oversized: str) -> ClaimResult:
    """The four RTT statements of the paper (see the registry's tolerance)."""
    small = cell_table(data[sized])["rtt_ms"]
    large = cell_table(data[oversized])["rtt_ms"]

    def no_vegas(rtt: xr.DataArray) -> xr.DataArray:
        return rtt.where((rtt["up"] != "Vegas") & (rtt["down"] != "Vegas"))

    a = no_vegas(small)
    base = float(pick(small, up="NewReno", down="NewReno"))
    b = pick(no_vegas(small), down="Cubic") / base - 1.0
    c = no_vegas(large)
    d = pick(large, up="Vegas")

    def part(
        label: str,
        values: xr.DataArray,
        low: float,
        high: float,
        scale: float = 1.0,
        unit: str = "ms",
    ) -> tuple[str, str]:
        finite = values.values[np.isfinite(values.values)]
        if finite.size == 0:
            return f"{label}: no cell in this build", "pending"
        ok = bool(((finite >= low) & (finite <= high)).all())
        text = f"{label} {finite.min() * scale:.0f} to {finite.max() * scale:.0f} {unit}"
        return text + ("" if ok else " (outside)"), "pass" if ok else "fail"

    parts = {
        "a": part("A1 non-Vegas", a, 190, 310),
        "b": part("Cubic download vs NewReno", b, 0.0, 0.25, 100.0, "%"),
        "c": part("A2 non-Vegas", c, 540, 880),
        "d": part("A2 Vegas upload", d, 0, 310),
    }
    statuses = [status for _, status in parts.values()]
    value = "; ".join(f"({k}) {text}" for k, (text, _) in parts.items())
    _, _, cov_small = _coverage(small)
    _, _, cov_large = _coverage(large)
    coverage = f"{sized}: {cov_small}; {oversized}: {cov_large}"
    pending = [k for k, (_, status) in parts.items() if status == "pending"]
    if pending:
        coverage += f"; parts not checkable: {', '.join(pending)}"
    if all(status == "pending" for status in statuses):
        return ClaimResult(value, "pending", coverage)
    return ClaimResult(value, _verdict("fail" not in statuses), coverage)


@check
def a_response_oversized_and_vegas_upload(
    data: Mapping[str, xr.Dataset],
    sized: str,
    oversized: str,
    load: float,
    min_ratio: float,
    max_ratio: float,
) -> ClaimResult:
    """(a) A4/A3 mean response time ratio per pair; (b) the Vegas upload is fastest."""
    small, large = response_times(data[sized], load), response_times(data[oversized], load)
    if small.ndim == 0 or large.ndim == 0:
        return ClaimResult("—", "pending", f"no run at load {load}")
    ratios = {}
    for up in small["up"].values:
        for down in small["down"].values:
            a = pick(small, up=str(up), down=str(down))
            b = pick(large, up=str(up), down=str(down))
            mean_a, mean_b = matched_mean(a, b, dims=a.dims)
            if np.isfinite(mean_a) and np.isfinite(mean_b):
                ratios[(str(up), str(down))] = mean_b / mean_a
    if not ratios:
        return ClaimResult("—", "pending", "no (upload, download) pair ran in both figures")
    worst = max(ratios, key=ratios.get)
    part_a = min_ratio <= ratios[worst] <= max_ratio
    fastest, checked = [], 0
    for figure, rt in ((sized, small), (oversized, large)):
        for down in rt["down"].values:
            cells = {str(up): pick(rt, up=str(up), down=str(down)) for up in rt["up"].values}
            cells = {up: v for up, v in cells.items() if np.isfinite(v).any()}
            if "Vegas" not in cells or len(cells) < 2:
                continue
            means = dict(
                zip(
                    cells,
                    matched_mean(*cells.values(), dims=next(iter(cells.values())).dims),
                    strict=True,
                )
            )
            best = min(means, key=means.get)
            checked += 1
            if best != "Vegas":
                fastest.append(f"{figure} down={down}: {best}")
    part_b = checked > 0 and not fastest
    value = (
        f"(a) A4/A3 ratio {min(ratios.values()):.2f}-{ratios[worst]:.2f} "
        f"(largest: up={worst[0]}, down={worst[1]}); (b) Vegas upload fastest in "
        f"{checked - len(fastest)}/{checked} cases"
        + (f" (not: {', '.join(fastest)})" if fastest else "")
    )
    coverage = f"{len(ratios)} (upload, download) pairs at load {load:g}"
    statistic = ("largest A4/A3 mean response time ratio", ratios[worst])
    if checked == 0:
        return ClaimResult(
            value, _verdict(part_a), coverage + "; (b) not checkable", statistic=statistic
        )
    return ClaimResult(value, _verdict(part_a and part_b), coverage, statistic=statistic)


@check
def a_vegas_download_response(
    data: Mapping[str, xr.Dataset], figure: str, load: float
) -> ClaimResult:
    """Mean response time of Vegas downloads relative to Compound, NewReno and Cubic ones."""
    rt = response_times(data[figure], load)
    if rt.ndim == 0:
        return ClaimResult("—", "pending", f"no run at load {load}")
    bounds = {"Compound": (0.35, 0.65), "NewReno": (0.65, 0.95), "Cubic": (0.65, 0.95)}
    vegas = pick(rt, down="Vegas")
    if not np.isfinite(vegas).any():
        return ClaimResult("—", "pending", "no Vegas download in this build")
    parts, statuses = [], []
    statistic = None
    for other, (low, high) in bounds.items():
        cell = pick(rt, down=other)
        if not np.isfinite(cell).any():
            parts.append(f"vs {other}: pending")
            statuses.append("pending")
            continue
        mean_vegas, mean_other = matched_mean(vegas, cell, dims=vegas.dims)
        ratio = mean_vegas / mean_other
        if statistic is None:
            statistic = (f"Vegas/{other} mean response time ratio", ratio)
        ok = low <= ratio <= high
        parts.append(f"vs {other}: {ratio:.2f}{'' if ok else ' (outside)'}")
        statuses.append("pass" if ok else "fail")
    value = "Vegas/other mean response time " + "; ".join(parts)
    pending = [p for p, st in zip(bounds, statuses, strict=True) if st == "pending"]
    coverage = f"load {load:g}" + (f"; pending: {', '.join(pending)}" if pending else "")
    if all(st == "pending" for st in statuses):
        return ClaimResult(value, "pending", coverage)
    return ClaimResult(value, _verdict("fail" not in statuses), coverage, statistic=statistic)


@explainer
def a_explain_traces(
    data: Mapping[str, xr.Dataset], cells: Sequence[Mapping[str, str]], figures: str = ""
) -> str:
    """What the traces of some cells show: queues, queueing delays, RTTs, losses.

    For each cell (``figure``, ``up``, ``down``): the mean occupancy of each direction's
    queue over the measurement window (packets, share of the buffer, and the queueing
    delay it implies at the link rate), the mean RTT of each flow, the data loss rate
    of each flow and the ACKs of the download dropped in the uplink queue.
    """
    parts = []
    for cell in cells:
        ds = data.get(cell["figure"])
        if ds is None or cell["up"] not in ds["up"].values or cell["down"] not in ds["down"].values:
            continue
        run = ds.sel(up=cell["up"], down=cell["down"])
        stats = cell_mechanism(run)
        queue_pkts, delay_ms = stats["queue_pkts"], stats["queue_delay_ms"]
        rtt_ms, loss, acks = stats["rtt_ms"], stats["loss_pct"], stats["lost_acks_down"]
        if not np.isfinite(loss.values).any():  # an emulated run: no drops per flow
            loss, lost = stats["retx_pct"], "retransmitted"
        else:
            lost = "data loss"
        queues = ", ".join(
            f"{link} queue {float(queue_pkts.sel(link=link)):.0f} of "
            f"{int(run['link_buffer_pkts'].isel(rep=0).sel(link=link))} packets "
            f"({float(delay_ms.sel(link=link)):.0f} ms of queueing)"
            for link in ("down", "up")
        )
        parts.append(
            f"{cell['figure']} (up={cell['up']}, down={cell['down']}): {queues}; "
            f"RTT {float(rtt_ms.sel(flow='down')):.0f} ms (download) and "
            f"{float(rtt_ms.sel(flow='up')):.0f} ms (upload); {lost} "
            f"{float(loss.sel(flow='down')):.2f} % (download) and "
            f"{float(loss.sel(flow='up')):.2f} % (upload); "
            + (
                f"{acks:.0f} ACKs of the download dropped per run in the uplink queue"
                if np.isfinite(acks)
                else "ACK drops not recorded per flow"
            )
        )
    if not parts:
        return ""
    where = f" (traces: Figures {figures})" if figures else ""
    return "Mean over the measurement window" + where + ": " + "; ".join(parts) + "."


@explainer
def a_explain_response(
    data: Mapping[str, xr.Dataset], figures: Sequence[str], load: float, uploads: Sequence[str]
) -> str:
    """What the transfers of A3/A4 show: completed and censored transfers, response times.

    For each figure and each upload variant of ``uploads``, per download variant: the
    completed and censored transfers (repetitions pooled) and the mean response time of
    the short (< 100 kB), medium and long (> 1 MB) ones.
    """
    parts = []
    for figure in figures:
        if figure not in data:
            continue
        table = response_summary(data[figure], load)
        if table.empty:
            continue
        for _, row in table[table["up"].isin(list(uploads))].iterrows():
            means = ", ".join(
                f"{name} {row[f'mean_s_{name}']:.2f} s (n={row[f'n_{name}']})"
                if row[f"n_{name}"]
                else f"{name} none"
                for name in ("<100kB", "100kB-1MB", ">1MB")
            )
            parts.append(
                f"{figure} up={row['up']}, down={row['down']}: {row['completed']} completed, "
                f"{row['censored']} censored; mean response {means}"
            )
    if not parts:
        return ""
    return f"Transfers at load {load:g}, repetitions pooled: " + "; ".join(parts) + "."
