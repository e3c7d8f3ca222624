import itertools
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from tcprepro.campaign import load_workflow_config


def tcprepro(*args):
    return subprocess.run(
        [sys.executable, "-m", "tcprepro.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_doctor_prints_every_capability_with_a_fix_for_missing_ones():
    result = tcprepro("doctor")
    assert result.returncode == 0
    for name in (
        "ns3-bindings",
        "c++-compiler",
        "tcprepro-models",
        "netem",
        "mininet",
        "kernel-congestion-controls",
        "latex",
    ):
        assert name in result.stdout
    for line in result.stdout.splitlines():
        if " MISSING " in line:
            assert "->" in line, f"no fix given: {line}"


def test_plan_counts_runs_and_estimates_time():
    result = tcprepro("plan", "--tier", "paper", "--workdir", "/nonexistent", "--route", "vm")
    assert result.returncode == 0, result.stderr
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    for figure, runs in (("A1", 160), ("A3", 320), ("D1", 48), ("X1", 18)):
        jobs = len(config.batches(figure, "paper"))
        assert f"{figure}: {runs} runs in {jobs} batch jobs, 0 cached, {runs} to simulate " \
            f"({jobs} jobs)" in result.stdout  # fmt: skip
    assert "X1: plus up to 18 emulated runs in real time" in result.stdout
    # X2 (C3.1's cells: 5 protocols x 7 RTTs x 4 buffers), X3 (D1's 48 cells), X4 (D3's 108),
    # X5 (C3.6's cells: 5 protocols x 5 loss rates), X7 (C1's 2), X6 (B5.10's cells Linux
    # has: 11 variants x 4 i x 2 B), X8 (C3.3's: 5 x 5 RTT2), X9 (C3.4's: 5 x 3 RTTs),
    # X10 (B5.20's 4), X11 (D4's 34), X12 (21 of B5.1's 24 cases), X13 (B5.14's cells sfq
    # can hold: 2 variants x 2 C x 7 loads x 4 B), X14 (B5.16's pairs Linux has: 2 x 2 B)
    assert "total: 4222 simulations to run, about" in result.stdout
    # the budget: core-hours from the measured per-study rates, wall time on --cores, storage
    assert "budget of tier 'paper'" in result.stdout
    assert re.search(r"study C: 951 runs, .* calibration x[0-9.]+\): [0-9.]+ core-h", result.stdout)
    assert re.search(
        r"total: 4222 runs in [0-9]+ batch jobs, [0-9.]+ core-h of simulation", result.stdout
    )
    assert re.search(r"on 2 core\(s\): about [0-9.]+ h of wall time", result.stdout)
    assert re.search(r"trace bundle .* about [0-9.]+ GiB as \.tar", result.stdout)


def test_plan_says_which_of_the_claims_cells_each_figure_of_the_tier_holds():
    from tcprepro.campaign.runs import cell_name
    from tcprepro.claims import load_registry

    result = tcprepro("plan", "--tier", "quick", "--workdir", "/nonexistent")
    assert result.returncode == 0, result.stderr
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    for figure in ("A1", "D3", "B5.16"):
        held = {cell_name(cell) for cell in config.cells(figure, "quick")}
        parts = []
        for claim in load_registry():
            read = config.claim_cells(figure, [claim.id])
            if read:
                parts.append(f"{claim.id} {sum(cell_name(c) in held for c in read)}/{len(read)}")
        line = f"  {figure}: claims' cells in this tier's sweep: {', '.join(parts)}"
        assert line in result.stdout.splitlines()
    assert "D3: claims' cells in this tier's sweep: D-c3 32/108" in result.stdout


def test_plan_estimates_uml_runs_from_the_wall_time_ratio(monkeypatch):
    """On the UML route the estimate follows the measured wall-time ratio at each run's
    rate, adds the set-up of each node of the run's network, and shares the runs among
    one boot per core."""
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.cost import (
        UML_BOOT_WALL_S,
        UML_SETUP_WALL_S_PER_NODE,
        UML_WALL_TIME_RATIO,
        uml_ratio,
        uml_run_wall_s,
    )
    from tcprepro.campaign.plan import estimate_emulated_wall_s
    from tcprepro.emulation.topo import with_relays
    from tcprepro.network_plan import build_plan

    (low, r_low), *_, (high, r_high) = UML_WALL_TIME_RATIO
    assert uml_ratio(low) == pytest.approx(r_low)
    assert uml_ratio(high) == pytest.approx(r_high)
    assert uml_ratio(low / 10) == pytest.approx(r_low)  # held beyond the measured rates
    for (r0, v0), (r1, v1) in itertools.pairwise(UML_WALL_TIME_RATIO):
        middle = uml_ratio((r0 * r1) ** 0.5)  # log-log: the geometric mean of the two
        assert middle == pytest.approx((v0 * v1) ** 0.5)
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    runs = config.runs("X3", "quick", "mininet")  # 1 Gb/s, 2 s, sampled every 0.1 s
    one = estimate_emulated_wall_s(runs, "uml", cores=1)
    two = estimate_emulated_wall_s(runs, "uml", cores=2)
    assert one - UML_BOOT_WALL_S == pytest.approx(2 * (two - UML_BOOT_WALL_S), rel=0.1)
    per_run = (one - UML_BOOT_WALL_S) / len(runs)
    assert 2.0 / r_high < per_run < 200  # the probe's guest s over the ratio, the samplers
    # X4's flows are loss-limited (a few % of its 1 Gb/s): their traffic is costed at the
    # rate the Padhye model allows them, not the link's, and the probe at the link's
    lossy = config.runs("X4", "quick", "mininet")
    setup = [
        UML_SETUP_WALL_S_PER_NODE * len(with_relays(build_plan(run.scenario(), 0)).nodes)
        for run in lossy
    ]
    assert min(setup) >= 4 * UML_SETUP_WALL_S_PER_NODE  # 2 hosts, 2 routers at least
    costs = {tuple(dict(run.sweep).values()): uml_run_wall_s(run.scenario()) for run in lossy}
    for (delay, loss, *rest), cost in costs.items():
        assert cost > min(setup) + 2.0 / uml_ratio(1e9)  # the set-up and the probe at least
        if loss != "0.1":  # the more losses, the fewer packets and the cheaper the run
            assert cost >= costs[(delay, "0.1", *rest)]
    assert costs[("10ms", "0.0001", True, 1)] > 1.5 * costs[("10ms", "0.1", True, 1)]
    # each node of the network (relays included) costs its set-up: B5.10's twin (sfq, a
    # background source, 12 nodes) more than X14's dumbbell
    from tcprepro.campaign import cost as cost_model

    nodes = {}
    with_setup = {}
    for figure in ("X6", "X14"):
        scenario = config.runs(figure, "smoke", "mininet")[0].scenario()
        nodes[figure] = len(with_relays(build_plan(scenario, 0)).nodes)
        with_setup[figure] = (scenario, uml_run_wall_s(scenario))
    assert nodes["X6"] > nodes["X14"] >= 4
    monkeypatch.setattr(cost_model, "UML_SETUP_WALL_S_PER_NODE", 0.0)
    for figure, (scenario, cost) in with_setup.items():
        without = uml_run_wall_s(scenario)
        assert cost - without == pytest.approx(UML_SETUP_WALL_S_PER_NODE * nodes[figure])
    real_time = estimate_emulated_wall_s(runs, "vm", cores=2)
    assert real_time == pytest.approx(len(runs) * (2.0 + 30.0))
    result = tcprepro("plan", "--tier", "quick", "--workdir", "/nonexistent", "--route", "uml")
    assert result.returncode == 0, result.stderr
    assert "X3: plus up to 20 emulated runs on the UML route (virtual clock, one boot)" in (
        result.stdout
    )
    assert "X6: plus up to 8 emulated runs on the UML route (virtual clock, one boot)" in (
        result.stdout
    )


def test_validate_prints_the_resolved_scenario():
    result = tcprepro("validate", "workflow/scenarios/A2.yaml", "--print")
    assert result.returncode == 0, result.stderr
    assert '"buffer_pkts": 250' in result.stdout
    assert '"rate": "2000000.0bps"' in result.stdout


def test_plan_totals_the_emulated_half_beside_the_simulations():
    """With a virtual-clock route the plan gives the emulated figures' time alone (one boot
    a figure, figures side by side) and the build's with the simulations sharing the cores
    longest job first: more than either half, less than one after the other."""
    from tcprepro.campaign.plan import build_wall_s, emulate_job_s, makespan_s, uml_calibrations

    result = tcprepro("plan", "--tier", "smoke", "--route", "uml", "--workdir", "/nonexistent")
    assert result.returncode == 0, result.stderr
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    emulated = {f: config.runs(f, "smoke", "mininet") for f in config.simulated_figures}
    emulated = {f: runs for f, runs in emulated.items() if runs}
    calibration = uml_calibrations(config)  # each figure's, measured on its quick sample
    alone = makespan_s([emulate_job_s(r, "uml", calibration) for r in emulated.values()], 2)
    runs = sum(len(r) for r in emulated.values())
    found = re.search(
        r"emulated: up to (\d+) runs on the UML route, about (\d+) min alone on 2 core\(s\) "
        r"when none is cached \(one boot a figure, figures side by side\); with the "
        r"simulations, sharing the cores longest job first, about ([0-9.]+) h",
        result.stdout,
    )
    assert found, result.stdout
    assert int(found[1]) == runs > 0
    assert int(found[2]) == round(alone / 60)
    both = build_wall_s(config, "smoke", 2, "uml")
    assert float(found[3]) == round(both / 3600, 1)
    simulations = build_wall_s(config, "smoke", 2, None)
    assert max(alone, simulations) < both < alone + simulations
