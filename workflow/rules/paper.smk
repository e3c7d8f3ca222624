# Paper rules: generated LaTeX inputs (parameters, deviations, provenance,
# numbers quoted in the text), then latexmk.


rule paper_inputs:
    input:
        [WORKFLOW.combined_path(figure) for figure in SIMULATED],
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
        emulation=EMULATION.summary,
    shell:
        "tcprepro paper-inputs --tier {params.tier} --emulation-note {params.emulation:q} "
        "--out-dir paper/generated {input} > {log} 2>&1"


rule paper:
    input:
        tex="paper/tcprepro.tex",
        bib="paper/references.bib",
        figures=paper_files("figure"),
        tables=paper_files("table"),
        claims=expand("paper/generated/claims_{study}.tex", study=STUDIES),
        crosschecks=expand(
            "paper/generated/crosscheck_{figure}.tex",
            figure=[f for f in FIGURES if WORKFLOW.crosschecked(f)],
        ),
        generated=rules.paper_inputs.output,
    output:
        "paper/build/tcprepro.pdf",
    log:
        "data/logs/paper/latexmk.log",
    shell:
        "latexmk -cd -pdf -interaction=nonstopmode -halt-on-error -outdir=build {input.tex} "
        "> {log} 2>&1"
