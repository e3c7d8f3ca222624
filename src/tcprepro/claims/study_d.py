"""Checks of study D's claims (Makassikis 2006, application-level TCP throughput models).

Each function reads combined datasets through the per-cell tables of
:mod:`tcprepro.analysis.study_d` and returns a
:class:`~tcprepro.claims.ClaimResult`. The buffer claims (D-c1, D-c2) accept
several datasets (one per backend: the ns-3 one of D1, the emulated one of
D1.1 with ``backend = "mininet"``); each dataset present must pass, with the
application-level model's coefficients fixed per backend in
:data:`~tcprepro.analysis.study_d.BACKEND_COEFFICIENTS` before any run
(emulated Linux: the thesis's 0.55 and 3/8). Emulated runs the fidelity gate
flagged are left out of the verdict and counted in the coverage, and so are the
cells where the kernel did not hold the sender to its send buffer (the model's
premise; ``send_buffer_held`` of :func:`~tcprepro.analysis.study_d.buffer_table`);
the coefficients refitted from the accepted runs are reported, never used to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr

from tcprepro.analysis.study_d import buffer_table, loss_table, refit_buffer_coefficients
from tcprepro.claims import ClaimResult, check, explainer, glossary
from tcprepro.claims.cells import first_present_run

__all__: list[str] = []


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "not reproduced"


def _buffer_tables(
    data: Mapping[str, xr.Dataset], figures: Sequence[str]
) -> tuple[dict[str, pd.DataFrame], str, list[str]]:
    """Accepted cells per dataset, the coverage text, and a part per dataset left unjudged."""
    tables, missing, notes, unjudged = {}, [], [], []
    for figure in figures:
        if figure not in data:
            missing.append(figure)
            continue
        table = buffer_table(data[figure])
        key = f"{figure} ({table['backend'].iloc[0]})"
        gated = table["fidelity_ok"] == 1
        flagged = int((~gated).sum())
        # the model's premise: the sender kept to its send buffer (see buffer_table)
        held = table["send_buffer_held"].astype(bool)
        unheld = table[gated & ~held]
        note = f"{key}: {glossary.plural(len(table))}"
        if flagged:
            note += f", {flagged} flagged by the fidelity gate and left out"
        if len(unheld):
            times = (unheld["peak_window_bytes"] / unheld["sndbuf_granted_bytes"]).round(1)
            span = glossary.span(times.min(), times.max(), "{:.1f}")
            note += (
                f", {len(unheld)} where the kernel did not hold the sender to its send buffer "
                f"(peak in flight {span} x the granted buffer) left out"
            )
        notes.append(note)
        accepted = table[gated & held]
        if accepted.empty:
            why = (
                "every run flagged by the fidelity gate"
                if not gated.any()
                else "no accepted cell held to its send buffer"
            )
            unjudged.append(f"{key}: {why}, not judged")
        else:
            tables[key] = accepted
    coverage = ", ".join(notes)
    if missing:
        coverage += f"; not generated: {', '.join(missing)}"
    return tables, coverage, unjudged


@check
def d_buffer_model(
    data: Mapping[str, xr.Dataset],
    figures: Sequence[str],
    max_error_pct: float,
    mostly_error_pct: float,
    mostly_share: float,
) -> ClaimResult:
    """Relative error of min(BE C_e, BR C_r) / RTT over the buffer-limited cells."""
    tables, coverage, parts = _buffer_tables(data, figures)
    oks, worst_errors = [], []
    for key, table in tables.items():
        limited = table[table["buffer_limited"] & table["measured_bps"].notna()]
        if limited.empty:
            parts.append(f"{key}: no buffer-limited cell")
            continue
        error = limited["error_pct"].abs()
        worst = limited.loc[error.idxmax()]
        share = float((error <= mostly_error_pct).mean())
        fit_e, fit_r, _ = refit_buffer_coefficients(table)
        ok = float(error.max()) <= max_error_pct and share >= mostly_share
        oks.append(ok)
        worst_errors.append(float(error.max()))
        parts.append(
            f"{key}, C_e = {worst['c_e']:g}, C_r = {worst['c_r']:g}: max |error| "
            f"{float(error.max()):.1f} % (RTT {worst['rtt_s'] * 1000:g} ms, BE "
            f"{worst['send_buffer_bytes'] / 1024:g} KiB, BR {worst['recv_buffer_bytes'] / 1024:g}"
            f" KiB), median {float(error.median()):.1f} %, {share * 100:.0f} % of "
            f"{glossary.plural(len(limited))} within {mostly_error_pct:g} %; refitted "
            f"C_e = {fit_e:.3f}, "
            f"C_r = {fit_r:.3f}"
        )
    return _result(
        parts,
        oks,
        coverage,
        lambda: ("largest |error| (%)", max(worst_errors)),
        (None, float(max_error_pct)),
    )


@check
def d_saturation(
    data: Mapping[str, xr.Dataset], figures: Sequence[str], min_share: float, max_share: float
) -> ClaimResult:
    """Cells whose model window reaches the BDP run at the link's goodput capacity."""
    tables, coverage, parts = _buffer_tables(data, figures)
    oks, lowest = [], []
    for key, table in tables.items():
        table = table[table["measured_bps"].notna()]
        share = table["measured_bps"] / table["capacity_bps"]
        window = np.minimum(
            table["send_buffer_bytes"] * table["c_e"], table["recv_buffer_bytes"] * table["c_r"]
        )
        above = window >= table["bdp_bytes"]
        if not above.any():
            parts.append(f"{key}: no cell with a window of at least the BDP")
            continue
        saturated = share[above]
        ok = float(saturated.min()) >= min_share and float(share.max()) <= max_share
        oks.append(ok)
        lowest.append(float(saturated.min()) * 100)
        parts.append(
            f"{key}: {glossary.plural(int(above.sum()))} with window >= BDP reach "
            f"{glossary.span(saturated.min() * 100, saturated.max() * 100, '{:.1f}')} % of the "
            f"goodput capacity ({float(table['capacity_bps'].max()) / 1e6:.0f} Mb/s); highest "
            f"share of any cell {float(share.max()) * 100:.1f} %"
        )
    return _result(
        parts,
        oks,
        coverage,
        lambda: ("lowest share of the goodput capacity at window >= BDP (%)", min(lowest)),
        (min_share * 100, None),
    )


