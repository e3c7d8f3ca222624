# Helpers shared by the rules: every path and parameter is computed by the
# tcprepro library (tcprepro.campaign), so rules stay declarative.
import shlex
import sys
from pathlib import Path

from snakemake.utils import validate

from tcprepro import skip_iri_grammars

skip_iri_grammars()  # before validate() imports jsonschema: seconds per Snakemake start

from tcprepro.campaign.emulated import decide, emulated_runs, figure_tool
from tcprepro.campaign.emulated import run_cache_key as emulated_run_cache_key
from tcprepro.campaign import WorkflowConfig, plan_report
from tcprepro.campaign.plan import (
    emulate_job_s,
    simulate_job_s,
    tier_calibrations,
    uml_calibrations,
)
from tcprepro.campaign.batches import manifest_dir
from tcprepro.campaign.notebooks import notebook_runs, rule_name as notebook_rule
from tcprepro.campaign.bundle import RECORD as BUNDLE_RECORD
from tcprepro.installation import library_digest

validate(config, "../schemas/config.schema.yaml")
WORKFLOW = WorkflowConfig(config)
TIER = WORKFLOW.tier
# Emulated figures (backends: [ns3, mininet]) are included or skipped, with the reason
# printed here and written into the paper (tcprepro.campaign.emulated.decide).
EMULATION = decide(WORKFLOW, TIER)
print(f"tcprepro: {EMULATION.summary}", file=sys.stderr)
FIGURES = EMULATION.keep(WORKFLOW.figures)
SIMULATED = [f for f in WORKFLOW.simulated_figures if f in FIGURES]
STUDIES = WORKFLOW.studies()
# the studies the claims tables judge: all, but in a verify build only those it runs cells of
JUDGED_STUDIES = [
    s
    for s in STUDIES
    if TIER != "verify" or any(WORKFLOW.runs(f, TIER) for f in WORKFLOW.figures_of(s))
]
# The rules that draw, judge or write the paper's inputs take the library's digest as a
# parameter: Snakemake reruns them when tcprepro's code changes (a run's own cache key
# covers the simulations).
LIBRARY = library_digest()
# The verify tier's claims are kept apart (data/claims/verify/): the report of a later
# quick or paper build sets them next to its own verdicts.
# A what-if build (whatif: <id>, verify tier) runs a testbed unknown the other way: its
# claims are kept apart again (data/claims/whatif/<id>/), beside the verify verdicts.
WHATIF = WORKFLOW.whatif
if WHATIF and TIER != "verify":
    raise ValueError(
        f"whatif: {WHATIF} is a verify-tier build (tier=verify), not {TIER}"
    )
VERIFY_DIR = f"whatif/{WHATIF}" if WHATIF else "verify"
CLAIMS_DIR = f"data/claims/{VERIFY_DIR}" if TIER == "verify" else "data/claims"
CLAIMS_TEX_DIR = (
    f"paper/generated/{VERIFY_DIR}" if TIER == "verify" else "paper/generated"
)
# The trace figure behind each claim's "why" (one PDF per claim not reproduced or
# inconclusive), per study; the claims tables include them by their path from paper/.
WHY_DIR = f"paper/figures/why/{VERIFY_DIR}" if TIER == "verify" else "paper/figures/why"


wildcard_constraints:
    figure="[A-Z][0-9]+(\\.[0-9]+)?",
    cell="[A-Za-z0-9.+_-]+",
    rep="[0-9]+",
    batch="b[0-9]+",
    study="[A-Z]",


# The tier's batch manifests (a what-if build's apart: its runs are others), and the
# combined datasets (a what-if build's apart, or it would replace the verify build's)
BATCH_DIR = manifest_dir(TIER, WHATIF)
COMBINED_DIR = WORKFLOW.combined_dir


def figure_batch_manifests(wildcards):
    """The manifests of a figure's simulate batches for the selected tier."""
    return [
        f"{BATCH_DIR}/{wildcards.figure}/{batch.name}.json"
        for batch in WORKFLOW.batches(wildcards.figure, TIER)
    ]


def figure_run_paths(wildcards):
    """Run datasets of one figure for the selected tier, quoted for the shell."""
    return " ".join(
        shlex.quote(run.path) for run in WORKFLOW.runs(wildcards.figure, TIER)
    )


def batch_runs(wildcards):
    """Run datasets of one simulate batch, quoted for the shell."""
    batch = WORKFLOW.batch(wildcards.figure, wildcards.batch, TIER)
    return " ".join(shlex.quote(run.path) for run in batch.runs)


def batch_cache_keys(wildcards):
    """Cache keys of a batch's runs: a changed key makes Snakemake rerun it (params)."""
    batch = WORKFLOW.batch(wildcards.figure, wildcards.batch, TIER)
    return sorted(run.cache_key() for run in batch.runs)


