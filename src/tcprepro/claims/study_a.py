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
    MIN_BIN_TRANSFERS,
    binned_means,
    cell_mechanism,
    cell_table,
    matched_mean,
    pick,
    response_summary,
    response_times,
    size_edges,
    slow_start_limit_bytes,
)
from tcprepro.claims import ClaimResult, check, explainer
from tcprepro.claims.glossary import count


def _pm(mean: float, std: float) -> str:
    """``mean ± std``, or the mean alone when there is no spread to state (one repetition)."""
    return f"{mean:.0f} ± {std:.0f}" if np.isfinite(std) else f"{mean:.0f}"


def _coverage(values: xr.DataArray) -> tuple[int, int, str]:
    """(cells with a value, cells, their text) of a table or of its stacked ``cell``s."""
    flat = values if values.dims == ("cell",) else values.stack(cell=values.dims)
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
    text = count(available, total)
    if available < total:
        text += " (missing cells involve: " + ", ".join(missing) + ")"
    return available, total, text


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "not reproduced"


def _holds(held: int, cases: int, min_share: float) -> bool:
    """``held`` of ``cases`` suffice: every one (share 1), else more than ``min_share``."""
    if cases == 0:
        return False
    return held == cases if min_share >= 1.0 else held > min_share * cases


def _name(cell: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in cell.items())


@check
def a_download_utilisation_high(
    data: Mapping[str, xr.Dataset],
    figure: str,
    exclude_down: Sequence[str],
    min_pct: float,
    except_cells: Sequence[Mapping[str, str]] = (),
) -> ClaimResult:
    """Every non-excluded download variant reaches ``min_pct`` download utilisation.

    ``except_cells``: (up, down) cells the paper's paragraph singles out (reading rule R5).
    """
    table = cell_table(data[figure])
    down = table["down_pct"].where(~table["down"].isin(list(exclude_down)), drop=True)
    judged = down.stack(cell=("up", "down"))
    excepted = [(c["up"], c["down"]) for c in except_cells]
    judged = judged.isel(cell=[i for i, c in enumerate(judged["cell"].values) if c not in excepted])
    available, _, coverage = _coverage(judged)
    if available == 0:
        return ClaimResult("—", "not run", coverage)
    stacked = judged.dropna("cell")
    worst = stacked.isel(cell=int(np.argmin(stacked.values)))
    up, dn = worst["cell"].item()
    value = f"min {float(worst):.0f} % (up={up}, down={dn}); mean {float(stacked.mean()):.0f} %"
    if except_cells:
        value += "; the cell" + "s" * (len(except_cells) > 1) + " the paper excepts left out: "
        value += ", ".join(f"up={c['up']}, down={c['down']}" for c in except_cells)
    return ClaimResult(
        value,
        _verdict(float(worst) >= min_pct),
        coverage,
        statistic=("lowest download utilisation (%)", float(worst)),
        bounds=(float(min_pct), None),
    )


@check
def a_cubic_compound_lowest(
    data: Mapping[str, xr.Dataset], figure: str, std_factor: float = 2.0, tie: float = 0.0
) -> ClaimResult:
    """The (Compound up, Cubic down) cell is the worst and a variable download.

    Lowest: its mean is the smallest, or within ``tie`` (relative) of it (reading rule R8);
    variable: its standard deviation is more than ``std_factor`` times the median's (R6).
    """
    table = cell_table(data[figure])
    target = {"up": "Compound", "down": "Cubic"}
    cell_mean = float(pick(table["down_pct"], **target))
    if not np.isfinite(cell_mean):
        return ClaimResult("—", "not run", "the (up=Compound, down=Cubic) cell has no run")
    non_vegas = table.where(table["down"] != "Vegas", drop=True)
    means = non_vegas["down_pct"].stack(cell=("up", "down")).dropna("cell")
    stds = non_vegas["down_std"].stack(cell=("up", "down")).dropna("cell")
    lowest = means.isel(cell=int(np.argmin(means.values)))["cell"].item()
    cell_std = float(pick(table["down_std"], **target))
    median_std = float(stds.median())
    is_lowest = cell_mean <= float(means.min()) * (1.0 + tie)
    ok = is_lowest and cell_std > std_factor * median_std
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
        return ClaimResult("—", "not run", coverage)
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
        bounds=(float(min_pct), float(max_pct)),
    )


