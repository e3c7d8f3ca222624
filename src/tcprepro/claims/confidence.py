"""How sure a verdict is: the check repeated on bootstrap resamples of the repetitions.

The verdict is *robust* when at least 97.5 % of the resamples give it, *fragile*
otherwise; the check's statistic gets its 95 % bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import product
from math import prod

import numpy as np
import xarray as xr

from tcprepro.claims.glossary import span
from tcprepro.claims.registry import Claim
from tcprepro.claims.verdicts import ClaimResult

#: resamples of the repetitions per claim (all of them when there are fewer)
BOOTSTRAP_RESAMPLES = 100


#: a verdict is fragile when more than this share of the resamples disagree with it
FRAGILE_SHARE = 0.025


def _resamples(
    datasets: Mapping[str, xr.Dataset], figures: Iterable[str], limit: int
) -> Iterator[dict[str, list[int]]]:
    """Bootstrap resamples of the repetitions of each figure that has two or more.

    Repetition r of every figure runs with seed r, so figures with as many repetitions
    share their draws (common random numbers): A3's and A4's repetition r carry the same
    planned transfers, which a check comparing them transfer by transfer pairs, and a
    resample keeps those pairs. Every ordered resample when there are at most ``limit``
    of them (2 repetitions: 4, 3 repetitions: 27), else ``limit`` drawn with a fixed seed.
    """
    reps = {f: datasets[f].sizes.get("rep", 1) for f in figures if f in datasets}
    reps = {f: n for f, n in reps.items() if n >= 2}
    if not reps or limit <= 0:
        return
    counts = sorted(set(reps.values()))
    if prod(n**n for n in counts) <= limit:
        choices = [list(product(range(n), repeat=n)) for n in counts]
        for combo in product(*choices):
            drawn = dict(zip(counts, combo, strict=True))
            yield {f: list(drawn[n]) for f, n in reps.items()}
        return
    rng = np.random.default_rng(0)
    for _ in range(limit):
        drawn = {n: [int(i) for i in rng.integers(0, n, n)] for n in counts}
        yield {f: list(drawn[n]) for f, n in reps.items()}


def _confidence(
    claim: Claim,
    func: Callable[..., ClaimResult],
    datasets: Mapping[str, xr.Dataset],
    point: ClaimResult,
    limit: int,
) -> str:
    """Robust or fragile over bootstrap resamples of the repetitions (see the module doc)."""
    if limit <= 0:
        return ""
    verdicts, values = [], []
    for resample in _resamples(datasets, claim.requires, limit):
        data = dict(datasets)
        for figure, index in resample.items():
            data[figure] = datasets[figure].isel(rep=index).assign_coords(rep=np.arange(len(index)))
        result = func(data, **claim.args)
        verdicts.append(result.verdict)
        if result.statistic is not None and np.isfinite(result.statistic[1]):
            values.append(result.statistic[1])
    if not verdicts:
        return "one repetition: no interval"
    agree = sum(v == point.verdict for v in verdicts)
    label = "fragile" if 1 - agree / len(verdicts) > FRAGILE_SHARE else "robust"
    text = f"{label}: {agree} of {len(verdicts)} resamples of the repetitions agree"
    if values and point.statistic is not None:
        low, high = np.percentile(values, [2.5, 97.5])
        name, value = point.statistic
        interval = span(low, high, "{:.3g}", " to ")
        text += f"; {name} {value:.3g} (95 % interval {interval})"
    return text
