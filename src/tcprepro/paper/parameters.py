r"""The parameters and deviations tables (``parameters.tex``, ``deviations.tex``).

Each parameter of a simulated figure in this build next to the paper tier's, and the
``notes`` of each scenario file (choices the papers leave open, deliberate departures).
Values print as the report's prose writes them: quantities through
:mod:`tcprepro.units` (``50 Mb/s``, ``14 ms``, ``16 MiB``; a number and its unit never
split across lines), queue disciplines by the registry's names
(:attr:`tcprepro.variants.Qdisc.label`), switches as on/off.
"""

from __future__ import annotations

from tcprepro.campaign import TIERS, WorkflowConfig
from tcprepro.errors import ConfigError
from tcprepro.latex import escape as tex
from tcprepro.paper.notes import Carriers, NoteKey, note_key
from tcprepro.scenario import AccessTopology, DumbbellTopology, LinkDirection, Scenario
from tcprepro.scenario.model import Note
from tcprepro.units import (
    format_duration,
    format_number,
    format_quantity,
    format_rate,
    format_size,
)
from tcprepro.variants import QDISCS

#: loss recovery (``tcp.recovery``) as the report names it
_RECOVERY = {"classic": "classic fast recovery", "prr": "PRR recovery (RFC 6937)"}


def _whole(text: str) -> str:
    """``text`` with unbreakable spaces: a quantity and its unit, a name, on one line."""
    return text.replace(" ", "\u00a0")


def _shown(value: object) -> str:
    """A parameter's value as the report prints it.

    A switch as on/off, a quantity with its unit (``50 Mb/s``, ``14 ms``, ``16 MiB``), a
    queue discipline by its name (``PFQ/LQD``), a fraction without trailing zeros.
    """
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, str):
        if value in QDISCS:
            return _whole(QDISCS[value].shown_name)
        try:  # a bare fraction written as text (D3's loss rates): the form of a float's
            number = float(value)
        except ValueError:
            return _whole(format_quantity(value))
        return format_number(number) if "." in value or "e" in value else value
    return str(value)


def _direction(cfg: LinkDirection, bdp: float | None = None) -> str:
    """A link direction: rate, one-way delay, buffer (in BDPs where set so) and discipline."""
    buffer = _whole(f"{cfg.buffer_pkts} packets" + (f" ({bdp:g} BDP)" if bdp is not None else ""))
    rate, delay = _whole(format_rate(cfg.rate)), _whole(format_duration(cfg.delay))
    return f"{rate}, {delay}, {buffer}, {_shown(cfg.qdisc)}"


def _topology_rows(scenario: Scenario) -> list[tuple[str, str]]:
    topo = scenario.topology
    if isinstance(topo, AccessTopology):
        return [
            ("downlink", _direction(topo.downlink)),
            ("uplink", _direction(topo.uplink)),
            ("server link", _direction(topo.server_link)),
        ]
    assert isinstance(topo, DumbbellTopology)
    rows = [("bottleneck", _direction(topo.bottleneck, topo.buffer_bdp))]
    for group in topo.senders:
        rtt = f", RTT {_whole(format_duration(group.rtt))}" if group.rtt is not None else ""
        rate, delay = _whole(format_rate(group.rate)), _whole(format_duration(group.delay))
        rows.append((group.shown_name, f"{rate}, {delay} ×{group.count or 1}{rtt}"))
    return rows


def _unswept_scenario(config: WorkflowConfig, figure: str, tier: str) -> Scenario:
    """A figure's scenario in a tier before its sweep: the file, the figure's and tier's set."""
    from tcprepro.scenario_io import load_scenario

    block = config.figure(figure)
    overrides = [
        *block.get("set", {}).items(),
        *config.tier_settings(figure, tier).get("set", {}).items(),
    ]
    return load_scenario(block["scenario"], overrides)


