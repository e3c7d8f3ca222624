r"""Writing every generated input of the report (:func:`write_paper_inputs`).

It reads the combined datasets, the figures' records and the claims CSVs once, and
hands them to the section writers of this package; ``numbers.tex`` (the macros the
prose quotes) is made here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from tcprepro import provenance
from tcprepro.campaign import WorkflowConfig
from tcprepro.campaign.cost_records import recorded_figures
from tcprepro.campaign.emulated import emulated_figures
from tcprepro.campaign.plan import (
    build_wall_s,
    claim_costs,
    emulated_cost,
    tier_cost,
    tier_emulation,
)
from tcprepro.claims.history import read_records
from tcprepro.errors import ConfigError
from tcprepro.latex import atomic_write as _write
from tcprepro.latex import escape as tex
from tcprepro.network_plan import build_plan, flow_path
from tcprepro.paper.body import _body
from tcprepro.paper.glance import PLAN_TIERS, _decide_table, _glance, _glossary, _tier_table
from tcprepro.paper.parameters import _deviations, _main_deviations, _parameters
from tcprepro.paper.sources import _provenance
from tcprepro.paper.status import Status, _runs_text, figure_order, figure_status, tier_line
from tcprepro.paper.verdicts import _read_values, read_verdicts
from tcprepro.paper.verify import _verify_section
from tcprepro.scenario_io import load_scenario
from tcprepro.units import format_rate


def _load_facts(facts_dir: Path | None, figure: str) -> dict[str, Any] | None:
    if facts_dir is None:
        return None
    path = facts_dir / f"{figure}.json"
    return json.loads(path.read_text()) if path.exists() else None


def repeated_figures(facts: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    """Groups of figures whose records give the same data digest: one plot drawn twice.

    ``facts``: the figures' records (written by ``save_figure``); a figure that draws no
    data or whose record has no digest is in no group.
    """
    groups: dict[str, list[str]] = {}
    for figure, record in facts.items():
        digest = str(record.get("data_digest") or "")
        if digest:
            groups.setdefault(digest, []).append(figure)
    return [figures for figures in groups.values() if len(figures) > 1]


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


def _statuses(
    config: WorkflowConfig,
    tier: str,
    order: list[str],
    combined: Mapping[str, xr.Dataset],
    facts: Mapping[str, Mapping[str, Any]],
    excluded: Mapping[str, str],
) -> tuple[dict[str, Status], dict[str, str], dict[str, str]]:
    """Each artefact's status; the tier line and runs text of each one this build has."""
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
    return statuses, lines_of, runs_text


def _whatif_verdicts(whatif_csvs: Iterable[str | Path]) -> dict[str, list[dict[str, str]]]:
    """The what-if builds' (claim, verdict, value) rows, by what-if (the CSV's folder)."""
    whatif: dict[str, list[dict[str, str]]] = {}
    for path in whatif_csvs:
        whatif.setdefault(Path(path).parent.name, []).extend(_read_values(path))
    return whatif


def _numbers(
    config: WorkflowConfig,
    tier: str,
    order: list[str],
    statuses: Mapping[str, Status],
    combined: Mapping[str, xr.Dataset],
    emulation_note: str,
) -> dict[str, str]:
    r"""The numbers the prose quotes, by macro name (``numbers.tex``: ``\repro<Name>``).

    The runs and simulated hours are the ns-3 simulations': an emulated-only figure's
    dataset (D1.1) holds emulated runs, which the abstract does not count as simulations;
    it names them when the build has one (``emulatedRuns``).
    """
    simulated = {f: ds for f, ds in combined.items() if "ns3" in config.backends(config.source(f))}
    n_runs = sum(int(ds.attrs.get("n_runs", 0)) for ds in simulated.values())
    pending = {f: json.loads(ds.attrs.get("missing_cells", "[]")) for f, ds in combined.items()}
    sim_seconds = sum(
        float(ds.attrs.get("duration_s", 0)) * int(ds.attrs.get("n_runs", 0))
        for ds in simulated.values()
    )
    emulated = not set(emulated_figures(config)).isdisjoint(combined)
    return {
        "tier": tier,
        "nRuns": str(n_runs),
        "emulatedRuns": (
            " and, for the emulated figures (D1.1, D2.1 and the Linux side of the cross-checks "
            "X1 to X14), runs with real Linux TCP"
            if emulated
            else " (no emulated figure: this build left them out)"
        ),
        "nFigures": str(sum(s.included for s in statuses.values())),
        "nArtefacts": str(len(order)),
        "simHours": f"{sim_seconds / 3600:.1f}",
        "nPendingCells": str(sum(len(v) for v in pending.values())),
        "emulation": emulation_note or "emulation not considered in this build",
        "nsVersion": provenance.ns3_version(),
        **_quoted_parameters(config),
    }


