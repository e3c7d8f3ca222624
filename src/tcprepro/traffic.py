"""Traffic generators: size laws, Poisson arrivals, load calibration.

This module owns the ``traffic:`` entries of a scenario: finite TCP transfers
arriving as a Poisson process with a size law (``poisson_transfers``), and
Poisson packet streams (``poisson_packets``). It calibrates each generator
(arrival rate x mean size = load x capacity, whichever of the three is left
open), and expands it, for one repetition, into the list of transfers or
packet sources a backend instantiates. Draws come from a random stream of
their own per generator (seeded by the scenario seed, the repetition and the
generator's name), so adding a generator never changes the others' draws.

Size laws
---------
``fixed``
    every transfer has ``size`` bytes.
``exponential``
    mean ``mean``.
``pareto``
    P(S > s) = (min/s)^alpha for s >= min; with ``max``, the bounded Pareto
    law on [min, max] (the Pareto law conditioned on S <= max). The mean of an
    unbounded law is alpha·min/(alpha − 1); a bounded law's mean is computed
    exactly, and a law given by its mean has its ``min`` solved for.
``zipf``
    Zipf's rank-size law of exponent alpha: ranked in decreasing order, the r-th
    largest size is proportional to r^-alpha, which is the (bounded) Pareto law of
    index 1/alpha (P(S > s) = (min/s)^(1/alpha), conditioned on S <= max). With
    alpha >= 1 the index is at most 1 and only a bounded law has a mean.

Sizes are rounded to whole bytes (at least 1).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from tcprepro.scenario import (
    AccessTopology,
    PacketGenerator,
    Scenario,
    SizeLaw,
    TransferGenerator,
    goodput_capacity_bps,
)

__all__ = [
    "Calibration",
    "PlannedPacketSource",
    "PlannedTransfer",
    "bottleneck_rate_bps",
    "calibrate",
    "expand_packets",
    "expand_transfers",
    "generator_rng",
    "generator_seed",
    "size_law_cdf",
    "size_law_mean",
    "size_law_sample",
]


@dataclass(frozen=True)
class Calibration:
    """A generator's resolved parameters."""

    arrival_rate_per_s: float  # transfers (or packets) per second
    mean_size_bytes: float
    load: float  # offered load, fraction of the capacity defined in the module docstring
    capacity_bps: float
    pareto_min_bytes: float | None = None  # solved scale of a Pareto or Zipf law


@dataclass(frozen=True)
class PlannedTransfer:
    """One finite TCP transfer of one repetition."""

    generator: str
    index: int
    src: str
    dst: str
    start_s: float
    size_bytes: int


@dataclass(frozen=True)
class PlannedPacketSource:
    """One Poisson UDP packet stream of one repetition."""

    generator: str
    index: int
    src: str
    dst: str
    start_s: float
    stop_s: float
    rate_bps: float  # on-the-wire rate of IP packets
    packet_size_bytes: int


def _bounded_pareto_mean(alpha: float, low: float, high: float | None) -> float:
    """Mean of the Pareto law of index ``alpha`` on [low, high] (high None: unbounded)."""
    if high is None:
        return alpha * low / (alpha - 1.0)
    ratio = (low / high) ** alpha
    if math.isclose(alpha, 1.0):
        return low * math.log(high / low) / (1.0 - ratio)
    return (
        (alpha * low**alpha / (1.0 - ratio))
        * (low ** (1 - alpha) - high ** (1 - alpha))
        / (alpha - 1.0)
    )


def _pareto_min_for_mean(alpha: float, mean: float, high: float | None) -> float:
    if high is None:
        return mean * (alpha - 1.0) / alpha
    if mean >= high:
        raise ValueError(f"a mean of {mean:.0f} B cannot be reached below max = {high:.0f} B")
    from scipy.optimize import brentq  # deferred: scipy.optimize costs ~1 s to import

    return brentq(lambda low: _bounded_pareto_mean(alpha, low, high) - mean, 1e-9 * mean, mean)


