"""The commands of ``tcprepro``: one ``_cmd_<name>`` per subcommand, and their helpers.

Each takes the parsed arguments, calls the library and returns the exit status
(:func:`tcprepro.cli.main` turns a :class:`~tcprepro.errors.TcpreproError` into its code).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tcprepro.errors import ConfigError


def _cmd_doctor(args: argparse.Namespace) -> int:
    from tcprepro import doctor

    results = doctor.check_all()
    print(doctor.format_table(results))
    print()
    print("\n".join(doctor.emulation_routes()))
    return 0


def _load(args: argparse.Namespace):
    from tcprepro.scenario_io import load_scenario

    return load_scenario(args.config, args.set or [])


def _cmd_validate(args: argparse.Namespace) -> int:
    from tcprepro.ns3.backend import check_scenario

    scenario = _load(args)
    check_scenario(scenario)
    if args.print:
        print(json.dumps(scenario.resolved(), indent=2, sort_keys=True))
    else:
        print(f"{args.config}: valid ({len(scenario.flows)} flows, {scenario.repetitions} reps)")
    return 0


def _study_profiles(config) -> dict[str, str]:
    """Each study's stack profile as ``<id>@<digest of its settings>`` (the verdict records)."""
    from tcprepro import testbeds
    from tcprepro.scenario_io import load_scenario

    out = {}
    for study in config.studies():
        figures = [f for f in config.figures_of(study) if f in config.simulated_figures]
        if not figures:
            continue
        stack = load_scenario(config.figure(figures[0])["scenario"]).stack
        if stack is None:
            continue
        path = Path("workflow/testbeds") / f"{stack.testbed}.yaml"
        out[study] = f"{stack.testbed}@{testbeds.settings_digest(path)}"
    return out


def _cmd_verdicts(args: argparse.Namespace) -> int:
    from tcprepro.claims import history, load_registry, traces
    from tcprepro.provenance import git_state

    path = Path(args.records)
    if args.verdicts_command == "record":
        registry = {claim.id: claim for claim in load_registry()}
        profiles = _study_profiles(_workflow(args))
        commit, dirty = git_state()
        judged = commit[:7] + ("+dirty" if dirty else "")
        if args.before_guide:
            judged = args.before_guide
        existing = history.read_records(path)
        new: list[dict[str, str]] = []
        skipped: list[str] = []
        for csv_path in args.csv:
            new += history.records_from_csv(
                csv_path,
                registry,
                args.tier,
                profiles,
                args.runs_commit or judged,
                judged,
                [*existing, *new],
                args.reason,
                before_guide=bool(args.before_guide),
                skipped=skipped,
            )
        for line in skipped:
            print(
                f"not recorded: {line} (a {args.tier} verdict is recorded on all its claim's "
                "cells; run the claim itself: verify_claims)",
                file=sys.stderr,
            )
        count = history.append_records(new, path)
        print(f"{path}: {count} record(s) added", file=sys.stderr)
        return 0
    if args.verdicts_command == "trace":
        return _record_traces(args, path)
    table = history.render_markdown(history.read_records(path))
    trace_table = traces.render_markdown(traces.read(args.traces))
    if not args.write:
        sys.stdout.write(table + "\n" + trace_table)
        return 0
    _write_section(Path(args.write), history.DOC_BEGIN, history.DOC_END, table)
    _write_section(Path(args.write), traces.DOC_BEGIN, traces.DOC_END, trace_table)
    print(
        f"{args.write}: the verdict history from {path}, the traces from {args.traces}",
        file=sys.stderr,
    )
    return 0