def _parameter_rows(config: WorkflowConfig, figure: str, tier: str) -> list[tuple[str, str]]:
    """(parameter, value) rows of a figure in a tier; swept parameters in the sweep rows."""
    scenario = _unswept_scenario(config, figure, tier)
    rows = _topology_rows(scenario)
    sweep = config.figure(figure).get("sweep", {})
    for dim, values in config.sweep_values(figure, tier).items():
        shown = ", ".join(map(_shown, values))
        rows.append((f"sweep: {sweep[dim].get('label', dim)}", f"{shown} ({len(values)})"))
    tcp = scenario.tcp
    repetitions = int(config.tier_settings(figure, tier)["repetitions"])
    send, receive = _whole(format_size(tcp.send_buffer)), _whole(format_size(tcp.recv_buffer))
    buffers = (
        f"buffers {send}" if send == receive else f"send buffer {send}, receive buffer {receive}"
    )
    rows += [
        ("duration / warm-up", f"{scenario.duration:g} s / {scenario.warmup:g} s"),
        ("repetitions / seed", f"{repetitions} / {scenario.seed}"),
        (
            "TCP",
            f"{_whole(f'MSS {tcp.mss} B')}, SACK {_shown(tcp.sack)}, "
            f"timestamps {_shown(tcp.timestamps)}, "
            f"delayed ACK {tcp.delayed_ack_count} segment{'s' * (tcp.delayed_ack_count != 1)} "
            f"or {_whole(format_duration(tcp.delayed_ack_timeout))}, "
            f"{_whole(f'IW {tcp.initial_cwnd_pkts}')}, {buffers}, "
            f"{_RECOVERY.get(tcp.recovery, tcp.recovery)}, "
            f"min RTO {_whole(format_duration(tcp.min_rto))}",
        ),
        ("sampling", f"every {_whole(format_duration(scenario.trace.interval))}"),
    ]
    return rows


