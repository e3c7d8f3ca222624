r"""The at-a-glance section (``glance.tex``), less its verify part.

The verdict totals, every artefact with its status and page, every claim with its
verdict and page, what to run next (each tier's cost, each claim's deciding command) and
the glossary of the report's terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tcprepro.campaign import WorkflowConfig
from tcprepro.campaign.plan import (
    CLUSTER_CORES,
    TIER_COMMANDS,
    Cost,
    decide_command,
    duration_text,
)
from tcprepro.claims import NOT_EMULATED, load_registry, reading_rules
from tcprepro.claims.glossary import glossary_tex
from tcprepro.claims.verdicts import WITHOUT_MARGIN
from tcprepro.latex import escape as tex
from tcprepro.paper.status import Status
from tcprepro.paper.verdicts import _verdict, _verdict_order


def _second_totals(verdicts: list[dict[str, str]]) -> str:
    """The second verdicts (on the emulated twins), counted apart from the totals above."""
    seconds = [r["emulated_verdict"] for r in verdicts if r["emulated_verdict"]]
    if not seconds:
        return ""
    counts = {v: seconds.count(v) for v in _verdict_order(seconds)}
    return (
        rf". {len(seconds)} of them are also judged on real Linux TCP (their emulated "
        r"twins, a second verdict counted apart): "
        + ", ".join(f"{n} {_verdict(v)}" for v, n in counts.items())
    )


def _page(status: Status, config: WorkflowConfig) -> str:
    if not status.included:
        return "---"
    kind = "fig" if "figure" in config.outputs(status.figure) else "tab"
    return rf"\pageref{{{kind}:{status.figure}}}"


def _glance(
    config: WorkflowConfig,
    tier: str,
    order: list[str],
    statuses: Mapping[str, Status],
    runs_text: Mapping[str, str],
    verdicts: list[dict[str, str]],
    next_steps: str = "",
) -> str:
    """The at-a-glance section: totals, ``next_steps`` (the tier table), artefacts, claims."""
    lines = _glance_totals(tier, order, statuses, verdicts)
    lines += [next_steps, r"\begingroup\footnotesize"]
    lines += _artefact_table(config, order, statuses, runs_text)
    lines += _claim_table(verdicts)
    lines += [r"\endgroup", ""]
    return "\n".join(lines) + "\n"


def _glance_totals(
    tier: str, order: list[str], statuses: Mapping[str, Status], verdicts: list[dict[str, str]]
) -> list[str]:
    """The section's head: the artefacts and verdicts counted, then verdicts per study."""
    kinds = [s.kind for s in statuses.values()]
    counts = {k: kinds.count(k) for k in ("full", "partial", "not run", "excluded")}
    verdict_names = _verdict_order(r["verdict"] for r in verdicts)
    studies = sorted({r["study"] for r in verdicts})
    total_by_verdict = {v: sum(r["verdict"] == v for r in verdicts) for v in verdict_names}
    lines = [
        r"\section{At a glance}\label{sec:glance}",
        rf"This build (tier \texttt{{{tex(tier)}}}) has {len(order)} catalogue artefacts: "
        rf"{counts['full']} drawn in full, {counts['partial']} in part, "
        rf"{counts['not run']} not run in this tier and {counts['excluded']} excluded. "
        rf"Its {len(verdicts)} claims: "
        + ", ".join(f"{n} {_verdict(v)}" for v, n in total_by_verdict.items())
        + _second_totals(verdicts)
        + r". Both tables are generated from the data (the claims from "
        r"\texttt{data/claims/*.csv}); a page number links to the artefact or claim.",
        "",
        r"\begin{center}\small",
        r"\begin{tabular}{@{}l" + "r" * len(verdict_names) + r"r@{}}",
        r"\toprule Study & "
        + " & ".join(_verdict(v) for v in verdict_names)
        + r" & total \\ \midrule",
    ]
    for study in studies:
        mine = [r for r in verdicts if r["study"] == study]
        cells = [str(sum(r["verdict"] == v for r in mine)) for v in verdict_names]
        lines.append(rf"{tex(study)} & {' & '.join(cells)} & {len(mine)} \\")
    lines += [
        r"\midrule",
        r"total & "
        + " & ".join(str(total_by_verdict[v]) for v in verdict_names)
        + rf" & {len(verdicts)} \\",
        r"\bottomrule",
        r"\end{tabular}",
        r"\end{center}",
        "",
    ]
    return lines