@check
def a_vegas_download_collapses(
    data: Mapping[str, xr.Dataset],
    figures: Sequence[str],
    max_ratio: float,
    min_share: float = 1.0,
) -> ClaimResult:
    """Download utilisation with Vegas vs NewReno on the server, per non-Vegas upload.

    Holds when the ratio is at most ``max_ratio`` in more than ``min_share`` of the
    (figure, upload) cases (1.0: in every case; 0.5: more than half, reading rule R4).
    """
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
        return ClaimResult("—", "not run", "; ".join(coverages))
    held = sum(r <= max_ratio for r in ratios)
    value = (
        "Vegas/NewReno download ratio "
        + ", ".join(parts)
        + f"; at most {max_ratio:g} in {held} of {len(ratios)} cases"
    )
    return ClaimResult(
        value,
        _verdict(_holds(held, len(ratios), min_share)),
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
        return ClaimResult("—", "not run", f"cell up={up}, down={down} has no run")
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
        count(1, 1),
        statistic=("largest distance to the paper's values (points)", distance),
        bounds=(None, float(tolerance_pct)),
    )


@check
def a_vegas_upload_helps_download(
    data: Mapping[str, xr.Dataset], figure: str, min_gain_pct: float, min_share: float = 1.0
) -> ClaimResult:
    """Download utilisation gain (points) of a Vegas upload over a NewReno upload.

    Holds when the gain exceeds ``min_gain_pct`` in more than ``min_share`` of the
    download variants (1.0: every one; 0.5: more than half, reading rule R4).
    """
    table = cell_table(data[figure])
    gain = pick(table["down_pct"], up="Vegas") - pick(table["down_pct"], up="NewReno")
    gain = gain.where(gain["down"] != "Vegas", drop=True)
    available, _, coverage = _coverage(gain)
    if available == 0:
        return ClaimResult("—", "not run", coverage)
    valid = gain.dropna("down")
    parts = ", ".join(
        f"down={d}: {float(v):+.0f} pts"
        for d, v in zip(valid["down"].values, valid.values, strict=True)
    )
    held = int((valid > min_gain_pct).sum())
    return ClaimResult(
        f"{parts}; above {min_gain_pct:g} points in {held} of {valid.size} download variants",
        _verdict(_holds(held, int(valid.size), min_share)),
        coverage,
        statistic=("smallest download gain (points)", float(valid.min())),
    )


