# Figure rules: a parameterised notebook reads a combined dataset and draws the
# figure (or writes the table) the paper includes, and records what it drew
# (<figure>.json, read by the paper's captions). Restyling a figure reruns no
# simulation.


rule figure:
    input:
        combined=figure_combined,
        notebook=figure_notebook,
    output:
        pdf="paper/figures/{figure}.pdf",
        facts="paper/figures/{figure}.json",
        notebook="data/notebooks/{figure}.ipynb",
    log:
        "data/logs/figures/{figure}.log",
    params:
        library=LIBRARY,
    shell:
        "tcprepro papermill {input.notebook} {output.notebook} --no-progress-bar "
        "-p combined {input.combined} -p figure_id {wildcards.figure} "
        "-p output_pdf {output.pdf} > {log} 2>&1"


rule table:
    input:
        combined=figure_combined,
        notebook=figure_notebook,
    output:
        tex="paper/generated/{figure}.tex",
        notebook="data/notebooks/{figure}_table.ipynb",
    log:
        "data/logs/tables/{figure}.log",
    params:
        library=LIBRARY,
    shell:
        "tcprepro papermill {input.notebook} {output.notebook} --no-progress-bar "
        "-p combined {input.combined} -p figure_id {wildcards.figure} "
        "-p output_tex {output.tex} > {log} 2>&1"


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
        "data/logs/claims/{study}.log",
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
