r"""The verify part of the at-a-glance section.

This build's verdicts next to the verify tier's (when a verify build left its CSVs),
the what-if verdicts beside them, and the verdict history.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from tcprepro.campaign import WorkflowConfig, cell_name
from tcprepro.claims import UNDECIDED
from tcprepro.latex import escape as tex
from tcprepro.paper.verdicts import _verdict


def verify_cost(config: WorkflowConfig, claims: Iterable[str]) -> dict[str, tuple[int, float]]:
    """Runs and simulated seconds of each claim's verify-tier runs (its cells at paper length).

    The runs are those ``tcprepro plan --tier verify --claim <id>`` counts: the paper
    tier's runs of the cells the claim reads (``cells:`` of the claims registry).
    """
    claims = list(claims)
    runs_of: dict[str, list[Any]] = {}
    cost = dict.fromkeys(claims, (0, 0.0))
    for figure in config.simulated_figures:
        for claim in claims:
            names = {cell_name(cell) for cell in config.claim_cells(figure, [claim])}
            if not names:
                continue
            if figure not in runs_of:
                runs_of[figure] = config.runs(figure, "verify")
            mine = [run for run in runs_of[figure] if run.cell in names]
            runs, seconds = cost[claim]
            cost[claim] = (runs + len(mine), seconds + sum(r.scenario().duration for r in mine))
    return cost


def _cells_share(cells: str) -> float:
    """The share of a claim's cells that ran, from its ``cells`` text ("8 of 12 cells")."""
    match = re.match(r"\s*(\d+) of (\d+) cells?", cells or "")
    if not match or int(match.group(2)) == 0:
        return 1.0
    return min(1.0, int(match.group(1)) / int(match.group(2)))


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def _verify_section(
    config: WorkflowConfig,
    tier: str,
    verdicts: list[dict[str, str]],
    verify: list[dict[str, str]],
    whatif: Mapping[str, list[dict[str, str]]] | None = None,
    records: list[dict[str, str]] | None = None,
) -> str:
    """The verify section: this build's verdicts next to the verify tier's (when it ran).

    Then the what-if verdicts beside the verify ones, and the verdict history.
    """
    head = r"\subsection{Claims decided at paper length (verify tier)}\label{sec:verify}"
    extra = _whatif_table(verify, whatif or {}) + _history_table(records or [])
    if not verify:
        return (
            head + "\n" + r"No verify-tier results are in this build's data "
            r"(\texttt{data/claims/verify/} is empty): no claim has been checked on its cells "
            r"at the paper's settings." + "\n" + extra
        )
    here = {row["claim"]: row["verdict"] for row in verdicts}
    # a verify build restricted to some claims still judges the others of its studies:
    # those (no cell ran) are listed apart, never as verify verdicts
    ran = [row for row in verify if row["verdict"] not in UNDECIDED]
    cost = verify_cost(config, [row["claim"] for row in ran])
    lines = [
        head,
        r"\begin{longtable}{@{}P{0.08\linewidth}P{0.2\linewidth}P{0.2\linewidth}"
        r"P{0.22\linewidth}P{0.2\linewidth}@{}}",
        rf"\caption{{Each claim's verdict in this build (tier \texttt{{{tex(tier)}}}) and at "
        r"the verify tier (the paper tier's settings and repetitions on the cells the claim "
        r"reads, from \texttt{data/claims/verify/}); cells: the claim's cells that ran there; "
        r"simulated time: of the claim's verify runs on those cells (where some cells did not "
        r"run, the claim's runs in proportion to the cells that did).}\label{tab:verify}\\",
        rf"\toprule Claim & {tex(tier)} verdict & verify verdict & Cells & Simulated time "
        r"\\ \midrule",
        r"\endfirsthead",
        rf"\toprule Claim & {tex(tier)} verdict & verify verdict & Cells & Simulated time "
        r"\\ \midrule",
        r"\endhead",
    ]
    for row in ran:
        runs, seconds = cost[row["claim"]]
        share = _cells_share(row["cells"])
        if share < 1:  # not every cell ran: the runs of those that did (cells alike in cost)
            runs, seconds = round(runs * share), seconds * share
        spent = f"{_hours(seconds)} ({runs} runs)" if runs else "—"
        mine = here.get(row["claim"])
        lines.append(
            rf"{tex(row['claim'])} & {_verdict(mine) if mine else '---'} & "
            rf"{_verdict(row['verdict'])} & {tex(row['cells'] or '—')} & {tex(spent)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    decided = {row["claim"] for row in ran}
    changed = [
        row["claim"] for row in ran if here.get(row["claim"], row["verdict"]) != row["verdict"]
    ]
    if changed:
        lines.append(
            rf"Where the verify verdict differs from this build's ({tex(', '.join(changed))}), "
            rf"the {tex(tier)} tier is too short to decide that claim: read the verify verdict."
        )
    fragile = {row["claim"] for row in verdicts if row.get("confidence", "").startswith("fragile")}
    undecided = [
        row["claim"]
        for row in verdicts
        if (row["verdict"] == "inconclusive" or row["claim"] in fragile)
        and row["claim"] not in decided
    ]
    if undecided:
        lines.append(
            rf"No verify run yet for the other {len(undecided)} claims this build leaves "
            rf"inconclusive or fragile: {tex(', '.join(undecided))} (the cost of each: "
            r"\texttt{tcprepro plan -{}-tier verify -{}-claim ID})."  # no en-dash ligature
        )
    return "\n".join(lines) + "\n" + extra


def _whatif_table(verify: list[dict[str, str]], whatif: Mapping[str, list[dict[str, str]]]) -> str:
    """The what-if verdicts (a testbed unknown run the other way) beside the verify ones.

    Only the claims a what-if is for: its build judges its study's other claims too, on the
    few of their cells it ran.
    """
    from tcprepro.campaign.config import what_ifs

    entries = what_ifs()
    rows = [(name, row) for name, found in sorted(whatif.items()) for row in found]
    rows = [
        (name, row)
        for name, row in rows
        if row["verdict"] not in UNDECIDED
        and (name not in entries or row["claim"] in entries[name].claims)
    ]
    if not rows:
        return ""
    main = {row["claim"]: row for row in verify}
    lines = [
        r"\begin{longtable}{@{}P{0.08\linewidth}P{0.18\linewidth}P{0.2\linewidth}"
        r"P{0.44\linewidth}@{}}",
        r"\caption{Testbed unknowns run the other way at the verify tier (what-if runs, "
        r"\texttt{data/claims/whatif/}), and knob traces (\texttt{knob-}: some knobs of a "
        r"profile set back to their setting before the profiles, on the cells that decide the "
        r"claim), beside the verify verdict of the same claim, which they never replace; what "
        r"each one changes: docs/testbeds.md.}\label{tab:whatif}\\",
        r"\toprule Claim & verify verdict & what-if & what-if verdict, value \\ \midrule",
        r"\endfirsthead",
        r"\toprule Claim & verify verdict & what-if & what-if verdict, value \\ \midrule",
        r"\endhead",
    ]
    for name, row in sorted(rows, key=lambda item: (item[1]["claim"], item[0])):
        verified = main.get(row["claim"])
        lines.append(
            rf"{tex(row['claim'])} & {_verdict(verified['verdict']) if verified else '---'} & "
            rf"\texttt{{{_breakable(tex(name))}}} & {_verdict(row['verdict'])}: "
            rf"{tex(row['value'])} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"


def _breakable(name: str) -> str:
    """A what-if's id, breakable at its hyphens (``knob-a-compound-min-rto`` in a column)."""
    return name.replace("-", r"-\allowbreak{}")


def _history_table(records: list[dict[str, str]]) -> str:
    """The verdict history (records/verdicts.csv), as docs/claims.md shows it."""
    if not records:
        return ""
    lines = [
        r"\begin{longtable}{@{}P{0.07\linewidth}P{0.09\linewidth}P{0.14\linewidth}"
        r"P{0.19\linewidth}P{0.18\linewidth}P{0.19\linewidth}@{}}",
        r"\caption{The verdict history: every verify and paper-tier verdict kept as a record "
        r"(\texttt{records/verdicts.csv}) with its reading (a digest of its tolerance, then "
        r"the reading rules it applies, R1 ... of Section~\ref{sec:readings}), "
        r"the stack profile and the commit its runs were made at, and for a changed verdict what "
        r"changed. The first rows were imported from the table the docs kept by hand.}"
        r"\label{tab:history}\\",
        r"\toprule Claim & backend & verdict & reading & stack profile, runs at & change "
        r"\\ \midrule",
        r"\endfirsthead",
        r"\toprule Claim & backend & verdict & reading & stack profile, runs at & change "
        r"\\ \midrule",
        r"\endhead",
    ]
    for row in sorted(records, key=lambda r: (r["claim"].split("-")[0], int(r["claim"][3:]))):
        reading = row["reading"] + (f" ({row['rules']})" if row["rules"] else "")
        profile = row["profile"] + (f", {row['runs_commit']}" if row["runs_commit"] else "")
        change = row["change"] or ("imported" if row["source"] == "imported" else "")
        lines.append(
            rf"{tex(row['claim'])} & {tex(row['backend'])} & {_verdict(row['verdict'])} & "
            rf"{tex(reading)} & {tex(profile)} & {tex(change)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"