def figure_sweep_values(wildcards):
    """The figure's swept values for the selected tier, JSON quoted for the shell."""
    runs = WORKFLOW.runs(wildcards.figure, TIER)
    return shlex.quote(runs[0].sweep_values if runs else "{}")


def scenario_files(wildcards):
    """A figure's scenario file and its base files (inputs of every run)."""
    return WORKFLOW.scenario_files(wildcards.figure)


# Per notebook, the figures this build draws with it (one job per notebook: figures.smk)
NOTEBOOK_RUNS = notebook_runs(WORKFLOW, FIGURES)


def study_combined(wildcards):
    """Combined datasets of a study's figures: simulated ones, and emulated-only ones
    (backends: [mininet], e.g. D1.1) when this build includes them; cross-checks aside.
    The verify tier runs only the figures a claim reads.
    """
    simulated = WORKFLOW.simulated_figures
    return [
        WORKFLOW.combined_path(f)
        for f in WORKFLOW.figures_of(wildcards.study)
        if f in simulated
        and f in FIGURES
        and not WORKFLOW.crosschecked(f)
        and (TIER != "verify" or WORKFLOW.runs(f, TIER))
    ]


def study_twins(wildcards):
    """Emulated combined datasets of the twins that judge a study's claims a second
    time (claims registry, emulated:), when this build includes emulation and runs them.
    """
    if not EMULATION.enabled:
        return []
    return [
        f"{COMBINED_DIR}/emulated/{twin}.nc"
        for twin in WORKFLOW.twins(wildcards.study)
        if twin in FIGURES and WORKFLOW.runs(twin, TIER, "mininet")
    ]


# why the claims' second verdicts (on the emulated twins) are pending, if they are: the
# claims rule's --not-emulated option (none when this build includes emulation)
NOT_EMULATED = (
    "" if EMULATION.enabled else f"--not-emulated {shlex.quote(EMULATION.summary)}"
)


def paper_files(kind):
    """Figure PDFs (kind "figure") or tables ("table") of the paper, skipped figures aside."""
    return [path for path in WORKFLOW.paper_files(kind) if Path(path).stem in FIGURES]


def verify_claims(wildcards):
    """The verify tier's claims CSVs, when a verify build left them (else none)."""
    if TIER == "verify":
        return []
    return sorted(str(path) for path in Path("data/claims/verify").glob("*.csv"))


def whatif_claims(wildcards):
    """The what-if builds' claims CSVs (data/claims/whatif/<id>/), in a quick or paper build."""
    if TIER == "verify":
        return []
    return sorted(str(path) for path in Path("data/claims/whatif").glob("*/*.csv"))


def verdict_records(wildcards):
    """The verdict records (records/verdicts.csv), the report's history table, if any."""
    return ["records/verdicts.csv"] if Path("records/verdicts.csv").exists() else []


def bundle_record(wildcards):
    """The record of an imported trace bundle, when there is one (tcprepro bundle import)."""
    return [str(BUNDLE_RECORD)] if BUNDLE_RECORD.exists() else []


def emulated_cache_keys(wildcards):
    """Cache keys of a figure's emulated runs: a changed key reruns the batch job."""
    runs = emulated_runs(WORKFLOW, wildcards.figure, TIER, EMULATION.route)
    tool = figure_tool(WORKFLOW, wildcards.figure)
    return sorted(emulated_run_cache_key(run, EMULATION.route, tool) for run in runs)


def plan_cores():
    """Cores the plan divides the work by: --cores here; on a cluster (no --cores), --jobs."""
    settings = workflow.resource_settings
    return settings.cores or settings.nodes or 1


# Job priorities: every simulate and emulate job's estimated wall seconds, so that the
# longest start first and both halves share the cores from the build's start
# (tcprepro.campaign.plan.build_wall_s is the makespan tcprepro plan announces).
_CALIBRATION = {}
_UML_CALIBRATION = {}


def simulate_priority(wildcards):
    """A simulate batch job's estimated seconds (its figure's or study's calibrated cost model)."""
    if not _CALIBRATION:  # once, and only when a job is to run (no-op reruns skip it)
        _CALIBRATION.update(tier_calibrations(WORKFLOW, TIER))
    batch = WORKFLOW.batch(wildcards.figure, wildcards.batch, TIER)
    return round(simulate_job_s(WORKFLOW, batch, _CALIBRATION))


def emulate_priority(wildcards):
    """An emulated figure's job's estimated seconds (one boot, its runs in turn)."""
    if not _UML_CALIBRATION:  # once, and only when a job is to run
        _UML_CALIBRATION.update(uml_calibrations(WORKFLOW))
    runs = emulated_runs(WORKFLOW, wildcards.figure, TIER, EMULATION.route)
    return round(emulate_job_s(runs, EMULATION.route, _UML_CALIBRATION))


onstart:
    print(
        plan_report(
            WORKFLOW,
            TIER,
            plan_cores(),
            route=EMULATION.route if EMULATION.enabled else None,
        )
    )
