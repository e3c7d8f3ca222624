r"""The build check that runs after LaTeX (:func:`check_build`).

It fails on an overfull box in generated content, a catalogue id without a caption or a
line in the at-a-glance table, and a figure whose page does not carry its caption.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tcprepro.campaign import WorkflowConfig

#: an overfull box wider than this (points) in generated content fails the build
OVERFULL_LIMIT_PT = 10.0


#: what ``\reproinput`` (paper/preamble.tex) writes to the log around a generated file
_MARK = re.compile(r"<<(generated|end generated) ([^>]+)>>")


_OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\)[^\n]*")


def overfull_boxes(log: str) -> list[tuple[str, float, str]]:
    r"""Every overfull hbox of a LaTeX log: (generated file being read, pt over, log line).

    The report reads each generated file through ``\reproinput``, which writes
    ``<<generated NAME>>`` and ``<<end generated NAME>>`` to the log; the file of an
    overfull box is the innermost one open when LaTeX reported it ("" outside them).
    """
    events = sorted(
        [(m.start(), "mark", m) for m in _MARK.finditer(log)]
        + [(m.start(), "box", m) for m in _OVERFULL.finditer(log)],
        key=lambda e: e[0],
    )
    stack: list[str] = []
    boxes = []
    for _, kind, match in events:
        if kind == "box":
            boxes.append((stack[-1] if stack else "", float(match[1]), match[0]))
        elif match[1] == "generated":
            stack.append(match[2])
        elif stack:
            stack.pop()
    return boxes


def _page_texts(pdf: Path) -> list[str]:
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    return text.split("\f")


def _labels(aux: str) -> dict[str, int]:
    """Page of every label of a LaTeX ``.aux`` file (hyperref's five-field form)."""
    pages = {}
    for match in re.finditer(r"\\newlabel\{([^}]*)\}\{\{[^}]*\}\{(\d+)\}", aux):
        pages[match[1]] = int(match[2])
    return pages


def check_build(
    config: WorkflowConfig,
    pdf: str | Path,
    log: str | Path,
    aux: str | Path,
    generated: str = "generated/",
) -> list[str]:
    """Problems of a built report; empty when it passes.

    - an overfull hbox over :data:`OVERFULL_LIMIT_PT` while LaTeX reads a generated
      file (``paper/generated/``);
    - a float too large for its page (LaTeX's "Float too large");
    - a catalogue id of ``workflow/config.yaml`` that appears neither in a caption
      nor in the at-a-glance table;
    - a figure or table whose page does not carry its caption (its id in bold, e.g.
      ``D3.``, on the page its label points to).
    """
    problems = []
    log_text = Path(log).read_text(errors="replace")
    for name, width, line in overfull_boxes(log_text):
        if generated in name and width > OVERFULL_LIMIT_PT:
            problems.append(f"{name}: {line}")
    for match in re.finditer(r"Float too large for page by [^\n]*", log_text):
        problems.append(match[0])
    pages = _page_texts(Path(pdf))
    everything = "\n".join(pages)
    labels = _labels(Path(aux).read_text(errors="replace"))
    glance_page = labels.get("tab:glance")
    if glance_page is None:
        problems.append("the at-a-glance table (tab:glance) is missing")
    for figure in config.figures:
        placed = [labels[k] for k in (f"fig:{figure}", f"tab:{figure}") if k in labels]
        if placed:
            for page in placed:
                text = pages[page - 1] if 0 < page <= len(pages) else ""
                if not re.search(rf"{re.escape(figure)}\.\s", text):
                    problems.append(f"{figure}: its caption is not on page {page}, its label's")
        elif not re.search(rf"(?m)^\s*{re.escape(figure)}\s{{2,}}", everything):
            problems.append(f"{figure}: neither captioned nor in the at-a-glance table")
    return problems