def _result(
    parts: list[str],
    oks: list[bool],
    coverage: str,
    statistic: Callable[[], tuple[str, float]],
    bounds: tuple[float | None, float | None],
) -> ClaimResult:
    """A buffer claim's result: "not run" when no table decided, else all tables' verdict.

    The statistic is computed only when some table decided.
    """
    if not oks:
        return ClaimResult("; ".join(parts) or "—", "not run", coverage)
    return ClaimResult(
        "; ".join(parts), _verdict(all(oks)), coverage, statistic=statistic(), bounds=bounds
    )


def _cell_name(row: pd.Series) -> str:
    return (
        f"p={row['loss_rate']:g}, RTT {row['rtt_s'] * 1000:g} ms, "
        f"SACK {'on' if row['sack'] else 'off'}, b={row['acked_per_ack']}"
    )


@check
def d_loss_models(
    data: Mapping[str, xr.Dataset],
    figure: str,
    follow_pct: float,
    rare_share: float,
    dominant_share: float,
    mathis_over: float,
    follow_models: Sequence[str] = ("mathis", "padhye"),
    sack_only: bool = False,
) -> ClaimResult:
    """Mathis/Padhye follow where timeouts are rare, diverge where they dominate.

    Part (a) asks ``follow_models`` to follow, on the cells inside the models' stated
    conditions: with ``sack_only``, the cells with SACK (the thesis's condition 4 for
    Mathis's model); the thesis's periodic losses (its condition 2) are no D3 cell's, so
    the study reads Padhye's model there, which assumes random losses.

    Which part a cell tests is an outcome of its run (its share of time spent waiting
    for timeouts), not of its parameters: cells that ran with none in a part's regime
    leave that part undecided (``inconclusive``, naming the part and the cell closest to
    it) unless the other part already fails on its cells (``not reproduced``).
    """
    table = loss_table(data[figure])
    table = table[table["measured_bps"].notna()]
    if table.empty:
        return ClaimResult("—", "not run", f"no {figure} cell has a measured throughput")
    low, high = 1.0 - follow_pct / 100.0, 1.0 + follow_pct / 100.0
    rare = table[(table["timeout_share"] < rare_share) & ~table["window_capped"]]
    if sack_only:
        rare = rare[rare["sack"].astype(bool)]
    dominant = table[table["timeout_share"] >= dominant_share]
    coverage = (
        f"{glossary.plural(len(table))}: {len(rare)} with rare timeouts, {len(dominant)} where "
        "they "
        f"dominate, {len(table) - len(rare) - len(dominant)} in between or window-capped"
    )

    def within(ratio: pd.Series) -> pd.Series:
        return (ratio >= low) & (ratio <= high)

    parts, missing, holds = [], [], True
    judged: list[tuple[str, bool]] = []  # each part computed, whether it holds
    statistic = None  # part (a)'s ratio nearest its bounds (part (b) has no scalar bound)
    if rare.empty:
        missing.append(
            f"part (a) has no cell: none ran with timeouts rare (RTO waits under "
            f"{rare_share * 100:g} % of the time) and the loss, not W_m, limiting the flow"
        )
    else:
        follow = pd.Series(True, index=rare.index)
        for model in follow_models:
            follow &= within(rare[f"{model}_ratio"])
        holds &= bool(follow.all())
        judged.append(
            (
                f"(a) {glossary.ratio(int(follow.sum()), len(rare))} within ±{follow_pct:g} %",
                bool(follow.all()),
            )
        )
        statistic = _nearest_bound(rare, follow_models, low, high)
        asked = " and ".join(m.capitalize() for m in follow_models)
        where = " with SACK" if sack_only else ""
        part = (
            f"(a) rare timeouts{where}: {glossary.ratio(int(follow.sum()), len(rare))} with "
            f"{asked} within "
            f"±{follow_pct:g} % (measured/Mathis "
            f"{glossary.span(rare['mathis_ratio'].min(), rare['mathis_ratio'].max())}, "
            f"measured/Padhye "
            f"{glossary.span(rare['padhye_ratio'].min(), rare['padhye_ratio'].max())})"
        )
        outside = [
            f"{_cell_name(r)}: measured/Mathis {r['mathis_ratio']:.2f}, "
            f"measured/Padhye {r['padhye_ratio']:.2f}"
            for _, r in rare[~follow].iterrows()
        ]
        parts.append(part + ("; outside: " + "; ".join(outside) if outside else ""))
    trace = None
    if dominant.empty:
        counted = table[table["timeout_share"].notna()]
        if counted.empty:
            closest = "this backend counts no timeouts"
        else:
            worst = counted.loc[counted["timeout_share"].idxmax()]
            closest = (
                f"the most: {worst['timeout_share'] * 100:.0f} % in {_cell_name(worst)}, "
                f"{worst['rto_count']:.0f} timeout{'' if worst['rto_count'] == 1 else 's'}"
            )
            dims = {d: worst[d] for d in data[figure].dims if d in table.columns}
            trace = first_present_run(
                [{"figure": figure, **dims}], data, "the cell whose run waited most on timeouts"
            )
        missing.append(
            f"part (b) has no cell: none ran with timeouts dominating (RTO waits at least "
            f"{dominant_share * 100:g} % of the time; {closest})"
        )
    else:
        over = 1.0 / dominant["mathis_ratio"]  # Mathis / measured
        closer = np.abs(np.log(dominant["padhye_ratio"])) < np.abs(np.log(dominant["mathis_ratio"]))
        diverge = (over >= mathis_over) & closer
        shares = glossary.span(
            dominant["timeout_share"].min() * 100, dominant["timeout_share"].max() * 100, "{:.0f}"
        )
        holds &= bool(diverge.all())
        judged.append(
            (
                f"(b) {glossary.ratio(int(diverge.sum()), len(dominant))} diverging",
                bool(diverge.all()),
            )
        )
        part = (
            f"(b) timeouts dominate ({shares} % of the time): "
            f"{glossary.ratio(int(diverge.sum()), len(dominant))} where Mathis overestimates by "
            f"{mathis_over:g}x or more "
            f"(Mathis/measured {glossary.span(over.min(), over.max(), '{:.1f}')}) and Padhye "
            f"is closer (measured/Padhye "
            f"{glossary.span(dominant['padhye_ratio'].min(), dominant['padhye_ratio'].max())})"
        )
        not_diverging = [
            f"{_cell_name(r)}: Mathis/measured {1 / r['mathis_ratio']:.2f}, "
            f"measured/Padhye {r['padhye_ratio']:.2f}"
            for _, r in dominant[~diverge].iterrows()
        ]
        parts.append(part + ("; not so: " + "; ".join(not_diverging) if not_diverging else ""))
        if not_diverging:  # the trace under the why: the first cell where part (b) fails
            failing = dominant[~diverge].iloc[0]
            dims = {d: failing[d] for d in data[figure].dims if d in table.columns}
            trace = first_present_run(
                [{"figure": figure, **dims}], data, "the first cell where part (b) fails"
            )
    value = ". ".join(parts) if parts else "—"
    margin = {
        "statistic": statistic,
        "bounds": (low, high) if statistic else None,
        "parts": tuple(judged),
    }
    if missing and holds:  # a part that fails decides; a part with no cell cannot
        why = "inconclusive: " + "; ".join(missing)
        return ClaimResult(value, "inconclusive", coverage, explanation=why, trace=trace, **margin)
    if missing:
        coverage += "; " + "; ".join(missing)
    return ClaimResult(value, _verdict(holds), coverage, trace=trace, **margin)


