# Figure rules: one job per notebook draws all the figures (and tables) it draws in one
# Jupyter kernel, papermill executing the notebook once per figure with its parameters
# (tcprepro.campaign.notebooks); each figure keeps its executed notebook
# (data/notebooks/<figure>.ipynb) and writes what it drew (<figure>.json, read by the
# paper's captions). Restyling a figure reruns no simulation.
for _notebook, _runs in NOTEBOOK_RUNS.items():

    rule:
        name:
            notebook_rule(_notebook)
        input:
            notebook=_notebook,
            data=sorted({path for run in _runs for path in run.inputs}),
        output:
            [path for run in _runs for path in run.outputs],
        log:
            f"data/logs/figures/{Path(_notebook).stem}.log",
        params:
            library=LIBRARY,
            figures=" ".join(run.figure for run in _runs),
        shell:
            "tcprepro draw-notebook {input.notebook} {params.figures} > {log} 2>&1"


rule claims:
    # the claims with an emulated twin get a second verdict on its emulated runs (or
    # "not emulated in this build", with the reason, when the build excludes emulation)
    input:
        combined=study_combined,
        emulated=study_twins,
    output:
        tex=f"{CLAIMS_TEX_DIR}/claims_{{study}}.tex",
        csv=f"{CLAIMS_DIR}/{{study}}.csv",
        why=directory(f"{WHY_DIR}/{{study}}"),
    log:
        f"data/logs/claims/{f'whatif/{WHATIF}/' if WHATIF else ''}{{study}}.log",
    params:
        library=LIBRARY,
        not_emulated=NOT_EMULATED,
        tier=TIER,
    shell:
        "tcprepro claims --tier {params.tier} --study {wildcards.study} --tex {output.tex} "
        "--csv {output.csv} "
        "--why-dir {output.why} --why-root paper {params.not_emulated} "
        "{input.combined} --emulated {input.emulated} > {log} 2>&1"


rule claims_tables:
    # every study's claims table (the verify tier's target: no catalogue figure, only the
    # claims' trace figures); a verify build restricted by verify_claims judges only the
    # studies whose cells it runs
    input:
        expand(f"{CLAIMS_DIR}/{{study}}.csv", study=JUDGED_STUDIES),
