"""The ``tcprepro`` command line.

This module owns argument parsing and exit codes only; every command calls
the library. Exit status: 0 success, 2 invalid input (named field), 3 missing
capability, 130 interrupted. Nothing is written when a command fails: outputs
appear atomically at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tcprepro import __version__
from tcprepro.emulation.routes import ROUTES
from tcprepro.errors import ConfigError, TcpreproError

__all__ = ["main"]


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
    """Each study's stack profile as ``<id>@<digest of its files>`` (the verdict records)."""
    import hashlib

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
        folder = Path("workflow/testbeds")
        path = folder / f"{stack.testbed}.yaml"
        texts = [path.read_text()]
        texts += [(folder / f).read_text() for f in testbeds.load_profile(path).hosts.values()]
        digest = hashlib.sha256("".join(texts).encode()).hexdigest()[:8]
        out[study] = f"{stack.testbed}@{digest}"
    return out


def _cmd_verdicts(args: argparse.Namespace) -> int:
    from tcprepro.claims import history, load_registry
    from tcprepro.provenance import git_state

    path = Path(args.records)
    if args.verdicts_command == "record":
        registry = {claim.id: claim for claim in load_registry()}
        profiles = _study_profiles(_workflow(args))
        commit, dirty = git_state()
        judged = commit[:7] + ("+dirty" if dirty else "")
        existing = history.read_records(path)
        new = []
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
            )
        count = history.append_records(new, path)
        print(f"{path}: {count} record(s) added", file=sys.stderr)
        return 0
    table = history.render_markdown(history.read_records(path))
    if not args.write:
        sys.stdout.write(table)
        return 0
    _write_section(Path(args.write), history.DOC_BEGIN, history.DOC_END, table)
    print(f"{args.write}: the verdict history from {path}", file=sys.stderr)
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

    text = testbeds.render_markdown(sorted(Path(args.folder).glob("*.yaml")))
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
    if args.from_json:
        # re-render saved numbers (e.g. to add a recorded run) without measuring again
        results = json.loads(Path(args.from_json).read_text())
        if recorded is not None:
            results["recorded"] = bench.recorded_workflow(recorded)
    else:
        results = bench.run_all(
            quick=args.quick,
            profiles=profiles,
            progress=lambda text: print(f"bench: {text}", file=sys.stderr),
            recorded=recorded,
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``tcprepro``."""
    parser = argparse.ArgumentParser(prog="tcprepro", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tcprepro {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def scenario_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("config", help="scenario YAML file")
        p.add_argument(
            "--set",
            action="append",
            metavar="KEY=VALUE",
            help="override a scenario key, e.g. --set flows.up.variant=Cubic",
        )

    def workflow_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workflow-config", default="workflow/config.yaml")
        p.add_argument("--tier", choices=("smoke", "quick", "paper", "verify"))

    p = sub.add_parser("doctor", help="print the capability table of this host")
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser("validate", help="validate a scenario (exit 2 naming the bad field)")
    scenario_args(p)
    p.add_argument("--print", action="store_true", help="print the resolved scenario (SI units)")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser(
        "verdicts", help="the verdict history: record a verify build's verdicts, print its table"
    )
    verdicts = p.add_subparsers(dest="verdicts_command", required=True)
    q = verdicts.add_parser("record", help="append the verdicts of claims CSVs to the records")
    workflow_args(q)
    q.add_argument("csv", nargs="+", help="claims CSVs (data/claims/verify/<study>.csv)")
    q.add_argument("--runs-commit", help="commit the runs were made at (default: this one)")
    q.add_argument("--reason", default="", help="what changed, for a verdict that changed")
    q.add_argument("--records", default="records/verdicts.csv")
    q.set_defaults(func=_cmd_verdicts)
    q = verdicts.add_parser("table", help="the history table (markdown) from the records")
    q.add_argument("--records", default="records/verdicts.csv")
    q.add_argument("--write", help="write it into this page's verdict-history section")
    q.set_defaults(func=_cmd_verdicts)

    p = sub.add_parser(
        "readings", help="the reading guide of the claims (docs/claims.md's is generated so)"
    )
    p.add_argument("--write", help="write it into this page's reading-guide section")
    p.set_defaults(func=_cmd_readings)

    p = sub.add_parser(
        "testbeds", help="the testbed stack profiles as a page (docs/testbeds.md is generated so)"
    )
    p.add_argument("--folder", default="workflow/testbeds", help="profile files (*.yaml)")
    p.add_argument("--write", help="write the page here (default: print it)")
    p.set_defaults(func=_cmd_testbeds)

    p = sub.add_parser("simulate", help="run one repetition of a scenario in ns-3")
    scenario_args(p)
    p.add_argument("-o", "--output", required=True, help="dataset to write (.nc)")
    p.add_argument("--rep", type=int, default=0, help="repetition index (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser(
        "emulate", help="run one repetition of a scenario in Mininet (real Linux TCP)"
    )
    scenario_args(p)
    p.add_argument("-o", "--output", required=True, help="dataset to write (.nc)")
    p.add_argument("--rep", type=int, default=0, help="repetition index (default 0)")
    p.add_argument(
        "--route",
        choices=ROUTES,
        default="auto",
        help="native: Mininet on this kernel; uml: inside User-mode Linux with a virtual "
        "clock; vm: inside a full-kernel VM (virtme-ng); auto (default): native when this "
        "kernel has every qdisc and congestion control, else uml when its kernel is built",
    )
    p.add_argument("--probe-s", type=float, default=2.0, help="fidelity probe length (s)")
    p.set_defaults(func=_cmd_emulate)

    p = sub.add_parser(
        "emulate-figure", help="emulate a figure's runs in one batch (used by Snakemake)"
    )
    workflow_args(p)
    p.add_argument("--figure", required=True)
    p.add_argument("--route", choices=ROUTES, default="auto")
    p.add_argument("-o", "--output", required=True, help="combined emulated dataset (.nc)")
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="UML route: boots side by side (at most one per core; default 1)",
    )
    p.set_defaults(func=_cmd_emulate_figure)

    p = sub.add_parser("crosscheck", help="compare a figure's ns-3 and emulated datasets")
    p.add_argument("--workflow-config", default="workflow/config.yaml")
    p.add_argument("--figure", required=True)
    p.add_argument("--csv")
    p.add_argument("--tex")
    p.add_argument(
        "--views-csv", help="the views' metrics (crosscheck.views; empty for a figure without)"
    )
    p.add_argument("ns3", help="combined ns-3 dataset")
    p.add_argument("emulated", help="combined emulated dataset")
    p.set_defaults(func=_cmd_crosscheck)

    p = sub.add_parser("build-models", help="compile tcprepro's C++ ns-3 code (cached)")
    p.add_argument("--force", action="store_true")
    p.set_defaults(func=_cmd_build)

    p = sub.add_parser(
        "build-uml-kernel",
        help="build the virtual-clock User-mode Linux kernel of the uml route (once, cached)",
    )
    p.add_argument("--force", action="store_true", help="build again even when cached")
    p.add_argument("--jobs", type=int, help="make -j (default: the number of CPUs)")
    p.set_defaults(func=_cmd_build_uml)

    p = sub.add_parser(
        "explore-run",
        help="make the missing runs of an explored cell (used by the JupyterLab explorer)",
    )
    p.add_argument("--figure", required=True)
    p.add_argument("--tier", default="smoke", help="the tier the cell starts from")
    p.add_argument("--cell", required=True, help='the swept values, JSON: {"up": "NewReno"}')
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="a change (after the cell's)"
    )
    p.add_argument("--backend", choices=("ns3", "linux"), default="ns3")
    p.add_argument("--rep", type=int, action="append", help="only these repetitions")
    p.add_argument("--root", help="repository folder (default: found from here)")
    p.add_argument("--workdir", help="folder holding data/ (default: the repository)")
    p.set_defaults(func=_cmd_explore_run)

    p = sub.add_parser("sweep-run", help="run one run of a figure's sweep (used by Snakemake)")
    workflow_args(p)
    p.add_argument("--figure", required=True)
    p.add_argument("--cell", required=True)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=_cmd_sweep_run)

    p = sub.add_parser("plan", help="count the simulations of a tier and estimate the wall time")
    workflow_args(p)
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--workdir", default=".", help="folder holding data/ (default: .)")
    p.add_argument(
        "--claim",
        action="append",
        help="verify tier: only the cells this claim reads (repeatable, e.g. --claim B-c1)",
    )
    p.add_argument(
        "--whatif",
        help="verify tier: the runs of one testbed unknown run the other way (a what_if id "
        "of workflow/testbeds/, e.g. lqd-tail-drop)",
    )
    p.add_argument(
        "--route",
        choices=ROUTES,
        help="emulation route to estimate the emulated runs for (default: the config's "
        "emulation_route; auto: the route this host takes)",
    )
    p.set_defaults(func=_cmd_plan)

    p = sub.add_parser(
        "bundle", help="trace bundles: pack a tier's results, import them, re-check a sample"
    )
    bundle = p.add_subparsers(dest="bundle_command", required=True)
    q = bundle.add_parser(
        "export",
        help="pack every run of a tier, its combined datasets, "
        "scenarios, claims and a manifest into one tar file",
    )
    q.add_argument("--workflow-config", default="workflow/config.yaml")
    q.add_argument("--tier", choices=("smoke", "quick", "paper"), required=True)
    q.add_argument("-o", "--output", required=True, help="bundle file (.tar, .tar.gz, .tar.xz)")
    q.add_argument("--workdir", default=".", help="folder holding data/ (default: .)")
    q.set_defaults(func=_cmd_bundle_export)
    q = bundle.add_parser(
        "import",
        help="check a bundle (checksums, cache keys), then place "
        "its runs so that make figures simulates nothing",
    )
    q.add_argument("bundle", help="bundle file")
    q.add_argument("--workflow-config", default="workflow/config.yaml")
    q.add_argument("--workdir", default=".", help="folder holding data/ (default: .)")
    q.set_defaults(func=_cmd_bundle_import)
    q = bundle.add_parser(
        "verify",
        help="re-simulate a random sample of a bundle's runs and "
        "compare them bit for bit (exit 1 when one differs)",
    )
    q.add_argument("bundle", help="bundle file")
    q.add_argument("--sample", type=int, required=True, help="how many runs to re-simulate")
    q.add_argument("--seed", type=int, help="seed of the random draw (default: a new one, printed)")
    q.add_argument("--workflow-config", default="workflow/config.yaml")
    q.add_argument("--workdir", default=".", help="folder holding data/ (default: .)")
    q.set_defaults(func=_cmd_bundle_verify)

    p = sub.add_parser("bench", help="measure speed, start-up, scaling, memory and storage")
    p.add_argument("--quick", action="store_true", help="short runs: check the harness only")
    p.add_argument(
        "--workflow",
        default="smoke",
        help="comma-separated profiles to time end to end, or none (default smoke)",
    )
    p.add_argument("--write", metavar="PATH", help="also write the report (BENCHMARKS.md)")
    p.add_argument("--json", metavar="PATH", help="also write the raw numbers as JSON")
    p.add_argument(
        "--recorded",
        metavar="DIR",
        help="also report the logs of an earlier make figures in DIR (wall times, storage)",
    )
    p.add_argument(
        "--from-json",
        metavar="PATH",
        help="report numbers saved by --json instead of measuring again",
    )
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("combine", help="combine the runs of one figure into one dataset")
    p.add_argument("-o", "--output", required=True)
    p.add_argument(
        "--sweep-values",
        help="JSON of the figure's swept values now (the workflow passes them): they replace "
        "the runs' own record, which a run reused from the cache may have from an older config",
    )
    p.add_argument("runs", nargs="+")
    p.set_defaults(func=_cmd_combine)

    p = sub.add_parser("claims", help="check the claims of a study and print the table")
    workflow_args(p)  # --tier: the runs' tier (the regime it applies, reading rule R14)
    p.add_argument("--study")
    p.add_argument("--csv")
    p.add_argument("--tex")
    p.add_argument(
        "--why-dir",
        help="directory to write afresh with a trace figure per claim not reproduced or "
        "inconclusive (<claim>.pdf), included under its why in --tex",
    )
    p.add_argument(
        "--why-root",
        help="directory LaTeX resolves the figures' paths from (default: paths as given)",
    )
    p.add_argument("combined", nargs="+", help="combined figure datasets")
    p.add_argument(
        "--emulated",
        nargs="*",
        help="emulated combined datasets of the claims' twins (data/combined/emulated/X3.nc): "
        "the claims they judge get a second verdict; without this option that verdict is "
        '"not emulated in this build"',
    )
    p.add_argument(
        "--not-emulated",
        metavar="REASON",
        help="this build excludes emulation, for this reason (the second verdicts' why); "
        "an empty reason changes nothing",
    )
    p.set_defaults(func=_cmd_claims)

    p = sub.add_parser("paper-inputs", help="write the paper's generated LaTeX inputs")
    workflow_args(p)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--emulation-note", help="why this build includes or skips emulation")
    p.add_argument("--excluded", nargs="*", default=[], help="figures this build skips")
    p.add_argument("--excluded-reason", default="", help="why it skips them")
    p.add_argument("--facts-dir", help="folder of the figures' records (<id>.json)")
    p.add_argument("--claims", nargs="*", default=[], help="claims CSVs (data/claims/*.csv)")
    p.add_argument(
        "--verify-claims",
        nargs="*",
        default=[],
        help="the verify tier's claims CSVs (data/claims/verify/*.csv), when there are any",
    )
    p.add_argument(
        "--whatif-claims",
        nargs="*",
        default=[],
        help="the what-if builds' claims CSVs (data/claims/whatif/<id>/*.csv)",
    )
    p.add_argument("--records", help="the verdict records (records/verdicts.csv): the history")
    p.add_argument(
        "--source",
        metavar="RECORD",
        help="data/bundle/import.json: the runs came from an imported trace bundle",
    )
    p.add_argument("combined", nargs="+")
    p.set_defaults(func=_cmd_paper_inputs)

    p = sub.add_parser(
        "paper-check", help="check the built report (overfull boxes, captions, at a glance)"
    )
    workflow_args(p)
    p.add_argument("--pdf", required=True)
    p.add_argument("--log", required=True, help="LaTeX log of the build")
    p.add_argument("--aux", required=True, help="LaTeX .aux of the build")
    p.set_defaults(func=_cmd_paper_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tcprepro`` command."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except TcpreproError as exc:
        print(f"tcprepro: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            "tcprepro: interrupted; every output written is complete, none half-written",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
