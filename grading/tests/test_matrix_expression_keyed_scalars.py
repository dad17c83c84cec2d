"""Matrix expressions fitted to whole-number sizes, or right only through rounding.

The keyed check evaluates at sizes no answer can be written against, but those sizes are whole
numbers from KEYED_SIZES: a term with the factor (d_k-2)(d_k-3)...(d_k-24)(d_k-32) vanishes at
every one of them (and at the seeded sizes) and was graded right. The scalars now also take
values of their own, never whole, drawn from the key, and every part of a right-looking answer
must be 0 or of a size the rounding of the result cannot hide (``PART_RANGE``)."""

import time

import numpy as np
import pytest

from grading.core import matrix_expression
from grading.core.answers import check, parse
from grading.core.matrix_expression import EXTREME_PART, ONLY_AT_SOME_VALUES, UNDEFINED_PART

SECONDS = 0.5  # CPU per answer; each takes milliseconds
ATTENTION = "softmax(Q K^T / sqrt(d_k)) V"
SHAPED = {"matrices": {"Q": ["n", "d_k"], "K": ["n", "d_k"], "V": ["n", "d_v"]}, "scalars": {"n": 5, "d_k": 32, "d_v": 12}}
SEEDED_AND_KEYED = list(range(2, 25)) + [32]  # every whole size d_k takes in the checks before this one
D_K_FACTORS = "".join(f"(d_k-{size})" for size in SEEDED_AND_KEYED)
N_FACTORS = "".join(f"(n-{size})" for size in range(2, 25))  # n: 5, 3 and 10 seeded
D_V_FACTORS = "".join(f"(d_v-{size})" for size in range(2, 25))  # d_v: 12, 10 and 5 seeded
CORRECT = (True, 1.0, None, "Correct.")
DIFFERENT_VALUES = (False, 0.0, None, "Not quite: your expression has the right shape but gives different values.")
UNDEFINED = (False, 0.0, None, "Not quite: your expression overflows or is undefined for some matrices.")
KEYS = [bytes([key]) * 32 for key in range(4)]


def wrong(feedback):
    return (False, 0.0, None, feedback)


def refused(message):
    return (False, 0.0, message, message)


def small(part, size):
    return wrong(EXTREME_PART.format(part=part, size=size, effect="small"))


def verdict(answer, options=SHAPED):
    started = time.process_time()
    grade = check("matrix_expression", ATTENTION, answer, options)
    assert time.process_time() - started < SECONDS, answer
    return grade.correct, grade.score, grade.error, grade.feedback


@pytest.mark.parametrize("answer, expected", [
    pytest.param(f"{ATTENTION} + {D_K_FACTORS} V", wrong(ONLY_AT_SOME_VALUES.format(names="d_k")),
                 id="a term that vanishes at every whole d_k the checks use"),
    pytest.param(f"{ATTENTION} + {N_FACTORS} V", wrong(ONLY_AT_SOME_VALUES.format(names="d_k and n")),
                 id="the same in n"),
    pytest.param(f"{ATTENTION} + {D_V_FACTORS} softmax(Q K^T) V", wrong(ONLY_AT_SOME_VALUES.format(names="d_k and d_v")),
                 id="the same in d_v, times a matrix of the right shape"),
    pytest.param(f"{ATTENTION} (-1)^(2 d_k)", wrong(ONLY_AT_SOME_VALUES.format(names="d_k")),
                 id="a factor that is 1 at every whole d_k"),
    pytest.param(f"{ATTENTION} + 10^-20 V", small("10^(-20)", 1e-20), id="10^-20 V added"),
    pytest.param(f"{ATTENTION} + 0.00000000000000000001 V", small("1e-20", 1e-20), id="1e-20 typed out"),
    pytest.param(f"{ATTENTION} + exp(-50) V", small("exp(-50)", np.exp(-50)), id="exp(-50) V added"),
    pytest.param(f"{ATTENTION} + exp(0 Q K^T - 50) V", small("exp(0 * Q * K^T - 50)", np.exp(-50)),
                 id="a matrix of tiny entries"),
    pytest.param(f"{ATTENTION} + 10^-7 * 10^-7 V", small("10^(-7)", 1e-7), id="two factors of 1e-7"),
    pytest.param(f"{ATTENTION} + V / 10^30",
                 wrong(EXTREME_PART.format(part="10^30", size=1e30, effect="large")), id="divided by 10^30"),
    pytest.param(f"{ATTENTION} + V / exp(10^3 + d_k)", wrong(UNDEFINED_PART.format(part="exp(10^3 + d_k)")),
                 id="divided by an overflow"),
    pytest.param(f"{ATTENTION} + (1.0000000000000001 - 1) V",
                 refused("the number 1.0000000000000001 has more digits than are computed with (about 16 "
                         "significant digits): it would be read as 1.0; type it with fewer digits"),
                 id="a number rounded to 1 when computed"),
    pytest.param(f"{ATTENTION} + ((10^6 + 10^-6) - 10^6) V", DIFFERENT_VALUES, id="1e-6 kept through a cancellation"),
    pytest.param("softmax(Q K^T / sqrt(d_k) + 10^30) V", DIFFERENT_VALUES, id="a shift that swamps the scores"),
    pytest.param(f"{ATTENTION} + 0 exp(exp(exp(d_k))) V", UNDEFINED, id="0 times an overflow"),
])
def test_answers_fitted_to_whole_sizes_or_hidden_by_rounding_are_not_right(answer, expected, points_key):
    for key in KEYS:
        points_key(key)
        assert verdict(answer) == expected


