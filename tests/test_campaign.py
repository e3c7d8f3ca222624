"""Workflow-config semantics: per-figure tiers, figures drawn from another's runs, estimates."""

import copy
import re

import pytest
import yaml

from conftest import ROOT
from tcprepro.campaign import WorkflowConfig, estimate_wall_s, validate_workflow_config
from tcprepro.campaign.cost import _flow_bound_packets
from tcprepro.errors import ConfigError

SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"


@pytest.fixture
def config_data(monkeypatch):
    monkeypatch.chdir(ROOT)  # scenario paths in the config are relative to the repository
    return yaml.safe_load((ROOT / "workflow/config.yaml").read_text())


def test_study_d_figures_have_their_own_tiers(config_data):
    config = validate_workflow_config(config_data, SCHEMA)
    assert config.tier_settings("D1", "paper")["repetitions"] == 1
    assert config.tier_settings("D3", "paper")["repetitions"] == 3
    assert config.tier_settings("D1", "quick")["set"] == {"duration": "2s", "warmup": "500ms"}
    assert config.sweep_values("D1", "quick")["send_buffer"][-1] == "4MiB"
    assert config.sweep_values("D1", "paper")["send_buffer"][-1] == "16MiB"
    runs = config.runs("D1", "quick")
    assert len(runs) == 2 * 2 * 10
    assert ("duration", "2s") in runs[0].overrides


def test_d2_is_drawn_from_d1_and_both_are_tables(config_data):
    config = validate_workflow_config(config_data, SCHEMA)
    assert config.source("D2") == "D1"
    assert config.runs("D2", "quick") == []
    assert "D2" not in config.simulated_figures
    assert config.outputs("D1") == ["figure", "table"]
    assert "paper/generated/D2.tex" in config.paper_files("table")


@pytest.mark.parametrize(
    ("target", "message"),
    [("D9", "must be a figure with runs of its own"), ("A1", "is in another study")],
)
def test_a_bad_data_reference_is_refused_naming_the_field(config_data, target, message):
    data = copy.deepcopy(config_data)
    data["figures"]["D2"]["data"] = target
    with pytest.raises(ConfigError, match=rf"figures\.D2\.data: .*{message}"):
        validate_workflow_config(data, SCHEMA)


def test_a_chain_of_data_references_is_refused(config_data):
    data = copy.deepcopy(config_data)
    data["figures"]["D9"] = {**data["figures"]["D2"], "data": "D2"}  # a view of a view
    with pytest.raises(ConfigError, match=r"figures\.D9\.data: 'D2' must be a figure with runs"):
        validate_workflow_config(data, SCHEMA)


def test_the_estimate_counts_what_the_flows_can_send(config_data):
    config = WorkflowConfig(config_data)
    runs = {r.cell: r for r in config.runs("D1", "quick")}
    small = runs["delay-6ms_recv_buffer-16MiB_send_buffer-8KiB"]
    large = runs["delay-6ms_recv_buffer-16MiB_send_buffer-4MiB"]
    # 8 KiB per 12 ms = 5.46 Mb/s for 2 s = 910 packets of 1500 B, plus 455 ACKs (b = 2),
    # not the 1 Gb/s link's 166 000
    assert _flow_bound_packets(small.scenario()) == pytest.approx(1365, rel=0.01)
    assert estimate_wall_s([small]) < estimate_wall_s([large])
    # a sized transfer sends its size: 64 KiB = 45.3 segments (+ ACKs), whatever the duration
    [sized] = [r for r in config.runs("D4", "quick") if r.cell.endswith("size-64KiB")][:1]
    assert _flow_bound_packets(sized.scenario()) == pytest.approx(65536 / 1448 * 1.5)


