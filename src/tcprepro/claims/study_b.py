"""Checks of study B's claims (Augé, thesis ch. 5: new TCP protocols and fair queueing).

Each function reads combined datasets (B5.1: dimension ``case``; B5.10:
``variant``, ``flows``, ``buffer``, ``rate``; B5.14: ``variant``, ``rate``,
``load``, ``buffer``; B5.16: ``law``, ``buffer``; B5.20: ``pacing``,
``buffer``) through :mod:`tcprepro.analysis.study_b`, and returns a
:class:`~tcprepro.claims.ClaimResult` whose value states every number the
verdict rests on. A claim part whose cells this tier did not run is left out
of the verdict and named in the coverage; with no part computable the claim is
pending.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import xarray as xr

from tcprepro import metrics
from tcprepro.analysis import study_b as analysis_b
from tcprepro.claims import ClaimResult, check, explainer
from tcprepro.claims.glossary import count
from tcprepro.scenario_io import load_scenario_dict

__all__: list[str] = []


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "not reproduced"


def _select(values: xr.DataArray, **labels: object) -> xr.DataArray:
    """``values.sel(**labels)`` that yields NaN for a label this build's sweep lacks."""
    for dim, label in labels.items():
        if label not in values[dim].values:
            return xr.full_like(values.isel({dim: 0}, drop=True), np.nan, dtype=float)
        values = values.sel({dim: label}, drop=True)
    return values


def _mean(values: xr.DataArray, **labels: object) -> float:
    """Mean over repetitions of one cell (NaN when the cell was not run)."""
    cell = _select(values, **labels)
    return float(cell.mean()) if bool(cell.notnull().any()) else float("nan")


