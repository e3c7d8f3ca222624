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
"""

from __future__ import annotations

import io
from importlib import resources

import pandas as pd

__all__ = ["load"]


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