def _nearest_bound(
    cells: pd.DataFrame, models: Sequence[str], low: float, high: float
) -> tuple[str, float] | None:
    """Part (a)'s headline: the measured/model ratio nearest to (or farthest outside) a bound.

    Of the ratios the part holds to [low, high]: its margin is then the part's own (every
    ratio inside).
    """
    ratios = [(model, float(r)) for model in models for r in cells[f"{model}_ratio"]]
    if not ratios or not all(np.isfinite(r) for _, r in ratios):
        return None  # a ratio the check cannot place fails the part: no margin to give
    candidates = [(min(r - low, high - r), model, r) for model, r in ratios]
    _, model, ratio = min(candidates)
    return (f"part (a): measured/{model.capitalize()} nearest the bounds", ratio)


@explainer
def d_explain_loss_models(
    data: Mapping[str, xr.Dataset],
    figure: str,
    follow_pct: float,
    rare_share: float,
    dominant_share: float,
    mathis_over: float,
    follow_models: Sequence[str] = ("mathis", "padhye"),
    sack_only: bool = False,
) -> str:
    """What the traces of the D3 cells that miss the claim show (as :func:`d_loss_models`).

    For each cell outside part (a) or (b): the measured loss rate against the configured
    p, the retransmission timeouts (count, share of the time spent waiting T0), the
    measured and the two models' throughputs, and whether the window cap W_m binds.
    """
    if figure not in data:
        return ""
    table = loss_table(data[figure])
    table = table[table["measured_bps"].notna()]
    low, high = 1.0 - follow_pct / 100.0, 1.0 + follow_pct / 100.0
    rare = (table["timeout_share"] < rare_share) & ~table["window_capped"]
    if sack_only:
        rare &= table["sack"].astype(bool)
    follows = pd.Series(True, index=table.index)
    for model in follow_models:
        follows &= table[f"{model}_ratio"].between(low, high)
    dominant = table["timeout_share"] >= dominant_share
    closer = np.abs(np.log(table["padhye_ratio"])) < np.abs(np.log(table["mathis_ratio"]))
    diverges = (1.0 / table["mathis_ratio"] >= mathis_over) & closer
    bad = table[(rare & ~follows) | (dominant & ~diverges)]
    parts = [
        f"{_cell_name(r)}: measured loss {r['measured_loss']:.2g} (p = {r['loss_rate']:g}), "
        f"{r['rto_count']:.0f} timeouts ({r['timeout_share'] * 100:.0f} % of the "
        f"{r['measured_s']:.0f} s waiting T0 = {r['t0_s']:g} s); throughput measured "
        f"{r['measured_bps'] / 1e6:.2f}, Mathis {r['mathis_bps'] / 1e6:.2f}, Padhye "
        f"{r['padhye_bps'] / 1e6:.2f} Mb/s"
        + (f" (window cap W_m = {r['w_m_pkts']:.0f} segments binds)" if r["window_capped"] else "")
        for _, r in bad.iterrows()
    ]
    return ("Cells that miss the claim: " + "; ".join(parts) + ".") if parts else ""
