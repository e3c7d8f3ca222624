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
    (stated in the registry before any run, see :mod:`tcprepro.claims.regime`), e.g.
    no loss in the measured window of a loss-driven claim; the unmet criterion is
    given as the "why";
``pending``
    nothing could be computed yet: a required figure or model is missing, or none
    of the claim's cells ran.

Every verdict carries its coverage: the claim's cells (``cells:`` in the registry)
that ran, "k of n cells" (e.g. the Compound cells before the Compound model, or a
tier that runs part of a sweep). With two or more repetitions, the check is
repeated on bootstrap resamples of the repetitions: the verdict is *robust* when
at least 97.5 % of the resamples give it (the 95 % interval does not cross the
tolerance), *fragile* otherwise; the check's headline number (its *statistic*)
gets its 95 % bootstrap interval. Every claim not reproduced gets a "why":
its explainer's account of the traces, else the regime measures of its cells.

Trace figures
-------------
Each claim not reproduced or inconclusive also names the run its "why" rests on
(:attr:`ClaimResult.trace`, a :class:`~tcprepro.claims.regime.TracedRun`): for an
inconclusive claim, the run its first unmet regime criterion names; for one not
reproduced, the first of its explainer's cells (``explain_args: cells``) that ran, else
the first of its ``cells:`` that ran. :func:`write_why_figures` draws the windows, queue
and losses of that run (:func:`tcprepro.figures.why.run_trace`) and :func:`write_tex`
sets each figure under its claim's "why".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from itertools import product
from math import prod
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
import yaml

from tcprepro.latex import atomic_write
from tcprepro.latex import escape as tex

if TYPE_CHECKING:
    from tcprepro.claims.regime import TracedRun

__all__ = [
    "VERDICT_COLOURS",
    "Claim",
    "ClaimResult",
    "WhyFigure",
    "check",
    "check_claims",
    "format_table",
    "load_registry",
    "write_csv",
    "write_tex",
    "write_why_figures",
]

VERDICTS = ("reproduced", "not reproduced", "inconclusive", "pending")
#: colour of each verdict in the claims tables and the report (xcolor dvipsnames)
VERDICT_COLOURS = {
    "reproduced": "ForestGreen",
    "not reproduced": "BrickRed",
    "inconclusive": "BurntOrange",
    "pending": "gray",
}
#: resamples of the repetitions per claim (all of them when there are fewer)
BOOTSTRAP_RESAMPLES = 100
#: a verdict is fragile when more than this share of the resamples disagree with it
FRAGILE_SHARE = 0.025
CHECKS: dict[str, Callable[..., ClaimResult]] = {}
EXPLAINERS: dict[str, Callable[..., str]] = {}


@dataclass(frozen=True)
class Claim:
    """One registry entry."""

    id: str
    study: str
    text: str
    paper: str
    tolerance: str
    check: str
    args: Mapping[str, Any] = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    pending: str = ""
    #: function (registered with @explainer) that explains a disagreement from the data
    explain: str = ""
    explain_args: Mapping[str, Any] = field(default_factory=dict)
    #: the cells the claim reads, per figure (see tcprepro.claims.regime)
    cells: tuple[Mapping[str, Any], ...] = ()
    #: what its runs must show to decide it (see tcprepro.claims.regime)
    regime: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim."""

    value: str
    verdict: str
    coverage: str = ""
    claim: Claim | None = None
    #: why: for a claim not reproduced, what the traces show (computed from the data);
    #: for an inconclusive one, the regime criteria its runs miss
    explanation: str = ""
    #: the check's headline number and what it is (bootstrapped over repetitions)
    statistic: tuple[str, float] | None = None
    #: "k of n cells" of the claim's cells that ran
    cells: str = ""
    #: robust / fragile over bootstrap resamples of the repetitions, with the interval
    confidence: str = ""
    #: the run the "why" rests on (not reproduced or inconclusive; None if none ran)
    trace: TracedRun | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


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


def _load_checks() -> None:
    """Import every ``study_*`` module of this package (they register their checks)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("study_"):
            importlib.import_module(f"{__name__}.{module.name}")