#: cache keys of a few runs with the software versions held fixed, recorded before the
#: package was restructured (ec74333): a refactoring that changes how a run's scenario is
#: resolved (overrides, defaults, units, field order) changes them and reruns every cache.
#: A3's key changed on purpose with its size law (Zipf rank-size law, issue 14)
#: B5.10's changed on purpose with its deviation note on Hybla (notes are part of the scenario)
#: every key changed on purpose when the studies took their testbed profiles (issue 31): a
#: profile's values and its stack section are part of the resolved scenario
@pytest.mark.parametrize(
    ("figure", "tier", "cell", "key"),
    [
        ("A1", "smoke", "up-NewReno_down-NewReno", "66a089ac60575484e8ea"),
        ("A3", "smoke", "up-NewReno_down-NewReno_load-0.5", "c60d7a629efe7a9fa4a4"),
        ("B5.10", "quick", "variant-NewReno_flows-1_buffer-20_rate-50Mbps", "46ce2afe2c7bd5bf26a3"),
        ("C3.1", "quick", "protocol-Cubic_rtt-14ms_buffer-0.2", "3a15aaaa44c67458c7b9"),
        ("D1", "paper", "delay-2ms_recv_buffer-256KiB_send_buffer-8KiB", "80bf9aa6db71ba984f9f"),
    ],
)
def test_cache_keys_of_a_few_runs_are_stable(config_data, figure, tier, cell, key):
    config = validate_workflow_config(config_data, SCHEMA)
    run = config.run(figure, cell, 0, tier)
    assert run.scenario().cache_key(run.rep, "ns3", {"pinned": "1"}) == key


def test_a_variants_fixed_ns3_attributes_are_in_its_runs_cache_keys(config_data, monkeypatch):
    """Setting a registry default (Variant.ns3_defaults) for Hybla reruns Hybla's runs
    and only them: the other variants' keys stay those recorded above."""
    import dataclasses

    from tcprepro import variants

    config = validate_workflow_config(config_data, SCHEMA)
    hybla = config.run("B5.10", "variant-Hybla_flows-1_buffer-20_rate-50Mbps", 0, "quick")
    reno = config.run("B5.10", "variant-NewReno_flows-1_buffer-20_rate-50Mbps", 0, "quick")
    before = hybla.scenario().cache_key(0, "ns3", {"pinned": "1"})
    emulated_before = hybla.scenario().cache_key(0, "mininet", {"pinned": "1"})  # Linux's own
    assert hybla.scenario().ns3_variant_defaults() == {}
    changed = dataclasses.replace(variants.VARIANTS["Hybla"], ns3_defaults={"RRTT": "25ms"})
    monkeypatch.setitem(variants.VARIANTS, "Hybla", changed)
    assert hybla.scenario().ns3_variant_defaults() == {"Hybla": {"RRTT": "25ms"}}
    assert hybla.scenario().cache_key(0, "ns3", {"pinned": "1"}) != before
    assert hybla.scenario().cache_key(0, "mininet", {"pinned": "1"}) == emulated_before
    assert reno.scenario().cache_key(0, "ns3", {"pinned": "1"}) == "46ce2afe2c7bd5bf26a3"


def test_editing_one_cpp_model_reruns_exactly_the_runs_that_use_it(
    config_data, monkeypatch, tmp_path
):
    """A run's key covers the shared C++ sources and its own models only: an edit to
    tcp-hybla.cc changes the keys of B5.10's Hybla runs and nothing else; an edit to a
    shared source (the trace sinks) changes every ns-3 run's key."""
    import shutil

    from tcprepro import installation, provenance

    config = validate_workflow_config(config_data, SCHEMA)
    runs = {
        "hybla": config.run("B5.10", "variant-Hybla_flows-1_buffer-20_rate-50Mbps", 0, "quick"),
        "reno_pfq": config.run(
            "B5.10", "variant-NewReno_flows-1_buffer-20_rate-50Mbps", 0, "quick"
        ),
        "aimd": config.run("B5.16", "law-AIMD.1.2_buffer-20", 0, "quick"),
        "a1": config.run("A1", "up-NewReno_down-NewReno", 0, "quick"),
    }
    assert runs["hybla"].scenario().cpp_models() == {"tcp-hybla", "pfq-lqd-queue-disc"}
    assert runs["aimd"].scenario().cpp_models() == {"tcp-generalized", "pfq-lqd-queue-disc"}
    assert runs["a1"].scenario().cpp_models() == frozenset()

    def keys():
        provenance.software_versions.cache_clear()
        return {name: run.cache_key() for name, run in runs.items()}

    copy_dir = tmp_path / "cpp"
    shutil.copytree(installation.CPP_DIR, copy_dir)
    monkeypatch.setattr(installation, "CPP_DIR", copy_dir)
    before = keys()
    with (copy_dir / "tcp-hybla.cc").open("a") as source:
        source.write("// an edit\n")
    after_model = keys()
    assert [n for n in runs if after_model[n] != before[n]] == ["hybla"]
    with (copy_dir / "traces.cc").open("a") as source:
        source.write("// an edit\n")
    after_shared = keys()
    assert all(after_shared[n] != after_model[n] for n in runs)
    provenance.software_versions.cache_clear()


