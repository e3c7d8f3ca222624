r"""Generated LaTeX inputs of the reproduction paper (``paper/generated/``).

This module owns every piece of the paper that depends on results or
configuration, so that ``paper/tcprepro.tex`` holds only prose and
``\\input`` commands: the body (one section per study with its figures and
claims table), the parameters table, the deviations table (from the ``notes``
of each scenario file), the provenance table (from the combined datasets)
and ``numbers.tex`` (macros for every number quoted in the prose).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import xarray as xr

from tcprepro import provenance
from tcprepro.campaign import WorkflowConfig
from tcprepro.latex import atomic_write as _write
from tcprepro.latex import escape as tex
from tcprepro.scenario import AccessTopology, DumbbellTopology, LinkDirection, Scenario
from tcprepro.scenario_io import load_scenario
from tcprepro.topology import build_plan, flow_path
from tcprepro.units import format_rate

__all__ = ["write_paper_inputs"]


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
                f"{format_rate(group.rate)}, {group.delay * 1000:g} ms x{group.count or 1}{rtt}",
            )
        )
    return rows


def _parameters(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    lines = [
        r"\begin{longtable}{@{}P{0.08\linewidth}P{0.25\linewidth}P{0.6\linewidth}@{}}",
        r"\caption{Parameters of every figure, as run in this build (tier \texttt{"
        + tex(tier)
        + r"}).}\label{tab:parameters}\\",
        r"\toprule Figure & Parameter & Value \\ \midrule",
        r"\endhead",
    ]
    for figure in figures:
        runs = config.runs(figure, tier)
        if not runs:
            continue
        scenario = runs[0].scenario()
        rows = _topology_rows(scenario)
        for dim, values in config.sweep_values(figure, tier).items():
            rows.append((f"sweep {dim}", ", ".join(map(str, values))))
        tcp = scenario.tcp
        rows += [
            ("duration / warm-up", f"{scenario.duration:g} s / {scenario.warmup:g} s"),
            ("repetitions / seed", f"{scenario.repetitions} / {scenario.seed}"),
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
        for i, (name, value) in enumerate(rows):
            lines.append(rf"{tex(figure) if i == 0 else ''} & {tex(name)} & {tex(value)} \\")
        lines.append(r"\midrule")
    lines[-1] = r"\bottomrule"
    lines.append(r"\end{longtable}")
    return "\n".join(lines) + "\n"


def _deviations(config: WorkflowConfig, tier: str, figures: list[str]) -> str:
    lines = [
        r"\begin{longtable}{@{}P{0.1\linewidth}P{0.16\linewidth}P{0.17\linewidth}"
        r"P{0.2\linewidth}P{0.27\linewidth}@{}}",
        r"\caption{Parameters the papers leave open (choice) and deliberate departures "
        r"from them (deviation), from the \texttt{notes} of each scenario file.}"
        r"\label{tab:deviations}\\",
        r"\toprule Figures & Field & Our value & Paper & Reason \\ \midrule",
        r"\endhead",
    ]
    seen: dict[tuple[str, str, str], list[str]] = {}
    notes = {}
    for figure in figures:
        runs = config.runs(figure, tier)
        if not runs:
            continue
        for note in runs[0].scenario().notes:
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
        r"\begin{longtable}{@{}P{0.07\linewidth}P{0.06\linewidth}P{0.1\linewidth}"
        r"P{0.1\linewidth}P{0.2\linewidth}P{0.26\linewidth}P{0.09\linewidth}@{}}",
        r"\caption{Provenance of every figure's combined dataset.}\label{tab:provenance}\\",
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


def _body(
    config: WorkflowConfig, figures: list[str], figure_dir: str, claims_dir: str, tier: str
) -> str:
    out = []
    for study in config.studies():
        study_figures = [f for f in config.figures_of(study) if f in figures]
        if not study_figures:
            continue
        title = config.data["studies"][study]["title"]
        out.append(rf"\section{{Study {tex(study)}: {tex(title)}}}")
        for figure in study_figures:
            caption = config.caption(figure, tier)
            if "figure" in config.outputs(figure):
                out += [
                    r"\begin{figure}[!htbp]",
                    r"\centering",
                    rf"\includegraphics[width=\linewidth]{{{figure_dir}/{figure}.pdf}}",
                    rf"\caption{{\textbf{{{tex(figure)}.}} {caption}}}",
                    rf"\label{{fig:{figure}}}",
                    r"\end{figure}",
                ]
            if "table" in config.outputs(figure):
                out += [
                    r"\begin{table}[!htbp]",
                    r"\centering\small",
                    rf"\caption{{\textbf{{{tex(figure)}.}} {caption}}}",
                    rf"\label{{tab:{figure}}}",
                    rf"\input{{{claims_dir}/{figure}.tex}}",
                    r"\end{table}",
                ]
            if config.crosschecked(figure):  # simulation vs emulation table
                out.append(rf"\input{{{claims_dir}/crosscheck_{figure}.tex}}")
        out.append(rf"\input{{{claims_dir}/claims_{study}.tex}}")
        out.append(r"\clearpage")
    return "\n".join(out) + "\n"


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
    source: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write body, parameters, deviations, provenance and numbers into ``out_dir``.

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
    source
        The record of an imported trace bundle
        (:func:`tcprepro.campaign.bundle.source_record`), or None when every run was
        simulated here: the provenance section says which runs came from where.
    """
    from tcprepro.store import open_dataset

    out = Path(out_dir)
    figures = [f for f in config.figures if config.source(f) in combined_paths]
    combined = {f: open_dataset(combined_paths[f]) for f in figures if f in combined_paths}
    n_runs = sum(int(ds.attrs.get("n_runs", 0)) for ds in combined.values())
    pending = {f: json.loads(ds.attrs.get("missing_cells", "[]")) for f, ds in combined.items()}
    sim_seconds = sum(
        float(ds.attrs.get("duration_s", 0)) * int(ds.attrs.get("n_runs", 0))
        for ds in combined.values()
    )
    numbers = {
        "tier": tier,
        "nRuns": str(n_runs),
        "nFigures": str(len(figures)),
        "simHours": f"{sim_seconds / 3600:.1f}",
        "nPendingCells": str(sum(len(v) for v in pending.values())),
        "emulation": emulation_note or "emulation not considered in this build",
        "nsVersion": provenance.ns3_version(),
        **_quoted_parameters(config),
    }
    written = []
    for name, text in {
        "body.tex": _body(config, figures, figure_dir, claims_dir, tier),
        "parameters.tex": _parameters(config, tier, figures),
        "deviations.tex": _deviations(config, tier, figures),
        "provenance.tex": _provenance(combined, source),
        "numbers.tex": "".join(
            rf"\newcommand{{\repro{k[0].upper() + k[1:]}}}{{{tex(v)}}}" + "\n"
            for k, v in numbers.items()
        ),
    }.items():
        _write(out / name, text)
        written.append(out / name)
    return written
