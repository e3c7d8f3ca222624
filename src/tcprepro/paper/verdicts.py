r"""The verdicts as the claims CSVs hold them, and as the report prints them."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from tcprepro.claims import VERDICT_COLOURS
from tcprepro.latex import escape as tex


def _read_values(path: str | Path) -> list[dict[str, str]]:
    """(claim, verdict, value) of a claims CSV."""
    with Path(path).open(newline="") as handle:
        return [
            {"claim": row["claim"], "verdict": row["verdict"], "value": row["reproduced"]}
            for row in csv.DictReader(handle)
        ]


def read_verdicts(paths: Iterable[str | Path]) -> list[dict[str, str]]:
    """Rows (claim, study, verdict, cells, coverage, confidence) of ``data/claims/<study>.csv``.

    The study is the CSV's stem; every verdict string the CSVs hold is kept as is (a
    verdict the report has no colour for is printed in black). ``cells`` is the claim's
    "k of n cells" when the CSV gives it (empty otherwise); ``emulated_verdict``,
    ``emulated_backend`` and ``emulated_cells`` its second verdict, on its emulated twin
    (empty for a claim without twin or a CSV without the columns).
    """
    rows = []
    for path in sorted(Path(p) for p in paths):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                rows.append(
                    {
                        "claim": row["claim"],
                        "study": path.stem,
                        "verdict": row["verdict"],
                        "cells": row.get("cells", "") or "",
                        "coverage": row.get("coverage", "") or "",
                        "confidence": row.get("confidence", "") or "",
                        "reading": row.get("reading", "") or "",
                        "emulated_verdict": row.get("emulated_verdict", "") or "",
                        "emulated_backend": row.get("emulated_backend", "") or "",
                        "emulated_cells": row.get("emulated_cells", "") or "",
                        "emulated_coverage": row.get("emulated_coverage", "") or "",
                    }
                )
    return rows


def _verdict_order(verdicts: Iterable[str]) -> list[str]:
    present = set(verdicts)
    known = [v for v in VERDICT_COLOURS if v in present]
    return known + sorted(present - set(known))


def _verdict(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict)
    return rf"\textcolor{{{colour}}}{{{tex(verdict)}}}" if colour else tex(verdict)