def test_makespan_puts_the_longest_jobs_first_on_the_free_cores():
    from tcprepro.campaign.plan import makespan_s

    assert makespan_s([10, 10, 10, 30], 1) == 60
    assert makespan_s([10, 10, 10, 30], 2) == 30
    assert makespan_s([10, 10, 10, 30], 100) == 30  # the longest job bounds it
    assert makespan_s([], 4) == 0


def test_the_budget_carries_the_measured_rate_of_each_study(config_data):
    from tcprepro.campaign.measured import (
        FIGURE_CALIBRATION_MIN_RUNS,
        MEASURED_QUICK,
        MEASURED_QUICK_FIGURES,
    )
    from tcprepro.campaign.plan import (
        _run_cost_s,
        calibration_runs,
        calibrations,
        study_budgets,
    )

    config = WorkflowConfig(config_data)
    calibration = calibrations(config)
    # on the calibration sample, the calibrated core time is the measured wall time
    for study, measured in MEASURED_QUICK.items():
        runs = calibration_runs(config, study)
        assert len(runs) == measured.runs, study
        cost = sum(_run_cost_s(config, run, calibration) for run in runs)
        # to the per-figure rows' rounding (MEASURED_QUICK_FIGURES keeps 3 decimals, the
        # study's total 1)
        assert cost == pytest.approx(measured.wall_s, rel=1e-3), study
        # a figure with enough runs in the sample is calibrated on its own runs
        for figure in {run.figure for run in runs}:
            own = [run for run in runs if run.figure == figure]
            count, wall = MEASURED_QUICK_FIGURES[figure]
            assert count == len(own), figure  # the measured rows are this sample's
            if count >= FIGURE_CALIBRATION_MIN_RUNS:
                assert calibration[figure] == pytest.approx(wall / estimate_wall_s(own))
                assert sum(_run_cost_s(config, r, calibration) for r in own) == pytest.approx(wall)
            else:
                assert figure not in calibration
        assert sum(run.scenario().duration for run in runs) == measured.simulated_s, study
    budgets, costs = study_budgets(config, "paper")
    assert sum(b.runs for b in budgets) == len(costs) == 4222
    assert sum(b.core_s for b in budgets) == pytest.approx(sum(costs))
    # storage: the measured MiB per simulated second of each study
    a = next(b for b in budgets if b.study == "A")
    rate = MEASURED_QUICK["A"].mib / MEASURED_QUICK["A"].simulated_s
    assert a.gib == pytest.approx(a.simulated_s * rate / 1024)


def test_each_emulated_figure_is_calibrated_on_its_measured_uml_sample(config_data):
    """The UML route's cost per figure: every emulated figure of the quick tier has a
    measured sample of that tier's runs (a changed quick cell list needs a new sample:
    `make bench`), and on that sample the calibrated estimate is the measured wall time."""
    from tcprepro.campaign.measured import UML_MEASURED_QUICK
    from tcprepro.campaign.plan import (
        UML_BOOT_WALL_S,
        emulate_job_s,
        uml_calibrations,
        uml_run_wall_s,
        uml_sample_runs,
    )

    config = WorkflowConfig(config_data)
    emulated = [f for f in config.simulated_figures if config.runs(f, "quick", "mininet")]
    assert sorted(UML_MEASURED_QUICK) == sorted(emulated)
    calibration = uml_calibrations(config)
    for figure, (runs, wall_s) in UML_MEASURED_QUICK.items():
        sample = uml_sample_runs(config, figure)
        assert len(sample) == runs, figure
        model = sum(uml_run_wall_s(run.scenario()) for run in sample)
        assert calibration[figure] == pytest.approx(wall_s / model), figure
        assert emulate_job_s(sample, "uml", calibration) == pytest.approx(
            UML_BOOT_WALL_S + wall_s
        ), figure
    # a figure whose quick cells changed since its sample keeps the model alone
    changed = dict(config_data)
    changed["figures"] = dict(config_data["figures"])
    x14 = dict(changed["figures"]["X14"])
    x14["tiers"] = {**x14["tiers"], "quick": {**x14["tiers"]["quick"], "repetitions": 3}}
    changed["figures"]["X14"] = x14
    assert uml_calibrations(WorkflowConfig(changed))["X14"] is None