def load_registry(path: str | Path | None = None) -> list[Claim]:
    """Read the registry (the packaged ``registry.yaml`` by default)."""
    if path is None:
        text = resources.files(__package__).joinpath("registry.yaml").read_text()
    else:
        text = Path(path).read_text()
    from tcprepro.claims.regime import REGIME_KEYS, validate_claim_cells

    claims = []
    for entry in yaml.safe_load(text):
        entry = dict(entry)
        entry["requires"] = tuple(entry.get("requires", ()))
        entry["cells"] = tuple(entry.get("cells", ()))
        validate_claim_cells(entry["id"], entry["cells"])
        unknown = set(entry.get("regime", {})) - REGIME_KEYS
        if unknown:
            raise ValueError(f"{entry['id']}: unknown regime criteria {sorted(unknown)}")
        claims.append(Claim(**entry))
    ids = [c.id for c in claims]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate claim ids in the registry")
    return claims


def _resamples(
    datasets: Mapping[str, xr.Dataset], figures: Iterable[str], limit: int
) -> Iterator[dict[str, list[int]]]:
    """Bootstrap resamples of the repetitions of each figure that has two or more.

    Every ordered resample when there are at most ``limit`` of them (2 repetitions: 4,
    3 repetitions: 27), else ``limit`` drawn with a fixed seed.
    """
    reps = {f: datasets[f].sizes.get("rep", 1) for f in figures if f in datasets}
    reps = {f: n for f, n in reps.items() if n >= 2}
    if not reps or limit <= 0:
        return
    if prod(n**n for n in reps.values()) <= limit:
        choices = [list(product(range(n), repeat=n)) for n in reps.values()]
        for combo in product(*choices):
            yield {f: list(idx) for f, idx in zip(reps, combo, strict=True)}
        return
    rng = np.random.default_rng(0)
    for _ in range(limit):
        yield {f: [int(i) for i in rng.integers(0, n, n)] for f, n in reps.items()}


def _confidence(
    claim: Claim,
    func: Callable[..., ClaimResult],
    datasets: Mapping[str, xr.Dataset],
    point: ClaimResult,
    limit: int,
) -> str:
    """Robust or fragile over bootstrap resamples of the repetitions (see the module doc)."""
    if limit <= 0:
        return ""
    verdicts, values = [], []
    for resample in _resamples(datasets, claim.requires, limit):
        data = dict(datasets)
        for figure, index in resample.items():
            data[figure] = datasets[figure].isel(rep=index).assign_coords(rep=np.arange(len(index)))
        result = func(data, **claim.args)
        verdicts.append(result.verdict)
        if result.statistic is not None and np.isfinite(result.statistic[1]):
            values.append(result.statistic[1])
    if not verdicts:
        return "one repetition: no interval"
    agree = sum(v == point.verdict for v in verdicts)
    label = "fragile" if 1 - agree / len(verdicts) > FRAGILE_SHARE else "robust"
    text = f"{label}: {agree} of {len(verdicts)} resamples of the repetitions agree"
    if values and point.statistic is not None:
        low, high = np.percentile(values, [2.5, 97.5])
        name, value = point.statistic
        text += f"; {name} {value:.3g} (95 % interval {low:.3g} to {high:.3g})"
    return text


def _generic_why(claim: Claim, datasets: Mapping[str, xr.Dataset]) -> str:
    """What the regime measures of the claim's cells show (when no explainer speaks)."""
    from tcprepro.claims.regime import describe_cells

    return describe_cells(claim.cells, datasets)


