"""The words the report uses for verdicts and coverage, one meaning each, and their wording.

:data:`GLOSSARY` defines every verdict and coverage word the generated text may use;
the report prints it (:func:`glossary_tex`), and :func:`undefined_terms` finds a word of
that vocabulary the glossary lacks. The helpers word numbers the way the glossary reads
them: :func:`span` prints a range whose two ends are equal as one value, :func:`count`
writes "1 cell" and "3 of 4 cells". :func:`wording_problems` finds what reads as a bug
in generated text (a range with equal ends, "of 1 cells").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from tcprepro.latex import escape as tex

__all__ = [
    "GLOSSARY",
    "TERMS",
    "count",
    "glossary_tex",
    "plural",
    "ratio",
    "span",
    "undefined_terms",
    "wording_problems",
]

#: every verdict and coverage word of the generated text, with its one meaning
GLOSSARY: dict[str, str] = {
    "reproduced": "the claim's value meets its tolerance on every cell that ran, and the runs "
    "meet the claim's regime criteria at this tier.",
    "not reproduced": "the claim's value misses its tolerance (a result, reported as it is, "
    "with its why).",
    "inconclusive": "the runs at this tier miss one of the claim's regime criteria (too few "
    "losses, round trips or transfers in the measured window, a flow still in slow start); "
    "the why names the criterion and the command that decides the claim.",
    "not run": "nothing the claim reads ran in this build: none of its cells, its figure is "
    "not part of this tier, or its emulated twin did not run; the command beside the claim "
    "runs it.",
    "pending": "the model the claim or cell needs (a variant or queue discipline) is not built "
    "yet: no tier can run it until it is.",
    "robust": "at least 97.5 % of the bootstrap resamples of the repetitions give the same "
    "verdict (the 95 % interval of the check's statistic does not cross the tolerance).",
    "fragile": "more than 2.5 % of the bootstrap resamples of the repetitions give another "
    "verdict: a longer tier or more repetitions may change it.",
    "k of n cells": "coverage: k of the n cells the claim reads (its cells in the claims "
    "registry) have a run in this build; 1 cell when the claim reads one.",
    "k/n parts": "coverage of a claim made of several statements: k of its n parts could be "
    "computed from the runs of this build; the verdict rests on those k.",
    "k/n cells": "inside a value: the statement holds in k of the n cells it was computed on.",
    "margin": "the distance of the check's headline value to the nearest bound of its "
    "tolerance, positive inside it, negative outside; printed at every tier.",
    "reading": "next to an inconclusive or fragile verdict, where the value stands against "
    "its tolerance: meets it, misses it (by less than the tolerance's own width), or is far "
    "from it (by more). A claim in several parts meets it only if every part does; otherwise "
    "the reading names the parts that miss (k of n parts). Not a verdict: the runs do not "
    "meet the claim's regime.",
    "n/l": "in a table of the paper's values: the paper's cell is not legible in its seed "
    "text, so no paper value is compared.",
    "full": "an artefact drawn on every cell of the paper's grid.",
    "partial": "an artefact drawn on some of the paper's cells (k of n cells).",
    "excluded": "an artefact this build skips on purpose (emulation excluded, with the reason).",
}

#: the words the glossary defines (the vocabulary of verdicts and coverage)
TERMS = tuple(GLOSSARY)

#: the shapes of a coverage word in text, by glossary term
_SHAPES = {
    "k of n cells": r"\b\d+ of \d+ cells?\b",
    "k/n parts": r"\b\d+/\d+ parts?\b",
    "k/n cells": r"\b\d+/\d+ cells?\b",
}
#: verdict-like words of no meaning in the glossary: generated text must not use them
_FORBIDDEN = ("undecided", "skipped")

_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
_EQUAL_RANGE = re.compile(
    rf"(?<![\w.]){_NUMBER}\s*(?:-|–|to)\s*{_NUMBER}(?![\w.])",
)
_NAN = re.compile(r"\bnan ?%|\bnan\b(?= (?:s|ms|Mb/s|RTTs|segments|of))")
_OF_ONE = re.compile(r"\bof 1 cells\b|(?<![\d.])1 cells\b|(?<![\d/])1/1 cells\b")
#: a plural left to the reader ("2 run(s)") or a bound of one ("fewer than 1 loss events")
_UNCOUNTED = re.compile(r"\b[a-z]+\(s\)|\bfewer than 1 [a-z]+s\b")


def span(low: float, high: float, fmt: str = "{:.2f}", sep: str = "-", unit: str = "") -> str:
    """``"0.85-0.91"``, or one value when both ends print alike (``"0.91"``).

    ``fmt`` formats each end, ``sep`` joins them, ``unit`` follows (with a space when
    it is a word or a percent sign: ``span(99.5, 100, "{:.1f}", unit=" %")``).
    """
    a, b = fmt.format(low), fmt.format(high)
    return (a if a == b else f"{a}{sep}{b}") + unit


def count(k: int, n: int, noun: str = "cell", plural: str = "") -> str:
    """``"3 of 4 cells"``; ``"1 cell"`` when there is one and it is there."""
    many = plural or noun + "s"
    if n == 1 and k == 1:
        return f"1 {noun}"
    return f"{k} of {n} {noun if n == 1 else many}"


def plural(n: int, noun: str = "cell", many: str = "") -> str:
    """``"1 cell"``, ``"3 cells"``."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def ratio(k: int, n: int, noun: str = "cell") -> str:
    """``"2/3 cells"`` (the glossary's "k/n cells"); ``"1/1 cell"`` when there is one."""
    return f"{k}/{plural(n, noun)}"


def wording_problems(text: str) -> list[str]:
    """What reads as a bug in generated ``text``.

    Equal-end ranges, "of 1 cells", "nan%", "run(s)", "fewer than 1 loss events".
    """
    problems = []
    for match in _EQUAL_RANGE.finditer(text):
        ends = re.split(r"\s*(?:-|–|to)\s*", match[0].lstrip("+-"), maxsplit=1)
        if len(ends) == 2 and ends[0] == ends[1]:
            problems.append(f"a range with equal ends: {match[0]!r}")
    problems += [f"a count of one in the plural: {m[0]!r}" for m in _OF_ONE.finditer(text)]
    problems += [f"a number not computed: {m[0]!r}" for m in _NAN.finditer(text)]
    problems += [f"a count not worded: {m[0]!r}" for m in _UNCOUNTED.finditer(text)]
    return problems


def undefined_terms(
    texts: Iterable[str], verdicts: Iterable[str] = (), glossary: Mapping[str, str] = GLOSSARY
) -> set[str]:
    """Verdict and coverage words of ``texts`` that ``glossary`` does not define.

    ``verdicts``: the verdict strings the text prints (each must be a term); in the
    text itself, a coverage shape ("2 of 3 cells", "2/3 parts") needs its term, and a
    verdict-like word of no meaning here ("undecided") is reported as found.
    """
    missing = {v for v in verdicts if v not in glossary}
    for text in texts:
        for term, shape in _SHAPES.items():
            if re.search(shape, text) and term not in glossary:
                missing.add(term)
        missing |= {w for w in _FORBIDDEN if re.search(rf"\b{w}\b", text.lower())}
    return missing


def glossary_tex(terms: Iterable[str] = TERMS) -> str:
    r"""The glossary as a LaTeX description list (the report's terms)."""
    lines = [r"\begin{description}\small"]
    for term in terms:
        lines.append(rf"\item[{tex(term)}] {tex(GLOSSARY[term])}")
    lines.append(r"\end{description}")
    return "\n".join(lines) + "\n"
