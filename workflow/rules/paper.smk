# Paper rules: generated LaTeX inputs (at a glance, body, parameters, deviations,
# provenance, numbers quoted in the text), then latexmk and the build check. After
# `tcprepro bundle import`, the import record (data/bundle/import.json) is an input too:
# the provenance section says which runs came from the bundle, and a later
# `bundle verify` updates it.


rule paper_inputs:
    input:
        combined=[WORKFLOW.combined_path(figure) for figure in SIMULATED],
        facts=[path.removesuffix(".pdf") + ".json" for path in paper_files("figure")],
        claims=expand(f"{CLAIMS_DIR}/{{study}}.csv", study=STUDIES),
        source=bundle_record,
        verify=verify_claims,
        whatif=whatif_claims,
        records=verdict_records,
    output:
        "paper/generated/glance.tex",
        "paper/generated/body.tex",
        "paper/generated/parameters.tex",
        "paper/generated/deviations.tex",
        "paper/generated/provenance.tex",
        "paper/generated/numbers.tex",
    log:
        "data/logs/paper/inputs.log",
    params:
        library=LIBRARY,
        tier=TIER,
        emulation=EMULATION.summary,
        excluded=[figure for figure in WORKFLOW.figures if figure not in FIGURES],
        reason=EMULATION.reason,
        source=lambda wildcards, input: (
            f"--source {input.source}" if input.source else ""
        ),
        records=lambda wildcards, input: (
            f"--records {input.records}" if input.records else ""
        ),
    shell:
        "tcprepro paper-inputs --tier {params.tier} --emulation-note {params.emulation:q} "
        "--excluded {params.excluded} --excluded-reason {params.reason:q} "
        "--facts-dir paper/figures --claims {input.claims} --verify-claims {input.verify} "
        "--whatif-claims {input.whatif} {params.records} {params.source} "
        "--out-dir paper/generated {input.combined} > {log} 2>&1"


rule paper:
    input:
        tex="paper/tcprepro.tex",
        preamble="paper/preamble.tex",
        bib="paper/references.bib",
        figures=paper_files("figure"),
        tables=paper_files("table"),
        claims=expand("paper/generated/claims_{study}.tex", study=STUDIES),
        why=expand("paper/figures/why/{study}", study=STUDIES),
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
        "(latexmk -cd -pdf -interaction=nonstopmode -halt-on-error -outdir=build {input.tex} "
        "&& tcprepro paper-check --pdf {output} --log paper/build/tcprepro.log "
        "--aux paper/build/tcprepro.aux) > {log} 2>&1"
