# Simulation rules: one job per run (a sweep cell and a repetition). A run is
# rerun only when its cache key (resolved scenario, seed, repetition, tcprepro,
# ns-3 and model versions) changes, or its output is missing. The scenario
# files are inputs, but ancient(): editing a comment or a key that does not
# change this run's resolved scenario reruns nothing.


rule simulate:
    input:
        ancient(scenario_files),
    output:
        "data/runs/{figure}/{cell}/rep{rep}.nc",
    log:
        "data/logs/simulate/{figure}/{cell}/rep{rep}.log",
    params:
        tier=TIER,
        cache_key=run_cache_key,
    shell:
        "tcprepro sweep-run --tier {params.tier} --figure {wildcards.figure} "
        "--cell {wildcards.cell} --rep {wildcards.rep} -o {output} --quiet > {log} 2>&1"


rule combine:
    input:
        figure_runs,
    output:
        "data/combined/{figure}.nc",
    log:
        "data/logs/combine/{figure}.log",
    params:
        # the tier's values now: a run reused from the cache records the config it was
        # made with
        sweep_values=figure_sweep_values,
    shell:
        "tcprepro combine -o {output} --sweep-values {params.sweep_values} {input} > {log} 2>&1"
