"""The claims registry and checker.

This package owns the list of the papers' claims (``registry.yaml``: id, text,
paper value, tolerance, the function that computes the reproduced value and
the figures it reads) and the checker that evaluates them against combined
datasets, producing one :class:`ClaimResult` per claim: the reproduced value,
a verdict and the coverage (how many of the claim's cells could be computed).

Verdicts
--------
``reproduced``
    the reproduced value meets the stated tolerance on every available cell;
``not reproduced``
    it does not (the result is reported, never tuned away);
``inconclusive``
    the runs at hand cannot decide: they miss one of the claim's *regime criteria*
    (stated in the registry before any run, see :mod:`tcprepro.claims.cells`), e.g.
    no loss in the measured window of a loss-driven claim; the unmet criterion is
    given as the "why";
``not run``
    nothing the claim reads ran in this build: none of its cells, a figure this tier
    does not run, or (second verdict) its emulated twin not in this build;
``pending``
    the claim cannot be checked until a model it needs is built (``check: pending``
    in the registry).

Each word has one meaning, defined in :mod:`tcprepro.claims.glossary` (the report's
glossary).

Every verdict carries its coverage: the claim's cells (``cells:`` in the registry)
that ran, "k of n cells" (e.g. the Compound cells before the Compound model, or a
tier that runs part of a sweep). With two or more repetitions, the check is
repeated on bootstrap resamples of the repetitions: the verdict is *robust* when
at least 97.5 % of the resamples give it (the 95 % interval does not cross the
tolerance), *fragile* otherwise; the check's headline number (its *statistic*)
gets its 95 % bootstrap interval. Every claim not reproduced gets a "why":
its explainer's account of the traces, else the regime measures of its cells.

Two verdicts: ns-3 and emulated Linux
-------------------------------------
A claim whose registry entry names an *emulated twin* (``emulated: {figure: X3, as:
D1, reason: ...}``: a cross-check figure run with real Linux TCP on the cells of the
figure ``as``) is judged a second time on that twin's emulated combined dataset
(``data/combined/emulated/<figure>.nc``): the same check, regime criteria and
coverage, the claim's cells and arguments naming the twin instead of ``as`` (the
entry's ``args`` override some of them). That second verdict
(:attr:`ClaimResult.emulated`) is ``not run`` when the build has no emulated runs
("not emulated in this build"). An entry without ``figure`` states why no twin can
judge the claim. :func:`twin_claim` gives the claim as its twin judges it.

Trace figures
-------------
Each claim not reproduced or inconclusive also names the run its "why" rests on
(:attr:`ClaimResult.trace`, a :class:`~tcprepro.claims.cells.TracedRun`): for an
inconclusive claim, the run its first unmet regime criterion names; for one not
reproduced, the first of its explainer's cells (``explain_args: cells``) that ran, else
the first of its ``cells:`` that ran. :func:`tcprepro.figures.why.write_why_figures`
draws the windows, queue and losses of that run (:func:`tcprepro.figures.why.run_trace`)
and :func:`write_tex` sets each figure under its claim's "why".


The package
-----------
- :mod:`~tcprepro.claims.registry`: the registry's entries (:class:`Claim`);
- :mod:`~tcprepro.claims.verdicts`: the verdict words and :class:`ClaimResult`;
- :mod:`~tcprepro.claims.judge`: the registered checks and one claim's verdict;
- :mod:`~tcprepro.claims.confidence`: robust or fragile over bootstrap resamples;
- :mod:`~tcprepro.claims.twins`: the second verdicts, on the emulated twins;
- :mod:`~tcprepro.claims.tables`: the claims tables (CSV, terminal, LaTeX);
- :func:`check_claims` (here): both verdicts of every claim of a study.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import xarray as xr

from tcprepro.claims.confidence import BOOTSTRAP_RESAMPLES as BOOTSTRAP_RESAMPLES
from tcprepro.claims.confidence import FRAGILE_SHARE as FRAGILE_SHARE
from tcprepro.claims.confidence import _resamples as _resamples
from tcprepro.claims.judge import CHECKS as CHECKS
from tcprepro.claims.judge import DECIDING_TIERS as DECIDING_TIERS
from tcprepro.claims.judge import EXPLAINERS as EXPLAINERS
from tcprepro.claims.judge import REGIME_WHY, _judge, check
from tcprepro.claims.judge import SCALE_CRITERIA as SCALE_CRITERIA
from tcprepro.claims.judge import explainer as explainer
from tcprepro.claims.judge import tier_regime as tier_regime
from tcprepro.claims.registry import TWIN_KEYS as TWIN_KEYS
from tcprepro.claims.registry import Claim, load_registry, reading_rules
from tcprepro.claims.tables import WhyFigure, format_table, write_csv, write_tex
from tcprepro.claims.twins import EMULATED_LABEL as EMULATED_LABEL
from tcprepro.claims.twins import NOT_EMULATED as NOT_EMULATED
from tcprepro.claims.twins import ROUTE_LABELS as ROUTE_LABELS
from tcprepro.claims.twins import _judge_twin, backend_label, twin_claim
from tcprepro.claims.verdicts import FAR_SHARE_ONE_SIDED as FAR_SHARE_ONE_SIDED
from tcprepro.claims.verdicts import FAR_SHARE_TWO_SIDED as FAR_SHARE_TWO_SIDED
from tcprepro.claims.verdicts import UNDECIDED, VERDICT_COLOURS, ClaimResult, Margin
from tcprepro.claims.verdicts import VERDICTS as VERDICTS

__all__ = [
    "UNDECIDED",
    "VERDICT_COLOURS",
    "Claim",
    "ClaimResult",
    "Margin",
    "WhyFigure",
    "backend_label",
    "check",
    "check_claims",
    "format_table",
    "load_registry",
    "reading_rules",
    "twin_claim",
    "write_csv",
    "write_tex",
]


def _load_checks() -> None:
    """Import every ``study_*`` module of this package (they register their checks)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("study_"):
            importlib.import_module(f"{__name__}.{module.name}")


