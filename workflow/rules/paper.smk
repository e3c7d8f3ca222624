# Paper rules: generated LaTeX inputs (parameters, deviations, provenance,
# numbers quoted in the text), then latexmk.


rule paper_inputs:
    input:
        expand("data/combined/{figure}.nc", figure=WORKFLOW.simulated_figures),
    output:
        "paper/generated/body.tex",
        "paper/generated/parameters.tex",
        "paper/generated/deviations.tex",
        "paper/generated/provenance.tex",
        "paper/generated/numbers.tex",
    log:
        "data/logs/paper/inputs.log",
    params:
        tier=TIER,
    shell:
        "tcprepro paper-inputs --tier {params.tier} --out-dir paper/generated {input} > {log} 2>&1"


rule paper:
    input:
        tex="paper/tcprepro.tex",
        bib="paper/references.bib",
        figures=WORKFLOW.paper_files("figure"),
        tables=WORKFLOW.paper_files("table"),
        claims=expand("paper/generated/claims_{study}.tex", study=STUDIES),
        generated=rules.paper_inputs.output,
    output:
        "paper/build/tcprepro.pdf",
    log:
        "data/logs/paper/latexmk.log",
    shell:
        "latexmk -cd -pdf -interaction=nonstopmode -halt-on-error -outdir=build {input.tex} "
        "> {log} 2>&1"