def check_claims(
    datasets: Mapping[str, xr.Dataset],
    study: str | None = None,
    registry: Iterable[Claim] | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[ClaimResult]:
    """Evaluate the claims of ``study`` (all studies if None) on combined datasets.

    Parameters
    ----------
    datasets
        Combined figure datasets by figure id (e.g. ``{"A1": ds1, "A2": ds2}``).
    resamples
        Bootstrap resamples of the repetitions per claim (0: no confidence computed).
    """
    from tcprepro.claims.regime import cell_coverage, first_present_run, unmet_regime

    _load_checks()
    results = []
    for claim in registry if registry is not None else load_registry():
        if study is not None and claim.study != study:
            continue
        missing = [f for f in claim.requires if f not in datasets]
        if claim.check == "pending" or missing:
            reason = claim.pending or f"figure(s) {', '.join(missing)} not generated"
            results.append(ClaimResult("—", "pending", reason, claim))
            continue
        cells = ""
        if claim.cells:
            coverage = cell_coverage(claim.cells, datasets)
            cells = coverage.text()
            if coverage.present == 0:
                results.append(
                    ClaimResult("—", "pending", "none of the claim's cells ran", claim, cells=cells)
                )
                continue
        func = CHECKS[claim.check]
        result = replace(func(datasets, **claim.args), claim=claim, cells=cells)
        if result.verdict == "pending":
            results.append(result)
            continue
        unmet = unmet_regime(claim.regime, claim.cells, datasets) if claim.regime else []
        if unmet:
            why = "inconclusive at this tier: " + "; ".join(u.text for u in unmet)
            results.append(
                replace(result, verdict="inconclusive", explanation=why, trace=unmet[0].run)
            )
            continue
        explanation, trace = "", None
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
        results.append(replace(result, explanation=explanation, confidence=confidence, trace=trace))
    return results


_COLUMNS = ("claim", "paper", "reproduced", "verdict", "cells", "confidence", "coverage")


def _rows(results: Iterable[ClaimResult]) -> list[dict[str, str]]:
    return [
        {
            "claim": r.claim.id if r.claim else "",
            "paper": r.claim.paper if r.claim else "",
            "reproduced": r.value,
            "verdict": r.verdict,
            "cells": r.cells,
            "confidence": r.confidence,
            "coverage": r.coverage,
        }
        for r in results
    ]


def write_csv(results: Iterable[ClaimResult], path: str | Path) -> None:
    """Write the claims table as CSV (with the claim text and tolerance)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[*_COLUMNS, "text", "tolerance", "explanation"])
    writer.writeheader()
    for result, row in zip(results := list(results), _rows(results), strict=True):
        claim = result.claim
        writer.writerow(
            {
                **row,
                "text": claim.text if claim else "",
                "tolerance": claim.tolerance if claim else "",
                "explanation": result.explanation,
            }
        )
    path.write_text(buffer.getvalue())


def format_table(results: Iterable[ClaimResult]) -> str:
    """The claims as text for the terminal: one block per claim, nothing truncated."""
    import textwrap

    out = []
    for result in results:
        claim = result.claim
        name = claim.id if claim else "?"
        verdict = result.verdict.upper() + (f" on {result.cells}" if result.cells else "")
        out.append(f"{name:<7} {verdict}")
        for label, text in (
            ("paper", claim.paper if claim else ""),
            ("reproduced", result.value),
            ("coverage", result.coverage),
            ("confidence", result.confidence),
            ("why", result.explanation),
        ):
            if text:
                out += textwrap.wrap(
                    f"{label}: {text}",
                    width=100,
                    initial_indent=" " * 8,
                    subsequent_indent=" " * 10,
                )
    return "\n".join(out)


@dataclass(frozen=True)
class WhyFigure:
    """The trace figure of one claim's "why" (see :func:`write_why_figures`)."""

    claim: str
    path: Path
    #: the path LaTeX includes it by
    include: str
    #: its caption (plain text; escaped when written)
    caption: str


def write_why_figures(
    results: Iterable[ClaimResult],
    datasets: Mapping[str, xr.Dataset],
    directory: str | Path,
    include_root: str | Path | None = None,
) -> dict[str, WhyFigure]:
    """Draw the run behind the "why" of each claim not reproduced or inconclusive.

    One PDF per such claim whose run is in ``datasets`` (``<directory>/<claim>.pdf``,
    with what it drew beside it as ``<claim>.json``). The directory is written afresh:
    the figures are drawn into a temporary sibling that then replaces it, so a figure
    of a claim now reproduced does not linger, and a failed drawing leaves the old
    directory whole.

    Parameters
    ----------
    include_root
        The directory LaTeX resolves graphics paths from (the report's, ``paper``):
        each figure's include path is relative to it (else the path as given).

    Returns
    -------
    dict
        The figures by claim id.
    """
    import os
    import shutil

    from tcprepro.figures.common import drawn, save_figure
    from tcprepro.figures.why import run_trace

    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.with_name(f".{directory.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    out = {}
    try:
        for result in results:
            claim, run = result.claim, result.trace
            if claim is None or run is None or run.figure not in datasets:
                continue
            if result.verdict not in ("not reproduced", "inconclusive"):
                continue
            fig = run_trace(datasets[run.figure], run.cell, run.rep, run.flow)
            facts = drawn(fig)
            statements = " ".join(facts.statements) if facts else ""
            save_figure(fig, staging / f"{claim.id}.pdf")
            path = directory / f"{claim.id}.pdf"
            include = Path(os.path.relpath(path, include_root)) if include_root else path
            caption = f"The traces of {run.reason}. {statements}"
            out[claim.id] = WhyFigure(claim.id, path, include.as_posix(), caption)
        old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
        if directory.exists():
            os.replace(directory, old)
        os.replace(staging, directory)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def _why_item(result: ClaimResult, figure: WhyFigure | None) -> list[str]:
    """The description item of one claim: its "why", then its trace figure."""
    from tcprepro.figures.why import HEIGHT_IN  # its print height (its width: the list's)

    assert result.claim is not None
    lines = [rf"\item[{tex(result.claim.id)}] {tex(result.explanation)}"]
    if figure is not None:
        lines += [
            r"\par\nopagebreak\noindent\begin{minipage}{\linewidth}\centering"
            r"\captionsetup{type=figure}",
            rf"\includegraphics[width=\linewidth,height={HEIGHT_IN:g}in,keepaspectratio]"
            rf"{{{figure.include}}}",
            rf"\caption{{\textbf{{Why {tex(result.claim.id)}.}} {tex(figure.caption)}}}"
            rf"\label{{why:{result.claim.id}}}",
            r"\end{minipage}",
        ]
    return lines


def write_tex(
    results: Iterable[ClaimResult],
    path: str | Path,
    caption: str,
    figures: Mapping[str, WhyFigure] | None = None,
) -> None:
    """Write the claims table as a LaTeX ``longtable`` (verdicts coloured).

    Each row carries the label ``claim:<id>`` (the report's at-a-glance table quotes
    its page). Explanations of disagreements follow the table as a description list,
    each with its claim's trace figure from ``figures`` (:func:`write_why_figures`),
    captioned and labelled ``why:<id>``.
    """
    results = list(results)
    figures = figures or {}
    head = r"\toprule Claim & Text and tolerance & Paper & Reproduced & Verdict \\ \midrule"
    lines = [
        r"\begin{longtable}{@{}P{0.07\linewidth}P{0.3\linewidth}P{0.14\linewidth}"
        r"P{0.25\linewidth}P{0.14\linewidth}@{}}",
        rf"\caption{{{tex(caption)}}}\\",
        head,
        r"\endfirsthead",
        head,
        r"\endhead",
    ]
    for result in results:
        claim = result.claim
        assert claim is not None
        colour = VERDICT_COLOURS.get(result.verdict, "black")
        verdict = rf"\textcolor{{{colour}}}{{{tex(result.verdict)}}}"
        if result.cells:
            verdict += rf"\newline{{\footnotesize on {tex(result.cells)}}}"
        if result.confidence:
            verdict += rf"\newline{{\footnotesize {tex(result.confidence)}}}"
        if result.coverage:
            verdict += rf"\newline{{\footnotesize {tex(result.coverage)}}}"
        text = (
            rf"{tex(claim.text)}\newline{{\footnotesize\emph{{Tolerance:}} "
            rf"{tex(claim.tolerance)}}}"
        )
        lines.append(  # the label: the at-a-glance table gives the page of each claim
            rf"\phantomsection\label{{claim:{claim.id}}}{tex(claim.id)} & {text} & "
            rf"{tex(claim.paper)} & {tex(result.value)} & {verdict} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    explained = [
        r for r in results if r.claim is not None and (r.explanation or r.claim.id in figures)
    ]
    if explained:
        lines.append(r"\paragraph{Where the reproduction disagrees or cannot decide, and why.}")
        lines.append(r"\begin{description}")
        for r in explained:
            assert r.claim is not None
            lines += _why_item(r, figures.get(r.claim.id))
        lines.append(r"\end{description}")
    atomic_write(Path(path), "\n".join(lines) + "\n")
