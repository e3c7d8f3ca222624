"""Published values of the papers, transcribed from their tables.

This package owns the numbers the original papers print, kept as CSV files
(one per table group, with a header comment naming the table and its units):
figures draw them as grey reference marks next to the reproduced values, and
tests check the model functions against them. They are never used as
reproduced results.

Files
-----
``makassikis2006_throughput.csv``
    Tables 3.4 and 3.5: measured and predicted iperf throughput per (RTT, BE, BR).
``makassikis2006_windows.csv``
    Tables 3.1 to 3.3: throughput and mean send window FE per (RTT, BR, BE).
``makassikis2006_volumes.csv``
    Table 2.3: throughput reported by four tools against the transfer volume.
``paper_marks.csv``
    The values the papers state for a catalogue figure, in their text or a table, one
    per row with its cell, the claim quoting the sentence and where it is
    (:func:`stated`; the figures draw them, ``tcprepro.figures.paper_values``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd

__all__ = ["Mark", "load", "stated", "stated_for"]


def load(name: str) -> pd.DataFrame:
    """Read ``<name>.csv`` of this package (comment lines start with ``#``)."""
    try:
        text = resources.files(__package__).joinpath(f"{name}.csv").read_text()
    except FileNotFoundError:
        known = sorted(
            p.name.removesuffix(".csv")
            for p in resources.files(__package__).iterdir()
            if p.name.endswith(".csv")
        )
        raise ValueError(f"no reference table {name!r}; known: {', '.join(known)}") from None
    return pd.read_csv(io.StringIO(text), comment="#")


@dataclass(frozen=True)
class Mark:
    """One stated value: ``value`` or a range ``low``-``high`` (NaN: no such end)."""

    figure: str
    where: Mapping[str, tuple[str, ...]]
    quantity: str
    value: float
    low: float
    high: float
    claim: str
    source: str

    def matches(self, **cell: object) -> bool:
        """True when every key of ``where`` given in ``cell`` has one of its values.

        A key of ``where`` absent from ``cell`` does not match: a mark is drawn only on
        a cell known to be its own.
        """
        return all(key in cell and str(cell[key]) in values for key, values in self.where.items())

    @property
    def cell_text(self) -> str:
        """The cell as a phrase (``up = NewReno, down = Cubic or Compound``)."""
        return ", ".join(f"{k} = {' or '.join(v)}" for k, v in self.where.items()) or "every cell"

    @property
    def text(self) -> str:
        """The stated value as the paper puts it (``about 95``, ``600-800``, ``> 19``)."""
        if np.isfinite(self.value):
            return f"≈ {self.value:g}"
        if np.isfinite(self.low) and np.isfinite(self.high):
            return f"{self.low:g}-{self.high:g}"
        return f"> {self.low:g}" if np.isfinite(self.low) else f"< {self.high:g}"


def _where(text: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(text, str) or not text.strip():
        return {}
    pairs = (part.split("=", 1) for part in text.split(";"))
    return {key.strip(): tuple(v.strip() for v in value.split("|")) for key, value in pairs}


@cache
def _all() -> tuple[Mark, ...]:
    table = load("paper_marks")
    return tuple(
        Mark(
            figure=str(row.figure),
            where=_where(row.where),
            quantity=str(row.quantity),
            value=float(row.value),
            low=float(row.low),
            high=float(row.high),
            claim=str(row.claim),
            source=str(row.source),
        )
        for row in table.itertuples(index=False)
    )


def stated(figure: str, quantity: str | None = None) -> list[Mark]:
    """The stated values of catalogue figure ``figure`` (of one ``quantity`` if given)."""
    return [
        m for m in _all() if m.figure == figure and (quantity is None or m.quantity == quantity)
    ]


def stated_for(figure: str, quantity: str, **cell: object) -> list[Mark]:
    """The stated values of ``quantity`` for one cell of ``figure``."""
    return [m for m in stated(figure, quantity) if m.matches(**cell)]
