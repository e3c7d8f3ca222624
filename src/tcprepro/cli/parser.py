"""The argument parser of ``tcprepro``: one function per group of subcommands."""

from __future__ import annotations

import argparse

from tcprepro import __version__, cli
from tcprepro.cli.commands import (
    _cmd_bench,
    _cmd_build,
    _cmd_build_uml,
    _cmd_bundle_export,
    _cmd_bundle_import,
    _cmd_bundle_verify,
    _cmd_claims,
    _cmd_combine,
    _cmd_crosscheck,
    _cmd_doctor,
    _cmd_draw_notebook,
    _cmd_emulate,
    _cmd_emulate_figure,
    _cmd_explore_run,
    _cmd_paper_check,
    _cmd_paper_inputs,
    _cmd_plan,
    _cmd_readings,
    _cmd_simulate,
    _cmd_sweep_batch,
    _cmd_sweep_run,
    _cmd_testbeds,
    _cmd_validate,
    _cmd_verdicts,
)
from tcprepro.emulation.routes import ROUTES

__all__ = ["build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``tcprepro``."""
    parser = argparse.ArgumentParser(prog="tcprepro", description=cli.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tcprepro {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_check_commands(sub)
    _add_record_commands(sub)
    _add_run_commands(sub)
    _add_build_commands(sub)
    _add_campaign_commands(sub)
    _add_bundle_commands(sub)
    _add_bench_command(sub)
    _add_report_commands(sub)
    return parser


def _scenario_args(p: argparse.ArgumentParser) -> None:
    """A scenario file and its ``--set`` overrides."""
    p.add_argument("config", help="scenario YAML file")
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario key, e.g. --set flows.up.variant=Cubic",
    )


def _workflow_args(p: argparse.ArgumentParser) -> None:
    """The workflow config and the tier."""
    p.add_argument("--workflow-config", default="workflow/config.yaml")
    p.add_argument("--tier", choices=("smoke", "quick", "paper", "verify"))


def _add_check_commands(sub: argparse._SubParsersAction) -> None:
    """Check the host (``doctor``) and a scenario (``validate``)."""
    p = sub.add_parser("doctor", help="print the capability table of this host")
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser("validate", help="validate a scenario (exit 2 naming the bad field)")
    _scenario_args(p)
    p.add_argument("--print", action="store_true", help="print the resolved scenario (SI units)")
    p.set_defaults(func=_cmd_validate)


def _add_record_commands(sub: argparse._SubParsersAction) -> None:
    """The records and generated pages: ``verdicts``, ``readings``, ``testbeds``."""
    p = sub.add_parser(
        "verdicts", help="the verdict history: record a verify build's verdicts, print its table"
    )
    verdicts = p.add_subparsers(dest="verdicts_command", required=True)
    q = verdicts.add_parser("record", help="append the verdicts of claims CSVs to the records")
    _workflow_args(q)
    q.add_argument("csv", nargs="+", help="claims CSVs (data/claims/verify/<study>.csv)")
    q.add_argument("--runs-commit", help="commit the runs were made at (default: this one)")
    q.add_argument("--reason", default="", help="what changed, for a verdict that changed")
    q.add_argument(
        "--before-guide",
        metavar="COMMIT",
        help="the CSVs were judged by COMMIT's code, before the reading guide (the same runs "
        "under the old readings: their records say so, and are judged at COMMIT)",
    )
    q.add_argument("--records", default="records/verdicts.csv")
    q.set_defaults(func=_cmd_verdicts)
    q = verdicts.add_parser(
        "trace", help="append the knob traces' verdicts (data/claims/whatif/knob-*/) to theirs"
    )
    q.add_argument("csv", nargs="+", help="a knob trace's claims CSVs")
    q.add_argument("--runs-commit", help="commit the runs were made at (default: this one)")
    q.add_argument("--records", default="records/verdicts.csv")
    q.add_argument("--traces", default="records/traces.csv")
    q.set_defaults(func=_cmd_verdicts)
    q = verdicts.add_parser(
        "table", help="the history and knob-trace tables (markdown) from the records"
    )
    q.add_argument("--records", default="records/verdicts.csv")
    q.add_argument("--traces", default="records/traces.csv")
    q.add_argument("--write", help="write them into this page's generated sections")
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


def _add_run_commands(sub: argparse._SubParsersAction) -> None:
    """Run one scenario or figure in ns-3 or emulation, and cross-check the two."""
    p = sub.add_parser("simulate", help="run one repetition of a scenario in ns-3")
    _scenario_args(p)
    p.add_argument("-o", "--output", required=True, help="dataset to write (.nc)")
    p.add_argument("--rep", type=int, default=0, help="repetition index (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser(
        "emulate", help="run one repetition of a scenario in Mininet (real Linux TCP)"
    )
    _scenario_args(p)
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
    _workflow_args(p)
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


def _add_build_commands(sub: argparse._SubParsersAction) -> None:
    """Build the compiled parts: the ns-3 models and the UML kernel."""
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


def _add_campaign_commands(sub: argparse._SubParsersAction) -> None:
    """The workflow's runs: ``explore-run``, ``sweep-run``, and ``plan``."""
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
    _workflow_args(p)
    p.add_argument("--figure", required=True)
    p.add_argument("--cell", required=True)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=_cmd_sweep_run)

    p = sub.add_parser(
        "draw-notebook",
        help="draw figures with their notebook, papermill executing it once per figure in "
        "one kernel (used by Snakemake)",
    )
    _workflow_args(p)
    p.add_argument("notebook", help="the notebook (notebooks/<ids>_<name>.ipynb)")
    p.add_argument("figures", nargs="+", help="the figure ids it draws (its config blocks')")
    p.set_defaults(func=_cmd_draw_notebook)

    p = sub.add_parser(
        "sweep-batch",
        help="run a batch of a figure's runs in one process, skipping cached ones (used by "
        "Snakemake)",
    )
    _workflow_args(p)
    p.add_argument(
        "runs", nargs="+", help="the runs' dataset paths (data/runs/<figure>/<cell>/rep<r>.nc)"
    )
    p.add_argument("-o", "--output", required=True, help="the batch manifest (JSON), written last")
    p.set_defaults(func=_cmd_sweep_batch)

    p = sub.add_parser("plan", help="count the simulations of a tier and estimate the wall time")
    _workflow_args(p)
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
    p.add_argument(
        "--record-costs",
        metavar="CSV",
        nargs="?",
        const="records/run-costs.csv",
        help="first append what this tier's cached runs cost, per figure with at least 3, to "
        "the run-cost records (default records/run-costs.csv), which later plans of the "
        "tier calibrate on where their runs are not cached",
    )
    p.set_defaults(func=_cmd_plan)


def _add_bundle_commands(sub: argparse._SubParsersAction) -> None:
    """Trace bundles: ``bundle export``, ``bundle import``, ``bundle verify``."""
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


def _add_bench_command(sub: argparse._SubParsersAction) -> None:
    """Benchmarks: ``bench``."""
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
    p.add_argument(
        "--only",
        metavar="SECTIONS",
        help="with --from-json: measure again only these comma-separated sections "
        "(workflow: the smoke profile; calibration, uml, contention, plan_check), keeping the "
        "saved numbers of the rest",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="measure the workflow and the plan check N times and report each round (default 1)",
    )
    p.set_defaults(func=_cmd_bench)


def _add_report_commands(sub: argparse._SubParsersAction) -> None:
    """From runs to the report: ``combine``, ``claims``, ``paper-inputs``, ``paper-check``."""
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
    _workflow_args(p)  # --tier: the runs' tier (the regime it applies, reading rule R14)
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
    _workflow_args(p)
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
    _workflow_args(p)
    p.add_argument("--pdf", required=True)
    p.add_argument("--log", required=True, help="LaTeX log of the build")
    p.add_argument("--aux", required=True, help="LaTeX .aux of the build")
    p.set_defaults(func=_cmd_paper_check)