def _parameters(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    lines = [
        r"\begin{longtable}{@{}P{0.065\linewidth}P{0.2\linewidth}"
        r"P{0.325\linewidth}P{0.325\linewidth}@{}}",
        r"\caption{Parameters of every simulated figure in this build (tier \texttt{"
        + tex(tier)
        + r"}) next to the paper tier's, which are the papers' own values unless its note "
        r"says otherwise: the scenario file with the figure's and the tier's settings, and "
        r"the values of each swept parameter (their number in parentheses), which replace "
        r"the file's. A group of sender hosts is named by its role in the paper, with its access "
        r"links: rate, one-way delay, $\times$ hosts (and the RTT where the scenario sets "
        r"it). \reprochanged{} marks a parameter this tier changed; \emph{same}: the "
        r"paper tier's value is this build's.}"
        r"\label{tab:parameters}\\",
        r"\toprule Figure & Parameter & This build & Paper \\ \midrule",
        r"\endfirsthead",
        r"\toprule Figure & Parameter & This build & Paper \\ \midrule",
        r"\endhead",
    ]
    for figure in figures:
        here = _parameter_rows(config, figure, tier)
        paper = dict(_parameter_rows(config, figure, "paper"))
        note = str(config.tier_settings(figure, "paper").get("note", ""))
        for i, (name, value) in enumerate(here):
            reference = paper.get(name, "")
            changed = reference != value
            mark = r"\reprochanged{} " if changed else ""
            shown = rf"\textbf{{{tex(value)}}}" if changed else tex(value)
            paper_value = tex(reference) if changed else r"\textcolor{gray}{same}"
            lines.append(
                rf"{tex(figure) if i == 0 else ''} & {mark}{tex(name)} & {shown} & "
                rf"{paper_value} \\"
            )
        if note:
            lines.append(rf" & paper tier & & \emph{{{tex(note)}}} \\")
        lines.append(r"\midrule")
    lines[-1] = r"\bottomrule"
    lines.append(r"\end{longtable}")
    return "\n".join(lines) + "\n"


def _noted(
    config: WorkflowConfig, tier: str, figures: list[str]
) -> dict[NoteKey, tuple[Note, list[str]]]:
    """The scenario notes of ``figures`` that concern ``tier``, each once, with its figures.

    A note with ``tiers`` is on those tiers' settings, and only their reports show it. A
    note inherited from a base file lists only the figures that still carry what it says
    (:mod:`tcprepro.paper.notes`: not where a nearer file or the workflow sets its field
    otherwise); a note no figure carries is left out.

    Raises
    ------
    ConfigError
        A note names a tier that does not exist.
    """
    seen: dict[NoteKey, tuple[Note, list[str]]] = {}
    carriers = Carriers(config, tier)
    for figure in figures:
        for note in config.figure_scenario(figure, tier).notes:
            unknown = sorted(set(note.tiers or ()) - set(TIERS))
            if unknown:
                raise ConfigError(
                    f"{figure}: note {note.field!r}: tiers {', '.join(unknown)} unknown; "
                    f"the tiers are {', '.join(TIERS)}"
                )
            if not note.concerns(tier) or not carriers.carries(figure, note):
                continue
            figs = seen.setdefault(note_key(note), (note, []))[1]
            if figure not in figs:
                figs.append(figure)
    return seen


def _rates_and_rtts(scenario: Scenario) -> dict[str, str]:
    """The link rates and sender RTTs of a scenario, by name (what a tier may scale)."""
    topo = scenario.topology
    if isinstance(topo, AccessTopology):
        links = {"downlink": topo.downlink, "uplink": topo.uplink, "server link": topo.server_link}
        return {f"{name} rate": format_rate(link.rate) for name, link in links.items()}
    assert isinstance(topo, DumbbellTopology)
    values = {"bottleneck rate": format_rate(topo.bottleneck.rate)}
    for group in topo.senders:
        if group.rtt is not None:
            values[f"RTT of {group.shown_name}"] = format_duration(group.rtt)
    return values


def _range(values: list[float], unit: str = "") -> str:
    low, high = f"{min(values):g}", f"{max(values):g}"
    return (low if low == high else f"{low}-{high}") + unit


def _tier_changes(config: WorkflowConfig, tier: str, figures: list[str]) -> list[str]:
    """What a tier below the paper's changes, in brief: length, repetitions, cells, rates, RTTs."""
    if tier == "paper" or not figures:
        return []
    length = {tier: [], "paper": []}
    repetitions = {tier: [], "paper": []}
    fewer_cells = []
    changed: dict[tuple[str, str, str], list[str]] = {}
    for figure in figures:
        scenarios = {t: _unswept_scenario(config, figure, t) for t in (tier, "paper")}
        for t, scenario in scenarios.items():
            length[t].append(scenario.duration)
            repetitions[t].append(int(config.tier_settings(figure, t)["repetitions"]))
        if len(config.cells(figure, tier)) < len(config.cells(figure, "paper")):
            fewer_cells.append(figure)
        here, paper = (_rates_and_rtts(scenarios[t]) for t in (tier, "paper"))
        for name, value in here.items():
            if paper.get(name, value) != value:
                changed.setdefault((name, value, paper[name]), []).append(figure)
    items = [
        rf"Tier \texttt{{{tex(tier)}}}: runs of {_range(length[tier], ' s')} where the paper "
        rf"tier has {_range(length['paper'], ' s')}, {_range(repetitions[tier])} "
        rf"repetition{'s' * (max(repetitions[tier]) > 1)} where it has "
        rf"{_range(repetitions['paper'])}"
        + (f"; fewer cells of the grid in {tex(', '.join(fewer_cells))}" if fewer_cells else "")
        + "."
    ]
    items += [
        rf"{tex(', '.join(figs))}: {tex(name)} is {tex(value)} (paper tier: {tex(paper)})."
        for (name, value, paper), figs in changed.items()
    ]
    return items


def _main_deviations(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    """The main deviations in brief, for the first pages: the tier's and the models'.

    Read from the same data as the parameters and deviations tables (the tier settings and
    the scenario notes of kind ``deviation``, less the cross-check figures' and the notes
    on tiers, which the tier's own changes replace).
    """
    papers = [f for f in figures if not config.crosschecked(f)]
    items = _tier_changes(config, tier, papers)
    for (kind, field, value), (_, figs) in _noted(config, tier, papers).items():
        if kind == "deviation" and field != "tiers":
            items.append(rf"{tex(', '.join(figs))}: {tex(field)} --- {tex(value)}.")
    if not items:
        return ""
    lines = [
        r"\subsection{Main deviations}\label{sec:main-deviations}",
        r"Where this build departs from the papers, in brief: every parameter next to the paper "
        r"tier's is in Table~\ref{tab:parameters}, every choice and deviation with its reason in "
        r"Table~\ref{tab:deviations}.",
        r"\begin{itemize}\small",
        *(rf"\item {item}" for item in items),
        r"\end{itemize}",
        "",
    ]
    return "\n".join(lines) + "\n"


def _deviations(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    lines = [
        r"\begin{longtable}{@{}P{0.09\linewidth}P{0.16\linewidth}P{0.19\linewidth}"
        r"P{0.19\linewidth}P{0.24\linewidth}@{}}",
        r"\caption{Parameters the papers leave open (choice) and deliberate departures "
        r"from them (deviation), from the \texttt{notes} of each scenario file (a note on "
        r"one tier's settings in that tier's report only).}"
        r"\label{tab:deviations}\\",
        r"\toprule Figures & Field & Our value & Paper & Reason \\ \midrule",
        r"\endfirsthead",
        r"\toprule Figures & Field & Our value & Paper & Reason \\ \midrule",
        r"\endhead",
    ]
    for note, figs in _noted(config, tier, figures).values():
        lines.append(
            rf"{tex(', '.join(figs))} & {tex(note.field)} ({note.kind}) & "
            rf"{tex(str(note.value))} & {tex(note.paper)} & {tex(note.reason)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"