@check
def a_rtt_levels(
    data: Mapping[str, xr.Dataset],
    sized: str,
    oversized: str,
    sized_ms: Sequence[float] = (190, 310),
    cubic_pct: Sequence[float] = (0, 25),
    oversized_ms: Sequence[float] = (540, 880),
    vegas_ratio: Sequence[float] | None = None,
    vegas_max_ms: float = 310,
    min_share: float = 1.0,
) -> ClaimResult:
    """The four RTT statements of the paper (see the registry's tolerance).

    (a) the sized buffer's non-Vegas cells within ``sized_ms``; (b) cells with a CUBIC
    flow (either side, no Vegas) above NewReno/NewReno by ``cubic_pct``; (c) the oversized
    buffer's non-Vegas cells within ``oversized_ms``: each in more than ``min_share`` of its
    cells (1.0: every cell); (d) every Vegas-upload cell of the oversized buffer within
    ``vegas_ratio`` of the same cell with the sized buffer ("identical", reading rule R9),
    or, without ``vegas_ratio``, below ``vegas_max_ms``.
    """
    small = cell_table(data[sized])["rtt_ms"]
    large = cell_table(data[oversized])["rtt_ms"]

    def no_vegas(rtt: xr.DataArray) -> xr.DataArray:
        return rtt.where((rtt["up"] != "Vegas") & (rtt["down"] != "Vegas"))

    def with_cubic(rtt: xr.DataArray) -> xr.DataArray:
        return no_vegas(rtt).where((rtt["up"] == "Cubic") | (rtt["down"] == "Cubic"))

    base = float(pick(small, up="NewReno", down="NewReno"))
    if vegas_ratio is None:
        b = pick(no_vegas(small), down="Cubic") / base - 1.0
        d, d_range = pick(large, up="Vegas"), (0, vegas_max_ms)
    else:
        b = with_cubic(small) / base - 1.0
        d, d_range = pick(large, up="Vegas") / pick(small, up="Vegas"), tuple(vegas_ratio)

    def part(
        label: str,
        values: xr.DataArray,
        bounds: Sequence[float],
        share: float,
        scale: float = 1.0,
        unit: str = " ms",
        open_low: bool = False,
    ) -> tuple[str, str]:
        finite = values.values[np.isfinite(values.values)]
        if finite.size == 0:
            return f"{label}: no cell in this build", "not run"
        low, high = bounds
        inside = (finite > low if open_low else finite >= low) & (finite <= high)
        ok = _holds(int(inside.sum()), int(finite.size), share)
        digits = 2 if unit == "" else 0
        low_text = f"{finite.min() * scale:.{digits}f}"
        high_text = f"{finite.max() * scale:.{digits}f}"
        span = low_text if low_text == high_text else f"{low_text} to {high_text}"
        text = f"{label} {span}{unit}"
        if share < 1.0 or not ok:
            text += f" ({int(inside.sum())} of {finite.size} inside)"
        return text, "pass" if ok else "fail"

    parts = {
        "a": part("A1 non-Vegas", no_vegas(small), sized_ms, min_share),
        "b": part(
            "CUBIC vs NewReno/NewReno",
            b,
            [v / 100 for v in cubic_pct],
            min_share,
            100.0,
            " %",
            open_low=vegas_ratio is not None,
        ),
        "c": part("A2 non-Vegas", no_vegas(large), oversized_ms, min_share),
        "d": part(
            "A2/A1 Vegas upload" if vegas_ratio is not None else "A2 Vegas upload",
            d,
            d_range,
            1.0,
            unit="" if vegas_ratio is not None else " ms",
        ),
    }
    statuses = [status for _, status in parts.values()]
    value = "; ".join(f"({k}) {text}" for k, (text, _) in parts.items())
    _, _, cov_small = _coverage(small)
    _, _, cov_large = _coverage(large)
    coverage = f"{sized}: {cov_small}; {oversized}: {cov_large}"
    pending = [k for k, (_, status) in parts.items() if status == "not run"]
    if pending:
        coverage += f"; parts not checkable: {', '.join(pending)}"
    if all(status == "not run" for status in statuses):
        return ClaimResult(value, "not run", coverage)
    return ClaimResult(value, _verdict("fail" not in statuses), coverage)


def _transfer_sizes(ds: xr.Dataset, load: float) -> xr.DataArray:
    sizes = ds["transfer_size_bytes"]
    if "load" in sizes.dims:
        loads = np.asarray(ds["load"].values, dtype=float)
        sizes = sizes.sel(load=ds["load"].values[np.isclose(loads, load)][0])
    return sizes


