"""LaTeX for the report: one escaping function and the tables generated from data.

Every string the workflow puts into the report goes through :func:`escape`; the
paper, the claims tables and the cross-check tables all use it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

__all__ = ["atomic_write", "escape", "write_tabular"]


def escape(text: str) -> str:
    """Text as LaTeX prints it: its special characters escaped, a few symbols as math."""
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


def atomic_write(path: Path, text: str) -> None:
    """Write a text file atomically (temporary file, then rename), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_tabular(
    frame: pd.DataFrame, path: str | Path, float_format: str = "{:.3g}", index: bool = False
) -> Path:
    """Write a DataFrame as a booktabs ``tabular`` (no float, no caption) for the paper.

    Figure notebooks with ``outputs: [table]`` call it; the paper wraps the file in a
    ``table`` environment with the figure's caption. The write is atomic.
    """
    table = frame.reset_index() if index else frame
    columns = [escape(str(c)) for c in table.columns]
    lines = [
        rf"\begin{{tabular}}{{{'l' * len(columns)}}}",
        r"\toprule",
        " & ".join(columns) + r" \\",
        r"\midrule",
    ]
    for row in table.itertuples(index=False):
        cells = [
            escape(float_format.format(v)) if isinstance(v, float) else escape(str(v)) for v in row
        ]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    path = Path(path)
    atomic_write(path, "\n".join(lines) + "\n")
    return path
