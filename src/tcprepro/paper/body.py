r"""The body of the report (``body.tex``): one section per study.

Its figures and tables in catalogue order, each captioned with the config's text, the
drawing's statements and the tier line, then the study's claims table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tcprepro.campaign import WorkflowConfig
from tcprepro.latex import escape as tex
from tcprepro.paper.status import Status


def _caption_text(
    config: WorkflowConfig,
    figure: str,
    tier: str,
    facts: Mapping[str, Any] | None,
    line: str,
) -> str:
    """The caption: the config's text, the drawing's statements, the tier line."""
    parts = [config.caption(figure, tier).strip()]
    facts = facts or {}
    statements = [str(s) for s in facts.get("statements", [])]
    not_run = [str(s) for s in facts.get("not_run", [])]
    if not_run:
        statements.append(f"Not run in this tier: {'; '.join(not_run)}.")
    if statements:
        parts.append(tex(" ".join(statements)))
    return " ".join(parts) + rf" \reprotierline{{{tex(line)}}}"


def _body(
    config: WorkflowConfig,
    order: list[str],
    statuses: Mapping[str, Status],
    facts: Mapping[str, Mapping[str, Any]],
    lines_of: Mapping[str, str],
    figure_dir: str,
    claims_dir: str,
    tier: str,
    studies: Sequence[str],
) -> str:
    out = []
    for study in sorted(studies):
        study_figures = [f for f in order if config.figure(f)["study"] == study]
        title = str(config.data["studies"][study]["title"])
        first = next((f for f in study_figures if statuses[f].included), None)
        if first is not None and "figure" in config.outputs(first):
            # the heading on the page of the study's first figure
            out.append(rf"\reproroomfor{{{figure_dir}/{first}.pdf}}")
        out.append(
            rf"\section{{Study {tex(study)}: {tex(title)}}}"
            rf"\label{{sec:study-{study}}}"
        )
        absent: dict[str, list[str]] = {}
        for figure in study_figures:
            if not statuses[figure].included:
                absent.setdefault(statuses[figure].text(), []).append(figure)
        if absent:
            listed = "; ".join(f"{why}: {', '.join(figs)}" for why, figs in absent.items())
            out.append(
                rf"\noindent\emph{{Not drawn in this build}} ({tex(listed)}): see the "
                r"at-a-glance table (page~\pageref{tab:glance})."
                "\n"
            )
        for figure in study_figures:
            status = statuses[figure]
            if not status.included:
                continue
            caption = _caption_text(config, figure, tier, facts.get(figure), lines_of[figure])
            outputs = config.outputs(figure)
            if "figure" in outputs:
                out += [
                    r"\begin{figure}[!htbp]",
                    r"\centering",
                    rf"\reprographic{{{figure_dir}/{figure}.pdf}}",
                    rf"\caption{{\textbf{{{tex(figure)}.}} {caption}}}",
                    rf"\label{{fig:{figure}}}",
                    r"\end{figure}",
                ]
            if "table" in outputs:
                table_caption = (
                    f"The numbers of Figure {tex(figure)} as a table."
                    if "figure" in outputs
                    else caption
                )
                out += [  # in the figures' queue: it never overtakes its figure
                    r"\begin{figure}[!htbp]",
                    r"\captionsetup{type=table}",
                    r"\centering\small",
                    rf"\caption{{\textbf{{{tex(figure)}.}} {table_caption}}}",
                    rf"\label{{tab:{figure}}}",
                    rf"\reprofit{{\reproinput{{{claims_dir}/{figure}.tex}}}}",
                    r"\end{figure}",
                ]
            if config.crosschecked(figure):  # simulation vs emulation table
                # a longtable breaks pages itself and does not leave room for a float
                # placed "here" on its first page (an overfull page): its figure first;
                # the table whole on one page where it fits one
                out.append(r"\reprofloatbarrier")
                out.append(rf"\reprowhole{{{claims_dir}/crosscheck_{figure}.tex}}")
        out.append(r"\reprofloatbarrier")
        out.append(rf"\reprolongtable{{{claims_dir}/claims_{study}.tex}}")
        out.append(r"\reprofloatbarrier")  # the claims table's figures before the next study
    return "\n".join(out) + "\n"