@check
def a_response_oversized_and_vegas_upload(
    data: Mapping[str, xr.Dataset],
    sized: str,
    oversized: str,
    load: float,
    min_ratio: float,
    max_ratio: float | None = None,
    min_share: float = 1.0,
    tie: float = 0.0,
) -> ClaimResult:
    """(a) A4/A3 response time ratio; (b) the Vegas upload gives the fastest downloads.

    Read on the size-conditional curves (mean response time per size bin of the figures,
    bins with at least :data:`MIN_BIN_TRANSFERS` transfers completed in every cell
    compared, the same transfers in each): (a) the largest A4/A3 ratio over (upload,
    download) pairs and bins reaches ``min_ratio`` (and stays under ``max_ratio`` when
    given); (b) in more than ``min_share`` of the (figure, download, bin) cases (1.0:
    every one), the Vegas upload's mean is the lowest, or within ``tie`` of it.
    """
    small, large = response_times(data[sized], load), response_times(data[oversized], load)
    if small.ndim == 0 or large.ndim == 0:
        return ClaimResult("—", "not run", f"no run at load {load}")
    edges = size_edges(data[sized], data[oversized])
    sizes = {
        sized: _transfer_sizes(data[sized], load),
        oversized: _transfer_sizes(data[oversized], load),
    }
    ratios: dict[tuple[str, str, float], float] = {}
    for up in small["up"].values:
        for down in small["down"].values:
            a = pick(small, up=str(up), down=str(down))
            b = pick(large, up=str(up), down=str(down))
            size = pick(sizes[sized], up=str(up), down=str(down))
            if not (np.isfinite(a).any() and np.isfinite(b).any()):
                continue
            table = binned_means({"A": a, "B": b}, size, edges)
            for row in table[table["n"] >= MIN_BIN_TRANSFERS].itertuples():
                ratios[(str(up), str(down), row.bin_low)] = row.B / row.A
    if not ratios:
        return ClaimResult("—", "not run", "no (upload, download) pair ran in both figures")
    worst = max(ratios, key=ratios.get)
    part_a = ratios[worst] >= min_ratio and (max_ratio is None or ratios[worst] <= max_ratio)
    fastest, checked = [], 0
    for figure, rt in ((sized, small), (oversized, large)):
        for down in rt["down"].values:
            cells = {str(up): pick(rt, up=str(up), down=str(down)) for up in rt["up"].values}
            cells = {up: v for up, v in cells.items() if np.isfinite(v).any()}
            if "Vegas" not in cells or len(cells) < 2:
                continue
            size = pick(sizes[figure], up="Vegas", down=str(down))
            table = binned_means(cells, size, edges)
            for row in table[table["n"] >= MIN_BIN_TRANSFERS].to_dict("records"):
                means = {up: row[up] for up in cells}
                checked += 1
                if means["Vegas"] > min(means.values()) * (1.0 + tie):
                    best = min(means, key=means.get)
                    fastest.append(f"{figure} down={down} {_bin(row['bin_low'])}: {best}")
    held = checked - len(fastest)
    part_b = checked > 0 and _holds(held, checked, min_share)
    value = (
        f"(a) largest A4/A3 ratio over pairs and size bins {ratios[worst]:.2f} "
        f"(up={worst[0]}, down={worst[1]}, {_bin(worst[2])}; median "
        f"{float(np.median(list(ratios.values()))):.2f} over {len(ratios)}); (b) Vegas upload "
        f"fastest in {held} of {checked} (figure, download, size bin) cases"
    )
    coverage = (
        f"{len({k[:2] for k in ratios})} (upload, download) pairs at load {load:g}, size bins "
        f"with at least {MIN_BIN_TRANSFERS} completed transfers"
    )
    statistic = ("largest A4/A3 response time ratio in a size bin", ratios[worst])
    # part (a)'s bounds, as it compares them (part (b) counts cases: no bound)
    bounds = (float(min_ratio), None if max_ratio is None else float(max_ratio))
    text_a = f"(a) largest A4/A3 ratio {ratios[worst]:.2f}"
    if checked == 0:
        return ClaimResult(
            value,
            _verdict(part_a),
            coverage + "; (b) not checkable",
            statistic=statistic,
            bounds=bounds,
            parts=((text_a, part_a),),
        )
    text_b = f"(b) Vegas upload fastest in {held} of {checked} cases"
    return ClaimResult(
        value,
        _verdict(part_a and part_b),
        coverage,
        statistic=statistic,
        bounds=bounds,
        parts=((text_a, part_a), (text_b, part_b)),
    )


