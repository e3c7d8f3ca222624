"""LaTeX for the report: one escaping function and the tables generated from data.

Every string the workflow puts into the report goes through :func:`escape`; the
paper, the claims tables and the cross-check tables all use it. The report is set
in T1 encoding (``paper/preamble.tex``), so every character of a generated string
prints as itself: LaTeX's special characters are escaped, relations and Greek
letters become math (also when spelled, as in ``rho_b`` or ``phi(1)``, and ``>=`` or
``<=`` as ≥ and ≤), a Greek or single-letter symbol with a short subscript (``ρ_b``,
``C_e``) becomes a math subscript, and long tokens (paths, case names, commit lists)
may break after ``/ _ . , + = :``. A span between backticks (a command a reader may
copy) is set in typewriter type, its quotes straight and its double dashes apart.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

__all__ = ["atomic_write", "escape", "write_tabular"]

#: characters LaTeX treats specially, as text
_TEXT = {
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
    "—": "---",
    "–": "--",
    "…": r"\dots{}",
    "`": r"\textasciigrave{}",  # a lone backtick (a pair sets its span as code)
    "\u00a0": "~",
}
#: characters set as math (relations, operators, Greek letters)
_MATH = {
    "<": "<",
    ">": ">",
    "|": "|",
    "≈": r"\approx ",
    "≥": r"\geq ",
    "≤": r"\leq ",
    "≠": r"\neq ",
    "×": r"\times ",
    "±": r"\pm ",
    "·": r"\cdot ",
    "−": "-",
    "→": r"\rightarrow ",
    "∞": r"\infty ",
    "√": r"\surd ",
    "α": r"\alpha ",
    "β": r"\beta ",
    "γ": r"\gamma ",
    "Γ": r"\Gamma ",
    "δ": r"\delta ",
    "Δ": r"\Delta ",
    "λ": r"\lambda ",
    "μ": r"\mu ",
    "π": r"\pi ",
    "ρ": r"\rho ",
    "σ": r"\sigma ",
    "τ": r"\tau ",
    "φ": r"\phi ",
    "Φ": r"\Phi ",
}
_GREEK = "αβγΓδΔλμπρστφΦ"
#: a Greek letter, or a single Latin letter standing alone, with a short subscript
_SUBSCRIPT = re.compile(
    rf"(?<![A-Za-z0-9_])(?:([{_GREEK}])_([A-Za-z0-9]{{1,3}})|([A-Za-z])_([a-z0-9]{{1,2}}))"
    r"(?![A-Za-z0-9_])"
)
#: a Greek letter spelled in ASCII before a subscript or a bracket (rho_b, phi(1))
_SPELLED = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "lambda": "λ",
    "mu": "μ",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "phi": "φ",
    "Phi": "Φ",
}
_SPELLED_GREEK = re.compile(
    r"(?<![A-Za-z0-9_.])(" + "|".join(_SPELLED) + r")(?=_[A-Za-z0-9]{1,3}(?![A-Za-z0-9_])|\()"
)
#: a token this long may break after one of _BREAK_AFTER
_LONG_TOKEN = 12
_BREAK_AFTER = set("/_.,+=:")


def _text(text: str, code: bool = False) -> str:
    """Escape a text segment (no math) and allow breaks inside long tokens.

    Two ASCII hyphens stay two (never LaTeX's en dash); ``code``: quotes straight too.
    """
    out = []
    for token in re.split(r"(\s+)", text):
        breakable = len(token) >= _LONG_TOKEN
        for i, ch in enumerate(token):
            out.append(_CODE[ch] if code and ch in _CODE else _TEXT.get(ch, ch))
            if ch == "-" and token[i + 1 : i + 2] == "-":
                out.append("{}")
            if breakable and ch in _BREAK_AFTER and i < len(token) - 1:
                out.append(r"\allowbreak{}")
    return "".join(out)


#: a command's characters that T1 would print curled in typewriter type
_CODE = {"'": r"\textquotesingle{}", "`": r"\textasciigrave{}"}
#: typewriter type whose spaces may stretch, as a justified line's do (lmtt's do not)
_CODE_FONT = r"\texttt{\spaceskip=0.525em plus 0.5em minus 0.1em\relax "
#: a span a reader may copy: set in typewriter type, every character as itself
_CODE_SPAN = re.compile(r"`([^`]+)`")


def escape(text: str) -> str:
    r"""Text as LaTeX (T1) prints it, every character as itself.

    ``\ & % $ # _ { } ~ ^`` are escaped; ``< > |``, relations, operators and
    Greek letters are set as math; ``ρ_b`` or ``C_e`` (a Greek letter with a subscript
    of up to three letters or digits, or a lone Latin letter with one or two lower-case
    letters or digits) as a math subscript; adjacent math pieces share one ``$...$``. A
    Greek letter spelled in ASCII before a subscript or a bracket (``rho_b``, ``phi(1)``)
    prints as the letter; ``>=``, ``<=`` and ``!=`` as ≥, ≤ and ≠.
    Tokens of 12 characters or more may break after ``/ _ . , + = :``.
    """
    if _CODE_SPAN.search(text):
        return "".join(
            _CODE_FONT + _text(part, code=True) + "}" if i % 2 else escape(part)
            for i, part in enumerate(_CODE_SPAN.split(text))
        )
    segments: list[tuple[bool, str]] = []  # (is_math, LaTeX)

    def add(is_math: bool, piece: str) -> None:
        if segments and segments[-1][0] == is_math:
            segments[-1] = (is_math, segments[-1][1] + piece)
        else:
            segments.append((is_math, piece))

    text = _SPELLED_GREEK.sub(lambda m: _SPELLED[m[1]], text)
    text = text.replace(">=", "≥").replace("<=", "≤").replace("!=", "≠")
    position = 0
    for match in _SUBSCRIPT.finditer(text):
        _plain(text[position : match.start()], add)
        letter, subscript = (match[1], match[2]) if match[1] else (match[3], match[4])
        add(True, f"{_MATH.get(letter, letter).strip()}_{{{subscript}}}")
        position = match.end()
    _plain(text[position:], add)
    return "".join(f"${body.strip()}$" if is_math else body for is_math, body in segments)


def _plain(text: str, add: object) -> None:
    """Split ``text`` into text and math pieces and pass them to ``add``."""
    buffer = ""
    for ch in text:
        if ch in _MATH:
            if buffer:
                add(False, _text(buffer))  # type: ignore[operator]
                buffer = ""
            add(True, _MATH[ch])  # type: ignore[operator]
        else:
            buffer += ch
    if buffer:
        add(False, _text(buffer))  # type: ignore[operator]


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
    ``table`` environment with the figure's caption (scaled down to the text width
    if it is wider). The write is atomic.
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