def check_claims(
    datasets: Mapping[str, xr.Dataset],
    study: str | None = None,
    registry: Iterable[Claim] | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    emulated: Mapping[str, xr.Dataset] | None = None,
    emulation_note: str = "",
    tier: str | None = None,
    decide: Mapping[str, str] | None = None,
) -> list[ClaimResult]:
    """Evaluate the claims of ``study`` (all studies if None) on combined datasets.

    Parameters
    ----------
    datasets
        Combined figure datasets by figure id (e.g. ``{"A1": ds1, "A2": ds2}``).
    resamples
        Bootstrap resamples of the repetitions per claim (0: no confidence computed).
    emulated
        The emulated combined datasets of the twins by figure id (``{"X3": ds}``): each
        claim with a twin gets its second verdict on them. None: this build has no
        emulated runs, and that verdict is "not run" ("not emulated in this build").
    emulation_note
        Why this build has no emulated runs (the second verdicts' "why" when
        ``emulated`` is None).
    tier
        The tier the datasets' runs are of: at the verify and paper tiers only a failed
        run leaves a claim undecided (:func:`tier_regime`); None applies every criterion.
    decide
        Per claim id, the command that decides the claim and its cost
        (:func:`tcprepro.campaign.plan.decide_commands`), named when it is inconclusive
        below those tiers.

    Raises
    ------
    ValueError
        When a twin's dataset is ns-3's, another figure's, or lacks a dimension of the
        claim's cells.
    """
    _load_checks()
    results = []
    for claim in registry if registry is not None else load_registry():
        if study is not None and claim.study != study:
            continue
        result = _judge(claim, datasets, resamples, tier, (decide or {}).get(claim.id, ""))
        second = _judge_twin(claim, emulated, emulation_note, resamples, tier)
        if second is not None:
            second = _regime_met(result, second, tier)
        results.append(replace(result, emulated=second) if second is not None else result)
    return results


def _regime_met(result: ClaimResult, second: ClaimResult, tier: str | None) -> ClaimResult:
    """The twin's verdict, saying that its runs met the regime the ns-3 runs missed.

    Both verdicts apply the same criteria to their own runs (the emulated runs' loss
    events counted from their recorded random losses and retransmissions,
    :mod:`tcprepro.analysis.regime`); a twin that decides where ns-3 is inconclusive says
    so, lest its verdict read as one that skipped them.
    """
    from tcprepro.claims.cells import regime_text

    decided = second.verdict in ("reproduced", "not reproduced")
    regime = tier_regime(second.claim.regime if second.claim else {}, tier)
    missed = result.verdict == "inconclusive" and result.explanation.startswith(REGIME_WHY)
    if not missed or not decided or not regime_text(regime):
        return second
    met = (
        f"its runs meet the claim's regime criteria at this tier ({regime_text(regime)}), "
        "which the ns-3 runs miss"
    )
    return replace(second, explanation="; ".join(t for t in (met, second.explanation) if t))
