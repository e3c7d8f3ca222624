r"""The flow-level bandwidth-sharing model of study B, evaluated in exact rational arithmetic.

This module owns the model of Augé's thesis, chapter 5, §5.4.3 (after chapter 3,
§3.3.2): bottlenecked flows arrive as a Poisson process at load :math:`\rho`
(a fraction of the capacity :math:`C'` the background leaves them), and while
:math:`i` of them are in progress they are served together at rate
:math:`\phi(i) C'` (fair sharing, which PFQ/LQD enforces). :math:`\phi(i)` is
measured by simulation (:func:`tcprepro.analysis.study_b.phi`). The number of flows in
progress is then the birth-death process with stationary law
:math:`\pi_i \propto \rho^i/\Phi(i)`, :math:`\Phi(i) = \prod_{j \le i} \phi(j)`,
:math:`\Phi(0) = 1`, and the expected instantaneous throughput of a flow,
normalised by :math:`C'`, is equation (5.1):

.. math::

    \gamma(\rho) = \frac{\rho}{E[X]}
    = \frac{\sum_{i \ge 0} \rho^i / \Phi(i)}{\sum_{i \ge 1} i \rho^{i-1} / \Phi(i)},

so that a flow of size :math:`s` takes :math:`R(s) = s / (\gamma C')` on
average. Processor sharing (:math:`\phi \equiv 1`) gives :math:`\gamma = 1 - \rho`;
near :math:`\rho = 0`, :math:`\gamma = \phi(1) + (1 - 2\phi(1)/\phi(2))\rho + O(\rho^2)`.

Every value is a :class:`fractions.Fraction`: floats (measured :math:`\phi`) are
converted exactly, the sums are evaluated without rounding, and the infinite
tail beyond the last measured :math:`i` is summed in closed form.

Beyond the measured range
-------------------------
``tail="constant"`` (default)
    :math:`\phi(i) = \phi(m)` for :math:`i > m` (the last measured value); with
    :math:`x = \rho/\phi(m) < 1` the tails are geometric:
    :math:`\sum_{i>m} \rho^i/\Phi(i) = \frac{\rho^m}{\Phi(m)} \frac{x}{1-x}` and
    :math:`\sum_{i>m} i\rho^{i-1}/\Phi(i) = \frac{\rho^{m-1}}{\Phi(m)}
    \left(\frac{m x}{1-x} + \frac{x}{(1-x)^2}\right)`. When :math:`x \ge 1` the
    number of flows grows without bound and :math:`\gamma = 0`.
``tail="truncate"``
    at most :math:`m` flows (a loss system: arrivals beyond :math:`m` are
    refused); the sums stop at :math:`m`.

Measured points need not be consecutive: :func:`phi_sequence` fills the gaps by
linear interpolation in :math:`i` (exact, rational).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from numbers import Rational, Real
from typing import Literal

__all__ = [
    "Tail",
    "as_fraction",
    "gamma",
    "gamma_curve",
    "mean_flows",
    "phi_sequence",
    "processor_sharing_gamma",
    "response_time",
]

Tail = Literal["constant", "truncate"]


def as_fraction(value: Real | str) -> Fraction:
    """The exact rational value of a number (a float is converted without rounding)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (Rational, str)):
        return Fraction(value)
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"{value!r} is not a finite number")
    return Fraction(number)


def phi_sequence(measured: Mapping[int, Real]) -> list[Fraction]:
    """φ(1), φ(2), …, φ(m) from values measured at some i ≥ 1 (m = the largest).

    Missing i between two measured points are filled by linear interpolation in
    i; values below the smallest measured i take its value.

    Raises
    ------
    ValueError
        If no point is given, an index is not a positive integer, or a value is
        not positive (a throughput of zero would make Φ vanish).
    """
    if not measured:
        raise ValueError("phi needs at least one measured point")
    points: dict[int, Fraction] = {}
    for index, value in measured.items():
        if int(index) != index or index < 1:
            raise ValueError(f"phi is indexed by the number of flows i >= 1, not {index!r}")
        points[int(index)] = as_fraction(value)
        if points[int(index)] <= 0:
            raise ValueError(f"phi({index}) = {value!r}: every value must be > 0")
    known = sorted(points)
    out = []
    for i in range(1, known[-1] + 1):
        if i in points:
            out.append(points[i])
            continue
        lower = max((k for k in known if k < i), default=None)
        upper = min(k for k in known if k > i)
        if lower is None:
            out.append(points[upper])
        else:
            weight = Fraction(i - lower, upper - lower)
            out.append(points[lower] + weight * (points[upper] - points[lower]))
    return out


