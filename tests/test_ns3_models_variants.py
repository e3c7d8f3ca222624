"""Every variant the studies use runs through the scenario config; bad parameters are refused."""

import subprocess
import sys

import numpy as np
import pytest
import yaml

from conftest import DUMBBELL, ROOT
from model_checks import simulate
from tcprepro import metrics
from tcprepro.errors import ConfigError
from tcprepro.scenario_io import apply_overrides, load_scenario_dict
from tcprepro.store import validate_run_dataset
from tcprepro.variants import QDISCS, VARIANTS, get_variant

#: the variants of studies A, B and C (catalogue) that ns-3 ships
BUILTIN = [
    "NewReno",
    "HighSpeed",
    "Scalable",
    "WestwoodPlus",
    "Bic",
    "Cubic",
    "Htcp",
    "Vegas",
    "Illinois",
    "Veno",
    "Yeah",
    "HyblaNs3",
]
#: tcprepro's own models
OURS = ["Compound", "Fast", "AIMD", "MIMD", "YeahPaper", "Hybla"]


def test_registry_marks_the_models_available():
    for name in BUILTIN:
        assert get_variant(name).model == "ns-3 built-in"
    for name in OURS:
        variant = get_variant(name)
        assert variant.available, name
        assert variant.model == "tcprepro", name
    assert QDISCS["pfq_lqd"].available
    assert not get_variant("Africa").available  # see docs/variants.md


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILTIN + OURS)
def test_variant_runs_through_the_scenario_config(name):
    ds = simulate(DUMBBELL, ["duration=12s", "warmup=4s", f"flows.f0.variant={name}"])
    assert validate_run_dataset(ds) == []
    assert ds["flow_cc_type"].sel(flow="f0").item() == VARIANTS[name].ns3_type
    assert float(metrics.utilisation(ds).sel(flow="f0")) > 0.5
    cwnd = ds["cwnd_bytes"].sel(flow="f0").values[10:]
    assert np.all(np.isfinite(cwnd))
    assert np.all(cwnd >= 1448)


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        ("{name: AIMD, params: {Alpha: -1}}", r"TcpGeneralizedAimd::Alpha: invalid value '-1'"),
        ("{name: AIMD, params: {Beta: 1}}", r"TcpGeneralizedAimd::Beta: invalid value '1'.*> 1"),
        ("{name: AIMD, params: {Beta: 0.5}}", r"TcpGeneralizedAimd::Beta: invalid value"),
        ("{name: MIMD, params: {Alpha: 0}}", r"TcpGeneralizedMimd::Alpha: invalid value '0'"),
        ("{name: MIMD, params: {Beta: -2}}", r"TcpGeneralizedMimd::Beta: invalid value '-2'"),
        ("{name: Compound, params: {Beta: 1}}", r"TcpCompound::Beta: invalid value '1'"),
        ("{name: Compound, params: {Gamma: 0}}", r"TcpCompound::Gamma: invalid value '0'"),
        ("{name: Fast, params: {Gamma: 1.5}}", r"TcpFast::Gamma: invalid value '1.5'"),
        ("{name: Fast, params: {Alpha: -20}}", r"TcpFast::Alpha: invalid value '-20'"),
        ("{name: YeahPaper, params: {Phy: 0}}", r"TcpYeahPaper::Phy: invalid value '0'"),
        ("{name: AIMD, params: {Gamma: 1}}", r"TcpGeneralizedAimd has no attribute 'Gamma'"),
        # ns-3 itself aborts the process on these (a Time and an enum it cannot read)
        (
            "{name: Hybla, params: {RRTT: banana}}",
            r"TcpHyblaMinRtt::RRTT: invalid value 'banana'.*time",
        ),
        (
            "{name: WestwoodPlus, params: {FilterType: Tustn}}",
            r"TcpWestwoodPlus::FilterType: invalid value 'Tustn' \(one of None, Tustin\)",
        ),
    ],
)
def test_bad_model_parameters_are_refused_naming_the_field(variant, message):
    from tcprepro.ns3.backend import check_scenario

    scenario = load_scenario_dict(apply_overrides(DUMBBELL, [f"flows.f0.variant={variant}"]))
    with pytest.raises(ConfigError, match=r"flows\.f0\.variant\.params: .*" + message):
        check_scenario(scenario)


def test_bad_queue_parameters_are_refused():
    from tcprepro.ns3.backend import check_scenario

    data = apply_overrides(
        DUMBBELL,
        ["topology.bottleneck.qdisc=pfq_lqd", "topology.bottleneck.qdisc_params={DropFront: 3}"],
    )
    with pytest.raises(ConfigError, match=r"qdisc_params: .*PfqLqdQueueDisc::DropFront"):
        check_scenario(load_scenario_dict(data))


def test_cli_refuses_bad_parameters_with_status_2(tmp_path):
    scenario = tmp_path / "s.yaml"
    data = apply_overrides(DUMBBELL, ["flows.f0.variant={name: AIMD, params: {Beta: 1}}"])
    scenario.write_text(yaml.safe_dump(data))
    result = subprocess.run(
        [sys.executable, "-m", "tcprepro.cli", "validate", str(scenario)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "flows.f0.variant.params" in result.stderr
    assert "Beta" in result.stderr


def test_every_registered_name_is_documented():
    table = (ROOT / "docs" / "variants.md").read_text()
    for name in [*VARIANTS, *QDISCS]:
        assert f"| `{name}`" in table, name


def test_ns3_hybla_keeps_rho_at_one_whatever_its_reference_rtt():
    """ns-3 3.44's TcpHybla (variant HyblaNs3) never recomputes rho in a simulation
    (docs/variants.md, "Hybla: ns-3 model and the published algorithm"): its reference RTT
    changes nothing, where RRTT 5 ms would make rho = 10 at this path's 50-ms RTT. This is
    why the variant Hybla is tcprepro's model (tests/test_ns3_models_hybla.py); the test fails
    once ns-3's model adapts rho, and then HyblaNs3 may go."""
    runs = [
        simulate(DUMBBELL, ["duration=10s", "warmup=0s", f"flows.f0.variant={variant}"])
        for variant in (
            "{name: HyblaNs3, params: {RRTT: 5ms}}",
            "{name: HyblaNs3, params: {RRTT: 50ms}}",
        )
    ]
    cwnd = [ds["cwnd_bytes"].sel(flow="f0").values for ds in runs]
    assert np.array_equal(cwnd[0], cwnd[1], equal_nan=True)
    # parameters do reach the socket's congestion control: AIMD's increase changes its run
    aimd = [
        simulate(DUMBBELL, ["duration=10s", "warmup=0s", f"flows.f0.variant={variant}"])
        for variant in ("{name: AIMD, params: {Alpha: 1}}", "{name: AIMD, params: {Alpha: 8}}")
    ]
    assert not np.array_equal(
        *(ds["cwnd_bytes"].sel(flow="f0").values for ds in aimd), equal_nan=True
    )
