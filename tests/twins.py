"""Helpers of the twins' smoke tests on the UML route (tests/test_uml_twins_*.py): a twin
figure's smoke cells in ns-3 and in one UML boot, compared with the figure's stated
tolerance, and an emulated flow placed in the range ns-3 gives over ten seeds."""

from conftest import ROOT, uml_batch, uml_or_skip
from tcprepro.scenario_io import load_scenario


def crosscheck_smoke(tmp_path, figure, cells=None, variants=()):
    """A twin figure's smoke cells in ns-3 and on the UML route (one boot), compared
    with the figure's stated tolerance; returns the table and the emulated datasets.

    ``variants``: (cell index, overrides) of further emulated runs in the same boot, a
    smoke cell with some settings changed; their datasets follow the others' and stay
    out of the table."""
    import pandas as pd

    from tcprepro.analysis import crosscheck
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.emulated import figure_tool
    from tcprepro.emulation.runner import EmulationJob
    from tcprepro.ns3.backend import run_scenario
    from tcprepro.store import combine_runs, open_dataset, write_dataset

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    emulated_runs = config.runs(figure, "smoke", "mininet")[:cells]
    sweeps = [run.sweep for run in emulated_runs]
    simulated_runs = [r for r in config.runs(figure, "smoke", "ns3") if r.sweep in sweeps]
    assert len(simulated_runs) == len(emulated_runs)
    for run in emulated_runs:
        uml_or_skip(run.scenario())
    ns3_paths, emu_paths = [], []
    for i, run in enumerate(simulated_runs):
        ns3_paths.append(tmp_path / f"ns3-{i}.nc")
        write_dataset(run_scenario(run.scenario(), run.rep, extra_attrs=run.attrs()), ns3_paths[-1])
    tool = figure_tool(config, figure)
    jobs = []
    for i, run in enumerate(emulated_runs):
        emu_paths.append(tmp_path / f"emu-{i}.nc")
        jobs.append(EmulationJob(run.scenario(), run.rep, emu_paths[-1], run.attrs(), tool))
    variant_paths = []
    for k, (cell, overrides) in enumerate(variants):
        run = emulated_runs[cell]
        scenario = load_scenario(run.scenario_path, [*run.overrides, *overrides])
        variant_paths.append(tmp_path / f"emu-variant-{k}.nc")
        jobs.append(EmulationJob(scenario, run.rep, variant_paths[-1], run.attrs(), tool))
    for result in uml_batch(jobs):
        assert result.ok, result.error
    table = crosscheck.compare_figure(
        combine_runs(ns3_paths), combine_runs(emu_paths), config.figure(figure)["crosscheck"]
    )
    table = table[table["ns3_util_pct"].notna()]  # the combined sweep lists the other cells
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        shown = table.round(3).to_string(index=False)
    print(f"{figure}, smoke tier, ns-3 vs UML route:\n{shown}")
    emulated = [open_dataset(path) for path in [*emu_paths, *variant_paths]]
    for ds in emulated:
        print(
            f"{ds.attrs['guest_time_s']} guest s in {ds.attrs['wall_time_s']} wall s (ratio "
            f"{ds.attrs['wall_time_ratio']}); flags: {ds.attrs['fidelity_flags'] or 'none'}"
        )
        assert ds.attrs["route"] == "uml"
    return table, shown, emulated


def against_ns3_seeds(tmp_path, figure, table, seeds=10):
    """Each emulated flow of ``table`` (a smoke cross-check of ``figure`` against ns-3's
    first seed) placed in the range ns-3 gives over ``seeds`` seeds of the same cells,
    widened by the figure's stated tolerance: one seed of a short noisy cell is no
    reference, the seeds' range is. Returns one row per flow: ``util_in``/``rtt_in``
    (inside the widened range) and ``util_not_below`` (not under its low end)."""
    import pandas as pd

    from tcprepro.analysis import crosscheck
    from tcprepro.campaign import load_workflow_config
    from tcprepro.ns3.backend import run_scenario
    from tcprepro.store import combine_runs, write_dataset

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    tolerance = config.figure(figure)["crosscheck"]
    emu_paths = sorted(tmp_path.glob("emu-*.nc"))
    keys = list(table.columns[: list(table.columns).index("ns3_util_pct")])
    cells = {tuple(row) for row in table[[k for k in keys if k != "flow"]].astype(str).values}
    runs = [
        r for r in config.runs(figure, "smoke", "ns3") if tuple(str(v) for _, v in r.sweep) in cells
    ]
    assert len(runs) == len(cells), (runs, cells)
    rows = []
    for rep in range(seeds):
        paths = []
        for i, run in enumerate(runs):
            scenario = load_scenario(run.scenario_path, [*run.overrides, ("repetitions", seeds)])
            paths.append(tmp_path / f"ns3-seed-{rep}-{i}.nc")
            write_dataset(run_scenario(scenario, rep, extra_attrs=run.attrs()), paths[-1])
        seed_table = crosscheck.compare_figure(
            combine_runs(paths), combine_runs(emu_paths), tolerance
        )
        rows.append(seed_table[seed_table["ns3_util_pct"].notna()].assign(seed=rep))
    spread = pd.concat(rows).astype(dict.fromkeys(keys, str)).groupby(keys)
    verdicts = []
    for key, emu in table.astype(dict.fromkeys(keys, str)).set_index(keys).iterrows():
        util = spread.get_group(key)["ns3_util_pct"]
        rtt = spread.get_group(key)["ns3_rtt_ms"]
        print(
            f"{key}: UML util {emu['emu_util_pct']:.1f} % vs ns-3 seeds "
            f"{util.min():.1f}-{util.max():.1f} (median {util.median():.1f}); UML RTT "
            f"{emu['emu_rtt_ms']:.0f} ms vs {rtt.min():.0f}-{rtt.max():.0f} "
            f"(median {rtt.median():.0f})"
        )
        if "utilisation_rel" in tolerance:  # a relative tolerance (X4) or in points of C
            low = util.min() * (1 - tolerance["utilisation_rel"])
            high = util.max() * (1 + tolerance["utilisation_rel"])
        else:
            low = util.min() - tolerance["utilisation_pp"]
            high = util.max() + tolerance["utilisation_pp"]
        rtt_low = rtt.min() * (1 - tolerance["rtt_rel"])
        rtt_high = rtt.max() * (1 + tolerance["rtt_rel"])
        verdicts.append(
            {
                "key": key,
                "util_in": low <= emu["emu_util_pct"] <= high,
                "util_not_below": emu["emu_util_pct"] >= low,
                "rtt_in": rtt_low <= emu["emu_rtt_ms"] <= rtt_high,
            }
        )
    index = pd.MultiIndex.from_tuples(
        [k if isinstance(k := v.pop("key"), tuple) else (k,) for v in verdicts], names=keys
    )
    return pd.DataFrame(verdicts, index=index)