def _bin(low: float) -> str:
    """A size bin named by its lower edge: ``>=178kB``."""
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if low >= scale:
            return f">={low / scale:.3g}{unit}"
    return f">={low:.0f}B"


@check
def a_vegas_download_response(
    data: Mapping[str, xr.Dataset],
    figure: str,
    load: float,
    bounds: Mapping[str, Sequence[float]] | None = None,
    past_slow_start: bool = False,
) -> ClaimResult:
    """Response time of Vegas downloads relative to Compound, NewReno and Cubic ones.

    With ``past_slow_start``, read on the size-conditional curves, on the size bins past
    the downlink's BDP plus buffer (:func:`slow_start_limit_bytes`: the transfers slow
    start alone cannot carry), uploads pooled: the mean over those bins (each with at
    least :data:`MIN_BIN_TRANSFERS` transfers completed in both cells) of the per-bin
    ratio of mean response times. Without: one ratio of the means over every transfer.
    """
    rt = response_times(data[figure], load)
    if rt.ndim == 0:
        return ClaimResult("—", "not run", f"no run at load {load}")
    bounds = bounds or {"Compound": (0.35, 0.65), "NewReno": (0.65, 0.95), "Cubic": (0.65, 0.95)}
    vegas = pick(rt, down="Vegas")
    if not np.isfinite(vegas).any():
        return ClaimResult("—", "not run", "no Vegas download in this build")
    sizes = pick(_transfer_sizes(data[figure], load), down="Vegas")
    edges = size_edges(data[figure])
    limit = slow_start_limit_bytes(data[figure]) if past_slow_start else 0.0
    parts, statuses = [], []
    statistic, statistic_bounds = None, None
    for other, (low, high) in bounds.items():
        cell = pick(rt, down=other)
        if not np.isfinite(cell).any():
            parts.append(f"vs {other}: not run")
            statuses.append("not run")
            continue
        if past_slow_start:
            table = binned_means({"vegas": vegas, "other": cell}, sizes, edges)
            table = table[(table["n"] >= MIN_BIN_TRANSFERS) & (table["bin_low"] >= limit)]
            if table.empty:
                parts.append(f"vs {other}: no size bin past slow start with enough transfers")
                statuses.append("no bin")
                continue
            ratio = float((table["vegas"] / table["other"]).mean())
            extra = f" over {len(table)} bins"
        else:
            mean_vegas, mean_other = matched_mean(vegas, cell, dims=vegas.dims)
            ratio, extra = mean_vegas / mean_other, ""
        if statistic is None:
            statistic = (f"Vegas/{other} response time ratio", ratio)
            statistic_bounds = (float(low), float(high))
        ok = low <= ratio <= high
        parts.append(f"vs {other}: {ratio:.2f}{extra}{'' if ok else ' (outside)'}")
        statuses.append("pass" if ok else "fail")
    value = "Vegas/other response time " + "; ".join(parts)
    if past_slow_start:
        value += f" (transfers of at least {_bin(limit)[2:]}, past slow start)"
    open_parts = [p for p, st in zip(bounds, statuses, strict=True) if st in ("not run", "no bin")]
    coverage = f"load {load:g}" + (f"; not computed: {', '.join(open_parts)}" if open_parts else "")
    if all(st in ("not run", "no bin") for st in statuses):
        return ClaimResult(value, "not run", coverage)
    judged = [
        (text, status == "pass")
        for text, status in zip(parts, statuses, strict=True)
        if status in ("pass", "fail")
    ]
    return ClaimResult(
        value,
        _verdict("fail" not in statuses),
        coverage,
        statistic=statistic,
        bounds=statistic_bounds,
        parts=tuple(judged),
    )


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
        if not bool(run["link_goodput_capacity_bps"].notnull().any()):
            continue  # a cell of the sweep that did not run (a what-if runs only some)
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
