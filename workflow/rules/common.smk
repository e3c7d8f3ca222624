# Helpers shared by the rules: every path and parameter is computed by the
# tcprepro library (tcprepro.sweep), so rules stay declarative.
from snakemake.utils import validate

from tcprepro.sweep import WorkflowConfig, plan_report

validate(config, "../schemas/config.schema.yaml")
WORKFLOW = WorkflowConfig(config)
TIER = WORKFLOW.tier
STUDIES = WORKFLOW.studies()


wildcard_constraints:
    figure="[A-Z][0-9]+(\\.[0-9]+)?",
    cell="[A-Za-z0-9.+_-]+",
    rep="[0-9]+",
    study="[A-Z]",


def figure_runs(wildcards):
    """Run datasets of one figure for the selected tier."""
    return [run.path for run in WORKFLOW.runs(wildcards.figure, TIER)]


def scenario_files(wildcards):
    """A figure's scenario file and its base files (inputs of every run)."""
    return WORKFLOW.scenario_files(wildcards.figure)


def run_cache_key(wildcards):
    """Cache key of one run: a changed key makes Snakemake rerun it (params trigger)."""
    return WORKFLOW.run(
        wildcards.figure, wildcards.cell, int(wildcards.rep), TIER
    ).cache_key()


def figure_notebook(wildcards):
    """The papermill notebook that draws a figure."""
    return WORKFLOW.figure(wildcards.figure)["notebook"]


def figure_combined(wildcards):
    """Combined dataset a figure draws (its own, or the one named by its data: key)."""
    return WORKFLOW.combined_path(wildcards.figure)


def study_combined(wildcards):
    """Combined datasets of every simulated figure of a study."""
    simulated = WORKFLOW.simulated_figures
    return [
        f"data/combined/{f}.nc"
        for f in WORKFLOW.figures_of(wildcards.study)
        if f in simulated
    ]


onstart:
    print(plan_report(WORKFLOW, TIER, workflow.cores))
