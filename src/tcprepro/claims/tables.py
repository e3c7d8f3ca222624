"""The claims tables: CSV, the terminal's text, and LaTeX with each claim's "why".

:func:`write_tex` sets each claim's trace figure (a :class:`WhyFigure`, drawn by
:func:`tcprepro.figures.why.write_why_figures`) under its "why".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tcprepro.claims.verdicts import UNDECIDED, VERDICT_COLOURS, ClaimResult
from tcprepro.latex import atomic_write
from tcprepro.latex import escape as tex

_COLUMNS = (
    "claim",
    "paper",
    "reproduced",
    "verdict",
    "cells",
    "confidence",
    "coverage",
    "margin",
    "reading",
)


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
            "margin": r.margin.text() if r.margin else "",
            "reading": r.reading_text(),
        }
        for r in results
    ]


#: the second verdict's columns (empty for a claim without emulated twin)
_EMULATED_COLUMNS = (
    "emulated_backend",
    "emulated_verdict",
    "emulated_value",
    "emulated_cells",
    "emulated_coverage",
    "emulated_explanation",
)


def _emulated_row(result: ClaimResult) -> dict[str, str]:
    second = result.emulated
    if second is None:
        return dict.fromkeys(_EMULATED_COLUMNS, "")
    return {
        "emulated_backend": second.backend,
        "emulated_verdict": second.verdict,
        "emulated_value": second.value,
        "emulated_cells": second.cells,
        "emulated_coverage": second.coverage,
        "emulated_explanation": second.explanation,
    }


def write_csv(results: Iterable[ClaimResult], path: str | Path) -> None:
    """Write the claims table as CSV (with the claim text, tolerance and second verdict)."""
    path = Path(path)
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer,
        fieldnames=[
            *_COLUMNS,
            "text",
            "tolerance",
            "explanation",
            *_EMULATED_COLUMNS,
            "model_caveat",
        ],
    )
    writer.writeheader()
    for result, row in zip(results := list(results), _rows(results), strict=True):
        claim = result.claim
        writer.writerow(
            {
                **row,
                "text": claim.text if claim else "",
                "tolerance": claim.tolerance if claim else "",
                "explanation": result.explanation,
                **_emulated_row(result),
                "model_caveat": claim.model_caveat if claim else "",
            }
        )
    atomic_write(path, buffer.getvalue())


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
            ("margin", result.margin.text() if result.margin else ""),
            ("reading", result.reading_text()),
            ("coverage", result.coverage),
            ("confidence", result.confidence),
            ("why", result.explanation),
            ("model caveat", claim.model_caveat if claim else ""),
        ):
            if text:
                out += textwrap.wrap(
                    f"{label}: {text}",
                    width=100,
                    initial_indent=" " * 8,
                    subsequent_indent=" " * 10,
                )
        second = result.emulated
        if second is not None:
            verdict = second.verdict.upper() + (f" on {second.cells}" if second.cells else "")
            out.append(f"{'':<7} {second.backend}: {verdict}")
            for label, text in (
                ("reproduced", second.value),
                ("coverage", second.coverage),
                ("confidence", second.confidence),
                ("why", second.explanation),
            ):
                if text and text != "—":
                    out += textwrap.wrap(
                        f"{label}: {text}",
                        width=100,
                        initial_indent=" " * 10,
                        subsequent_indent=" " * 12,
                    )
    return "\n".join(out)


@dataclass(frozen=True)
class WhyFigure:
    """The trace figure of one claim's "why".

    Drawn by :func:`tcprepro.figures.why.write_why_figures`.
    """

    claim: str
    path: Path
    #: the path LaTeX includes it by
    include: str
    #: its caption (plain text; escaped when written)
    caption: str
    #: its print height in inches (its width: the claims list's)
    height_in: float


def _traced_key(result: ClaimResult) -> tuple[object, ...] | None:
    """The run a claim's trace figure draws (figure, cell, repetition, flow drawn thick)."""
    run = result.trace
    if run is None:
        return None
    return (run.figure, tuple((str(k), str(v)) for k, v in run.cell.items()), run.rep, run.flow)


def _why_item(
    result: ClaimResult, figure: WhyFigure | None, drawn_as: str | None = None
) -> list[str]:
    """The description item of one claim: its "why", then its trace figure.

    ``drawn_as``: the claim whose trace figure already draws the same run; the item then
    points to that figure rather than drawing the run a second time.
    """
    assert result.claim is not None
    lines = [rf"\item[{tex(result.claim.id)}] {tex(result.explanation)}"]
    if figure is not None and drawn_as is not None:
        lines.append(
            rf"\par\noindent Its traces: the same run as Figure~\ref{{why:{drawn_as}}} "
            rf"(why {tex(drawn_as)})."
        )
    elif figure is not None:
        lines += [
            r"\par\nopagebreak\noindent\begin{minipage}{\linewidth}\centering"
            r"\captionsetup{type=figure}",
            rf"\includegraphics[width=\linewidth,height={figure.height_in:g}in,keepaspectratio]"
            rf"{{{figure.include}}}",
            rf"\caption{{\textbf{{Why {tex(result.claim.id)}.}} {tex(figure.caption)}}}"
            rf"\label{{why:{result.claim.id}}}",
            r"\end{minipage}",
        ]
    return lines


