"""Off cells, sharper/flatter from the entropy, and weights recovered from an output row."""

import math

import numpy as np
import pytest

from grading.core.attention import softmax
from grading.core.weights_feedback import (
    compare_weights,
    row_entropy,
    weights_implied_by_output,
)

SCORES = np.array([[4.0, 2.0, 2.0, 0.0]])
SCALED = softmax(SCORES / 2.0)  # d_k = 4: the correct weights
UNSCALED = softmax(SCORES)  # the "forgot 1/sqrt(d_k)" slip
OVER_SCALED = softmax(SCORES / 4.0)  # divided by d_k instead of sqrt(d_k)
UNIFORM = np.full((1, 4), 0.25)


def test_row_entropy_of_uniform_and_one_hot_rows():
    assert row_entropy(np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]])).tolist() == [
        pytest.approx(math.log(4)),
        0.0,
    ]


@pytest.mark.parametrize(
    "student, sharpness, off",
    [
        (UNSCALED, "sharper", [[True, True, True, True]]),
        (OVER_SCALED, "flatter", [[True, True, True, True]]),
        (UNIFORM, "flatter", [[True, True, True, True]]),
        (np.array([[1.0, 0.0, 0.0, 0.0]]), "sharper", [[True, True, True, True]]),
        (SCALED.round(4), None, [[False, False, False, False]]),  # right: nothing to say
    ],
)
def test_sharper_or_flatter_than_expected(student, sharpness, off):
    comparison = compare_weights(student, SCALED, atol=5e-5)
    assert comparison.sharpness == sharpness
    assert comparison.off == off
    assert comparison.are_distributions


def test_the_same_entropy_in_the_wrong_order_is_off_but_neither_sharper_nor_flatter():
    swapped = SCALED[:, ::-1]
    comparison = compare_weights(swapped, SCALED, atol=5e-5)
    assert comparison.sharpness is None
    assert comparison.off == [[True, False, False, True]]


def test_rows_that_do_not_sum_to_one_get_their_sums_and_no_entropy():
    comparison = compare_weights(np.array([[0.5, 0.5, 0.5, 0.5]]), SCALED, atol=5e-5)
    assert (comparison.student_entropy, comparison.sharpness) == (None, None)
    assert comparison.row_sums == [2.0]
    negative = compare_weights(np.array([[1.5, -0.5, 0.0, 0.0]]), SCALED, atol=5e-5)
    assert negative.student_entropy is None


def test_the_graders_verdicts_decide_the_off_cells_when_given():
    comparison = compare_weights(UNSCALED, SCALED, atol=5e-5, off=[True, False, True, True])
    assert comparison.off == [[False, True, False, False]]


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="shapes differ"):
        compare_weights(np.ones((1, 3)) / 3, SCALED, atol=5e-5)


def test_weights_are_recovered_from_an_output_row_when_v_has_independent_rows():
    V = np.array([[2.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [1.0, 0.0, 0.0, 1.0]])
    output = SCALED @ V  # (1, 4) x (4, 4) -> (1, 4)
    np.testing.assert_allclose(weights_implied_by_output(output, V), SCALED, atol=1e-12)
    np.testing.assert_allclose(weights_implied_by_output(output[0], V), SCALED, atol=1e-12)
    wide = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])  # m = 2 keys, d_v = 3
    np.testing.assert_allclose(
        weights_implied_by_output(np.array([0.3, 0.7]) @ wide, wide), [[0.3, 0.7]], atol=1e-12
    )


def test_no_weights_from_an_output_when_v_has_dependent_rows_or_the_wrong_width():
    dependent = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # and Σ w = 1 leaves them open too
    assert weights_implied_by_output(np.array([2.0, 4.0]), dependent) is None
    assert weights_implied_by_output(np.array([1.0, 2.0, 3.0]), np.eye(2)) is None
