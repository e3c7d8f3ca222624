import re
import subprocess
import sys

from conftest import ROOT


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
    result = tcprepro("plan", "--tier", "paper", "--workdir", "/nonexistent")
    assert result.returncode == 0, result.stderr
    assert "A1: 160 runs, 0 cached, 160 to simulate" in result.stdout
    assert "A3: 320 runs, 0 cached, 320 to simulate" in result.stdout
    assert "D1: 48 runs, 0 cached, 48 to simulate" in result.stdout
    assert "X1: 18 runs, 0 cached, 18 to simulate" in result.stdout
    assert "X1: plus up to 18 emulated runs in real time" in result.stdout
    assert "total: 3596 simulations to run, about" in result.stdout
    # the budget: core-hours from the measured per-study rates, wall time on --cores, storage
    assert "budget of tier 'paper'" in result.stdout
    assert re.search(r"study C: 744 runs, .* calibration x[0-9.]+\): [0-9.]+ core-h", result.stdout)
    assert re.search(r"total: 3596 runs, [0-9.]+ core-h of simulation", result.stdout)
    assert re.search(r"on 2 core\(s\): about [0-9.]+ h of wall time", result.stdout)
    assert re.search(r"trace bundle .* about [0-9.]+ GiB as \.tar", result.stdout)


def test_validate_prints_the_resolved_scenario():
    result = tcprepro("validate", "workflow/scenarios/A2.yaml", "--print")
    assert result.returncode == 0, result.stderr
    assert '"buffer_pkts": 250' in result.stdout
    assert '"rate": "2000000.0bps"' in result.stdout
