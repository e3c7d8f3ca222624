# Emulation rules (tcprepro.emulation): a figure whose config block lists
# `backends: [ns3, mininet]` is also run with real Linux TCP in Mininet, natively
# (needs root), inside User-mode Linux with a virtual clock, or inside a full-kernel
# VM (virtme-ng), then compared with ns-3. Native and VM emulations run in real time
# and share the host's kernel or cores: one job at a time per host (resource
# `emulation`, which the profiles grant once). In virtual time (UML) a busy host
# changes nothing: the job is one boot on one core, and takes no `emulation` slot, so
# emulated figures run side by side and beside the simulate jobs, longest first (the
# priority: its estimated seconds, as the simulate jobs'). Always on this machine
# (localrules). One job per figure, one boot running its runs in turn; each run is
# cached under data/emulated/ by its own cache key (kernel, iperf3, route, scenario),
# and only changed runs are redone.


localrules:
    emulate_figure,


rule emulate_figure:
    input:
        ancient(scenario_files),
    output:
        f"{COMBINED_DIR}/emulated/{{figure}}.nc",
    log:
        f"data/logs/{COMBINED_DIR.replace('data/combined', 'emulate')}/{{figure}}.log",
    priority: emulate_priority
    threads: 1
    resources:
        emulation=0 if EMULATION.parallel else 1,
    params:
        tier=TIER,
        # the route's name: Snakemake compares plain values to rerun a job whose params changed
        route=str(EMULATION.route),
        cache_keys=emulated_cache_keys,
    message:
        "Emulating {wildcards.figure} (native needs root; or the UML or VM route)"
    shell:
        "tcprepro emulate-figure --tier {params.tier} --figure {wildcards.figure} "
        "--route {params.route} --jobs 1 -o {output} > {log} 2>&1"


rule crosscheck_table:
    input:
        ns3=f"{COMBINED_DIR}/{{figure}}.nc",
        emulated=f"{COMBINED_DIR}/emulated/{{figure}}.nc",
    output:
        tex="paper/generated/crosscheck_{figure}.tex",
        csv="data/crosscheck/{figure}.csv",
        views="data/crosscheck/{figure}-views.csv",
    log:
        "data/logs/crosscheck/{figure}.log",
    wildcard_constraints:
        figure="X[0-9]+",
    params:
        library=LIBRARY,
    shell:
        "tcprepro crosscheck --figure {wildcards.figure} --tex {output.tex} "
        "--csv {output.csv} --views-csv {output.views} {input.ns3} {input.emulated} "
        "> {log} 2>&1"
