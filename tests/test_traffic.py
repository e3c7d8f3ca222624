import numpy as np
import pytest
from scipy import stats

from conftest import ACCESS, DUMBBELL
from tcprepro.errors import ConfigError
from tcprepro.scenario import SizeLaw
from tcprepro.scenario_io import apply_overrides, load_scenario_dict
from tcprepro.traffic import (
    calibrate,
    expand_packets,
    expand_transfers,
    size_law_mean,
    size_law_sample,
)

WEB = (
    "traffic={web: {kind: poisson_transfers, direction: down, variant: NewReno, "
    "arrival_rate: 0.15/s, load: 0.5, size: {law: pareto, alpha: 1.7}}}"
)


def scenario(*overrides, base=ACCESS):
    return load_scenario_dict(apply_overrides(base, list(overrides)))


def test_size_law_means():
    assert size_law_mean(SizeLaw(law="fixed", size="2kB")) == 2000
    assert size_law_mean(SizeLaw(law="exponential", mean="200kB")) == 200_000
    pareto = SizeLaw(law="pareto", alpha=2.0, min="10kB")
    assert size_law_mean(pareto) == pytest.approx(20_000)
    bounded = SizeLaw(law="pareto", alpha=2.0, min="10kB", max="40kB")
    # bounded Pareto mean: alpha L^a / (1 - (L/H)^a) (L^(1-a) - H^(1-a)) / (a - 1) = 16 kB
    assert size_law_mean(bounded) == pytest.approx(16_000)
    assert size_law_mean(SizeLaw(law="pareto", alpha=1.7)) is None


@pytest.mark.parametrize(
    "law",
    [
        SizeLaw(law="exponential", mean="200kB"),
        SizeLaw(law="pareto", alpha=1.7, min="10kB", max="10MB"),
        SizeLaw(law="pareto", alpha=2.5, mean="50kB"),
    ],
)
def test_sizes_follow_the_law(law):
    rng = np.random.default_rng(7)
    sizes = size_law_sample(law, rng, 50_000)
    if law.law == "exponential":
        result = stats.kstest(sizes, stats.expon(scale=200_000).cdf)
    else:
        low = law.min if law.min is not None else law.mean * (law.alpha - 1) / law.alpha
        high = law.max if law.max is not None else np.inf
        base = stats.pareto(law.alpha, scale=low)
        norm = base.cdf(high) if np.isfinite(high) else 1.0
        result = stats.kstest(sizes, lambda x: np.clip(base.cdf(x) / norm, 0, 1))
    assert result.pvalue > 0.01, result
    # and a wrong law is rejected by the same test
    wrong = stats.kstest(sizes, stats.expon(scale=np.mean(sizes) * 2).cdf)
    assert wrong.pvalue < 1e-6


def test_calibration_solves_the_missing_parameter():
    s = scenario(WEB)
    cal = calibrate(s, "web")
    capacity = 10e6 * 1448 / (1448 + 52)  # IPv4 + TCP + timestamps
    assert cal.capacity_bps == pytest.approx(capacity)
    assert cal.mean_size_bytes == pytest.approx(0.5 * capacity / 8 / 0.15)
    assert cal.pareto_min_bytes == pytest.approx(cal.mean_size_bytes * 0.7 / 1.7)
    by_rate = scenario(
        WEB.replace("arrival_rate: 0.15/s, ", "").replace(
            "{law: pareto, alpha: 1.7}", "{law: exponential, mean: 400kB}"
        )
    )
    assert calibrate(by_rate, "web").arrival_rate_per_s == pytest.approx(0.5 * capacity / 8 / 4e5)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("traffic.web.load=null", "give two of arrival_rate, load"),
        ("traffic.web.size={law: exponential, mean: 1MB}", "leave one of the three out"),
        ("traffic.web.size={law: pareto, alpha: 1.7, max: 100kB}", "cannot be reached below max"),
        ("traffic.web.size={law: pareto, alpha: 0.9}", "greater than 1"),
        ("traffic.web.size={law: exponential, alpha: 2}", "takes ['mean']"),
        ("traffic.web.direction=sideways", "'down' or 'up'"),
        ("traffic.web.start=2000s", "no arrival can happen"),
    ],
)
def test_generator_errors_name_the_field(change, message):
    with pytest.raises(ConfigError, match=r"traffic\.web") as info:
        scenario(WEB, change)
    assert message in str(info.value)


def test_offered_load_over_a_long_run_is_within_5_percent():
    s = scenario(WEB, "duration=100000s", "warmup=0s")
    transfers = expand_transfers(s, "web", 0)
    cal = calibrate(s, "web")
    offered = sum(t.size_bytes for t in transfers) * 8 / 100_000 / cal.capacity_bps
    assert offered == pytest.approx(0.5, rel=0.05)
    rate = len(transfers) / 100_000
    assert rate == pytest.approx(0.15, rel=0.03)
    gaps = np.diff([t.start_s for t in transfers])
    assert stats.kstest(gaps, stats.expon(scale=1 / 0.15).cdf).pvalue > 0.01


def test_expansion_is_deterministic_and_independent_of_other_generators():
    s = scenario(WEB, "repetitions=2")
    first = expand_transfers(s, "web", 0)
    assert first == expand_transfers(s, "web", 0)
    assert first != expand_transfers(s, "web", 1)
    other = (
        "traffic.bg={kind: poisson_transfers, direction: up, variant: Cubic, arrival_rate: 1/s, "
        "size: {law: fixed, size: 10kB}}"
    )
    assert expand_transfers(scenario(WEB, other), "web", 0) == first


def test_generators_spread_over_a_sender_group():
    s = scenario(
        "topology.senders=[{name: bg, count: 3}, {name: s}]",
        "flows={main: {src: s, variant: NewReno}}",
        "traffic={bg: {kind: poisson_transfers, src: bg, variant: Reno, arrival_rate: 5/s, "
        "size: {law: fixed, size: 1kB}}}",
        base=DUMBBELL,
    )
    transfers = expand_transfers(s, "bg", 0)
    assert [t.src for t in transfers[:4]] == ["bg0", "bg1", "bg2", "bg0"]
    packets = scenario(
        "traffic={p: {kind: poisson_packets, src: s0, load: 0.3, flows: 3}}", base=DUMBBELL
    )
    sources = expand_packets(packets, "p", 0)
    assert len(sources) == 3
    assert sum(src.rate_bps for src in sources) == pytest.approx(0.3 * 10e6)