def _sums(rho: Fraction, phi: Sequence[Fraction], tail: Tail) -> tuple[Fraction, Fraction] | None:
    """(Σ ρ^i/Φ(i), Σ iρ^{i-1}/Φ(i)), or None when the constant tail diverges."""
    numerator = Fraction(1)  # i = 0
    denominator = Fraction(0)
    big_phi = Fraction(1)
    rho_power = Fraction(1)  # rho^(i-1)
    for i, value in enumerate(phi, start=1):
        big_phi *= value
        denominator += i * rho_power / big_phi
        rho_power *= rho
        numerator += rho_power / big_phi
    if tail == "truncate":
        return numerator, denominator
    m = len(phi)
    x = rho / phi[-1]
    if x >= 1:
        return None
    rho_m_minus_1 = rho ** (m - 1)
    numerator += rho_m_minus_1 * rho / big_phi * x / (1 - x)
    denominator += rho_m_minus_1 / big_phi * (m * x / (1 - x) + x / (1 - x) ** 2)
    return numerator, denominator


def _checked(rho: Real, phi: Sequence[Real], tail: Tail) -> tuple[Fraction, list[Fraction]]:
    if tail not in ("constant", "truncate"):
        raise ValueError(f"tail must be 'constant' or 'truncate', not {tail!r}")
    exact_rho = as_fraction(rho)
    if exact_rho < 0:
        raise ValueError(f"rho = {rho!r} must be >= 0")
    values = [as_fraction(v) for v in phi]
    if not values:
        raise ValueError("phi needs at least phi(1)")
    if any(v <= 0 for v in values):
        raise ValueError("every phi(i) must be > 0")
    return exact_rho, values


def gamma(rho: Real, phi: Sequence[Real], tail: Tail = "constant") -> Fraction:
    """γ(ρ) of equation (5.1), exactly.

    Parameters
    ----------
    rho
        Load of the bottlenecked flows, as a fraction of the capacity the
        background leaves (≥ 0).
    phi
        φ(1), …, φ(m) (see :func:`phi_sequence` for scattered measurements).
    tail
        What φ is beyond m (module docstring).

    Returns
    -------
    Fraction
        The expected throughput of a flow over that capacity; 0 when the
        system is unstable (constant tail with ρ ≥ φ(m)).
    """
    exact_rho, values = _checked(rho, phi, tail)
    sums = _sums(exact_rho, values, tail)
    if sums is None:
        return Fraction(0)
    numerator, denominator = sums
    return numerator / denominator


def mean_flows(rho: Real, phi: Sequence[Real], tail: Tail = "constant") -> Fraction | None:
    """E[X], the mean number of bottlenecked flows in progress (None: unbounded)."""
    exact_rho, values = _checked(rho, phi, tail)
    sums = _sums(exact_rho, values, tail)
    if sums is None:
        return None
    numerator, denominator = sums
    return exact_rho * denominator / numerator


def gamma_curve(
    rhos: Iterable[Real], phi: Sequence[Real], tail: Tail = "constant"
) -> list[Fraction]:
    """γ at each load of ``rhos`` (exact)."""
    return [gamma(rho, phi, tail) for rho in rhos]


def processor_sharing_gamma(rho: Real) -> Fraction:
    """γ of ideal processor sharing (φ ≡ 1): 1 − ρ for ρ < 1, else 0."""
    exact = as_fraction(rho)
    return max(Fraction(0), 1 - exact)


def response_time(
    size: Real, rho: Real, phi: Sequence[Real], capacity: Real = 1, tail: Tail = "constant"
) -> Fraction | None:
    """Mean completion time R(s) = s / (γ(ρ) C') of a flow of size ``size`` (None: unbounded).

    ``size`` and ``capacity`` in consistent units (e.g. bits and bit/s).
    """
    value = gamma(rho, phi, tail)
    if value == 0:
        return None
    return as_fraction(size) / (value * as_fraction(capacity))