def test_the_wall_time_shrinks_with_cores_down_to_the_longest_run(config_data):
    from tcprepro.campaign.plan import JOB_OVERHEAD_S, LOCAL_JOB_OVERHEAD_S, budget_report

    config = WorkflowConfig(config_data)
    local, cluster = {}, {}
    for cores in (2, 64, 100_000):
        text = budget_report(config, "paper", cores)
        found = re.search(
            rf"on {cores} core\(s\): about ([0-9.]+) h of wall time locally, ([0-9.]+) h as "
            "cluster jobs",
            text,
        )
        local[cores], cluster[cores] = float(found[1]), float(found[2])
        longest_min = float(re.search(r"longest job ([0-9.]+) min", text)[1])
    assert local[2] > 20 * local[64] > 0
    assert cluster[2] > local[2]
    # one core per job: the longest job's runs and its start-up, the cluster's or the local one
    assert local[100_000] == pytest.approx(
        (longest_min * 60 + LOCAL_JOB_OVERHEAD_S) / 3600, abs=0.06
    )
    assert cluster[100_000] == pytest.approx((longest_min * 60 + JOB_OVERHEAD_S) / 3600, abs=0.06)
    # the start-up core-hours: batch jobs x seconds per job, both ways
    runs, jobs = map(int, re.search(r"total: (\d+) runs in (\d+) batch jobs", text).groups())
    assert jobs == sum(len(config.batches(f, "paper")) for f in config.simulated_figures)
    assert jobs < runs
    start_up = re.search(r"start-up: ([0-9.]+) core-h locally .* ([0-9.]+) core-h as cluster", text)
    assert float(start_up[1]) == pytest.approx(jobs * LOCAL_JOB_OVERHEAD_S / 3600, abs=0.06)
    assert float(start_up[2]) == pytest.approx(jobs * JOB_OVERHEAD_S / 3600, abs=0.06)


# ---- the verify tier: the paper's settings on the cells the claims read --------------


def _registry_cells():
    """Per figure, the cell names the claims registry's claims read (derived independently)."""
    from tcprepro.campaign.runs import cell_name
    from tcprepro.claims import load_registry
    from tcprepro.claims.cells import claim_cells

    out: dict[str, set[str]] = {}
    for claim in load_registry():
        for figure, cells in claim_cells(claim.cells).items():
            out.setdefault(figure, set()).update(cell_name(cell) for cell in cells)
    return out


