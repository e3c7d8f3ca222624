from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conftest import ACCESS, DUMBBELL
from tcprepro.errors import ConfigError
from tcprepro.scenario import SizeLaw
from tcprepro.scenario_io import apply_overrides, load_scenario, load_scenario_dict
from tcprepro.traffic import (
    calibrate,
    expand_packets,
    expand_transfers,
    size_law_cdf,
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
        ("traffic.web.size={law: zipf, alpha: 1.7}", "needs max"),
        ("traffic.web.size={law: zipf, alpha: 1.7, max: 1GB, min: 1kB, mean: 1MB}", "not both"),
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


# ---- study A's size law (figures A3/A4): Zipf's rank-size law of exponent 1.7 -----------

ROOT = Path(__file__).resolve().parents[1]
A3 = ROOT / "workflow/scenarios/A3.yaml"


def _bounded_pareto_cdf(index, low, high):
    base = stats.pareto(index, scale=low)
    return lambda x: np.clip(base.cdf(x) / base.cdf(high), 0.0, 1.0)


def test_zipf_law_is_the_rank_size_law_of_its_exponent():
    law = SizeLaw(law="zipf", alpha=1.7, min="40kB", max="1GB")
    assert law.tail_index == pytest.approx(1 / 1.7)
    sizes = size_law_sample(law, np.random.default_rng(3), 200_000)
    assert stats.kstest(sizes, _bounded_pareto_cdf(1 / 1.7, 40e3, 1e9)).pvalue > 0.01
    # Zipf: the r-th largest size ~ r^-1.7, on the ranks far from both bounds (the largest
    # 0.3 % feel the 1-GB bound: (40 kB / 1 GB)^(1/1.7) = 0.26 %)
    ranked = np.sort(sizes)[::-1]
    ranks = np.arange(5_000, 50_001)
    slope = np.polyfit(np.log(ranks), np.log(ranked[ranks - 1]), 1)[0]
    assert slope == pytest.approx(-1.7, abs=0.15)
    # the mean of the bounded law (index 1/1.7 on [40 kB, 1 GB]) is computed exactly
    assert size_law_mean(law) == pytest.approx(sizes.mean(), rel=0.1)
    # and a Pareto law of index 1.7 (the other reading of the paper's alpha) is rejected
    assert stats.kstest(sizes, _bounded_pareto_cdf(1.7, 40e3, 1e9)).pvalue < 1e-6


def test_a3_size_law_keeps_web_transfers_and_offers_half_the_downlink():
    """The paper's lambda = 0.15/s, Zipf alpha = 1.7 and 50 % load hold together (A3 notes)."""
    scenario = load_scenario(A3, [("duration", "4000000s"), ("warmup", "0s")])
    cal = calibrate(scenario, "web")
    assert cal.arrival_rate_per_s == 0.15
    assert cal.pareto_min_bytes == pytest.approx(41.5e3, rel=0.01)  # the notes' 41.5 kB
    transfers = expand_transfers(scenario, "web", 0)
    sizes = np.array([t.size_bytes for t in transfers], dtype=float)
    span = 4_000_000 - 20  # arrivals from 20 s on
    # web-sized transfers are present: 40 % below 100 kB, median 135 kB (the notes' numbers)
    assert (sizes < 100e3).mean() == pytest.approx(0.40, abs=0.01)
    assert np.median(sizes) == pytest.approx(135e3, rel=0.03)
    # the offered load measured over the long run is the target, within 5 %
    offered = sizes.sum() * 8 / span / cal.capacity_bps
    assert offered == pytest.approx(0.5, rel=0.05)
    # goodness of fit: KS against the stated law, and chi-square over its size histogram
    cdf = _bounded_pareto_cdf(1 / 1.7, cal.pareto_min_bytes, 1.2e9)
    assert stats.kstest(sizes, cdf).pvalue > 0.01
    edges = np.array([cal.pareto_min_bytes, 1e5, 3e5, 1e6, 3e6, 1e7, 1e8, 1.2e9 + 1])
    observed = np.histogram(sizes, edges)[0]
    expected = np.diff(cdf(edges)) * sizes.size
    assert stats.chisquare(observed, expected).pvalue > 0.01


def test_a3_load_of_one_run_is_that_of_a_heavy_tail():
    """One 1000-s run offers a load whose median is below the 50 % mean (the A3 notes)."""
    scenario = load_scenario(A3)
    cal = calibrate(scenario, "web")
    rng = np.random.default_rng(11)
    loads = []
    for _ in range(3000):
        n = rng.poisson(0.15 * 980)
        sizes = size_law_sample(scenario.traffic["web"].size, rng, n, cal.pareto_min_bytes)
        loads.append(sizes.sum() * 8 / 980 / cal.capacity_bps)
    assert np.mean(loads) == pytest.approx(0.5, rel=0.1)
    assert np.median(loads) == pytest.approx(0.38, abs=0.04)
    low, high = np.percentile(loads, [10, 90])
    assert low == pytest.approx(0.13, abs=0.03)
    assert high == pytest.approx(1.05, abs=0.15)


@pytest.mark.parametrize(
    ("law", "pareto_min"),
    [
        (SizeLaw(law="exponential", mean="200kB"), None),
        (SizeLaw(law="pareto", alpha=2.5, mean="50kB"), None),
        (SizeLaw(law="zipf", alpha=1.7, max="1GB"), 40e3),
    ],
)
def test_size_law_cdf_is_the_law_the_sampler_draws(law, pareto_min):
    sizes = size_law_sample(law, np.random.default_rng(5), 50_000, pareto_min)
    assert stats.kstest(sizes, lambda x: size_law_cdf(law, x, pareto_min)).pvalue > 0.01
    points = np.array([1e3, 3e4, 1e5, 1e6, 1e8])
    empirical = (sizes[:, None] <= points[None, :]).mean(axis=0)
    assert size_law_cdf(law, points, pareto_min) == pytest.approx(empirical, abs=0.01)


def test_size_law_cdf_closed_forms():
    assert size_law_cdf(SizeLaw(law="fixed", size="2kB"), [1999.0, 2000.0]).tolist() == [0, 1]
    exponential = SizeLaw(law="exponential", mean="200kB")
    assert size_law_cdf(exponential, 200e3) == pytest.approx(1 - np.exp(-1))
    # bounded Pareto of index 2 on [10 kB, 40 kB]: (1 - (10/s)^2) / (1 - (10/40)^2)
    bounded = SizeLaw(law="pareto", alpha=2.0, min="10kB", max="40kB")
    assert size_law_cdf(bounded, [5e3, 20e3, 50e3]) == pytest.approx([0, 0.75 / 0.9375, 1])
    # the zipf law's index is 1/alpha, its scale the solved one when given
    zipf = SizeLaw(law="zipf", alpha=2.0, max="1MB")
    assert size_law_cdf(zipf, 4e4, pareto_min=1e4) == pytest.approx(0.5 / (1 - 0.1))
