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


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim."""

    value: str
    verdict: str
    coverage: str = ""
    claim: Claim | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def check(func: Callable[..., ClaimResult]) -> Callable[..., ClaimResult]:
    """Register a check function under its name (used by ``check:`` in the registry)."""
    CHECKS[func.__name__] = func
    return func


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
    from tcprepro.claims import study_a, study_c  # noqa: F401  (register the studies' checks)

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
        results.append(ClaimResult(result.value, result.verdict, result.coverage, claim))
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
    writer = csv.DictWriter(buffer, fieldnames=[*_COLUMNS, "text", "tolerance"])
    writer.writeheader()
    for result, row in zip(results := list(results), _rows(results), strict=True):
        claim = result.claim
        writer.writerow(
            {
                **row,
                "text": claim.text if claim else "",
                "tolerance": claim.tolerance if claim else "",
            }
        )
    path.write_text(buffer.getvalue())


def format_table(results: Iterable[ClaimResult]) -> str:
    """Plain-text table for the terminal."""
    rows = _rows(results)
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) if rows else len(c) for c in _COLUMNS}
    widths = {c: min(w, 60) for c, w in widths.items()}

    def line(values: Mapping[str, str]) -> str:
        return "  ".join(str(values[c])[: widths[c]].ljust(widths[c]) for c in _COLUMNS)

    out = [line({c: c for c in _COLUMNS}), "  ".join("-" * widths[c] for c in _COLUMNS)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _tex_escape(text: str) -> str:
    replacements = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "≈": r"$\approx$",
        "≥": r"$\geq$",
        "≤": r"$\leq$",
        "×": r"$\times$",
        "—": "---",
        "±": r"$\pm$",
        "–": "--",
    }
    return "".join(replacements.get(ch, ch) for ch in text)


def write_tex(results: Iterable[ClaimResult], path: str | Path, caption: str) -> None:
    """Write the claims table as a LaTeX ``longtable`` (verdicts coloured)."""
    colours = {"reproduced": "ForestGreen", "not reproduced": "BrickRed", "pending": "gray"}
    lines = [
        r"\begin{longtable}{@{}P{0.06\linewidth}P{0.29\linewidth}P{0.14\linewidth}"
        r"P{0.27\linewidth}P{0.14\linewidth}@{}}",
        rf"\caption{{{_tex_escape(caption)}}}\\",
        r"\toprule Claim & Text and tolerance & Paper & Reproduced & Verdict \\ \midrule",
        r"\endhead",
    ]
    for result in results:
        claim = result.claim
        assert claim is not None
        verdict = rf"\textcolor{{{colours[result.verdict]}}}{{{result.verdict}}}"
        if result.coverage:
            verdict += rf"\newline{{\footnotesize {_tex_escape(result.coverage)}}}"
        text = (
            rf"{_tex_escape(claim.text)}\newline{{\footnotesize\emph{{Tolerance:}} "
            rf"{_tex_escape(claim.tolerance)}}}"
        )
        lines.append(
            rf"{_tex_escape(claim.id)} & {text} & {_tex_escape(claim.paper)} & "
            rf"{_tex_escape(result.value)} & {verdict} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