def _artefact_table(
    config: WorkflowConfig,
    order: list[str],
    statuses: Mapping[str, Status],
    runs_text: Mapping[str, str],
) -> list[str]:
    """Every catalogue artefact: its status in this build, its runs and its page."""
    lines = [
        r"\begin{longtable}{@{}P{0.05\linewidth}P{0.34\linewidth}P{0.2\linewidth}"
        r"P{0.27\linewidth}r@{}}",
        r"\caption{Every catalogue artefact: its status in this build and its page. "
        r"Cells: points of the paper's grid drawn; runs: this build against the paper.}"
        r"\label{tab:glance}\\",
        r"\toprule Id & Artefact & Status & Runs: this build; paper & Page \\ \midrule",
        r"\endfirsthead",
        r"\toprule Id & Artefact & Status & Runs: this build; paper & Page \\ \midrule",
        r"\endhead",
    ]
    study = None
    for figure in order:
        this_study = config.figure(figure)["study"]
        if study is not None and this_study != study:
            lines.append(r"\addlinespace")
        study = this_study
        status = statuses[figure]
        lines.append(
            rf"{tex(figure)} & {tex(str(config.figure(figure).get('title', '')))} & "
            rf"{tex(status.text())} & {tex(runs_text.get(figure, ''))} & "
            rf"{_page(status, config)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}", ""]
    return lines


