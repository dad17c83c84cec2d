"""Off cells, sharper/flatter from the entropy (only for weights ranking the keys as the scores
do), a wrong top key named, and weights recovered from an output row."""

import math

import numpy as np
import pytest

from grading.core.attention import softmax
from grading.core.weights_feedback import (
    compare_weights,
    ranks_keys_alike,
    row_entropy,
    top_key_message,
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


# --- sharper/flatter only for weights in the right order; a wrong top key is said ---------

WRONG_KEY = "Your largest weight is on key 1; the highest score is key 0's, and softmax gives the highest score the largest weight."


@pytest.mark.parametrize(
    "student, sharpness, message",
    [
        # all the weight on the wrong key: sharper, but no scaling gives it
        ([[1e-300, 0.999, 0.0, 0.0]], None, WRONG_KEY),
        ([[0.0, 1.0, 0.0, 0.0]], None, WRONG_KEY),
        ([[0.05, 0.9, 0.05, 0.0]], None, WRONG_KEY),
        ([[0.0, 0.5, 0.5, 0.0]], None,
         "Your largest weights are on keys 1 and 2; the highest score is key 0's, and softmax gives the "
         "highest score the largest weight."),
        # the right top key but two keys the other way round (key 3 above key 1): no scaling does that
        ([[0.9, 0.0, 0.02, 0.08]], None, None),
        # the right order: a scaling slip can give these
        (UNSCALED.round(4), "sharper", None),
        ([[0.999, 0.001, 0.0, 0.0]], "sharper", None),  # keys 1 and 2 tie in the correct weights
        (OVER_SCALED.round(4), "flatter", None),
        (UNIFORM, "flatter", None),  # every key tied: no order to get wrong
        (SCALED.round(4), None, None),  # right
    ],
)
def test_sharper_only_when_the_keys_are_ranked_as_the_scores_rank_them(student, sharpness, message):
    comparison = compare_weights(np.array(student), SCALED, atol=5e-5)
    assert (comparison.sharpness, top_key_message(comparison)) == (sharpness, message)


def test_weights_from_v_used_as_the_keys_are_not_called_unscaled():
    q = np.array([2.0, 0.0])
    K = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    V = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0]])
    right = softmax(q @ K.T / np.sqrt(2))[None, :]  # (1, 3): key 0 scores highest
    with_v = softmax(q @ V.T / np.sqrt(2))[None, :].round(4)  # V in place of K: key 1
    comparison = compare_weights(with_v, right, atol=5e-5)
    assert comparison.student_entropy < comparison.expected_entropy  # sharper, as the old hint said
    assert comparison.sharpness is None
    assert top_key_message(comparison) == WRONG_KEY


def test_the_weights_an_output_implies_are_named_so():
    comparison = compare_weights(np.array([[0.05, 0.9, 0.05, 0.0]]), SCALED, atol=5e-5)
    assert top_key_message(comparison, implied=True) == (
        "The largest of the weights your output implies is on key 1; the highest score is key 0's, "
        "and softmax gives the highest score the largest weight."
    )


def test_each_query_with_a_wrong_top_key_is_named():
    expected = np.vstack([SCALED, SCALED[:, ::-1]])  # query 0: key 0 highest; query 1: key 3
    student = np.array([[0.1, 0.8, 0.1, 0.0], [0.0, 0.0, 0.2, 0.8]])
    comparison = compare_weights(student, expected, atol=5e-5)
    assert comparison.sharpness is None
    assert top_key_message(comparison, row_labels=["query 0", "query 1"]) == (
        "For query 0: your largest weight is on key 1; the highest score is key 0's, and softmax "
        "gives the highest score the largest weight."
    )
    both = compare_weights(np.array([[0.1, 0.8, 0.1, 0.0], [0.8, 0.0, 0.2, 0.0]]), expected, atol=5e-5)
    assert top_key_message(both) == (
        "For row 0: your largest weight is on key 1; the highest score is key 0's, and softmax gives the "
        "highest score the largest weight. For row 1: your largest weight is on key 0; the highest score "
        "is key 3's, and softmax gives the highest score the largest weight."
    )


def test_a_student_top_key_among_tied_highest_scores_is_not_wrong():
    expected = np.array([[0.4, 0.4, 0.2]])
    comparison = compare_weights(np.array([[0.0, 1.0, 0.0]]), expected, atol=5e-5)
    assert (comparison.sharpness, top_key_message(comparison)) == ("sharper", None)
    tied = compare_weights(np.array([[0.2, 0.2, 0.6]]), np.array([[0.5, 0.3, 0.2]]), atol=5e-5)
    assert top_key_message(tied) == (
        "Your largest weight is on key 2; the highest score is key 0's, and softmax gives the highest "
        "score the largest weight."
    )


@pytest.mark.parametrize(
    "student, expected, alike",
    [
        ([[0.7, 0.2, 0.1]], [[0.5, 0.3, 0.2]], True),
        ([[1.0, 0.0, 0.0]], [[0.5, 0.3, 0.2]], True),  # ties from rounding are no disagreement
        ([[0.5, 0.2, 0.3]], [[0.5, 0.3, 0.2]], False),
        ([[0.1, 0.8, 0.1]], [[0.5, 0.3, 0.2]], False),
        ([[0.2, 0.7, 0.1]], [[0.45, 0.45, 0.1]], True),  # equal scores: either may come first
        ([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]], [[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]], False),
    ],
)
def test_ranks_keys_alike(student, expected, alike):
    assert ranks_keys_alike(np.array(student), np.array(expected)) is alike


def test_a_right_answer_has_no_top_key_message():
    comparison = compare_weights(SCALED.round(4), SCALED, atol=5e-5)
    assert comparison.top_key_misses == () and top_key_message(comparison) is None