def test_plan_verify_counts_exactly_the_cells_the_claims_read(config_data, capsys):
    import re

    from tcprepro.cli import main

    expected = _registry_cells()
    assert main(["plan", "--tier", "verify", "--workdir", "/nonexistent"]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^  (\S+): (\d+) cells read by the claims, (\d+) runs", out, re.M)
    assert {figure for figure, _, _ in rows} == set(expected)
    config = validate_workflow_config(config_data, SCHEMA)
    for figure, cells, runs in rows:
        assert int(cells) == len(expected[figure]), figure
        reps = config.tier_settings(figure, "paper")["repetitions"]
        assert int(runs) == len(expected[figure]) * reps, figure
        # the very cells, with the paper tier's overrides (hence its cache keys)
        verify = config.runs(figure, "verify")
        assert {run.cell for run in verify} == expected[figure]
        paper = {(run.cell, run.rep): run.overrides for run in config.runs(figure, "paper")}
        assert all(paper[(run.cell, run.rep)] == run.overrides for run in verify)
    assert re.search(r"simulated time of the verify tier: [0-9.]+ h", out)
    # a figure no claim reads has no run in the verify tier
    assert config.runs("C3.3", "verify") == []
    assert "C3.3" not in out


def test_plan_of_one_claim_and_its_errors(config_data, capsys):
    from tcprepro.cli import main

    assert main(["plan", "--tier", "verify", "--claim", "B-c10", "--cores", "1"]) == 0
    out = capsys.readouterr().out
    assert "B5.20: 4 cells read by the claims, 12 runs" in out
    assert "B5.1:" not in out
    assert main(["plan", "--tier", "verify", "--claim", "B-c99"]) == 2
    assert "no claim B-c99" in capsys.readouterr().err
    assert main(["plan", "--tier", "quick", "--claim", "B-c1"]) == 2
    assert "verify-tier plan" in capsys.readouterr().err


def test_a_figure_with_cached_runs_of_the_tier_is_planned_on_their_measured_time(
    config_data, tmp_path
):
    import xarray as xr

    from tcprepro.campaign.plan import plan_report, tier_calibration

    config = validate_workflow_config(config_data, SCHEMA)
    runs = config.runs("B5.20", "verify")

    def cache(run, wall_s, key=None):
        path = tmp_path / run.path
        path.parent.mkdir(parents=True, exist_ok=True)
        attrs = {"cache_key": key or run.cache_key(), "wall_time_s": wall_s}
        xr.Dataset(attrs=attrs).to_netcdf(path)

    # two cached runs, and one made by other code (another cache key): not enough to measure
    for run in runs[:2]:
        cache(run, 4.0 * estimate_wall_s([run]))
    cache(runs[2], 4.0 * estimate_wall_s([runs[2]]), key="another-key")
    assert tier_calibration(config, "B5.20", "verify", tmp_path) is None
    before = plan_report(config, "verify", 1, tmp_path, ["B-c10"], recorded={})
    assert "calibrated on" not in before
    # a third run of the current code: the rest is estimated at their 4 times the model
    cache(runs[3], 4.0 * estimate_wall_s([runs[3]]))
    factor, count = tier_calibration(config, "B5.20", "verify", tmp_path)
    assert count == 3
    assert factor == pytest.approx(4.0)
    after = plan_report(config, "verify", 1, tmp_path, ["B-c10"], recorded={})
    assert "3 cached, 9 to simulate" in after
    assert "calibrated on its 3 cached runs of this tier: x4.00 the cost model" in after
    rest = [run for run in runs if run not in (runs[0], runs[1], runs[3])]
    minutes = float(re.search(r"9 to simulate \(\d+ jobs\); about ([0-9.]+) min", after)[1])
    # (plus each job's start-up)
    assert minutes == pytest.approx(4.0 * estimate_wall_s(rest) / 60, rel=0.02)


def test_a_figures_recorded_run_costs_calibrate_the_plan_of_its_tier_on_another_machine(
    config_data, tmp_path, capsys, monkeypatch
):
    """plan --record-costs keeps what a figure's cached runs of a tier cost; a plan of that
    tier with none of them cached (another machine) calibrates the figure on the record,
    and the paper tier, whose runs are the verify tier's at the same settings, on it too."""
    import xarray as xr

    from tcprepro.campaign import cost_records
    from tcprepro.campaign.plan import claim_costs, plan_report, tier_cost
    from tcprepro.cli import main

    config = validate_workflow_config(config_data, SCHEMA)
    runs = config.runs("B5.20", "verify")
    built = tmp_path / "built"
    for run, factor in zip(runs[:4], (2.0, 3.0, 3.0, 4.0), strict=True):
        path = built / run.path
        path.parent.mkdir(parents=True, exist_ok=True)
        attrs = {"cache_key": run.cache_key(), "wall_time_s": factor * estimate_wall_s([run])}
        xr.Dataset(attrs={**attrs, "git_commit": "abcdef0123"}).to_netcdf(path)
    records = cost_records.measure(config, "verify", built)
    assert [r.figure for r in records] == ["B5.20"]
    (record,) = records
    assert record.runs == 4
    assert record.runs_commit == "abcdef0"
    assert record.factor == pytest.approx(3.0)
    csv_path = tmp_path / "records" / "run-costs.csv"
    assert cost_records.append(records, csv_path) == 1
    # an older record of the figure, then the newer one: the newer is the figure's
    older = cost_records.CostRecord("B5.20", "verify", 5, 10.0, 10.0, "0000000", "cpu", "2", "x")
    csv_path.write_text("")
    cost_records.append([older, record], csv_path)
    recorded = cost_records.recorded_calibrations("verify", cost_records.read(csv_path))
    assert recorded["B5.20"].factor == pytest.approx(3.0, rel=1e-3)  # as written: 0.1 s
    elsewhere = tmp_path / "elsewhere"  # nothing cached
    plan = plan_report(config, "verify", 1, elsewhere, ["B-c10"], recorded=recorded)
    assert "0 cached, 12 to simulate" in plan
    assert "calibrated on 4 runs of this tier in records/run-costs.csv" in plan
    assert "x3.00 the cost model, where the quick-tier sample gives" in plan
    minutes = float(re.search(r"12 to simulate \(\d+ jobs\); about ([0-9.]+) min", plan)[1])
    assert minutes == pytest.approx(3.0 * estimate_wall_s(runs) / 60, rel=0.02)
    unrecorded = plan_report(config, "verify", 1, elsewhere, ["B-c10"], recorded={})
    assert "calibrated on" not in unrecorded
    # the paper tier: the verify tier's record stands in, and says so
    paper = cost_records.recorded_calibrations("paper", cost_records.read(csv_path))
    assert paper["B5.20"].tier == "verify"
    plan = plan_report(config, "paper", 1, elsewhere, recorded=paper)
    assert "calibrated on 4 runs of the verify tier in records/run-costs.csv" in plan
    # the claim's and the tier's costs the report quotes take the record too
    monkeypatch.setattr(cost_records, "RUN_COSTS", csv_path)
    assert claim_costs(config, ["B-c10"])["B-c10"].core_s == pytest.approx(
        3.0 * estimate_wall_s(runs), rel=1e-3
    )
    paper_runs = config.runs("B5.20", "paper")
    assert tier_cost(config, "paper", figures=["B5.20"]).core_s == pytest.approx(
        3.0 * estimate_wall_s(paper_runs), rel=1e-3
    )
    # a malformed record is an error naming the file, the line and what is wrong
    bad = tmp_path / "bad.csv"
    bad.write_text("figure,tier,runs\nB5.20,verify,4\n")
    with pytest.raises(ConfigError, match=r"bad.csv: line 2: no column 'wall_s'"):
        cost_records.read(bad)
    bad.write_text(csv_path.read_text().replace(",5,", ",five,", 1))
    with pytest.raises(ConfigError, match=r"bad.csv: line 2: not a number"):
        cost_records.read(bad)
    # the command: nothing cached is an error naming the option, before anything is written
    empty = tmp_path / "empty.csv"
    argv = ["plan", "--tier", "verify", "--workdir", str(elsewhere), "--record-costs", str(empty)]
    assert main(argv) == 2
    assert "--record-costs: no figure has 3 runs of tier 'verify' cached" in capsys.readouterr().err
    assert not empty.exists()
    assert main([*argv, "--whatif", "lqd-tail-drop"]) == 2
    assert "not a what-if's" in capsys.readouterr().err


def test_verify_claims_restricts_the_verify_tier_to_those_claims_cells(config_data):
    from tcprepro.campaign.runs import cell_name
    from tcprepro.claims import load_registry
    from tcprepro.claims.cells import claim_cells

    data = {**config_data, "tier": "verify", "verify_claims": ["B-c1", "B-c10"]}
    config = validate_workflow_config(data, SCHEMA)
    wanted: dict[str, set[str]] = {}
    for claim in load_registry():
        if claim.id in ("B-c1", "B-c10"):
            for figure, cells in claim_cells(claim.cells).items():
                wanted.setdefault(figure, set()).update(cell_name(c) for c in cells)
    ran = {f: {run.cell for run in config.runs(f)} for f in config.simulated_figures}
    assert {f for f, cells in ran.items() if cells} == set(wanted) == {"B5.1", "B5.20"}
    assert all(ran[f] == wanted[f] for f in wanted)
    bad = validate_workflow_config({**data, "verify_claims": ["B-c1", "Z-c9"]}, SCHEMA)
    with pytest.raises(ConfigError, match="verify_claims: no claim Z-c9"):
        bad.runs("B5.1")


def test_an_emulated_cell_is_run_only_where_the_kernel_offers_its_module(config_data, monkeypatch):
    """X14 sets its variant through cases (AIMD 1/2, MIMD 100/3): a kernel with reno but
    not scalable runs the AIMD cells and leaves out the MIMD ones, as a variant sweep would."""
    from tcprepro.campaign import emulated

    config = WorkflowConfig(config_data)
    monkeypatch.setattr(emulated, "offered_variants", lambda route: {"reno", "cubic", "bbr"})
    kept = emulated.emulated_runs(config, "X14", "quick", "native")
    assert {dict(run.sweep)["law"] for run in kept} == {"AIMD.1.2"}
    assert len(kept) == 2  # B = 20 and 100
    monkeypatch.setattr(emulated, "offered_variants", lambda route: {"reno", "scalable"})
    assert len(emulated.emulated_runs(config, "X14", "quick", "native")) == 4
    # X6 sweeps its variants: of those, the kernel's two modules run (FAST and Compound,
    # which have none, never do)
    x6 = emulated.emulated_runs(config, "X6", "paper", "native")
    variants = {dict(run.sweep)["variant"] for run in x6}
    assert variants == {"NewReno", "Scalable"}


def test_a_simulation_beside_an_emulated_job_runs_slower_by_the_measured_factor():
    """The build's schedule with a UML guest beside the simulations: a 10-s simulate job
    beside a 10-s emulated one at a slowdown of 2 has 5 s of work left when the guest
    ends, so it ends at 15 s; with no emulated job, or a slowdown of 1, it is the plain
    makespan; a slowdown below 1 is refused."""
    from tcprepro.campaign.schedule import makespan_s, shared_makespan_s

    assert shared_makespan_s([10], [10], 2, 2.0) == pytest.approx(15)
    assert shared_makespan_s([10, 10], [], 2, 2.0) == pytest.approx(10)
    # the emulated job first (longest); the simulations in turn beside it at half pace: 12 s
    # for the first, 4 of the second's 6 s by 20 s, its last 2 s at full pace
    assert shared_makespan_s([6, 6], [20], 2, 2.0) == pytest.approx(22)
    for sims, emus in (([10, 10, 10], [30]), ([5, 7, 3, 9], [12, 4])):
        assert shared_makespan_s(sims, emus, 2, 1.0) == pytest.approx(makespan_s(sims + emus, 2))
        assert shared_makespan_s(sims, emus, 2, 1.7) >= makespan_s(sims + emus, 2)
    with pytest.raises(ValueError, match="slowdown"):
        shared_makespan_s([1], [1], 2, 0.5)


def test_the_calibration_sample_spans_each_figures_cheap_and_costly_runs(config_data):
    """One run in CALIBRATION_STRIDE of each figure, spread over its runs ranked by the
    cost model: for every figure with at least two strides of runs, the sample's mean
    modelled cost is within 15 % of the figure's (every 7th run in the config's order
    gave 0.14 of D4's and 0.74 of D1's)."""
    from tcprepro.campaign.measured import CALIBRATION_STRIDE
    from tcprepro.campaign.plan import calibration_runs

    config = WorkflowConfig(config_data)
    checked = 0
    for study in config.studies():
        sample = calibration_runs(config, study)
        for figure in config.figures_of(study):
            runs = config.runs(figure, "quick")
            mine = [run for run in sample if run.figure == figure]
            if config.crosschecked(figure):
                assert not mine
                continue
            assert len(mine) == -(-len(runs) // CALIBRATION_STRIDE), figure
            assert len({run.path for run in mine}) == len(mine)
            if len(runs) >= 2 * CALIBRATION_STRIDE:
                ratio = (estimate_wall_s(mine) / len(mine)) / (estimate_wall_s(runs) / len(runs))
                assert 0.85 <= ratio <= 1.15, (figure, ratio)
                checked += 1
    assert checked >= 10
