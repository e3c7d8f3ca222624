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
``pending``
    nothing could be computed yet: a required figure or model is missing.

When only part of a claim's cells exist (e.g. the Compound cells before the
Compound model), the verdict covers the available cells and ``coverage``
says what is missing.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import xarray as xr
import yaml

from tcprepro.latex import escape as tex

__all__ = [
    "Claim",
    "ClaimResult",
    "check",
    "check_claims",
    "format_table",
    "load_registry",
    "write_csv",
    "write_tex",
]

VERDICTS = ("reproduced", "not reproduced", "pending")
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


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim."""

    value: str
    verdict: str
    coverage: str = ""
    claim: Claim | None = None
    #: for a claim not reproduced: what the traces show (computed from the data)
    explanation: str = ""

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
    claims = []
    for entry in yaml.safe_load(text):
        entry = dict(entry)
        entry["requires"] = tuple(entry.get("requires", ()))
        claims.append(Claim(**entry))
    ids = [c.id for c in claims]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate claim ids in the registry")
    return claims


def check_claims(
    datasets: Mapping[str, xr.Dataset],
    study: str | None = None,
    registry: Iterable[Claim] | None = None,
) -> list[ClaimResult]:
    """Evaluate the claims of ``study`` (all studies if None) on combined datasets.

    Parameters
    ----------
    datasets
        Combined figure datasets by figure id (e.g. ``{"A1": ds1, "A2": ds2}``).
    """
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
        func = CHECKS[claim.check]
        result = func(datasets, **claim.args)
        explanation = ""
        if result.verdict == "not reproduced" and claim.explain:
            explanation = EXPLAINERS[claim.explain](datasets, **claim.explain_args)
        results.append(
            ClaimResult(result.value, result.verdict, result.coverage, claim, explanation)
        )
    return results


_COLUMNS = ("claim", "paper", "reproduced", "verdict", "coverage")


def _rows(results: Iterable[ClaimResult]) -> list[dict[str, str]]:
    return [
        {
            "claim": r.claim.id if r.claim else "",
            "paper": r.claim.paper if r.claim else "",
            "reproduced": r.value,
            "verdict": r.verdict,
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
        out.append(f"{name:<7} {result.verdict.upper():<15} paper: {claim.paper if claim else ''}")
        for label, text in (
            ("reproduced", result.value),
            ("coverage", result.coverage),
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


def write_tex(results: Iterable[ClaimResult], path: str | Path, caption: str) -> None:
    """Write the claims table as a LaTeX ``longtable`` (verdicts coloured).

    Each row carries the label ``claim:<id>`` (the report's at-a-glance table quotes
    its page). Explanations of disagreements follow the table as a description list.
    """
    results = list(results)
    colours = {
        "reproduced": "ForestGreen",
        "not reproduced": "BrickRed",
        "inconclusive": "Orange",
        "pending": "gray",
    }
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
        colour = colours.get(result.verdict, "black")
        verdict = rf"\textcolor{{{colour}}}{{{tex(result.verdict)}}}"
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
    explained = [r for r in results if r.explanation]
    if explained:
        lines.append(r"\paragraph{Where the reproduction disagrees, and what the traces show.}")
        lines.append(r"\begin{description}")
        lines += [
            rf"\item[{tex(r.claim.id)}] {tex(r.explanation)}"
            for r in explained
            if r.claim is not None
        ]
        lines.append(r"\end{description}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