def _numbers_tex(numbers: Mapping[str, str]) -> str:
    r"""One ``\newcommand`` per number."""
    return "".join(
        rf"\newcommand{{\repro{k[0].upper() + k[1:]}}}{{{tex(v)}}}" + "\n"
        for k, v in numbers.items()
    )


def _glance_tex(
    config: WorkflowConfig,
    tier: str,
    order: list[str],
    statuses: Mapping[str, Status],
    runs_text: Mapping[str, str],
    verdicts: list[dict[str, str]],
    verify: list[dict[str, str]],
    whatif: Mapping[str, list[dict[str, str]]],
    history: list[dict[str, str]],
    plan: bool,
    simulated: Sequence[str] = (),
) -> str:
    """``glance.tex``: the at-a-glance section, what to run next, the terms, the verify part.

    After what to run next, the main deviations of the ``simulated`` figures.
    """
    claim_ids = [row["claim"] for row in verdicts]
    # per tier, what its command builds: without the emulated figures (None: the twins left
    # out, their ns-3 sides too) where its profile excludes them; its runs' wall time on
    # the local cores
    emulates = {t: tier_emulation(t) != "exclude" for t in PLAN_TIERS} if plan else {}
    skipped = set(emulated_figures(config))
    built = {
        t: None if on else [f for f in config.simulated_figures if f not in skipped]
        for t, on in emulates.items()
    }
    tiers = {t: tier_cost(config, t, figures=built[t]) for t in emulates}
    emulated = {t: emulated_cost(config, t) if on else None for t, on in emulates.items()}
    builds = {
        t: build_wall_s(config, t, route="uml" if on else None, figures=built[t])
        for t, on in emulates.items()
    }
    decide = claim_costs(config, claim_ids) if plan else {}
    recorded = recorded_figures(config, "verify") if plan else []
    return (
        _glance(
            config,
            tier,
            order,
            statuses,
            runs_text,
            verdicts,
            _tier_table(tier, tiers, emulated, builds, recorded)
            + _main_deviations(config, tier, list(simulated)),
        )
        + _decide_table(decide, {r["claim"]: r["verdict"] for r in verdicts})
        + _glossary()
        + _verify_section(config, tier, verdicts, verify, whatif, history)
    )


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
    repeated = repeated_figures(facts)
    if repeated:  # a report that shows one plot under two numbers
        raise ConfigError(
            "paper inputs: figures drawing the same data: "
            + "; ".join(" = ".join(group) for group in repeated)
        )
    statuses, lines_of, runs_text = _statuses(config, tier, order, combined, facts, excluded)
    simulated = [f for f in order if f in combined]
    verdicts = read_verdicts(claims_csvs)
    verify = read_verdicts(verify_csvs)
    whatif = _whatif_verdicts(whatif_csvs)
    history = read_records(records) if records is not None else []
    numbers = _numbers(config, tier, order, statuses, combined, emulation_note)
    studies = sorted({str(config.figure(f)["study"]) for f in order})
    written = []
    for name, text in {
        "glance.tex": _glance_tex(
            config,
            tier,
            order,
            statuses,
            runs_text,
            verdicts,
            verify,
            whatif,
            history,
            plan,
            simulated,
        ),
        "body.tex": _body(
            config, order, statuses, facts, lines_of, figure_dir, claims_dir, tier, studies
        ),
        "parameters.tex": _parameters(config, tier, simulated),
        "deviations.tex": _deviations(config, tier, simulated),
        "provenance.tex": _provenance({f: combined[f] for f in simulated}, source),
        "numbers.tex": _numbers_tex(numbers),
    }.items():
        _write(out / name, text)
        written.append(out / name)
    return written
