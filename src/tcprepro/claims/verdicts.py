"""The verdict words and the outcome of checking one claim (:class:`ClaimResult`).

Each verdict with its colour in the report, and where a check's headline value stands
against its tolerance (:class:`Margin`, the glossary's "reading").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tcprepro.claims.glossary import count, span
from tcprepro.claims.registry import Claim

if TYPE_CHECKING:
    from tcprepro.claims.cells import TracedRun


VERDICTS = ("reproduced", "not reproduced", "inconclusive", "not run", "pending")


#: verdicts that decide nothing: nothing the claim reads ran, or its model is not built
UNDECIDED = ("not run", "pending")


#: colour of each verdict in the claims tables and the report (xcolor dvipsnames)
VERDICT_COLOURS = {
    "reproduced": "ForestGreen",
    "not reproduced": "BrickRed",
    "inconclusive": "BurntOrange",
    "not run": "gray",
    "pending": "Plum",
}


#: claims whose check holds no single headline value to the bounds of its tolerance, so
#: they have no margin, and why (every other claim's check declares its bounds,
#: ``ClaimResult.bounds``; a claim in parts whose headline part is such a value has the
#: margin of that part)
WITHOUT_MARGIN: dict[str, str] = {
    "A-c2": "two parts, each against another value of the build (the lowest cell, the "
    "median spread), not a bound",
    "A-c4": "counts the cases within its bound (more than half): no one value is held to it",
    "A-c6": "counts the cases within its bound (more than half): no one value is held to it",
    "A-c7": "four parts (RTT levels and ratios), each counting cells",
    "B-c2": "four parts (utilisation, background loss, fair-queueing loss and ratio)",
    "B-c3": "fairness indices of several cases, each against its own bound",
    "B-c4": "three parts (leader changes, fairness, fair-queueing efficiency)",
    "B-c5": "two variants' phi(1), each against its own value, and their growth with i",
    "B-c6": "four parts (lowest phi, share above 95 %, ranking, B = 625)",
    "B-c7": "three parts (share of cells, small buffer, B = 100)",
}


#: a value outside a one-sided tolerance by more than this share of its bound is "far from" it
FAR_SHARE_ONE_SIDED = 0.25


#: ... outside a two-sided tolerance by more than this share of its width
FAR_SHARE_TWO_SIDED = 0.5


@dataclass(frozen=True)
class Margin:
    """A check's headline value against the bounds of its tolerance (None: unbounded side).

    :attr:`distance` is positive inside the tolerance, negative outside; :attr:`reading`
    says where the value stands (the glossary's "reading": meets, misses, far from).
    """

    name: str
    value: float
    low: float | None = None
    high: float | None = None

    @property
    def distance(self) -> float:
        """Distance to the nearest bound: positive inside, negative outside."""
        sides = [self.value - self.low] if self.low is not None else []
        sides += [self.high - self.value] if self.high is not None else []
        return min(sides) if sides else float("nan")

    @property
    def scale(self) -> float:
        """How far outside counts as far: half a two-sided width, a quarter of one bound."""
        if self.low is not None and self.high is not None:
            return FAR_SHARE_TWO_SIDED * (self.high - self.low)
        bound = self.low if self.low is not None else self.high
        return FAR_SHARE_ONE_SIDED * abs(bound or 0.0)

    @property
    def reading(self) -> str:
        """``meets``, ``misses`` or ``far from`` (the tolerance)."""
        if not np.isfinite(self.distance):
            return ""
        if self.distance >= 0:
            return "meets"
        return "misses" if -self.distance <= self.scale else "far from"

    def tolerance_text(self) -> str:
        """``"30 to 50"``, ``">= 90"`` or ``"<= 1000"``."""
        if self.low is not None and self.high is not None:
            return span(self.low, self.high, "{:g}", " to ")
        if self.low is not None:
            return f">= {self.low:g}"
        return f"<= {self.high:g}"

    def text(self) -> str:
        """``"phi (%) = 19 against 30 to 50: margin -11"``.

        The value is printed to the margin's last decimal, so that the two agree
        (``99.99 against >= 90: margin +9.99``, not ``100``).
        """
        margin = f"{self.distance:+.3g}"
        if "e" in margin:
            value = f"{self.value:.3g}"
        else:
            value = f"{self.value:.{len(margin.partition('.')[2])}f}"
        return f"{self.name} = {value} against {self.tolerance_text()}: margin {margin}"


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
    #: what judged it when not ns-3 (e.g. "Linux (UML)"); empty for ns-3
    backend: str = ""
    #: the second verdict, on the claim's emulated twin (None: the claim has no twin)
    emulated: ClaimResult | None = None
    #: the bounds (low, high; None: open side) of the tolerance the statistic is held to
    bounds: tuple[float | None, float | None] | None = None
    #: a claim made of several statements: each computed part (its text, whether it meets
    #: its part of the tolerance); the headline statistic is one of them
    parts: tuple[tuple[str, bool], ...] = ()
    #: whether the check's value met the whole tolerance, every part (None: not decided),
    #: kept when the claim's regime makes the verdict inconclusive
    held: bool | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def margin(self) -> Margin | None:
        """The statistic against its tolerance's bounds (None without both)."""
        if self.statistic is None or self.bounds is None or self.verdict in UNDECIDED:
            return None
        name, value = self.statistic
        return Margin(name, float(value), *self.bounds)

    @property
    def missed_parts(self) -> tuple[str, ...]:
        """The computed parts that miss their part of the tolerance (their texts)."""
        return tuple(text for text, ok in self.parts if not ok)

    @property
    def reading(self) -> str:
        """Next to an inconclusive or fragile verdict: ``"meets"``, ``"misses"``, ``"far from"``.

        Not a verdict: where the value stands while the runs miss the claim's regime. The
        headline value's place against its bounds (:attr:`margin`), but a claim meets its
        tolerance only if every part does: a headline inside it with another part outside
        (or a check that did not hold) reads "misses".
        """
        margin = self.margin
        undecided = self.verdict == "inconclusive" or self.confidence.startswith("fragile")
        if margin is None or not undecided:
            return ""
        if margin.reading == "meets" and (self.missed_parts or self.held is False):
            return "misses"
        return margin.reading

    def reading_text(self) -> str:
        """``"reading, not a verdict: misses the tolerance in 1 of 4 parts: 5/10: 17.8 Mb/s"``.

        The parts that miss are named, "k of n parts" (empty without a reading).
        """
        if not self.reading:
            return ""
        text = f"reading, not a verdict: {self.reading} the tolerance"
        missed = self.missed_parts
        if missed:
            text += f" in {count(len(missed), len(self.parts), 'part')}: {'; '.join(missed)}"
        return text