def _claim_table(verdicts: list[dict[str, str]]) -> list[str]:
    """Every claim: its statement, verdict (and second verdict), coverage and page."""
    statements = {claim.id: claim.text for claim in load_registry()}
    lines = [
        r"\begin{longtable}{@{}P{0.06\linewidth}P{0.34\linewidth}P{0.14\linewidth}"
        r"P{0.31\linewidth}r@{}}",
        r"\caption{Every claim: what it says, its verdict in this build and the page of its "
        r"row. Coverage: the claim's cells (those the claims registry names) that ran in this "
        r"build, then what its check covered or misses (terms: "
        r"Section~\ref{sec:glossary}).}"
        r"\label{tab:glance-claims}\\",
        r"\toprule Claim & Statement & Verdict & Coverage & Page \\ \midrule",
        r"\endfirsthead",
        r"\toprule Claim & Statement & Verdict & Coverage & Page \\ \midrule",
        r"\endhead",
    ]
    study = None
    for row in verdicts:
        if study is not None and row["study"] != study:
            lines.append(r"\addlinespace")
        study = row["study"]
        ran = f"ran {row['cells']}" if row["cells"] else ""
        # the check's own coverage, unless it only repeats the cells that ran ("1 cell")
        own = row["coverage"] if row["coverage"] != row["cells"] else ""
        coverage = "; ".join(text for text in (ran, own) if text)
        verdict = _verdict(row["verdict"])
        if row.get("reading"):  # where the value stands, marked as not a verdict
            verdict += rf"\newline{{\footnotesize\emph{{{tex(row['reading'])}}}}}"
        if row["emulated_verdict"]:
            # a twin whose runs this build did not make says so, not only "not run" (short:
            # the verdict column is narrow; the claim's own section says it in full)
            absent = row["emulated_coverage"] == NOT_EMULATED
            verdict += (
                rf"\newline{{\footnotesize {tex(row['emulated_backend'])}: "
                rf"{_verdict(row['emulated_verdict'])}"
                + (" (not in this build)" if absent else "")
                + "}"
            )
        lines.append(
            rf"{tex(row['claim'])} & {tex(statements.get(row['claim'], ''))} & {verdict} & "
            rf"{tex(coverage)} & \pageref{{claim:{row['claim']}}} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return lines


#: the tiers the "what to run next" table lists, cheapest first
PLAN_TIERS = ("smoke", "quick", "verify", "paper")


def _command(text: str) -> str:
    """A shell command in typewriter type, as a reader would copy it (latex.escape)."""
    return tex(f"`{text}`")


def _cores(costs: Iterable[Cost]) -> tuple[int, int]:
    """The local and cluster core counts the costs were computed for."""
    some = next(iter(costs), None)
    return (some.cores, some.cluster_cores) if some else (2, CLUSTER_CORES)


def _tier_table(
    tier: str,
    tiers: Mapping[str, Cost],
    emulated: Mapping[str, tuple[int, float] | None] | None = None,
    builds: Mapping[str, float] | None = None,
    recorded: Sequence[str] = (),
) -> str:
    """What to run next: each tier's runs, cost and command.

    ``tiers``: their costs (:func:`tcprepro.campaign.plan.tier_cost`); ``emulated``: each
    tier's emulated runs and their wall time alone on the UML route
    (:func:`tcprepro.campaign.plan.emulated_cost`), None for a tier whose profile leaves
    them out; ``builds``: the wall time of each tier's command on the local cores, both
    halves sharing them (:func:`tcprepro.campaign.plan.build_wall_s`; default: the
    simulations' alone). ``recorded``: the figures the verify and paper tiers estimate on
    their measured verify runs (:func:`tcprepro.campaign.cost_records.recorded_calibrations`).
    """
    emulated = emulated or {}
    builds = builds or {}
    cores, cluster = _cores(tiers.values())
    lines = [
        r"\subsection{What to run next}\label{sec:next}",
        rf"This build ran the \texttt{{{tex(tier)}}} tier. The tiers below differ in run "
        r"length and repetitions (docs/tiers.md); the \texttt{verify} tier runs the paper's "
        r"settings on exactly the cells the claims read, and decides a claim below it left "
        r"inconclusive. Runs, simulated time and wall times are those of \texttt{tcprepro plan} "
        r"(its cost model, calibrated per figure or study on a measured sample of the quick "
        r"tier, \texttt{tcprepro bench}"
        + (
            rf"; at the verify and paper tiers, {', '.join(tex(f) for f in recorded)} on "
            r"their measured runs of the verify tier, \texttt{records/run-costs.csv}"
            if recorded
            else ""
        )
        + r") when nothing is cached. "
        rf"\emph{{{cores} cores}}: the command's runs on {cores} local cores, its simulations "
        r"and its emulated twins sharing the cores, longest job first (drawing the figures and "
        r"this report add a few minutes, BENCHMARKS.md). "
        rf"\emph{{{cluster} cluster cores}}: the simulations as cluster jobs (docs/cluster.md). "
        r"\emph{Emulated}: the twins' runs with real Linux TCP on this machine and their wall "
        rf"time alone on the UML route (virtual clock, one boot a figure, {cores} figures side "
        r"by side); ``left out'' where the tier's profile sets \texttt{emulation=exclude}.",
        "",
        r"\begin{center}\small",
        r"\begin{tabular}{@{}lrrrrrP{0.34\linewidth}@{}}",
        rf"\toprule Tier & Runs & Simulated & Emulated & {cores} cores & {cluster} cluster cores & "
        r"Command \\ \midrule",
    ]
    for name, cost in tiers.items():
        mark = r"\textbf{" + tex(name) + "}" if name == tier else tex(name)
        twins = emulated.get(name, (0, 0.0))
        if twins is None:
            twins_text = "left out"
        else:
            runs, wall_s = twins
            twins_text = f"{runs}, {duration_text(wall_s)}" if runs else "none"
        lines.append(
            rf"{mark} & {cost.runs} & {duration_text(cost.simulated_s)} & {twins_text} & "
            rf"{duration_text(builds.get(name, cost.local_s))} & {duration_text(cost.cluster_s)} & "
            rf"{_command(TIER_COMMANDS[name])} \\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{center}", ""]
    return "\n".join(lines) + "\n"


def _decide_table(decide: Mapping[str, Cost], verdicts: Mapping[str, str]) -> str:
    """Each claim's deciding command and its cost.

    ``decide``: each claim's verify runs (:func:`tcprepro.campaign.plan.claim_costs`);
    ``verdicts``: this build's verdict of each claim.
    """
    if not decide:
        return ""
    cores, cluster = _cores(decide.values())
    header = (
        rf"\toprule Claim & This build & Runs & {cores} cores & {cluster} cores & Command "
        r"\\ \midrule"
    )
    lines = [
        r"\begingroup\footnotesize",
        r"\begin{longtable}{@{}P{0.06\linewidth}P{0.1\linewidth}rrrP{0.55\linewidth}@{}}",
        rf"\caption{{The smallest command that decides each claim: its verify runs (the "
        rf"paper's settings on the claim's cells), their cost on {cores} cores and on "
        rf"{cluster} cluster cores, as \texttt{{tcprepro plan -{{}}-tier verify -{{}}-claim "
        r"ID} counts them. Its verdicts go to \texttt{data/claims/verify/} and the next "
        r"build's Section~\ref{sec:verify}.}\label{tab:decide}\\",
        header,
        r"\endfirsthead",
        header,
        r"\endhead",
    ]
    for claim, cost in decide.items():
        verdict = verdicts.get(claim)
        command = decide_command(claim)
        # one line each: the profile, the claims' config, the target (no word broken)
        head, _, tail = command.partition(" --config ")
        config, _, target = tail.partition(" -- ")
        parts = [head, "--config " + config] + (["-- " + target] if target else [])
        lines.append(
            rf"{tex(claim)} & {_verdict(verdict) if verdict else '---'} & {cost.runs} & "
            rf"{duration_text(cost.local_s)} & {duration_text(cost.cluster_s)} & "
            + r"\newline\hspace*{1em}".join(_command(part) for part in parts)
            + r" \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines) + "\n"


def _glossary() -> str:
    """The glossary of the verdict and coverage words (:mod:`tcprepro.claims.glossary`)."""
    return (
        r"\subsection{Terms}\label{sec:glossary}"
        "\n"
        r"Each verdict and coverage word of this report has one meaning:"
        "\n" + glossary_tex() + _without_margin() + _reading_guide()
    )


def _reading_guide() -> str:
    """The reading rules (R1 ...) the tolerances and the verdict history cite, defined.

    From the reading guide itself (:func:`tcprepro.claims.reading_rules`, the data
    docs/claims.md's guide is generated from): each code with its name, the wordings it
    reads and the tolerance they become.
    """
    items = [
        rf"\item[{tex(rule_id)}] \emph{{{tex(rule['name'])}}} ({tex(rule['words'])}): "
        rf"{tex(' '.join(str(rule['rule']).split()))}."
        for rule_id, rule in reading_rules().items()
    ]
    return "\n".join(
        [
            r"\paragraph{Reading rules}\label{sec:readings}",
            r"Each claim's tolerance reads the paper's wording by the rules of our reading "
            r"guide, fixed before the runs; the tolerances cite them by their codes, and so "
            r"does the verdict history after a reading's digest:",
            r"\begin{description}\small\setlength{\itemsep}{0pt}",
            *items,
            r"\end{description}",
            "",
        ]
    )


def _without_margin() -> str:
    """The claims without a margin (:data:`~tcprepro.claims.verdicts.WITHOUT_MARGIN`), why."""
    return (
        r"{\small Claims without a margin, their checks holding no single value to the "
        r"bounds of a tolerance: "
        + "; ".join(f"{claim} ({tex(why)})" for claim, why in WITHOUT_MARGIN.items())
        + ".}\n"
    )