def size_law_mean(law: SizeLaw, pareto_min: float | None = None) -> float | None:
    """Mean size (bytes) of a law, or None when its scale is still open."""
    if law.law == "fixed":
        return float(law.size)
    if law.law == "exponential":
        return float(law.mean)
    if law.mean is not None:
        return float(law.mean)
    low = pareto_min if pareto_min is not None else law.min
    if low is None:
        return None
    high = None if law.max is None else float(law.max)
    return _bounded_pareto_mean(float(law.tail_index), float(low), high)


def size_law_sample(
    law: SizeLaw, rng: np.random.Generator, n: int, pareto_min: float | None = None
) -> np.ndarray:
    """Draw ``n`` sizes (whole bytes, >= 1) from a calibrated law."""
    if law.law == "fixed":
        values = np.full(n, float(law.size))
    elif law.law == "exponential":
        values = rng.exponential(float(law.mean), n)
    else:
        alpha = float(law.tail_index)
        if pareto_min is not None:
            low = pareto_min
        elif law.min is not None:
            low = float(law.min)
        else:
            high = None if law.max is None else float(law.max)
            low = _pareto_min_for_mean(alpha, float(law.mean), high)
        u = rng.random(n)
        if law.max is None:
            values = low / (1.0 - u) ** (1.0 / alpha)
        else:
            ratio = (low / float(law.max)) ** alpha
            values = low / (1.0 - u * (1.0 - ratio)) ** (1.0 / alpha)
    return np.maximum(1, np.rint(values)).astype(np.int64)


def size_law_cdf(
    law: SizeLaw, sizes: np.ndarray | float, pareto_min: float | None = None
) -> np.ndarray:
    """P(S <= s) of a calibrated law before rounding, at each of ``sizes`` (bytes).

    The law :func:`size_law_sample` draws from (its scale resolved the same way);
    sizes are then rounded to whole bytes, so a drawn size is at most ``n`` bytes
    with the probability of ``size_law_cdf(law, n + 0.5)`` (sizes of 1 byte aside).
    """
    s = np.asarray(sizes, dtype=float)
    if law.law == "fixed":
        return (s >= float(law.size)).astype(float)
    if law.law == "exponential":
        return -np.expm1(-np.maximum(s, 0.0) / float(law.mean))
    alpha = float(law.tail_index)
    high = None if law.max is None else float(law.max)
    if pareto_min is not None:
        low = pareto_min
    elif law.min is not None:
        low = float(law.min)
    else:
        low = _pareto_min_for_mean(alpha, float(law.mean), high)
    clipped = np.clip(s, low, np.inf if high is None else high)
    tail = (low / clipped) ** alpha  # P(S > s) of the unbounded law
    if high is None:
        return 1.0 - tail
    ratio = (low / high) ** alpha
    return (1.0 - tail) / (1.0 - ratio)


def bottleneck_rate_bps(scenario: Scenario, name: str) -> float:
    """Rate of the bottleneck direction a flow or generator's data crosses."""
    topo = scenario.topology
    src, _ = scenario.endpoints_of(name)
    if isinstance(topo, AccessTopology):
        return topo.downlink.rate if src == "server" else topo.uplink.rate
    in_senders = src in topo.sender_names or src in topo.sender_groups
    if in_senders:
        return topo.bottleneck.rate
    return topo.reverse.rate if topo.reverse is not None else topo.bottleneck.rate