def _result(
    parts: Sequence[tuple[str, bool | None]],
    missing: Sequence[str],
    statistic: tuple[str, float] | None = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> ClaimResult:
    """Combine claim parts (text, ok or None when not computable) into one result.

    ``statistic`` and ``bounds``: the headline value and its tolerance's bounds.
    """
    computed = [(text, ok) for text, ok in parts if ok is not None]
    coverage = f"{len(computed)}/{len(parts)} parts"
    if missing:
        coverage += "; not run in this tier: " + ", ".join(missing)
    if not computed:
        return ClaimResult("—", "not run", coverage)
    value = "; ".join(text for text, _ in computed)
    if statistic is not None and not np.isfinite(statistic[1]):
        statistic, bounds = None, None
    return ClaimResult(
        value,
        _verdict(all(ok for _, ok in computed)),
        coverage,
        statistic=statistic,
        bounds=bounds,
        parts=tuple((text, bool(ok)) for text, ok in computed),
    )


def _part(
    text: str, ok: bool, *values: float, missing: list[str], what: str
) -> tuple[str, bool | None]:
    """A part that is computable only when every value is finite."""
    if all(np.isfinite(v) for v in values):
        return text, ok
    missing.append(what)
    return text, None


# ---- B5.1 (§5.3): TCP-transfer background -------------------------------------------


@check
def b_reno_small_buffer(
    data: Mapping[str, xr.Dataset],
    figure: str,
    case: str,
    expected_pct: float,
    tolerance_pct: float,
) -> ClaimResult:
    """Utilisation of the capacity the background leaves by one Reno flow, one case."""
    phi = analysis_b.phi(data[figure]) * 100
    value = _mean(phi, case=case)
    if not np.isfinite(value):
        return ClaimResult("—", "not run", f"case {case} not run in this tier")
    spread = _select(phi, case=case)
    text = f"{value:.0f} % of (1-rho_b)C ({case}, {int(spread.count())} rep.)"
    return ClaimResult(
        text,
        _verdict(abs(value - expected_pct) <= tolerance_pct),
        count(1, 1),
        statistic=("phi (%)", value),
        bounds=(expected_pct - tolerance_pct, expected_pct + tolerance_pct),
    )


@check
def b_hstcp_fifo_and_fq(
    data: Mapping[str, xr.Dataset],
    figure: str,
    buffer: int,
    max_fq_loss: float,
    min_fq_ratio: float,
    max_fq_ratio: float = float("inf"),
) -> ClaimResult:
    """HSTCP vs Reno on FIFO (throughput, background losses); HSTCP on FIFO vs PFQ/LQD."""
    ds = data[figure]
    phi = analysis_b.phi(ds)
    background = analysis_b.loss_rate(ds, "background")
    reno, hstcp, fq = (f"Reno.FIFO.{buffer}", f"HSTCP.FIFO.{buffer}", f"HSTCP.FQ.{buffer}")
    p_reno, p_hstcp, p_fq = (_mean(phi, case=c) for c in (reno, hstcp, fq))
    l_reno, l_hstcp, l_fq = (_mean(background, case=c) for c in (reno, hstcp, fq))
    missing: list[str] = []
    parts = [
        _part(
            f"FIFO B={buffer}: HSTCP {p_hstcp:.0%} vs Reno {p_reno:.0%} of (1-rho_b)C",
            p_hstcp > p_reno,
            p_hstcp,
            p_reno,
            missing=missing,
            what=f"{reno}/{hstcp}",
        ),
        _part(
            f"background loss with HSTCP {l_hstcp:.2e} vs Reno {l_reno:.2e}",
            l_hstcp > l_reno,
            l_hstcp,
            l_reno,
            missing=missing,
            what=f"{reno}/{hstcp}",
        ),
        _part(
            f"PFQ/LQD: background loss {l_fq:.2e} (<= {max_fq_loss:g})",
            l_fq <= max_fq_loss,
            l_fq,
            missing=missing,
            what=fq,
        ),
        _part(
            f"HSTCP PFQ/LQD / FIFO throughput {p_fq / p_hstcp:.2f} "
            f"(in {min_fq_ratio:g}-{max_fq_ratio:g})",
            min_fq_ratio * p_hstcp <= p_fq <= max_fq_ratio * p_hstcp,
            p_fq,
            p_hstcp,
            missing=missing,
            what=fq,
        ),
    ]
    return _result(parts, sorted(set(missing)))


def _flow_goodput(ds: xr.Dataset, case: str, prefix: str) -> float:
    """Mean goodput (bit/s, over reps) of the bottlenecked flows whose name starts with prefix."""
    if case not in ds["case"].values:
        return float("nan")
    cell = ds.sel(case=case)
    goodput = metrics.goodput_bps(cell)
    names = [str(f) for f in cell["flow"].values if str(f).startswith(prefix)]
    if not names:
        return float("nan")
    values = goodput.sel(flow=names).sum("flow", min_count=1)
    return float(values.mean()) if bool(values.notnull().any()) else float("nan")


@check
def b_fairness(
    data: Mapping[str, xr.Dataset],
    figure: str,
    buffers: Sequence[int],
    min_fair_jain: float,
    max_unfair_jain: float,
    min_hstcp_over_reno: float,
) -> ClaimResult:
    """Reno roughly fair; HSTCP unfair among HSTCP and against Reno; PFQ/LQD restores fairness."""
    ds = data[figure]
    jain = analysis_b.jain(ds)
    missing: list[str] = []
    parts = []
    for buffer in buffers:
        j_reno = _mean(jain, case=f"2Reno.FIFO.{buffer}")
        j_hstcp = _mean(jain, case=f"2HSTCP.FIFO.{buffer}")
        j_mixed = _mean(jain, case=f"Reno+HSTCP.FIFO.{buffer}")
        j_fq = _mean(jain, case=f"Reno+HSTCP.FQ.{buffer}")
        ratio = _flow_goodput(ds, f"Reno+HSTCP.FIFO.{buffer}", "hstcp") / _flow_goodput(
            ds, f"Reno+HSTCP.FIFO.{buffer}", "reno"
        )
        parts += [
            _part(
                f"B={buffer}: Jain 2 Reno {j_reno:.2f} (>= {min_fair_jain:g})",
                j_reno >= min_fair_jain,
                j_reno,
                missing=missing,
                what=f"2Reno.FIFO.{buffer}",
            ),
            _part(
                f"2 HSTCP {j_hstcp:.2f} (< 2 Reno, <= {max_unfair_jain:g})",
                j_hstcp < j_reno and j_hstcp <= max_unfair_jain,
                j_hstcp,
                j_reno,
                missing=missing,
                what=f"2HSTCP.FIFO.{buffer}",
            ),
            _part(
                f"HSTCP/Reno throughput on FIFO {ratio:.1f} (>= {min_hstcp_over_reno:g})",
                ratio >= min_hstcp_over_reno,
                ratio,
                missing=missing,
                what=f"Reno+HSTCP.FIFO.{buffer}",
            ),
            _part(
                f"Jain Reno+HSTCP PFQ/LQD {j_fq:.2f} vs FIFO {j_mixed:.2f}",
                j_fq > j_mixed and j_fq >= min_fair_jain,
                j_fq,
                j_mixed,
                missing=missing,
                what=f"Reno+HSTCP.FQ.{buffer}",
            ),
        ]
    return _result(parts, sorted(set(missing)))


def _finite_mean(values: Sequence[float]) -> float:
    """Mean of the finite values (NaN when there is none)."""
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def _per_rep(ds: xr.Dataset, case: str, func: Callable[[xr.Dataset], float]) -> list[float]:
    """``func(run)`` for every repetition of one case (empty when not run)."""
    if case not in ds["case"].values:
        return []
    cell = ds.sel(case=case)
    out = []
    for rep in cell["rep"].values:
        run = cell.sel(rep=rep)
        if not bool(run["link_goodput_capacity_bps"].notnull().any()):
            continue
        out.append(float(func(run)))
    return out


@check
def b_four_hstcp(
    data: Mapping[str, xr.Dataset],
    figure: str,
    min_leader_changes: int,
    bin_s: float,
    min_fair_jain: float,
    min_fq_ratio: float,
) -> ClaimResult:
    """4 HSTCP on FIFO take turns leading; PFQ/LQD restores fairness, throughput, desyncs losses.

    Leader changes and loss synchrony are computed per repetition and averaged.
    """
    ds = data[figure]
    fifo, fq = "4HSTCP.FIFO.20", "4HSTCP.FQ.20"
    changes = _per_rep(ds, fifo, lambda run: analysis_b.leader_changes(run, bin_s))
    jain = analysis_b.jain(ds)
    phi = analysis_b.phi(ds)
    j_fifo, j_fq = _mean(jain, case=fifo), _mean(jain, case=fq)
    p_fifo, p_fq = _mean(phi, case=fifo), _mean(phi, case=fq)
    sync_fifo, sync_fq = (
        _finite_mean(_per_rep(ds, c, analysis_b.loss_synchrony)) for c in (fifo, fq)
    )
    mean_changes = float(np.mean(changes)) if changes else float("nan")
    missing: list[str] = []
    parts = [
        _part(
            f"FIFO: leader changed {mean_changes:.1f} times ({bin_s:g} s bins)",
            mean_changes >= min_leader_changes,
            mean_changes,
            missing=missing,
            what=fifo,
        ),
        _part(
            f"Jain PFQ/LQD {j_fq:.2f} vs FIFO {j_fifo:.2f}",
            j_fq >= min_fair_jain and j_fq > j_fifo,
            j_fq,
            j_fifo,
            missing=missing,
            what=fq,
        ),
        _part(
            f"throughput PFQ/LQD {p_fq:.0%} vs FIFO {p_fifo:.0%}",
            p_fq >= min_fq_ratio * p_fifo,
            p_fq,
            p_fifo,
            missing=missing,
            what=fq,
        ),
        _part(
            f"simultaneous losses PFQ/LQD {sync_fq:.0%} vs FIFO {sync_fifo:.0%} of loss intervals",
            sync_fq < sync_fifo,
            sync_fq,
            sync_fifo,
            missing=missing,
            what=fq,
        ),
    ]
    return _result(parts, sorted(set(missing)))


# ---- B5.10 (§5.4): phi(i) under PFQ/LQD --------------------------------------------------


def _phi_cells(ds: xr.Dataset, buffer: int, rate: str) -> xr.DataArray:
    """Mean φ over repetitions, over (variant, flows), for one buffer and capacity."""
    table = analysis_b.phi_table(ds)["phi"]
    return _select(table, buffer=buffer, rate=rate)


@check
def b_phi_small_buffer(
    data: Mapping[str, xr.Dataset],
    figure: str,
    buffer: int,
    rate: str,
    expected: Mapping[str, float],
    tolerance: float,
    min_growing_share: float,
    max_median_growth: float,
) -> ClaimResult:
    """φ(1) of named variants against the thesis; φ grows (slowly) with i."""
    cells = _phi_cells(data[figure], buffer, rate)
    missing: list[str] = []
    parts = []
    for variant, target in expected.items():
        value = _mean(cells, variant=variant, flows=1)
        parts.append(
            _part(
                f"phi(1) {variant} {value:.2f} (paper {target:g})",
                abs(value - target) <= tolerance,
                value,
                missing=missing,
                what=f"{variant} i=1",
            )
        )
    flows = sorted(int(i) for i in cells["flows"].values)
    growth = (cells.sel(flows=flows[-1]) - cells.sel(flows=flows[0])).dropna("variant")
    if flows[-1] > 1 and growth.size:
        share = float((growth >= 0).mean())
        median = float(growth.median())
        parts.append(
            (
                f"phi({flows[-1]}) >= phi(1) for {share:.0%} of variants, median growth "
                f"{median:+.2f}",
                share >= min_growing_share and 0 <= median <= max_median_growth,
            )
        )
    else:
        parts.append(("growth with i", None))
        missing.append("i > 1")
    return _result(parts, missing)


@check
def b_phi_medium_buffer(
    data: Mapping[str, xr.Dataset],
    figure: str,
    buffer: int,
    bdp_buffer: int,
    rate: str,
    min_all: float,
    high: float,
    min_high_share: float,
    best: Sequence[str],
    top: int,
) -> ClaimResult:
    """At B = 100 every variant's φ(1) is high, most very high, BIC/CUBIC best; B = BDP optimal."""
    ds = data[figure]
    medium = _select(_phi_cells(ds, buffer, rate), flows=1).dropna("variant")
    missing: list[str] = []
    parts: list[tuple[str, bool | None]] = []
    if medium.size:
        worst = str(medium["variant"].values[int(medium.argmin())])
        ranking = [str(v) for v in medium.sortby(medium, ascending=False)["variant"].values]
        share = float((medium >= high).mean())
        parts += [
            (
                f"B={buffer}: min phi(1) {float(medium.min()):.2f} ({worst})",
                bool(medium.min() >= min_all),
            ),
            (f"{share:.0%} of variants >= {high:g}", share >= min_high_share),
            (
                f"top {top}: {', '.join(ranking[:top])}",
                all(v in ranking[:top] for v in best),
            ),
        ]
    else:
        parts += [(f"B={buffer}", None)] * 3
        missing.append(f"B={buffer}")
    optimal = _select(_phi_cells(ds, bdp_buffer, rate), flows=1).dropna("variant")
    if optimal.size:
        parts.append(
            (
                f"B={bdp_buffer}: min phi(1) {float(optimal.min()):.2f}",
                bool(optimal.min() >= high),
            )
        )
    else:
        parts.append((f"B={bdp_buffer}", None))
        missing.append(f"B={bdp_buffer}")
    return _result(parts, missing)


# ---- B5.14 (heat maps) ------------------------------------------------------------------


@check
def b_westwood_compromise(
    data: Mapping[str, xr.Dataset],
    figure: str,
    min_better_share: float,
    small_buffer: int,
    small_rate: str,
    max_load: float,
    min_westwood: float,
    max_reno: float,
    good_buffer: int,
    min_good: float,
) -> ClaimResult:
    """Westwood+ is the best compromise over (ρ_b, B) (thesis, Figures 5.14/5.15).

    Westwood+ at least as good as Reno almost everywhere; acceptable at B = 20
    up to ρ_b ≈ 0.5 where Reno is degraded; B ≈ 100 suits every load.
    """
    table = analysis_b.phi_table(data[figure])["phi"]
    reno = _select(table, variant="NewReno")
    westwood = _select(table, variant="WestwoodPlus")
    both = (westwood >= reno).where(reno.notnull() & westwood.notnull())
    cells = int(both.count())
    missing: list[str] = []
    parts: list[tuple[str, bool | None]] = []
    if cells:
        share = float(both.sum()) / cells
        parts.append(
            (
                f"Westwood+ >= Reno in {count(int(both.sum()), cells)} ({share:.0%})",
                share >= min_better_share,
            )
        )
    else:
        parts.append(("Westwood+ vs Reno", None))
    small_w = _select(westwood, buffer=small_buffer, rate=small_rate)
    small_r = _select(reno, buffer=small_buffer, rate=small_rate)
    low_loads = [v for v in small_w["load"].values if v <= max_load]
    if low_loads and bool(small_w.sel(load=low_loads).notnull().all()):
        w_min = float(small_w.sel(load=low_loads).min())
        r_max = float(small_r.sel(load=low_loads).max())
        parts.append(
            (
                f"C={small_rate}, B={small_buffer}, rho_b <= {max_load:g}: Westwood+ >= "
                f"{w_min:.2f}, Reno <= {r_max:.2f}",
                w_min >= min_westwood and r_max <= max_reno,
            )
        )
    else:
        parts.append(("small buffer", None))
        missing.append(f"B={small_buffer}, rho_b <= {max_load:g}")
    good = _select(westwood, buffer=good_buffer, rate=small_rate).dropna("load")
    if good.size:
        parts.append(
            (
                f"Westwood+ at B={good_buffer}: min {float(good.min()):.2f} over rho_b",
                bool(good.min() >= min_good),
            )
        )
    else:
        parts.append(("B=100", None))
        missing.append(f"B={good_buffer}")
    return _result(parts, missing)


# ---- B5.16 (AIMD/MIMD grids) ------------------------------------------------------------


def _with_fair_target(result: ClaimResult, ds: xr.Dataset, buffer: int) -> ClaimResult:
    """The grid's result, its value led by the fair target of its buffer's runs.

    The figure's dashed line: :func:`~tcprepro.analysis.study_b.fair_target_mbps`.
    """
    if result.value == "—" or "buffer" not in ds.dims or buffer not in ds["buffer"].values:
        return result
    target = analysis_b.fair_target_mbps(ds.sel(buffer=buffer))
    return replace(result, value=f"fair target {target:.1f} Mb/s; {result.value}")


def _grid(ds: xr.Dataset, buffer: int, family: str) -> tuple[dict, dict]:
    """Throughput (Mb/s) and loss rate of each (alpha, beta) of one family (means over reps)."""
    cell = _select(analysis_b.throughput_bps(ds) / 1e6, buffer=buffer)
    loss = _select(analysis_b.loss_rate(ds, "bottlenecked"), buffer=buffer)
    throughput, losses = {}, {}
    for law in map(str, ds["law"].values):
        name, alpha, beta = law.split(".", 2)
        value = _mean(cell, law=law)
        if name == family and np.isfinite(value):
            throughput[(float(alpha), float(beta))] = value
            losses[(float(alpha), float(beta))] = _mean(loss, law=law)
    return throughput, losses


def _mean_range(grid: Mapping[tuple[float, float], float], axis: int) -> float:
    """Mean, over the values of the other parameter, of the range along ``axis``."""
    groups: dict[float, list[float]] = {}
    for key, value in grid.items():
        groups.setdefault(key[1 - axis], []).append(value)
    ranges = [max(v) - min(v) for v in groups.values() if len(v) > 1]
    return float(np.mean(ranges)) if ranges else float("nan")


@check
def b_aimd_grid(
    data: Mapping[str, xr.Dataset],
    figure: str,
    buffer: int,
    reno: Sequence[float],
    reno_range: Sequence[float],
    aggressive: Sequence[float],
    min_aggressive_mbps: float,
    loss_factor: float,
    max_gain: float,
) -> ClaimResult:
    """AIMD: Reno's pair ≈ 12 Mb/s, (5, 10) > 19 Mb/s, β matters most, too large α only loses."""
    throughput, losses = _grid(data[figure], buffer, "AIMD")
    missing: list[str] = []
    base = throughput.get(tuple(reno), float("nan"))
    strong = throughput.get(tuple(aggressive), float("nan"))
    by_beta, by_alpha = _mean_range(throughput, 1), _mean_range(throughput, 0)
    parts = [
        _part(
            f"{reno[0]:g}/{reno[1]:g}: {base:.1f} Mb/s",
            reno_range[0] <= base <= reno_range[1],
            base,
            missing=missing,
            what=f"AIMD {reno[0]:g}/{reno[1]:g}",
        ),
        _part(
            f"{aggressive[0]:g}/{aggressive[1]:g}: {strong:.1f} Mb/s",
            strong > min_aggressive_mbps,
            strong,
            missing=missing,
            what=f"AIMD {aggressive[0]:g}/{aggressive[1]:g}",
        ),
        _part(
            f"mean range over beta {by_beta:.1f} vs over alpha {by_alpha:.1f} Mb/s",
            by_beta > by_alpha,
            by_beta,
            by_alpha,
            missing=missing,
            what="a 2-D grid",
        ),
    ]
    betas = sorted({b for _, b in throughput})
    top_beta = betas[-1] if betas else float("nan")
    alphas = sorted(a for a, b in throughput if b == top_beta)
    if len(alphas) >= 3:
        largest, second, smallest = alphas[-1], alphas[-2], alphas[0]
        loss_big, loss_small = losses[(largest, top_beta)], losses[(smallest, top_beta)]
        gain = throughput[(largest, top_beta)] / throughput[(second, top_beta)] - 1
        parts.append(
            (
                f"beta={top_beta:g}: alpha {largest:g} loses {loss_big:.2e} vs {loss_small:.2e} "
                f"(alpha {smallest:g}), throughput {gain:+.0%} vs alpha {second:g}",
                loss_big >= loss_factor * loss_small and gain <= max_gain,
            )
        )
    else:
        parts.append(("too large alpha", None))
        missing.append("three alphas at the largest beta")
    result = _result(
        parts,
        sorted(set(missing)),
        (f"AIMD {reno[0]:g}/{reno[1]:g} (Mb/s)", base),
        (float(reno_range[0]), float(reno_range[1])),
    )
    return _with_fair_target(result, data[figure], buffer)


@check
def b_mimd_grid(
    data: Mapping[str, xr.Dataset],
    figure: str,
    buffer: int,
    scalable: Sequence[float],
    scalable_range: Sequence[float],
    min_best_mbps: float,
    min_loss: float,
) -> ClaimResult:
    """MIMD: Scalable's pair ≈ 17 Mb/s, up to ≈ 19 Mb/s when more aggressive, then > 1 % loss.

    The most aggressive pair of the grid is the one with the smallest alpha (the fastest
    increase, 1/alpha per acknowledged segment) and the largest beta (the smallest
    decrease, 2^-beta): it must lose more than ``min_loss`` and more than ``scalable``.
    """
    throughput, losses = _grid(data[figure], buffer, "MIMD")
    if not throughput:
        return ClaimResult("—", "not run", "no MIMD cell in this tier")
    missing: list[str] = []
    base = throughput.get(tuple(scalable), float("nan"))
    best_key = max(throughput, key=throughput.get)
    best = throughput[best_key]
    alpha = min(a for a, _ in throughput)
    beta = max(b for a, b in throughput if a == alpha)
    loss_top = losses.get((alpha, beta), float("nan"))
    loss_base = losses.get(tuple(scalable), float("nan"))
    parts = [
        _part(
            f"{scalable[0]:g}/{scalable[1]:g}: {base:.1f} Mb/s",
            scalable_range[0] <= base <= scalable_range[1],
            base,
            missing=missing,
            what=f"MIMD {scalable[0]:g}/{scalable[1]:g}",
        ),
        (f"best {best_key[0]:g}/{best_key[1]:g}: {best:.1f} Mb/s", best >= min_best_mbps),
        _part(
            f"most aggressive {alpha:g}/{beta:g} loses {loss_top:.2%} "
            f"({scalable[0]:g}/{scalable[1]:g}: {loss_base:.2%})",
            loss_top > min_loss and loss_top > loss_base,
            loss_top,
            loss_base,
            missing=missing,
            what=f"MIMD {alpha:g}/{beta:g}",
        ),
    ]
    result = _result(
        parts,
        missing,
        (f"MIMD {scalable[0]:g}/{scalable[1]:g} (Mb/s)", base),
        (float(scalable_range[0]), float(scalable_range[1])),
    )
    return _with_fair_target(result, data[figure], buffer)


# ---- B5.20 (pacing) -----------------------------------------------------------------------


@check
def b_pacing(
    data: Mapping[str, xr.Dataset],
    figure: str,
    small_buffer: int,
    small_range: Sequence[float],
    large_buffer: int,
    large_range: Sequence[float],
) -> ClaimResult:
    """Paced / unpaced throughput ratio of one Reno flow at a small and a larger buffer."""
    throughput = analysis_b.throughput_bps(data[figure])
    missing: list[str] = []
    parts = []
    ratios = []
    for buffer, (low, high) in ((small_buffer, small_range), (large_buffer, large_range)):
        paced = _mean(throughput, buffer=buffer, pacing=True)
        plain = _mean(throughput, buffer=buffer, pacing=False)
        ratio = paced / plain if plain else float("nan")
        parts.append(
            _part(
                f"B={buffer}: paced {paced / 1e6:.1f} / not paced {plain / 1e6:.1f} Mb/s = "
                f"{ratio:.2f} (range {low:g}-{high:g})",
                low <= ratio <= high,
                ratio,
                missing=missing,
                what=f"B={buffer}",
            )
        )
        ratios.append(ratio)
    statistic = (f"paced/unpaced throughput at B={small_buffer}", ratios[0])
    return _result(parts, missing, statistic, (float(small_range[0]), float(small_range[1])))


# ---- explanations of disagreements ------------------------------------------------------


@explainer
def b_explain_cells(data: Mapping[str, xr.Dataset], cells: Sequence[Mapping[str, object]]) -> str:
    """What the traces of some cells show, for a claim that is not reproduced.

    Each cell names its ``figure`` and the sweep values selecting it (e.g. ``case:
    Reno.FIFO.20``). For each: φ, the loss rate of each class, the mean occupancy of
    the bottleneck queue against its buffer, and the mean congestion window of the
    bottlenecked flows against their fair window (their share of the capacity the
    background leaves times the smallest RTT measured, in segments).
    """
    parts = []
    for spec in cells:
        selection = {k: v for k, v in spec.items() if k != "figure"}
        ds = data.get(str(spec["figure"]))
        if ds is None or any(v not in ds[k].values for k, v in selection.items()):
            continue
        cell = ds.sel(selection)
        if not bool(cell["link_goodput_capacity_bps"].notnull().any()):
            continue
        mask = metrics.window(cell)
        bulk = analysis_b.bottlenecked(cell)
        flows = int(bulk.sum("flow").max())
        queue = float(cell["queue_pkts"].sel(link=analysis_b.BOTTLENECK).where(mask).mean())
        buffer = float(cell["link_buffer_pkts"].sel(link=analysis_b.BOTTLENECK).max())
        config = json.loads(str(cell["run_config"].values.ravel()[0]))
        mss = float(str(config["tcp"]["mss"]).removesuffix("B"))
        cwnd = float((cell["cwnd_bytes"].where(bulk & mask) / mss).mean())
        rtt = float(cell["rtt_s"].where(bulk).min())
        fair = float(analysis_b.available_capacity_bps(cell).mean()) / max(flows, 1) * rtt
        fair /= 8 * load_scenario_dict(config).tcp.packet_bytes
        seconds = float(ds.attrs["duration_s"]) - float(ds.attrs["warmup_s"])
        name = ", ".join(f"{k}={v}" for k, v in selection.items())
        parts.append(
            f"{spec['figure']} ({name}): phi {float(analysis_b.phi(cell).mean()):.2f}; loss "
            f"{analysis_b.loss_summary(cell, 'bottlenecked')}, "
            f"{analysis_b.loss_summary(cell, 'background')}; "
            f"bottleneck queue {queue:.1f} of {buffer:.0f} packets on average; cwnd "
            f"{cwnd:.0f} segments per flow against a fair window of {fair:.0f} "
            f"(RTT {rtt * 1000:.0f} ms); {seconds:g} s measured per run"
        )
    return "; ".join(parts) if parts else ""