def test_a_difference_too_small_for_the_rounding_is_named_even_when_it_is_0(points_key):
    # Numbers cannot tell a part that is 0 up to rounding from one that is tiny but not 0: both
    # are named, with the size they have (rounding noise, about 1e-15, for the last two).
    tiny = "(10^5 + 10^-6)^(1/256) - 10^(5/256)"  # about 4e-14, not 0: below the tolerance on the result
    size = (1e5 + 1e-6) ** (1 / 256) - 10 ** (5 / 256)
    for key in KEYS:
        points_key(key)
        assert verdict(f"{ATTENTION} + ({tiny}) V") == small("(10^5 + 10^(-6))^(1 / 256) - 10^(5 / 256)", size)
    for answer, part in [
        (f"{ATTENTION} + (Q K^T / sqrt(d_k) - (Q / sqrt(d_k)) K^T) V", "Q * K^T / sqrt(d_k) - Q / sqrt(d_k) * K^T"),
        (f"{ATTENTION} + (softmax(Q K^T) - softmax(Q K^T + 1)) V", "softmax(Q * K^T) - softmax(Q * K^T + 1)"),
    ]:
        correct, score, error, feedback = verdict(answer)
        assert (correct, score, error) == (False, 0.0, None)
        prefix, _, rest = EXTREME_PART.partition("{size:.0e}")
        assert feedback.startswith(prefix.format(part=part)), feedback
        assert feedback.endswith(rest.format(effect="small")), feedback


def test_the_fitted_term_really_vanishes_at_every_whole_size_checked_before():
    # Without this, the first row above would pass for the wrong reason.
    shapes, scalars, dimensions = matrix_expression._declared(SHAPED)
    expected = matrix_expression.read(ATTENTION, shapes, scalars)
    answer = matrix_expression.read(f"{ATTENTION} + {D_K_FACTORS} V", shapes, scalars)
    assert not matrix_expression._differs_at_keyed_sizes(expected, answer, shapes, scalars, dimensions)
    assert matrix_expression._compare(*(matrix_expression.draws_expected(checked, matrix_expression._draws(SHAPED)[0])
                                        for checked in (expected, answer))).correct


@pytest.mark.parametrize("answer", [
    ATTENTION,
    "softmax(Q K^T / d_k^{1/2}) V",
    "softmax((Q/sqrt(d_k)) K^T) V",
    "softmax(Q (K / sqrt(d_k))^T) V",
    "softmax(d_k^(-1/2) Q K^T) V",
    "softmax(Q K^T * (1/sqrt(d_k))) V",
    "softmax((Q / d_k^(1/4)) (K / d_k^(1/4))^T) V",
    "softmax(Q K^T d_k^4 / d_k^4.5) V",
    "softmax(Q K^T / sqrt(n d_k / n)) V",
    "softmax(Q K^T / sqrt(d_k) + n) V",
    f"{ATTENTION} * d_k^0",
    f"{ATTENTION} + 0 V",
    "softmax(Q K^T / sqrt(0.30000000000000004 d_k / 0.30000000000000004)) V",  # a float's shortest form
])
def test_right_forms_stay_right_whatever_the_key(answer, points_key):
    for key in KEYS:
        points_key(key)
        assert verdict(answer) == CORRECT


def test_a_scalar_that_is_no_dimension_is_varied_too():
    options = {"matrices": {"Q": [4, 16], "K": [4, 16], "V": [4, 8]}, "scalars": {"d_k": 16, "d_model": 64}}
    assert verdict(ATTENTION, options) == CORRECT
    assert verdict(f"{ATTENTION} (d_model - 63)", options) == wrong(ONLY_AT_SOME_VALUES.format(names="d_k and d_model"))


def test_the_keyed_scalars_are_never_whole_and_follow_the_key(points_key):
    shapes, scalars, dimensions = matrix_expression._declared(SHAPED)
    expected = matrix_expression.read(ATTENTION, shapes, scalars)
    answer = matrix_expression.read(f"{ATTENTION} + 0 V", shapes, scalars)
    seen = set()
    for key in range(50):
        points_key(key.to_bytes(2, "big") * 16)
        draw = matrix_expression.keyed_scalar_draw(expected, answer, shapes, scalars, dimensions)
        again = matrix_expression.keyed_scalar_draw(expected, answer, shapes, scalars, dimensions)
        assert all(np.array_equal(draw[name], again[name]) for name in draw)  # a regrade decides alike
        for name in ("n", "d_k", "d_v"):
            fraction = draw[name] % 1
            assert 0.1 <= fraction <= 0.9 and 2 < draw[name] < 24, (key, name, draw[name])
            seen.add(round(draw[name], 6))
        n_rows, width = np.shape(draw["K"])
        assert np.shape(draw["Q"]) == (n_rows, width) and width in matrix_expression.KEYED_SIZES
    assert len(seen) > 100  # drawn afresh for each key


def test_a_number_past_float_precision_is_refused_before_grading():
    message = ("the number 0.1250000000000000001 has more digits than are computed with (about 16 significant "
               "digits): it would be read as 0.125; type it with fewer digits")
    assert parse("matrix_expression", "softmax(Q K^T 0.1250000000000000001) V", SHAPED).error == message
    assert parse("matrix_expression", "softmax(Q K^T 0.12500000000000000000) V", SHAPED).error is None