def _second_verdict(second: ClaimResult) -> str:
    """The verdict cell's line of the second verdict: "Linux (UML): reproduced, 2 of 4 cells"."""
    colour = VERDICT_COLOURS.get(second.verdict, "black")
    detail = second.cells or (second.coverage if second.verdict in UNDECIDED else "")
    return (
        rf"\newline{{\footnotesize {tex(second.backend)}: "
        rf"\textcolor{{{colour}}}{{{tex(second.verdict)}}}"
        + (f", {tex(detail)}" if detail else "")
        + "}"
    )


def _second_items(results: list[ClaimResult]) -> list[str]:
    """The second verdicts in full: what the emulated twin gave, its coverage and why."""
    seconds = [r for r in results if r.claim is not None and r.emulated is not None]
    if not seconds:
        return []
    lines = [
        r"\paragraph{The same claims on real Linux TCP (emulated twins).}",
        r"\begin{description}",
    ]
    for r in seconds:
        assert r.claim is not None
        assert r.emulated is not None
        assert r.claim.twin is not None
        second = r.emulated
        figure, source = r.claim.twin
        parts = [f"{second.backend}, {figure}'s emulated runs of {source}'s cells: "]
        parts[0] += second.verdict
        if second.value and second.value != "—":
            parts.append(second.value)
        parts += [text for text in (second.coverage, second.confidence, second.explanation) if text]
        sentences = [p.rstrip(". ") for p in parts]  # each a sentence, its first letter capital
        text = ". ".join(s[:1].upper() + s[1:] for s in sentences if s)
        lines.append(rf"\item[{tex(r.claim.id)}] {tex(text)}.")
    lines.append(r"\end{description}")
    return lines


def write_tex(
    results: Iterable[ClaimResult],
    path: str | Path,
    caption: str,
    figures: Mapping[str, WhyFigure] | None = None,
) -> None:
    """Write the claims table as a LaTeX ``longtable`` (verdicts coloured).

    Each row carries the label ``claim:<id>`` (the report's at-a-glance table quotes
    its page). A claim with an emulated twin has its second verdict on a line of its
    verdict cell, and in full in a description list after the table. Explanations of
    disagreements follow the table as a description list,
    each with its claim's trace figure from ``figures``
    (:func:`tcprepro.figures.why.write_why_figures`),
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
        if result.reading:
            verdict += rf"\newline{{\footnotesize\emph{{{tex(result.reading_text())}}}}}"
        if result.coverage:
            verdict += rf"\newline{{\footnotesize {tex(result.coverage)}}}"
        if result.emulated is not None:
            verdict += _second_verdict(result.emulated)
        text = (
            rf"{tex(claim.text)}\newline{{\footnotesize\emph{{Tolerance:}} "
            rf"{tex(claim.tolerance)}}}"
        )
        if claim.model_caveat:
            text += rf"\newline{{\footnotesize\emph{{Model caveat:}} {tex(claim.model_caveat)}}}"
        value = tex(result.value)
        if result.margin is not None:
            value += rf"\newline{{\footnotesize {tex(result.margin.text())}}}"
        lines.append(  # the label: the at-a-glance table gives the page of each claim
            rf"\phantomsection\label{{claim:{claim.id}}}{tex(claim.id)} & {text} & "
            rf"{tex(claim.paper)} & {value} & {verdict} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    lines += _second_items(results)
    explained = [
        r for r in results if r.claim is not None and (r.explanation or r.claim.id in figures)
    ]
    if explained:
        lines.append(r"\paragraph{Where the reproduction disagrees or cannot decide, and why.}")
        lines.append(r"\begin{description}")
        drawn_runs: dict[tuple[object, ...], str] = {}  # a run drawn once, by the first claim
        for r in explained:
            assert r.claim is not None
            figure = figures.get(r.claim.id)
            key = _traced_key(r) if figure is not None else None
            lines += _why_item(r, figure, drawn_runs.get(key) if key is not None else None)
            if key is not None:
                drawn_runs.setdefault(key, r.claim.id)
        lines.append(r"\end{description}")
    atomic_write(Path(path), "\n".join(lines) + "\n")
