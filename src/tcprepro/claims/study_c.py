"""Checks of study C's claims (Baiocchi, Castellani, Vacirca, YeAH-TCP, PFLDnet 2007).

Each function reads combined datasets (C1: dimensions ``second``, ``rep``; C3.1:
``protocol``, ``rtt``, ``buffer``, ``rep``; C3.6: ``protocol``, ``loss``, ``rep``)
through :mod:`tcprepro.analysis.study_c` and returns a
:class:`~tcprepro.claims.ClaimResult`. The value string always carries the
reproduced numbers, whatever the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import xarray as xr

from tcprepro.analysis import study_c as analysis_c
from tcprepro.claims import ClaimResult, check
from tcprepro.claims.glossary import plural, ratio
from tcprepro.units import format_number

__all__: list[str] = []


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "not reproduced"


def _cell_runs(ds: xr.Dataset, dim: str, value: str) -> list[xr.Dataset]:
    """The runs (one per repetition) of one cell; empty when the cell has no run."""
    if value not in [str(v) for v in ds[dim].values]:
        return []
    cell = ds.sel({dim: value})
    runs = [cell.isel(rep=i) for i in range(cell.sizes["rep"])]
    return [run for run in runs if bool(run["cwnd_bytes"].notnull().any())]


@check
def c_yeah_flows_converge(
    data: Mapping[str, xr.Dataset],
    figure: str,
    factor: float,
    smooth_s: float,
    max_rtts: float,
    end_tolerance: float,
) -> ClaimResult:
    """Two YeAH flows: the later one's window reaches the first's quickly, and stays.

    Per repetition of the (second = YeahPaper) cell: the time from the second flow's
    start until the ``smooth_s``-mean windows are within ``factor`` of each other,
    in base RTTs of the path; and the relative difference of the mean windows over
    the last third of the run.
    """
    runs = _cell_runs(data[figure], "second", "YeahPaper")
    if not runs:
        return ClaimResult("—", "not run", f"{figure} has no YeahPaper/YeahPaper run")
    parts, ok, slowest = [], True, 0.0
    for run in runs:
        rtt_s = analysis_c.path_rtt_s(str(run["run_config"].values))
        converged_s = analysis_c.convergence_time_s(run, factor=factor, smooth_s=smooth_s)
        cwnd = analysis_c.cwnd_pkts(run)
        last = run["time"] > float(run["time"].max()) * 2 / 3
        first, second = (float(cwnd.sel(flow=f).where(last).mean()) for f in ("f1", "f2"))
        gap = abs(first - second) / max(first, second)
        rtts = converged_s / rtt_s
        slowest = max(slowest, float(rtts) if np.isfinite(rtts) else float("inf"))
        ok &= bool(np.isfinite(rtts) and rtts <= max_rtts and gap <= end_tolerance)
        when = "never" if not np.isfinite(rtts) else f"after {converged_s:.1f} s ({rtts:.0f} RTTs)"
        parts.append(
            f"rep {int(run['rep'])}: within x{factor:g} {when}; last third cwnd "
            f"{first:.0f} vs {second:.0f} segments ({gap:.0%} apart)"
        )
    return ClaimResult(
        "; ".join(parts),
        _verdict(ok),
        plural(len(runs), "repetition"),
        statistic=("slowest convergence (RTTs)", slowest),
        bounds=(None, float(max_rtts)),
    )


@check
def c_yeah_against_reno(
    data: Mapping[str, xr.Dataset],
    figure: str,
    min_slow_fraction: float,
    share_range: Sequence[float],
) -> ClaimResult:
    """YeAH against a later Reno flow: cwnd falls below count_reno, then Reno-like sharing.

    Per repetition of the (second = NewReno) cell: YeAH's window must fall below its
    count_reno estimate after the Reno flow starts; from then on YeAH must be in Slow
    (Reno) mode in at least ``min_slow_fraction`` of the samples, and its share of the
    goodput over the second half of the run must lie in ``share_range``.
    """
    runs = _cell_runs(data[figure], "second", "NewReno")
    if not runs:
        return ClaimResult("—", "not run", f"{figure} has no YeahPaper/NewReno run")
    if "cc_RenoCount" not in data[figure]:
        return ClaimResult("—", "not run", f"{figure} did not sample YeAH's count_reno")
    low, high = share_range
    parts, ok, shares = [], True, []
    for run in runs:
        seen = analysis_c.reno_detection(run)
        detected = np.isfinite(seen["detected_s"])
        ok &= bool(
            detected and seen["slow_fraction"] >= min_slow_fraction and low <= seen["share"] <= high
        )
        shares.append(float(seen["share"]))
        when = f"{seen['detected_s']:.1f} s after Reno's start" if detected else "never"
        slow = (
            f"Slow mode {seen['slow_fraction']:.0%} of the time after"
            if np.isfinite(seen["slow_fraction"])
            else "so no time in Slow mode after it"
        )
        parts.append(
            f"rep {int(run['rep'])}: cwnd < count_reno {when}; {slow}; YeAH's share "
            f"{seen['share']:.2f} (second half)"
        )
    return ClaimResult(
        "; ".join(parts),
        _verdict(ok),
        plural(len(runs), "repetition"),
        statistic=("YeAH's mean share of the goodput", float(np.mean(shares))),
        bounds=(float(low), float(high)),
    )


@check
def c_yeah_low_stress_full_utilisation(
    data: Mapping[str, xr.Dataset],
    figure: str,
    others: Sequence[str],
    min_cell_fraction: float | str,
    min_utilisation: float,
) -> ClaimResult:
    """YeAH's queue and loss against the other high-speed variants, and its utilisation.

    Per (RTT, buffer) cell of the two-flow runs, means over repetitions: is YeAH's mean
    queue the lowest (ties count) of YeAH and ``others``, is its loss probability the
    lowest, is its utilisation at least ``min_utilisation``? Each must hold in at least
    ``min_cell_fraction`` of the cells where YeAH and another variant ran (a number or a
    fraction such as "2/3", compared exactly: 4 of 6 cells are 2/3).
    """
    table = analysis_c.pair_metrics(data[figure]).mean("rep")
    present = [str(p) for p in table["protocol"].values]
    rivals = [p for p in others if p in present]
    if "YeahPaper" not in present or not rivals:
        absent = ["YeahPaper"] if "YeahPaper" not in present else list(others)
        return ClaimResult("—", "not run", f"{figure} has no run of {', '.join(absent)}")
    yeah = table.sel(protocol="YeahPaper")
    rest = table.sel(protocol=rivals)
    cells = (yeah["utilisation"].notnull() & rest["utilisation"].notnull().any("protocol")).values
    n = int(cells.sum())
    if n == 0:
        return ClaimResult("—", "not run", "no cell has YeahPaper and another variant")
    queue_ok = (yeah["queue_pkts"] <= rest["queue_pkts"].min("protocol")).values[cells]
    # drops per flow where the run records them (ns-3); otherwise (Linux's qdiscs count
    # drops per queue) the segments retransmitted, named as such in the value
    measured = np.isfinite(table["loss_probability"].values).any()
    loss_name = "loss_probability" if measured else "retransmission_probability"
    loss_ok = (yeah[loss_name] <= rest[loss_name].min("protocol")).values[cells]
    util = yeah["utilisation"].values[cells]
    util_ok = util >= min_utilisation
    fraction = Fraction(str(min_cell_fraction))
    need = fraction * n
    ok = queue_ok.sum() >= need and loss_ok.sum() >= need and util_ok.sum() >= need
    lost = "loss" if measured else "retransmission"
    shares = {
        f"lowest mean queue in {ratio(int(queue_ok.sum()), n)}": queue_ok.sum() / n,
        f"lowest {lost} probability in {ratio(int(loss_ok.sum()), n)}": loss_ok.sum() / n,
        f"utilisation >= {min_utilisation:.0%} in {ratio(int(util_ok.sum()), n)}": util_ok.sum()
        / n,
    }
    ratio_queue = (yeah["queue_pkts"] / rest["queue_pkts"].min("protocol")).values[cells]
    value = (
        f"lowest mean queue in {ratio(int(queue_ok.sum()), n)} (YeAH / best other: "
        f"median {np.nanmedian(ratio_queue):.2f}); lowest "
        f"{'loss' if measured else 'retransmission'} probability in "
        f"{ratio(int(loss_ok.sum()), n)}; utilisation >= {min_utilisation:.0%} in "
        f"{ratio(int(util_ok.sum()), n)} (min {np.nanmin(util):.0%}, median {np.median(util):.0%})"
    )
    against = ", ".join(rivals)
    if not measured:
        against += "; retransmissions, as these runs do not record drops per flow"
    return ClaimResult(
        value,
        _verdict(bool(ok)),
        f"{plural(n)}, against {against}",
        statistic=("smallest share of the cells a part holds in", float(min(shares.values()))),
        bounds=(float(fraction), None),
        parts=tuple((text, bool(share * n >= need)) for text, share in shares.items()),
    )


@check
def c_yeah_robust_to_random_loss(
    data: Mapping[str, xr.Dataset],
    figure: str,
    max_loss: float,
    min_utilisation: float,
    reference: str,
) -> ClaimResult:
    """YeAH's utilisation under random loss: high up to ``max_loss``, never below Reno's."""
    table = analysis_c.robustness(data[figure])["utilisation"].mean("rep")
    present = [str(p) for p in table["protocol"].values]
    if "YeahPaper" not in present:
        return ClaimResult("—", "not run", f"{figure} has no YeahPaper run")
    losses = np.asarray(table["loss"].values, dtype=float)
    yeah = table.sel(protocol="YeahPaper").values
    low = (losses <= max_loss) & np.isfinite(yeah)
    if not low.any():
        return ClaimResult(
            "—", "not run", f"no random loss rate <= {format_number(max_loss)} in this build"
        )
    ok = bool((yeah[low] >= min_utilisation).all())
    lowest = format_number(max_loss)
    judged = [(f"YeAH {yeah[low].min():.0%} at p <= {lowest}", ok)]
    parts = [f"YeAH {u:.0%} at p = {p:g}" for p, u in zip(losses, yeah, strict=True)]
    if reference in present:
        ref = table.sel(protocol=reference).values
        both = np.isfinite(yeah) & np.isfinite(ref)
        name = analysis_c.LABELS.get(reference, reference)
        below = [
            f"p = {p:g}: {u:.2%} vs {r:.2%}"
            for p, u, r in zip(losses[both], yeah[both], ref[both], strict=True)
            if u < r
        ]
        judged.append(
            (f"YeAH below {name} at " + ", ".join(below), False)
            if below
            else (f"YeAH at least {name}'s at every rate", True)
        )
        ok &= not below
        parts.append(f"{name}: " + ", ".join(f"{u:.0%}" for u in ref[both]))
    return ClaimResult(
        "; ".join(parts),
        _verdict(ok),
        f"{int(np.isfinite(yeah).sum())} rates",
        statistic=(
            f"lowest YeAH utilisation at p <= {format_number(max_loss)}",
            float(yeah[low].min()),
        ),
        bounds=(float(min_utilisation), None),
        parts=tuple(judged),
    )
