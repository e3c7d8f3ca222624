"""Study B's flow-level model (thesis §5.4.3): γ(ρ) from φ(i), in exact rational arithmetic."""

import itertools
from fractions import Fraction

import pytest

from tcprepro.models.bandwidth_sharing import (
    as_fraction,
    gamma,
    gamma_curve,
    mean_flows,
    phi_sequence,
    processor_sharing_gamma,
    response_time,
)


@pytest.mark.parametrize("phi", [[1], [1, 1, 1, 1], [Fraction(1)] * 10])
@pytest.mark.parametrize("rho", [Fraction(0), Fraction(1, 10), Fraction(1, 2), Fraction(9, 10)])
def test_processor_sharing_gives_one_minus_rho_exactly(phi, rho):
    value = gamma(rho, phi)
    assert isinstance(value, Fraction)
    assert value == 1 - rho
    assert value == processor_sharing_gamma(rho)


def test_a_float_load_is_taken_exactly():
    # 0.3 is not 3/10 in binary: the result is 1 - Fraction(0.3) to the last bit
    assert gamma(0.3, [1.0]) == 1 - Fraction(0.3)
    assert gamma(0.3, [1.0]) != Fraction(7, 10)


def test_two_state_system_by_hand():
    # at most one flow (states 0 and 1), served at phi(1) = 1/2, load 1/4:
    # pi_1/pi_0 = rho/phi1 = 1/2, E[X] = (1/2)/(3/2) = 1/3, gamma = rho/E[X] = 3/4 = phi1 + rho
    assert gamma(Fraction(1, 4), [Fraction(1, 2)], tail="truncate") == Fraction(3, 4)
    assert mean_flows(Fraction(1, 4), [Fraction(1, 2)], tail="truncate") == Fraction(1, 3)


def test_constant_tail_by_hand():
    # phi(1) = 1/2, phi(i) = 1 for i >= 2, rho = 1/2:
    #   numerator   = 1 + 2 rho + 2 rho^2/(1 - rho)             = 3
    #   denominator = 2 + 2 (sum_{i>=1} i rho^(i-1) - 1) = 2 + 2 (4 - 1) = 8
    assert gamma(Fraction(1, 2), [Fraction(1, 2), Fraction(1)]) == Fraction(3, 8)
    # the same phi written out to i = 6 before the constant tail gives the same value
    assert gamma(Fraction(1, 2), [Fraction(1, 2)] + [Fraction(1)] * 5) == Fraction(3, 8)


def test_expansion_at_low_load_matches_the_thesis():
    # gamma = phi1 + (1 - 2 phi1/phi2) rho + O(rho^2)
    phi = [Fraction(2, 5), Fraction(3, 5), Fraction(7, 10)]
    assert gamma(0, phi) == Fraction(2, 5)
    eps = Fraction(1, 10**9)
    slope = (gamma(eps, phi) - phi[0]) / eps
    assert abs(slope - (1 - 2 * phi[0] / phi[1])) < Fraction(1, 10**6)


def test_unstable_load_gives_zero_and_no_mean():
    assert gamma(Fraction(1, 2), [Fraction(1, 2)]) == 0
    assert mean_flows(Fraction(1, 2), [Fraction(1, 2)]) is None
    assert response_time(1000, Fraction(1, 2), [Fraction(1, 2)]) is None
    assert processor_sharing_gamma(Fraction(3, 2)) == 0


def test_gamma_decreases_with_load_and_response_time_follows():
    phi = phi_sequence({1: 0.45, 2: 0.55, 4: 0.7, 8: 0.8})
    curve = gamma_curve([Fraction(k, 10) for k in range(8)], phi)
    assert all(a > b for a, b in itertools.pairwise(curve))
    assert curve[0] == as_fraction(0.45)
    # R(s) = s / (gamma C')
    assert response_time(8e6, Fraction(1, 2), phi, capacity=25e6) == Fraction(8e6) / (
        gamma(Fraction(1, 2), phi) * Fraction(25e6)
    )


def test_phi_sequence_interpolates_exactly():
    assert phi_sequence({1: Fraction(1, 2), 3: Fraction(7, 10)}) == [
        Fraction(1, 2),
        Fraction(3, 5),
        Fraction(7, 10),
    ]
    assert phi_sequence({2: Fraction(1, 2), 4: Fraction(1)}) == [
        Fraction(1, 2),
        Fraction(1, 2),
        Fraction(3, 4),
        Fraction(1),
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: phi_sequence({}), "at least one"),
        (lambda: phi_sequence({0: 0.5}), "i >= 1"),
        (lambda: phi_sequence({1: 0.0}), "must be > 0"),
        (lambda: gamma(-0.1, [1]), ">= 0"),
        (lambda: gamma(0.1, []), "phi\\(1\\)"),
        (lambda: gamma(0.1, [0.5, 0.0]), "must be > 0"),
        (lambda: gamma(0.1, [0.5], tail="linear"), "tail"),
        (lambda: gamma(float("nan"), [0.5]), "finite"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
