# tcprepro workflow: simulations -> combined datasets -> figures (papermill) -> claims -> paper.
#
#   snakemake --profile workflow/profiles/quick     # what `make figures` runs
#
# Experiment parameters live in workflow/config.yaml (schema in workflow/schemas/);
# the profile picks the tier (smoke | quick | paper) and runtime settings.


configfile: "workflow/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/emulate.smk"
include: "workflow/rules/paper.smk"


rule all:
    default_target: True
    input:
        "paper/build/tcprepro.pdf",
