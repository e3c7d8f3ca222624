"""One verdict of one claim: its registered check, regime criteria, "why" and confidence.

The study modules register their checks (:func:`check`) and explainers
(:func:`explainer`); :func:`tier_regime` says which regime criteria a tier applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import xarray as xr

from tcprepro.claims.confidence import _confidence
from tcprepro.claims.registry import Claim
from tcprepro.claims.verdicts import UNDECIDED, ClaimResult

CHECKS: dict[str, Callable[..., ClaimResult]] = {}


EXPLAINERS: dict[str, Callable[..., str]] = {}


def check(func: Callable[..., ClaimResult]) -> Callable[..., ClaimResult]:
    """Register a check function under its name (used by ``check:`` in the registry)."""
    CHECKS[func.__name__] = func
    return func


def explainer(func: Callable[..., str]) -> Callable[..., str]:
    """Register a function explaining a disagreement (``explain:`` in the registry).

    It receives the datasets and the claim's ``explain_args`` and returns prose that
    quotes numbers computed from the traces (queue occupancy, losses, windows ...).
    """
    EXPLAINERS[func.__name__] = func
    return func


def _generic_why(claim: Claim, datasets: Mapping[str, xr.Dataset]) -> str:
    """What the regime measures of the claim's cells show (when no explainer speaks)."""
    from tcprepro.claims.cells import describe_cells

    return describe_cells(claim.cells, datasets)


#: how the "why" of a verdict the regime made inconclusive begins (the unmet criteria follow)
REGIME_WHY = "inconclusive at this tier: "


#: tiers at the papers' own durations and repetitions: a claim is decided there (R14)
DECIDING_TIERS = ("verify", "paper")


#: regime criteria of statistics a scaled-down run may lack: they only apply below the
#: deciding tiers, where the papers' own set-up could fail them (R14)
SCALE_CRITERIA = ("min_loss_events", "min_rtts", "min_completed_transfers")


def tier_regime(regime: Mapping[str, Any], tier: str | None) -> dict[str, Any]:
    """The regime criteria a tier applies (reading rule R14).

    All of them below the papers' settings; at the verify and paper tiers only those that
    catch a failed run (a flow never past its first slow start). ``tier`` None: all (an
    unknown tier is not deciding).
    """
    if tier not in DECIDING_TIERS:
        return dict(regime)
    return {k: v for k, v in regime.items() if k not in SCALE_CRITERIA}


def _judge(
    claim: Claim,
    datasets: Mapping[str, xr.Dataset],
    resamples: int,
    tier: str | None = None,
    decide: str = "",
) -> ClaimResult:
    """One verdict of ``claim`` on ``datasets`` (see the module doc).

    ``tier``: the tier the runs are of (the regime it applies, :func:`tier_regime`);
    ``decide``: the command that decides the claim and its cost, named in an
    inconclusive verdict's "why" below the deciding tiers.
    """
    from tcprepro.claims.cells import cell_coverage, first_present_run, unmet_regime

    if claim.check == "pending":
        return ClaimResult("—", "pending", claim.pending or "its model is not built", claim)
    missing = [f for f in claim.requires if f not in datasets]
    if missing:
        reason = f"{'figure' if len(missing) == 1 else 'figures'} {', '.join(missing)} not run"
        reason += " in this build"
        return ClaimResult("—", "not run", reason, claim)
    cells = ""
    if claim.cells:
        coverage = cell_coverage(claim.cells, datasets)
        cells = coverage.text()
        if coverage.present == 0:
            return ClaimResult("—", "not run", "none of the claim's cells ran", claim, cells=cells)
    func = CHECKS[claim.check]
    result = replace(func(datasets, **claim.args), claim=claim, cells=cells)
    if result.verdict in UNDECIDED:
        return result
    if result.verdict in ("reproduced", "not reproduced"):  # kept under an inconclusive one
        result = replace(result, held=result.verdict == "reproduced")
    regime = tier_regime(claim.regime, tier)
    unmet = unmet_regime(regime, claim.cells, datasets) if regime else []
    if unmet:
        why = REGIME_WHY + "; ".join(u.text for u in unmet)
        if decide and tier not in DECIDING_TIERS:
            why += f". Decided by {decide}"
        # the trace: the run the "why" names (the first unmet criterion's, furthest from
        # the regime), else the run the check names as failing, else the cells the
        # claim's explanation is about
        explained = claim.explain_args.get("cells")
        trace = unmet[0].run or result.trace
        if trace is None and explained:
            trace = first_present_run(explained, datasets, "the first explained cell that ran")
        return replace(result, verdict="inconclusive", explanation=why, trace=trace)
    explanation, trace = "", None
    if result.verdict == "inconclusive":  # the check's own: a part with no run in its regime
        explanation = result.explanation
        trace = result.trace or first_present_run(
            claim.cells, datasets, "the claim's first cell that ran"
        )
    if result.verdict == "not reproduced":
        if claim.explain:
            explanation = EXPLAINERS[claim.explain](datasets, **claim.explain_args)
        if not explanation:
            explanation = _generic_why(claim, datasets)
        explained = claim.explain_args.get("cells")
        if explained:
            trace = first_present_run(explained, datasets, "the first explained cell that ran")
        if trace is None:
            trace = first_present_run(claim.cells, datasets, "the claim's first cell that ran")
    confidence = _confidence(claim, func, datasets, result, resamples)
    return replace(result, explanation=explanation, confidence=confidence, trace=trace)
