r"""Generated LaTeX inputs of the reproduction paper (``paper/generated/``).

This module owns every piece of the paper that depends on results or
configuration, so that ``paper/tcprepro.tex`` holds only prose and
``\\input`` commands:

- ``glance.tex``: the at-a-glance section (every catalogue artefact with its
  status in this tier and its page, every claim with its verdict and page, the
  verdict totals per verdict and per study, counted from the claims CSVs; then the
  verify tier's verdicts next to this build's when a verify build left its CSVs in
  ``data/claims/verify/``, else one line saying there are none);
- ``body.tex``: one section per study in catalogue order (A, B, C, D), its figures
  and tables in catalogue order, then its claims table. Each caption is the one of
  ``workflow/config.yaml``, then the sentences the drawing recorded about what it
  actually drew (:class:`tcprepro.figures.common.Drawn`, ``paper/figures/<id>.json``),
  then a generated line stating what the figure was drawn from (tier, backend,
  simulated duration and warm-up, repetitions, cells run of the grid) next to what
  the paper used (the tier ``paper`` of the figure). A figure with nothing drawn in
  this tier is not included: it is one line of the at-a-glance table;
- ``parameters.tex`` (each parameter in this build next to the paper's, the ones the
  tier changed marked), ``deviations.tex`` (from the ``notes`` of each scenario
  file), ``provenance.tex`` (from the combined datasets) and ``numbers.tex`` (macros
  for every number quoted in the prose).

:func:`check_build` is the build check that runs after LaTeX: it fails on an overfull
box in generated content, a catalogue id without a caption or a line in the
at-a-glance table, and a figure whose page does not carry its caption.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import xarray as xr

from tcprepro import provenance
from tcprepro.campaign import WorkflowConfig, cell_name
from tcprepro.campaign.plan import (
    CLUSTER_CORES,
    TIER_COMMANDS,
    Cost,
    claim_costs,
    decide_command,
    duration_text,
    tier_cost,
)
from tcprepro.claims import NOT_EMULATED, UNDECIDED, VERDICT_COLOURS, load_registry
from tcprepro.claims.glossary import glossary_tex
from tcprepro.claims.history import read_records
from tcprepro.errors import ConfigError
from tcprepro.latex import atomic_write as _write
from tcprepro.latex import escape as tex
from tcprepro.network_plan import build_plan, flow_path
from tcprepro.scenario import AccessTopology, DumbbellTopology, LinkDirection, Scenario
from tcprepro.scenario_io import load_scenario
from tcprepro.units import format_rate

__all__ = [
    "Status",
    "check_build",
    "figure_order",
    "figure_status",
    "read_verdicts",
    "tier_line",
    "write_paper_inputs",
]

_BACKENDS = {"ns3": "ns-3", "mininet": "Mininet (real Linux TCP)"}


# ---------------------------------------------------------------------------------------
# order, status and the tier line


def figure_order(config: WorkflowConfig, figures: Iterable[str]) -> list[str]:
    """Figures in catalogue order: study A, B, C, D; within a study by number (A1, A1.1, A2)."""

    def key(figure: str) -> tuple[str, bool, list[int]]:
        study = str(config.figure(figure)["study"])
        numbers = [int(n) for n in re.findall(r"\d+", figure)]
        return (study, not figure.startswith(study), numbers)

    return sorted(figures, key=key)


@dataclass(frozen=True)
class Status:
    """What a build has of one artefact.

    ``kind`` is ``full`` (every cell of the paper's grid drawn), ``partial``,
    ``not run`` (nothing drawn in this tier) or ``excluded`` (with ``reason``).
    """

    figure: str
    kind: str
    cells_run: int | None = None
    cells_paper: int | None = None
    reason: str = ""

    @property
    def included(self) -> bool:
        """Whether the report shows the artefact (a figure or a table)."""
        return self.kind in ("full", "partial")

    def text(self) -> str:
        """The status as the at-a-glance table prints it (plain text)."""
        if self.kind == "full":
            return f"full ({self.cells_paper} cells)" if self.cells_paper else "full"
        if self.kind == "partial":
            return f"partial: {self.cells_run} of {self.cells_paper} cells"
        if self.kind == "excluded":
            reason = re.sub(r"^excluded\s+", "", self.reason)
            return f"excluded: {reason}" if reason else "excluded"
        return "not run in this tier" + (f" ({self.reason})" if self.reason else "")


def _matches(value: Any, allowed: Sequence[Any]) -> bool:
    """Whether a cell's value is one of ``allowed`` (``"re:<pattern>"``: a full match)."""
    text = str(value)
    for option in allowed:
        option_text = str(option)
        if option_text.startswith("re:"):
            if re.fullmatch(option_text[3:], text):
                return True
        elif option_text == text:
            return True
    return False


def _select(
    cells: Iterable[Mapping[str, Any]], selection: Mapping[str, Sequence[Any]] | None
) -> list[Mapping[str, Any]]:
    """The cells a figure shows: those whose values the selection allows (all without one)."""
    return [
        cell
        for cell in cells
        if not selection or all(_matches(cell[d], v) for d, v in selection.items() if d in cell)
    ]


def _cells_with_runs(ds: xr.Dataset) -> list[dict[str, Any]]:
    """Cells of a combined dataset that have runs (the grid less ``missing_cells``)."""
    dims = json.loads(ds.attrs.get("sweep_dims", "[]"))
    missing = json.loads(ds.attrs.get("missing_cells", "[]"))
    missing_keys = {tuple(str(cell[d]) for d in dims) for cell in missing}
    cells = []
    for combo in product(*(list(ds[d].values) for d in dims)):
        cell = {d: v.item() if hasattr(v, "item") else v for d, v in zip(dims, combo, strict=True)}
        if tuple(str(cell[d]) for d in dims) not in missing_keys:
            cells.append(cell)
    return cells


def _key(cell: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((d, str(v)) for d, v in cell.items()))


def figure_status(
    config: WorkflowConfig,
    figure: str,
    combined: xr.Dataset | None,
    facts: Mapping[str, Any] | None,
    excluded: str = "",
) -> Status:
    """The status of one artefact in this build.

    Parameters
    ----------
    combined
        The combined dataset the figure draws (None when not built).
    facts
        What the drawing recorded (``paper/figures/<id>.json``), None for a table.
    excluded
        Why this build skips the figure (e.g. emulation excluded), "" if it does not.
    """
    if excluded:
        return Status(figure, "excluded", reason=excluded)
    if combined is None:
        return Status(figure, "not run", reason="no dataset")
    facts = dict(facts or {})
    if facts.get("recorded") and int(facts.get("panels_drawn", 0)) == 0:
        return Status(figure, "not run")
    source = config.source(figure)
    selection = facts.get("selection")
    if facts.get("cells_total") is not None:
        total = int(facts["cells_total"])
        run = int(facts.get("cells_drawn") or 0)
    else:
        paper = _select(config.cells(source, "paper"), selection)
        pending = {_key(cell) for cell, _ in config.pending_cells(source, "paper")}
        paper_keys = {_key(cell) for cell in paper}
        run_keys = {_key(cell) for cell in _select(_cells_with_runs(combined), selection)}
        total = len(paper_keys)
        run = len((run_keys & paper_keys) - pending)
    if run == 0:
        return Status(figure, "not run", run, total)
    return Status(figure, "full" if run >= total else "partial", run, total)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _durations(ds: xr.Dataset) -> tuple[list[float], list[float]]:
    """Simulated durations and warm-ups of a combined dataset's runs (distinct, sorted)."""
    if "duration_s" in ds.attrs and "warmup_s" in ds.attrs:
        return [float(ds.attrs["duration_s"])], [float(ds.attrs["warmup_s"])]
    durations, warmups = set(), set()
    for config in ds["run_config"].values.ravel() if "run_config" in ds else []:
        if config:
            scenario = json.loads(str(config))
            durations.add(float(scenario["duration"]))
            warmups.add(float(scenario["warmup"]))
    return sorted(durations), sorted(warmups)


def _span(values: Sequence[float]) -> str:
    if not values:
        return "?"
    if len(values) == 1:
        return _seconds(values[0])
    return f"{_seconds(values[0])} to {_seconds(values[-1])}"


def tier_line(
    config: WorkflowConfig, figure: str, tier: str, combined: xr.Dataset, status: Status
) -> str:
    """What a figure was drawn from in this build, next to what the paper used (plain text).

    From the dataset: tier, backend, simulated duration and warm-up of each run,
    repetitions and cells run of the paper's grid. From the config's ``paper`` tier:
    the paper's duration, warm-up, repetitions and cells, with the tier's ``note``
    where its values are not the paper's own.
    """
    source = config.source(figure)
    durations, warmups = _durations(combined)
    reps = int(combined.sizes.get("rep", 1))
    backend = _BACKENDS.get(str(combined.attrs.get("backend", "")), combined.attrs.get("backend"))
    cells = ""
    if status.cells_paper:
        cells = (
            f"all {status.cells_paper} cells"
            if status.kind == "full"
            else f"{status.cells_run} of {status.cells_paper} cells"
        )
    warm = "no warm-up" if warmups == [0.0] else f"{_span(warmups)} warm-up"
    this = (
        f"This build: {tier} tier, {backend}, {_span(durations)} simulated per run ({warm}), "
        f"{reps} repetition{'s' if reps != 1 else ''}" + (f", {cells}" if cells else "") + "."
    )
    paper_scenario = config.figure_scenario(source, "paper")
    paper_settings = config.tier_settings(source, "paper")
    paper_reps = int(paper_settings["repetitions"])
    paper_warm = (
        "no warm-up" if paper_scenario.warmup == 0 else f"{_seconds(paper_scenario.warmup)} warm-up"
    )
    note = str(paper_settings.get("note", ""))
    paper = (
        f"Paper: {_seconds(paper_scenario.duration)} ({paper_warm}), {paper_reps} "
        f"repetition{'s' if paper_reps != 1 else ''}"
        + (f", {status.cells_paper} cells" if status.cells_paper else "")
        + (f" ({note})" if note else "")
        + "."
    )
    return f"{this} {paper}"


# ---------------------------------------------------------------------------------------
# parameters, deviations, provenance


def _direction(cfg: LinkDirection) -> str:
    return f"{format_rate(cfg.rate)}, {cfg.delay * 1000:g} ms, {cfg.buffer_pkts} pkts {cfg.qdisc}"


def _topology_rows(scenario: Scenario) -> list[tuple[str, str]]:
    topo = scenario.topology
    if isinstance(topo, AccessTopology):
        return [
            ("downlink", _direction(topo.downlink)),
            ("uplink", _direction(topo.uplink)),
            ("server link", _direction(topo.server_link)),
        ]
    assert isinstance(topo, DumbbellTopology)
    bottleneck = _direction(topo.bottleneck)
    if topo.buffer_bdp is not None:
        bottleneck += f" ({topo.buffer_bdp:g} BDP)"
    rows = [("bottleneck", bottleneck)]
    for group in topo.senders:
        rtt = f", RTT {group.rtt * 1000:g} ms" if group.rtt is not None else ""
        rows.append(
            (
                f"senders {group.name}",
                f"{format_rate(group.rate)}, {group.delay * 1000:g} ms ×{group.count or 1}{rtt}",
            )
        )
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
    for dim, values in config.sweep_values(figure, tier).items():
        shown = ", ".join(map(str, values))
        rows.append((f"sweep {dim}", f"{shown} ({len(values)})"))
    tcp = scenario.tcp
    repetitions = int(config.tier_settings(figure, tier)["repetitions"])
    rows += [
        ("duration / warm-up", f"{scenario.duration:g} s / {scenario.warmup:g} s"),
        ("repetitions / seed", f"{repetitions} / {scenario.seed}"),
        (
            "TCP",
            f"MSS {tcp.mss} B, SACK {tcp.sack}, timestamps {tcp.timestamps}, delayed ACK "
            f"{tcp.delayed_ack_count} segments or {tcp.delayed_ack_timeout * 1000:g} ms, "
            f"IW {tcp.initial_cwnd_pkts}, buffers "
            f"{tcp.send_buffer // 1024} KiB, recovery {tcp.recovery}, min RTO "
            f"{tcp.min_rto:g} s",
        ),
        ("sampling", f"every {scenario.trace.interval * 1000:g} ms"),
    ]
    return rows


def _parameters(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    lines = [
        r"\begin{longtable}{@{}P{0.065\linewidth}P{0.14\linewidth}"
        r"P{0.355\linewidth}P{0.355\linewidth}@{}}",
        r"\caption{Parameters of every simulated figure in this build (tier \texttt{"
        + tex(tier)
        + r"}) next to the paper tier's, which are the papers' own values unless its note "
        r"says otherwise: the scenario file with the figure's and the tier's settings, and "
        r"the values of each swept parameter (their number in parentheses), which replace "
        r"the file's. \reprochanged{} marks a parameter this tier changed; \emph{same}: the "
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


def _deviations(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    lines = [
        r"\begin{longtable}{@{}P{0.09\linewidth}P{0.16\linewidth}P{0.19\linewidth}"
        r"P{0.19\linewidth}P{0.24\linewidth}@{}}",
        r"\caption{Parameters the papers leave open (choice) and deliberate departures "
        r"from them (deviation), from the \texttt{notes} of each scenario file.}"
        r"\label{tab:deviations}\\",
        r"\toprule Figures & Field & Our value & Paper & Reason \\ \midrule",
        r"\endfirsthead",
        r"\toprule Figures & Field & Our value & Paper & Reason \\ \midrule",
        r"\endhead",
    ]
    seen: dict[tuple[str, str, str], list[str]] = {}
    notes = {}
    for figure in figures:
        for note in config.figure_scenario(figure, tier).notes:
            key = (note.kind, note.field, str(note.value))
            seen.setdefault(key, []).append(figure)
            notes[key] = note
    for key, figs in seen.items():
        note = notes[key]
        lines.append(
            rf"{tex(', '.join(figs))} & {tex(note.field)} ({note.kind}) & "
            rf"{tex(str(note.value))} & {tex(note.paper)} & {tex(note.reason)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"


def _from_bundle(ds: xr.Dataset, source: Mapping[str, Any] | None) -> int:
    """How many of a combined dataset's runs are the imported bundle's own datasets.

    A run is the bundle's when its cache key and creation date are those the bundle's
    manifest lists (a run simulated here again has the same key, not the same date).
    """
    if not source:
        return 0
    bundled = source.get("runs", {})
    keys = ds["run_cache_key"].values.ravel()
    created = ds["run_created"].values.ravel()
    return sum(1 for k, c in zip(keys, created, strict=True) if k and bundled.get(str(k)) == str(c))


def _source_text(combined: Mapping[str, xr.Dataset], source: Mapping[str, Any] | None) -> str:
    """Where this build's data came from: simulated here, or imported from a trace bundle."""
    if not source:
        return (
            r"\paragraph{Source of the data.} Every run was simulated by this build's workflow "
            r"(no trace bundle imported); the hosts that ran them are in "
            r"Table~\ref{tab:provenance}." + "\n"
        )
    runs = sum(int(ds.attrs.get("n_runs", 0)) for ds in combined.values())
    bundled = sum(_from_bundle(ds, source) for ds in combined.values())
    machine = source.get("exported_by", {})
    text = r"\paragraph{Source of the data.} " + tex(
        f"{bundled} of the {runs} runs were imported from the trace bundle "
        f"{source.get('bundle', '')} (tier {source.get('tier', '')}, manifest SHA-256 "
        f"{source.get('manifest_sha256', '')}), exported on {source.get('exported', '')} "
        f"by host {machine.get('host', '?')} ({machine.get('cpu', '?')}, "
        f"{machine.get('cores', '?')} cores) from tcprepro "
        f"{source.get('software', {}).get('tcprepro', '?')} and ns-3 "
        f"{source.get('software', {}).get('ns3', '?')}"
        + (f"; {runs - bundled} were simulated here. " if runs > bundled else ". ")
    )
    verify = source.get("verify")
    if not verify:
        text += tex(
            "The bundle was not verified on this machine (tcprepro bundle verify re-simulates "
            "a random sample of its runs and compares them bit for bit)."
        )
    else:
        different = verify.get("different", []) + verify.get("combined_differ", [])
        text += tex(
            f"Verified on {verify.get('date', '')}: {verify.get('identical')} of "
            f"{verify.get('sampled')} runs drawn at random (seed {verify.get('seed')}) were "
            "re-simulated here bit-identical"
            + (f"; DIFFERENT: {', '.join(different)}" if different else "")
            + "."
        )
    return text + "\n"


def _provenance(combined: Mapping[str, xr.Dataset], source: Mapping[str, Any] | None = None) -> str:
    lines = [
        _source_text(combined, source),
        r"\begin{longtable}{@{}P{0.065\linewidth}P{0.05\linewidth}P{0.08\linewidth}"
        r"P{0.09\linewidth}P{0.215\linewidth}P{0.235\linewidth}P{0.1\linewidth}@{}}",
        r"\caption{Provenance of every figure's combined dataset.}\label{tab:provenance}\\",
        r"\toprule Figure & Runs & tcprepro & ns-3 & Code (git) & Kernel, dates & Source "
        r"\\ \midrule",
        r"\endfirsthead",
        r"\toprule Figure & Runs & tcprepro & ns-3 & Code (git) & Kernel, dates & Source "
        r"\\ \midrule",
        r"\endhead",
    ]
    for figure, ds in combined.items():
        commits = sorted({str(c)[:10] for c in ds["run_git_commit"].values.ravel() if c})
        dirty = any(str(v) == "1" for v in ds["run_git_dirty"].values.ravel())
        kernels = sorted({str(k) for k in ds["run_kernel"].values.ravel() if k})
        created = sorted(str(c) for c in ds["run_created"].values.ravel() if c)
        code = ", ".join(commits) + (" (dirty tree)" if dirty else "")
        dates = f"{', '.join(kernels)}; {created[0][:10]} to {created[-1][:10]}" if created else ""
        n_runs = int(ds.attrs.get("n_runs", 0))
        bundled = _from_bundle(ds, source)
        origin = (
            "here"
            if not bundled
            else "bundle"
            if bundled == n_runs
            else f"bundle {bundled}, here {n_runs - bundled}"
        )
        lines.append(
            rf"{tex(figure)} & {n_runs} & "
            rf"{tex(str(ds.attrs.get('tcprepro_version', '')))} & "
            rf"{tex(str(ds.attrs.get('ns3_version', '')))} & {tex(code)} & {tex(dates)} & "
            rf"{tex(origin)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------
# claims: verdicts counted from the CSVs


def _read_values(path: str | Path) -> list[dict[str, str]]:
    """(claim, verdict, value) of a claims CSV."""
    with Path(path).open(newline="") as handle:
        return [
            {"claim": row["claim"], "verdict": row["verdict"], "value": row["reproduced"]}
            for row in csv.DictReader(handle)
        ]


def read_verdicts(paths: Iterable[str | Path]) -> list[dict[str, str]]:
    """Rows (claim, study, verdict, cells, coverage, confidence) of ``data/claims/<study>.csv``.

    The study is the CSV's stem; every verdict string the CSVs hold is kept as is (a
    verdict the report has no colour for is printed in black). ``cells`` is the claim's
    "k of n cells" when the CSV gives it (empty otherwise); ``emulated_verdict``,
    ``emulated_backend`` and ``emulated_cells`` its second verdict, on its emulated twin
    (empty for a claim without twin or a CSV without the columns).
    """
    rows = []
    for path in sorted(Path(p) for p in paths):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                rows.append(
                    {
                        "claim": row["claim"],
                        "study": path.stem,
                        "verdict": row["verdict"],
                        "cells": row.get("cells", "") or "",
                        "coverage": row.get("coverage", "") or "",
                        "confidence": row.get("confidence", "") or "",
                        "reading": row.get("reading", "") or "",
                        "emulated_verdict": row.get("emulated_verdict", "") or "",
                        "emulated_backend": row.get("emulated_backend", "") or "",
                        "emulated_cells": row.get("emulated_cells", "") or "",
                        "emulated_coverage": row.get("emulated_coverage", "") or "",
                    }
                )
    return rows


def _verdict_order(verdicts: Iterable[str]) -> list[str]:
    present = set(verdicts)
    known = [v for v in VERDICT_COLOURS if v in present]
    return known + sorted(present - set(known))


def _verdict(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict)
    return rf"\textcolor{{{colour}}}{{{tex(verdict)}}}" if colour else tex(verdict)


# ---------------------------------------------------------------------------------------
# at a glance and body


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
        next_steps,
        r"\begingroup\footnotesize",
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
    statements = {claim.id: claim.text for claim in load_registry()}
    lines += [
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
    lines += [r"\bottomrule", r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines) + "\n"


#: the tiers the "what to run next" table lists, cheapest first
PLAN_TIERS = ("smoke", "quick", "verify", "paper")


def _command(text: str) -> str:
    """A shell command in typewriter type, its double dashes kept apart (no en dash)."""
    return r"\texttt{" + tex(text).replace("--", "-{}-") + "}"


def _cores(costs: Iterable[Cost]) -> tuple[int, int]:
    """The local and cluster core counts the costs were computed for."""
    some = next(iter(costs), None)
    return (some.cores, some.cluster_cores) if some else (2, CLUSTER_CORES)


def _tier_table(tier: str, tiers: Mapping[str, Cost]) -> str:
    """What to run next: each tier's runs, cost and command.

    ``tiers``: their costs (:func:`tcprepro.campaign.plan.tier_cost`).
    """
    cores, cluster = _cores(tiers.values())
    lines = [
        r"\subsection{What to run next}\label{sec:next}",
        rf"This build ran the \texttt{{{tex(tier)}}} tier. The tiers below differ in run "
        r"length and repetitions (docs/tiers.md); the \texttt{verify} tier runs the paper's "
        r"settings on exactly the cells the claims read, and decides a claim below it left "
        r"inconclusive. Runs, simulated time and wall times are those of \texttt{tcprepro plan} "
        rf"(its cost model, calibrated per study on the measured rates of BENCHMARKS.md): on "
        rf"{cores} local cores, and as cluster jobs on {cluster} cores (docs/cluster.md); "
        r"emulated runs are not counted.",
        "",
        r"\begin{center}\small",
        r"\begin{tabular}{@{}lrrrrP{0.4\linewidth}@{}}",
        rf"\toprule Tier & Runs & Simulated & {cores} cores & {cluster} cluster cores & "
        r"Command \\ \midrule",
    ]
    for name, cost in tiers.items():
        mark = r"\textbf{" + tex(name) + "}" if name == tier else tex(name)
        lines.append(
            rf"{mark} & {cost.runs} & {duration_text(cost.simulated_s)} & "
            rf"{duration_text(cost.local_s)} & {duration_text(cost.cluster_s)} & "
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
        r"\begin{longtable}{@{}P{0.06\linewidth}P{0.1\linewidth}rrrP{0.58\linewidth}@{}}",
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
        head, _, tail = command.partition(" --config ")
        lines.append(
            rf"{tex(claim)} & {_verdict(verdict) if verdict else '---'} & {cost.runs} & "
            rf"{duration_text(cost.local_s)} & {duration_text(cost.cluster_s)} & "
            rf"{_command(head)}\newline\hspace*{{1em}}{_command('--config ' + tail)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines) + "\n"


def _glossary() -> str:
    """The glossary of the verdict and coverage words (:mod:`tcprepro.claims.glossary`)."""
    return (
        r"\subsection{Terms}\label{sec:glossary}"
        "\n"
        r"Each verdict and coverage word of this report has one meaning:"
        "\n" + glossary_tex()
    )


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
    """The what-if verdicts (a testbed unknown run the other way) beside the verify ones."""
    rows = [(name, row) for name, found in sorted(whatif.items()) for row in found]
    rows = [(name, row) for name, row in rows if row["verdict"] not in UNDECIDED]
    if not rows:
        return ""
    main = {row["claim"]: row for row in verify}
    lines = [
        r"\begin{longtable}{@{}P{0.08\linewidth}P{0.18\linewidth}P{0.2\linewidth}"
        r"P{0.44\linewidth}@{}}",
        r"\caption{Testbed unknowns run the other way at the verify tier (what-if runs, "
        r"\texttt{data/claims/whatif/}; what each one changes: the testbed profiles, "
        r"docs/testbeds.md), beside the verify verdict of the same claim, which they never "
        r"replace.}\label{tab:whatif}\\",
        r"\toprule Claim & verify verdict & what-if & what-if verdict, value \\ \midrule",
        r"\endfirsthead",
        r"\toprule Claim & verify verdict & what-if & what-if verdict, value \\ \midrule",
        r"\endhead",
    ]
    for name, row in sorted(rows, key=lambda item: (item[1]["claim"], item[0])):
        verified = main.get(row["claim"])
        lines.append(
            rf"{tex(row['claim'])} & {_verdict(verified['verdict']) if verified else '---'} & "
            rf"\texttt{{{tex(name)}}} & {_verdict(row['verdict'])}: {tex(row['value'])} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"


def _history_table(records: list[dict[str, str]]) -> str:
    """The verdict history (records/verdicts.csv), as docs/claims.md shows it."""
    if not records:
        return ""
    lines = [
        r"\begin{longtable}{@{}P{0.07\linewidth}P{0.09\linewidth}P{0.14\linewidth}"
        r"P{0.19\linewidth}P{0.18\linewidth}P{0.19\linewidth}@{}}",
        r"\caption{The verdict history: every verify and paper-tier verdict kept as a record "
        r"(\texttt{records/verdicts.csv}) with its reading (a digest of its tolerance and rules), "
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


def _runs_text(config: WorkflowConfig, figure: str, tier: str, ds: xr.Dataset | None) -> str:
    """Short "this build; paper" run length and repetitions of a figure (plain text)."""
    source = config.source(figure)
    paper = config.figure_scenario(source, "paper")
    paper_reps = int(config.tier_settings(source, "paper")["repetitions"])
    paper_text = f"{_seconds(paper.duration)} ×{paper_reps}"
    if ds is None:
        return f"—; {paper_text}"
    durations, _ = _durations(ds)
    return f"{_span(durations)} ×{int(ds.sizes.get('rep', 1))}; {paper_text}"


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
                # placed "here" on its first page (an overfull page): its figure first
                out.append(r"\reprofloatbarrier")
                out.append(rf"\reproinput{{{claims_dir}/crosscheck_{figure}.tex}}")
        out.append(r"\reprofloatbarrier")
        out.append(rf"\reproinput{{{claims_dir}/claims_{study}.tex}}")
        out.append(r"\clearpage")
    return "\n".join(out) + "\n"


def _load_facts(facts_dir: Path | None, figure: str) -> dict[str, Any] | None:
    if facts_dir is None:
        return None
    path = facts_dir / f"{figure}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _rtts_text(config: WorkflowConfig, figure: str) -> str:
    """The RTTs of a figure's ``delay`` sweep (the paper tier's values), e.g. ``4 and 12 ms``."""
    block = config.figure(figure)
    path = block["sweep"]["delay"]["path"]
    rtts_ms = []
    for delay in config.sweep_values(figure, "paper")["delay"]:
        scenario = load_scenario(block["scenario"], [(path, delay)])
        plan = build_plan(scenario, 0)
        rtts_ms.append(flow_path(plan, plan.flows[0]).rtt_s * 1000)
    return " and ".join(f"{rtt:g}" for rtt in rtts_ms) + " ms"


def _quoted_parameters(config: WorkflowConfig) -> dict[str, str]:
    """Parameters the prose quotes (paper/tcprepro.tex), read from the scenarios.

    Study D's emulated twin D1.1 is D1 scaled in time: its rate, its RTTs next to D1's,
    and the factor between the two rates.
    """
    if not {"D1", "D1.1"} <= set(config.figures):
        return {}
    rate = config.figure_scenario("D1", "paper").topology.bottleneck.rate
    emulated = config.figure_scenario("D1.1", "paper").topology.bottleneck.rate
    return {
        "dRate": format_rate(rate),
        "dEmuRate": format_rate(emulated),
        "dEmuTimeScale": f"{rate / emulated:g}",
        "dRtts": _rtts_text(config, "D1"),
        "dEmuRtts": _rtts_text(config, "D1.1"),
    }


def write_paper_inputs(
    config: WorkflowConfig,
    tier: str,
    combined_paths: Mapping[str, str | Path],
    out_dir: str | Path,
    figure_dir: str = "figures",
    claims_dir: str = "generated",
    emulation_note: str = "",
    excluded: Mapping[str, str] | None = None,
    facts_dir: str | Path | None = None,
    claims_csvs: Iterable[str | Path] = (),
    source: Mapping[str, Any] | None = None,
    verify_csvs: Iterable[str | Path] = (),
    whatif_csvs: Iterable[str | Path] = (),
    records: str | Path | None = None,
    plan: bool = True,
) -> list[Path]:
    """Write glance, body, parameters, deviations, provenance and numbers into ``out_dir``.

    Parameters
    ----------
    combined_paths
        Combined dataset of each figure included in this build, by figure id.
    figure_dir, claims_dir
        Folders, relative to the paper source, holding the figure PDFs and the
        claims tables.
    emulation_note
        Whether this build includes the emulated (Mininet) figures, and why
        (:attr:`tcprepro.campaign.emulated.EmulationDecision.summary`); quoted in
        the paper by the macro ``reproEmulation``.
    excluded
        Figures this build skips, with the reason (the at-a-glance table says it).
    facts_dir
        Folder of the figures' records (``<id>.json``, written with each PDF).
    claims_csvs
        The claims CSVs (``data/claims/<study>.csv``) the verdict totals count.
    verify_csvs
        The verify tier's claims CSVs (``data/claims/verify/<study>.csv``), when a verify
        build left them: the at-a-glance section sets their verdicts next to this
        build's (else it says in one line that there are none).
    whatif_csvs
        The what-if builds' claims CSVs (``data/claims/whatif/<id>/<study>.csv``): set beside
        the verify verdicts, each named by its what-if.
    records
        The verdict records (``records/verdicts.csv``): the history table.
    plan
        Whether to cost the tiers and each claim's verify runs for the section "What to
        run next" (:mod:`tcprepro.campaign.plan`); without it the section has no tables.
    source
        The record of an imported trace bundle
        (:func:`tcprepro.campaign.bundle.source_record`), or None when every run was
        simulated here: the provenance section says which runs came from where.
    """
    from tcprepro.store import open_dataset

    out = Path(out_dir)
    excluded = dict(excluded or {})
    facts_path = Path(facts_dir) if facts_dir is not None else None
    unknown = sorted(set(combined_paths) - set(config.figures))
    if unknown:
        raise ConfigError(f"paper inputs: datasets of unknown figures {unknown}")
    combined = {f: open_dataset(p) for f, p in combined_paths.items()}
    order = figure_order(config, config.figures)
    facts = {f: x for f in order if (x := _load_facts(facts_path, f)) is not None}
    statuses: dict[str, Status] = {}
    lines_of: dict[str, str] = {}
    runs_text: dict[str, str] = {}
    for figure in order:
        ds = combined.get(config.source(figure))
        status = figure_status(config, figure, ds, facts.get(figure), excluded.get(figure, ""))
        statuses[figure] = status
        if ds is not None and status.kind != "excluded":
            lines_of[figure] = tier_line(config, figure, tier, ds, status)
            runs_text[figure] = _runs_text(config, figure, tier, ds)
    simulated = [f for f in order if f in combined]
    verdicts = read_verdicts(claims_csvs)
    verify = read_verdicts(verify_csvs)
    whatif: dict[str, list[dict[str, str]]] = {}
    for path in whatif_csvs:
        whatif.setdefault(Path(path).parent.name, []).extend(_read_values(path))
    history = read_records(records) if records is not None else []
    n_runs = sum(int(ds.attrs.get("n_runs", 0)) for ds in combined.values())
    pending = {f: json.loads(ds.attrs.get("missing_cells", "[]")) for f, ds in combined.items()}
    sim_seconds = sum(
        float(ds.attrs.get("duration_s", 0)) * int(ds.attrs.get("n_runs", 0))
        for ds in combined.values()
    )
    numbers = {
        "tier": tier,
        "nRuns": str(n_runs),
        "nFigures": str(sum(s.included for s in statuses.values())),
        "nArtefacts": str(len(order)),
        "simHours": f"{sim_seconds / 3600:.1f}",
        "nPendingCells": str(sum(len(v) for v in pending.values())),
        "emulation": emulation_note or "emulation not considered in this build",
        "nsVersion": provenance.ns3_version(),
        **_quoted_parameters(config),
    }
    studies = sorted({str(config.figure(f)["study"]) for f in order})
    claim_ids = [row["claim"] for row in verdicts]
    tiers = {t: tier_cost(config, t) for t in PLAN_TIERS} if plan else {}
    decide = claim_costs(config, claim_ids) if plan else {}
    written = []
    for name, text in {
        "glance.tex": _glance(
            config, tier, order, statuses, runs_text, verdicts, _tier_table(tier, tiers)
        )
        + _decide_table(decide, {r["claim"]: r["verdict"] for r in verdicts})
        + _glossary()
        + _verify_section(config, tier, verdicts, verify, whatif, history),
        "body.tex": _body(
            config, order, statuses, facts, lines_of, figure_dir, claims_dir, tier, studies
        ),
        "parameters.tex": _parameters(config, tier, simulated),
        "deviations.tex": _deviations(config, tier, simulated),
        "provenance.tex": _provenance({f: combined[f] for f in simulated}, source),
        "numbers.tex": "".join(
            rf"\newcommand{{\repro{k[0].upper() + k[1:]}}}{{{tex(v)}}}" + "\n"
            for k, v in numbers.items()
        ),
    }.items():
        _write(out / name, text)
        written.append(out / name)
    return written


# ---------------------------------------------------------------------------------------
# the build check


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
