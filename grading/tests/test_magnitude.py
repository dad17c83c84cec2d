"""Size bounds for values too large or too small to compute: a difference is called non-zero
only when its bounds prove it, never on a guess."""

import mpmath
import pytest
import sympy

from grading.core import magnitude

D_K, SIGMA, TWO = sympy.symbols("d_k sigma two", positive=True)
X = sympy.Symbol("x", real=True)
POINT = {D_K: complex(1.5), SIGMA: complex(0.7), X: complex(-2.25), TWO: complex(2)}


def tower(argument, height: int = 5):
    for _ in range(height):
        argument = sympy.exp(argument)
    return argument


T = tower(D_K)


@pytest.mark.parametrize(
    "difference, proved_nonzero",
    [
        # one term outweighs the others together
        (T + D_K, True),
        (T - tower(D_K, 4), True),
        (tower(D_K, 39) - 1, True),
        (2 * T - SIGMA, True),
        (sympy.sqrt(T) - 1, True),
        (T ** 3 - D_K, True),
        (sympy.exp(-T) + 0 * D_K, True),  # tiny, but positive
        (1 / (T + 1), True),
        (sympy.log(T + 1) - D_K, True),
        (sympy.sin(T) - 3 * D_K, True),  # |sin| <= 1 < 4.5
        (sympy.Abs(sympy.sin(T)) + 2, True),
        ((-T) ** sympy.Rational(1, 3) + 1, True),
        (X * T + 1, True),
        # nothing proves these non-zero
        (sympy.sin(T), False),
        (sympy.sin(T) - D_K / 2, False),  # 0.75 is within sin's range
        (sympy.tan(T) + D_K, False),
        (tower(D_K, 39) - tower(SIGMA, 39), False),  # both past every bound
        (2 ** T * 3 ** (-T) * sympy.Rational(3, 2) ** T - 1, False),  # 1 - 1: the sizes cancel
        (sympy.exp(1 / T) - 1, False),
        (sympy.sin(T) ** 2 + sympy.cos(T) ** 2 - 1, False),
        # 0 at the point, computed as a rounding error: a tower times it is not a huge number
        (sympy.sin(sympy.pi * TWO) * T, False),
        (sympy.log(sympy.sin(X) ** 2 + sympy.cos(X) ** 2) * T, False),
        (((D_K + 1) ** 2 - D_K ** 2 - 2 * D_K - 1) * T, False),
    ],
)
def test_a_difference_is_non_zero_only_when_its_bounds_prove_it(difference, proved_nonzero):
    size = magnitude.difference_at(difference, POINT)
    assert isinstance(size, magnitude.Size)
    assert size.proved_nonzero is proved_nonzero


@pytest.mark.parametrize(
    "expression",
    [
        D_K ** 2 - 2,  # every value ordinary: the ordinary comparison decides
        sympy.exp(D_K) - sympy.exp(SIGMA),
        sympy.Function("f")(T),  # a function with no bound
        sympy.Symbol("y") + T,  # no value at the point
    ],
)
def test_no_size_when_nothing_was_too_large_or_the_point_is_undefined(expression):
    assert magnitude.difference_at(expression, POINT) is None


def test_bounds_of_a_tower_bracket_its_size_and_its_sign():
    size = magnitude.difference_at(tower(D_K, 4), POINT)
    # e^e^e^e^1.5: log2 of it is e^e^e^1.5 / ln 2 = 3.4977e38
    exact = mpmath.exp(mpmath.exp(mpmath.exp(1.5))) / mpmath.ln2
    assert (size.sign, size.nonzero) == (1, True)
    assert size.low < exact < size.high
    assert (size.high - size.low) / exact < 1e-8
    # One level up, log2 of the size is past 2^1000: the lower bound is clipped there, the upper one open.
    clipped = magnitude.difference_at(T, POINT)
    assert (clipped.low, clipped.high, clipped.sign) == (magnitude.BOUND_LIMIT, mpmath.inf, 1)


def test_a_cancellation_down_to_the_rounding_is_not_taken_for_a_difference():
    # (d_k + 1)^2 - d_k^2 - 2 d_k - 1 is 0; its rounding must not outweigh the tiny tower.
    zero_in_disguise = (D_K + 1) ** 2 - D_K ** 2 - 2 * D_K - 1
    size = magnitude.difference_at(zero_in_disguise + sympy.exp(-T), POINT)
    assert size.proved_nonzero is False
