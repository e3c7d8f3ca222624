# Simulation rules. A figure's runs are simulated in batches, one process per batch
# (tcprepro.campaign.batches: about simulate_batch_s estimated core seconds each, from
# the config alone). Each run stays its own dataset (data/runs/<figure>/<cell>/rep<r>.nc),
# cached by its own key (resolved scenario, seed, repetition, tcprepro, ns-3 and model
# versions) and written atomically; the job declares only its manifest, written last, so
# a killed or failed batch keeps the runs it finished and its rerun simulates only the
# others. A batch is rerun when one of its runs' cache keys changes (params), or its
# manifest is missing. The scenario files are inputs, but ancient(): editing a comment or
# a key that does not change a run's resolved scenario reruns nothing.


rule simulate_batch:
    input:
        ancient(scenario_files),
    output:
        f"{BATCH_DIR}/{{figure}}/{{batch}}.json",
    log:
        f"data/logs/{BATCH_DIR.removeprefix('data/')}/{{figure}}/{{batch}}.log",
    priority: simulate_priority
    params:
        tier=TIER,
        runs=batch_runs,
        cache_keys=batch_cache_keys,
    shell:
        "tcprepro sweep-batch --tier {params.tier} -o {output} {params.runs} > {log} 2>&1"


rule combine:
    input:
        figure_batch_manifests,
    output:
        f"{COMBINED_DIR}/{{figure}}.nc",
    log:
        f"data/logs/{COMBINED_DIR.replace('data/combined', 'combine')}/{{figure}}.log",
    params:
        runs=figure_run_paths,
        # the tier's values now: a run reused from the cache records the config it was
        # made with
        sweep_values=figure_sweep_values,
    shell:
        "tcprepro combine -o {output} --sweep-values {params.sweep_values} {params.runs} "
        "> {log} 2>&1"