def calibrate(scenario: Scenario, name: str) -> Calibration:
    """Resolve a generator's arrival rate, mean size and load from what the scenario gives.

    Raises
    ------
    ValueError
        When the parameters are under- or over-determined, or impossible.
    """
    gen = scenario.traffic[name]
    rate_bps = bottleneck_rate_bps(scenario, name)
    if isinstance(gen, PacketGenerator):
        pps = gen.load * rate_bps / (8.0 * gen.packet_size)
        return Calibration(pps, float(gen.packet_size), gen.load, rate_bps)
    assert isinstance(gen, TransferGenerator)
    capacity = goodput_capacity_bps(rate_bps, scenario.tcp)
    law = gen.size
    mean = size_law_mean(law)
    given = [x is not None for x in (gen.arrival_rate, gen.load, mean)]
    if sum(given) < 2:
        raise ValueError("give two of arrival_rate, load and a size law with a known mean")
    if sum(given) == 3:
        implied = gen.arrival_rate * mean * 8.0 / capacity
        if not math.isclose(implied, gen.load, rel_tol=1e-3):
            raise ValueError(
                f"arrival_rate x mean size gives a load of {implied:.3f}, not {gen.load}; "
                "leave one of the three out"
            )
        return Calibration(gen.arrival_rate, mean, gen.load, capacity)
    if mean is None:  # calibrate the Pareto scale to the load
        mean = gen.load * capacity / (8.0 * gen.arrival_rate)
        high = None if law.max is None else float(law.max)
        low = _pareto_min_for_mean(float(law.tail_index), mean, high)
        return Calibration(gen.arrival_rate, mean, gen.load, capacity, pareto_min_bytes=low)
    if gen.arrival_rate is None:
        return Calibration(gen.load * capacity / (8.0 * mean), mean, gen.load, capacity)
    return Calibration(gen.arrival_rate, mean, gen.arrival_rate * mean * 8.0 / capacity, capacity)


def generator_seed(scenario: Scenario, rep: int, name: str) -> list[int]:
    """The seed of one generator's random stream in one repetition (numpy entropy)."""
    tag = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
    return [scenario.seed, rep, tag]


def generator_rng(scenario: Scenario, rep: int, name: str) -> np.random.Generator:
    """The random stream of one generator in one repetition."""
    return np.random.default_rng(generator_seed(scenario, rep, name))


def _sources(scenario: Scenario, name: str) -> list[str]:
    src, _ = scenario.endpoints_of(name)
    groups = getattr(scenario.topology, "sender_groups", {})
    return list(groups.get(src, [src]))


def expand_transfers(scenario: Scenario, name: str, rep: int) -> list[PlannedTransfer]:
    """The transfers a ``poisson_transfers`` generator makes in repetition ``rep``.

    Arrivals form a Poisson process on [start, stop) (stop defaults to the end
    of the run); a sender group spreads them round-robin over its hosts.
    """
    gen = scenario.traffic[name]
    assert isinstance(gen, TransferGenerator)
    cal = calibrate(scenario, name)
    rng = generator_rng(scenario, rep, name)
    stop = min(gen.stop or scenario.duration, scenario.duration)
    times = []
    now = gen.start
    while True:
        now += rng.exponential(1.0 / cal.arrival_rate_per_s)
        if now >= stop:
            break
        times.append(now)
    sizes = size_law_sample(gen.size, rng, len(times), cal.pareto_min_bytes)
    sources = _sources(scenario, name)
    _, dst = scenario.endpoints_of(name)
    return [
        PlannedTransfer(name, i, sources[i % len(sources)], dst, float(t), int(size))
        for i, (t, size) in enumerate(zip(times, sizes, strict=True))
    ]


def expand_packets(scenario: Scenario, name: str, rep: int) -> list[PlannedPacketSource]:
    """The packet sources of a ``poisson_packets`` generator (each gets load / flows)."""
    gen = scenario.traffic[name]
    assert isinstance(gen, PacketGenerator)
    rate_bps = bottleneck_rate_bps(scenario, name)
    stop = min(gen.stop or scenario.duration, scenario.duration)
    sources = _sources(scenario, name)
    _, dst = scenario.endpoints_of(name)
    return [
        PlannedPacketSource(
            name,
            i,
            sources[i % len(sources)],
            dst,
            gen.start,
            stop,
            gen.load * rate_bps / gen.flows,
            gen.packet_size,
        )
        for i in range(gen.flows)
    ]