def _record_traces(args: argparse.Namespace, path: Path) -> int:
    """``verdicts trace``: the knob traces' verdicts, beside the claims' verify values."""
    from tcprepro.campaign.config import what_ifs
    from tcprepro.claims import history, traces
    from tcprepro.provenance import git_state

    commit, dirty = git_state()
    judged = commit[:7] + ("+dirty" if dirty else "")
    records = history.read_records(path)
    entries = what_ifs()
    new = []
    for csv_path in args.csv:
        try:
            new += traces.traces_from_csv(
                csv_path, entries, records, args.runs_commit or judged, judged
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    count = traces.append(new, args.traces)
    print(f"{args.traces}: {count} trace record(s) added", file=sys.stderr)
    return 0


def _write_section(target: Path, begin: str, end: str, body: str) -> None:
    """Replace what a page holds between two marker lines (generated sections of docs)."""
    from tcprepro.latex import atomic_write

    text = target.read_text()
    if begin not in text or end not in text:
        raise ConfigError(f"{target}: no {begin} ... {end} section to write into")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    atomic_write(target, f"{head}{begin}\n{body}{end}{tail}")


def _cmd_readings(args: argparse.Namespace) -> int:
    from tcprepro.claims.readings import GUIDE_BEGIN, GUIDE_END, render_guide

    guide = render_guide()
    if args.write:
        _write_section(Path(args.write), GUIDE_BEGIN, GUIDE_END, guide)
    else:
        sys.stdout.write(guide)
    return 0


def _cmd_testbeds(args: argparse.Namespace) -> int:
    from tcprepro import testbeds
    from tcprepro.latex import atomic_write

    folder = Path(args.folder)
    traces = testbeds.load_knob_traces(folder.parent / "knob-traces.yaml", folder)
    text = testbeds.render_markdown(sorted(folder.glob("*.yaml")), traces)
    if args.write:
        atomic_write(Path(args.write), text)
        print(f"{args.write}: {len(text.splitlines())} lines from {args.folder}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _run_and_write(scenario, rep: int, output: Path, quiet: bool, attrs=None) -> int:
    from tcprepro.ns3.backend import check_scenario, run_scenario
    from tcprepro.store import write_dataset

    check_scenario(scenario)
    started = time.perf_counter()
    ds = run_scenario(scenario, rep, progress=not quiet, extra_attrs=attrs)
    write_dataset(ds, output)
    wall = time.perf_counter() - started
    print(
        f"{output}: {scenario.id} rep {rep}, {scenario.duration:g} simulated s in {wall:.1f} s "
        f"wall ({wall / scenario.duration:.4f} wall s per simulated s)",
        file=sys.stderr,
    )
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    scenario = _load(args)
    scenario.check_rep(args.rep)
    return _run_and_write(scenario, args.rep, Path(args.output), args.quiet)


def _cmd_emulate(args: argparse.Namespace) -> int:
    from tcprepro.emulation.runner import EmulationJob, emulate_batch

    scenario = _load(args)
    scenario.check_rep(args.rep)
    job = EmulationJob(scenario, args.rep, Path(args.output))
    [result] = emulate_batch([job], args.route, probe_s=args.probe_s)
    return 0 if result.ok else 1


def _cmd_emulate_figure(args: argparse.Namespace) -> int:
    from tcprepro.campaign.emulated import make_emulated_figure

    config = _workflow(args)
    tier = args.tier or config.tier
    if args.jobs < 1:
        print(f"--jobs: {args.jobs} is not a positive number of boots", file=sys.stderr)
        return 2
    make_emulated_figure(config, args.figure, tier, args.route, args.output, parallel=args.jobs)
    print(f"{args.output}: emulated runs of {args.figure} ({tier} tier) combined")
    return 0


def _cmd_crosscheck(args: argparse.Namespace) -> int:
    import pandas as pd

    from tcprepro.analysis import crosscheck
    from tcprepro.store import open_dataset

    config = _workflow(args)
    tolerance = config.figure(args.figure)["crosscheck"]
    ns3, emulated = open_dataset(args.ns3), open_dataset(args.emulated)
    table = crosscheck.compare_figure(ns3, emulated, tolerance)
    views = (
        crosscheck.compare_views(ns3, emulated, tolerance["views"])
        if "views" in tolerance
        else None
    )
    if args.csv:
        crosscheck.write_csv(table, args.csv)
    if args.views_csv:  # a header line only for a figure without views
        empty = pd.DataFrame(columns=list(crosscheck.VIEW_COLUMNS))
        crosscheck.write_csv(views if views is not None else empty, args.views_csv)
    if args.tex:
        crosscheck.write_tex(table, args.tex, args.figure, views)
    print(table.round(3).to_string(index=False))
    print(crosscheck.summary(table))
    if views is not None:
        print(views.to_string(index=False))
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    from tcprepro.ns3.build import build_library

    started = time.perf_counter()
    path = build_library(force=args.force, verbose=True)
    print(f"{path} ({time.perf_counter() - started:.1f} s)")
    return 0


def _cmd_build_uml(args: argparse.Namespace) -> int:
    from tcprepro.emulation.umlkernel import build_kernel, find_kernel

    cached = None if args.force else find_kernel()
    started = time.perf_counter()
    kernel = cached or build_kernel(
        force=args.force, jobs=args.jobs, progress=lambda text: print(f"tcprepro: {text}")
    )
    state = "cached" if cached else f"built in {time.perf_counter() - started:.0f} s"
    print(f"{kernel.path} (Linux {kernel.version}, {state})")
    return 0


def _workflow(args: argparse.Namespace):
    from tcprepro.campaign import load_workflow_config

    return load_workflow_config(args.workflow_config)


def _cmd_sweep_run(args: argparse.Namespace) -> int:
    config = _workflow(args)
    run = config.run(args.figure, args.cell, args.rep, args.tier)
    return _run_and_write(run.scenario(), run.rep, Path(args.output), args.quiet, run.attrs())


def _cmd_draw_notebook(args: argparse.Namespace) -> int:
    from tcprepro import skip_iri_grammars

    skip_iri_grammars()  # before nbformat imports jsonschema
    from tcprepro.campaign.notebooks import execute, notebook_runs

    config = _workflow(args)
    for figure in args.figures:
        config.figure(figure)  # an unknown id: a ConfigError naming it and the known ones
    runs = notebook_runs(config, args.figures)
    notebook = Path(args.notebook)
    elsewhere = {f.figure: nb for nb, rs in runs.items() for f in rs if Path(nb) != notebook}
    if elsewhere:
        raise ConfigError(
            "figures: "
            + "; ".join(f"{f} is drawn by {nb}" for f, nb in elsewhere.items())
            + f", not {args.notebook}"
        )
    if not notebook.is_file():
        raise ConfigError(f"notebook: {args.notebook} does not exist")
    mine = [run for nb, rs in runs.items() for run in rs]
    failed = execute(notebook, mine, progress=lambda line: print(line, file=sys.stderr))
    if failed:
        print(f"{args.notebook}: {', '.join(failed)} failed", file=sys.stderr)
        return 1
    return 0


def _cmd_sweep_batch(args: argparse.Namespace) -> int:
    from tcprepro.campaign.batches import parse_run_path, simulate_batch

    config = _workflow(args)
    runs = [config.run(*parse_run_path(path), args.tier) for path in args.runs]
    record = simulate_batch(runs, Path(args.output))
    print(
        f"{args.output}: {record['simulated']} run(s) simulated, {record['cached']} cached, "
        f"in {record['wall_s']:.1f} s",
        file=sys.stderr,
    )
    return 0


def _cmd_explore_run(args: argparse.Namespace) -> int:
    from tcprepro.explore.cell import ExploredCell, FigureExplorer, make_runs
    from tcprepro.scenario_io import parse_override

    explorer = FigureExplorer(args.figure, args.tier, args.root, args.workdir)
    try:
        sweep = json.loads(args.cell)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--cell: not JSON ({exc})") from None
    changes = tuple(parse_override(text) for text in args.set or [])
    cell = ExploredCell(args.figure, args.tier, tuple(sweep.items()), changes)
    make_runs(explorer, cell, args.backend, args.rep or None)
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from tcprepro.campaign import plan_report
    from tcprepro.campaign.plan import budget_report

    config = _workflow(args)
    if args.whatif:
        from dataclasses import replace

        config = replace(config, data={**config.data, "whatif": args.whatif}, _runs={})
        config.what_if()  # an unknown id is a ConfigError naming the known ones
    tier = args.tier or config.tier
    route = args.route or str(config.data.get("emulation_route", "auto"))
    if route == "auto":  # the route this host takes (emulation_route: auto)
        from tcprepro.campaign.emulated import decide

        decision = decide(config, tier)
        route = decision.route if decision.enabled else None
    if args.record_costs:
        from tcprepro.campaign import cost_records
        from tcprepro.campaign.measured import FIGURE_CALIBRATION_MIN_RUNS

        if args.whatif:
            raise ConfigError("--record-costs: records a tier's own runs, not a what-if's")

        records = cost_records.measure(config, tier, Path(args.workdir))
        if not records:
            raise ConfigError(
                f"--record-costs: no figure has {FIGURE_CALIBRATION_MIN_RUNS} runs of tier "
                f"{tier!r} cached in {args.workdir} (made by this code): nothing to record"
            )
        cost_records.append(records, args.record_costs)
        for record in records:
            print(
                f"{args.record_costs}: {record.figure} at {tier}: {record.runs} runs, "
                f"{record.wall_s:.0f} s against the model's {record.model_s:.0f} s "
                f"(x{record.factor:.2f})",
                file=sys.stderr,
            )
    print(plan_report(config, tier, args.cores, Path(args.workdir), args.claim or None, route))
    print(budget_report(config, tier, args.cores))
    return 0


def _cmd_combine(args: argparse.Namespace) -> int:
    from tcprepro.store import combine_runs, write_dataset

    values = None if args.sweep_values is None else json.loads(args.sweep_values)
    ds = combine_runs(args.runs, sweep_values=values)
    write_dataset(ds, args.output)
    print(f"{args.output}: {ds.attrs['n_runs']} runs, dims {dict(ds.sizes)}")
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    from tcprepro import claims
    from tcprepro.store import open_dataset

    datasets = {}
    for path in args.combined:
        ds = open_dataset(path)
        datasets[str(ds.attrs.get("figure", Path(path).stem))] = ds
    emulated = None  # no --emulated: this build has no emulated runs
    if args.emulated is not None and not args.not_emulated:
        emulated = {}
        for path in args.emulated:
            ds = open_dataset(path)
            emulated[str(ds.attrs.get("figure", Path(path).stem))] = ds
    decide = {}
    if args.tier and args.tier not in claims.DECIDING_TIERS:  # name what decides them
        from tcprepro.campaign.plan import decide_commands

        ids = [c.id for c in claims.load_registry() if args.study in (None, c.study)]
        decide = decide_commands(_workflow(args), ids)
    results = claims.check_claims(
        datasets,
        study=args.study,
        emulated=emulated,
        emulation_note=args.not_emulated or "",
        tier=args.tier,
        decide=decide,
    )
    print(f"Claims of study {args.study}:" if args.study else "Claims:")
    print(claims.format_table(results))
    if args.csv:
        claims.write_csv(results, args.csv)
    figures = {}
    if args.why_dir:
        from tcprepro.figures.why import write_why_figures

        figures = write_why_figures(results, datasets, args.why_dir, include_root=args.why_root)
        print(f"{len(figures)} trace figure(s) in {args.why_dir}")
    if args.tex:
        claims.write_tex(
            results,
            args.tex,
            caption=f"Claims of study {args.study}: paper vs reproduction.",
            figures=figures,
        )
    return 0


def _cmd_paper_inputs(args: argparse.Namespace) -> int:
    from tcprepro.paper import write_paper_inputs
    from tcprepro.store import open_dataset

    config = _workflow(args)
    combined = {}
    for path in args.combined:
        with_figure = open_dataset(path).attrs.get("figure", Path(path).stem)
        combined[str(with_figure)] = path
    extra = {"emulation_note": args.emulation_note} if args.emulation_note else {}
    excluded = dict.fromkeys(args.excluded, args.excluded_reason or "skipped by this build")
    if args.source:
        from tcprepro.campaign.bundle import read_record

        extra["source"] = read_record(args.source)
    for path in write_paper_inputs(
        config,
        args.tier or config.tier,
        combined,
        args.out_dir,
        excluded=excluded,
        facts_dir=args.facts_dir,
        claims_csvs=args.claims,
        verify_csvs=args.verify_claims,
        whatif_csvs=args.whatif_claims,
        records=args.records,
        **extra,
    ):
        print(path)
    return 0


def _cmd_paper_check(args: argparse.Namespace) -> int:
    from tcprepro.paper import check_build

    problems = check_build(_workflow(args), args.pdf, args.log, args.aux)
    for problem in problems:
        print(f"paper check: {problem}")
    if problems:
        print(f"paper check: {len(problems)} problem(s) in {args.pdf}")
        return 1
    print(f"paper check: {args.pdf} passes (overfull boxes, captions, at-a-glance table)")
    return 0


def _cmd_bundle_export(args: argparse.Namespace) -> int:
    from tcprepro.campaign.bundle import export_bundle

    config = _workflow(args)
    export_bundle(config, args.tier, args.output, Path(args.workdir))
    return 0


def _cmd_bundle_import(args: argparse.Namespace) -> int:
    from tcprepro.campaign.bundle import import_bundle

    config = _workflow(args)
    result = import_bundle(args.bundle, config, Path(args.workdir))
    print(
        f"{args.bundle}: {result.runs} runs and {result.combined} combined datasets placed "
        f"in data/ ({result.replaced} replaced; tier {result.bundle.tier}); manifest SHA-256 "
        f"{result.bundle.digest}\n"
        f"next: make figures PROFILE={result.bundle.tier} (no simulation), then "
        f"tcprepro bundle verify {args.bundle} --sample N"
    )
    return 0


def _cmd_bundle_verify(args: argparse.Namespace) -> int:
    from tcprepro.campaign.bundle import verify_bundle

    config = _workflow(args)
    result = verify_bundle(
        args.bundle,
        config,
        args.sample,
        args.seed,
        Path(args.workdir),
        Path(args.workflow_config),
    )
    return 0 if result.ok else 1


def _cmd_bench(args: argparse.Namespace) -> int:
    from tcprepro import bench

    profiles = tuple(p for p in args.workflow.split(",") if p and p != "none")
    recorded = Path(args.recorded) if args.recorded else None
    if recorded is not None and not (recorded / "data/logs/simulate").is_dir():
        raise ConfigError(f"--recorded: {recorded} has no data/logs/simulate (no workflow run)")
    only = [name for name in (args.only or "").split(",") if name]
    if args.rounds < 1:
        raise ConfigError(f"--rounds: {args.rounds} (at least 1)")
    if args.only is not None and not args.from_json:
        raise ConfigError("--only: needs --from-json, the saved numbers of the other sections")
    unknown = [name for name in only if name not in bench.AGAIN]
    if unknown or (args.only is not None and not only):
        raise ConfigError(
            f"--only: unknown section {', '.join(unknown) or repr(args.only)} "
            f"(one of {', '.join(bench.AGAIN)})"
        )
    if args.from_json:
        # re-render saved numbers (e.g. to add a recorded run) without measuring again
        results = json.loads(Path(args.from_json).read_text())
        if recorded is not None:
            results["recorded"] = bench.recorded_workflow(recorded)
        if only:
            results = bench.measure_again(
                results,
                only,
                lambda text: print(f"bench: {text}", file=sys.stderr),
                rounds=args.rounds,
            )
    else:
        results = bench.run_all(
            quick=args.quick,
            profiles=profiles,
            progress=lambda text: print(f"bench: {text}", file=sys.stderr),
            recorded=recorded,
            rounds=args.rounds,
        )
    text = bench.report(results)
    print(text)
    if args.write:
        target = Path(args.write)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text)
        tmp.replace(target)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0
