"""What a student sees after answering an attention-output part: the grade's feedback and
what the heatmap may show (the weights behind the answer, or a note on the answer), for
value matrices with more keys than value columns and for square ones.

The scene is the chapter's query "it": raw scores 5, 3, 4, 4 in a head with d_k = 4, so the
correct weights are [0.3875, 0.1425, 0.2350, 0.2350] and the unscaled ones
[0.5344, 0.0723, 0.1966, 0.1966]; only V changes from table to table.
"""

import numpy as np
import pytest

from grading.core import answers
from grading.core.attention import attention
from grading.core.misconceptions import MISCONCEPTIONS
from grading.core.weights_feedback import (
    NOTE_NOT_FROM_V,
    NOTE_OTHER_WEIGHTS,
    NOTE_SUM_NOT_ONE,
    output_note,
    weights_behind_output,
    weights_implied_by_output,
)

SCORES = [5, 3, 4, 4]
Q = np.eye(4)[0:1]  # (1, d_k): one query whose scores are exactly SCORES
K = np.outer(SCORES, np.eye(4)[0])  # (m, d_k) = (4, 4)
CORRECT_WEIGHTS = [0.3875, 0.1425, 0.235, 0.235]
UNSCALED_WEIGHTS = [0.5344, 0.0723, 0.1966, 0.1966]

# 4 keys, 3 value columns (the chapter's V without its column of ones): rows dependent, and
# Σ w = 1 does not pin the weights down either (row0 + row1 = row2 + row3).
WIDE = [[2, 0, 3], [1, 1, 0], [2, 1, 0], [1, 0, 3]]
# 4 keys, 3 value columns whose weights Σ w = 1 does pin down ([V | 1] is invertible).
WIDE_PINNED = [[2, 0, 3], [1, 1, 0], [0, 2, 1], [1, 0, 3]]
# Square with independent rows, and not symmetric (so V on the left gives other numbers).
SQUARE = [[2, 0, 3, 1], [1, 1, 0, 1], [0, 2, 1, 0], [1, 0, 3, 1]]
# Square with dependent rows (row3 = row0 + row1 - row2) and no constant column.
DEPENDENT = [[2, 1, 0, 1], [1, 2, 1, 0], [1, 0, 0, 1], [2, 3, 1, 0]]

ALL_OFF = {3: "Not quite: 3 of the 3 entries are outside the accepted tolerance (see the highlighted cells).",
           4: "Not quite: 4 of the 4 entries are outside the accepted tolerance (see the highlighted cells)."}
ONE_OFF = {3: "Not quite: 1 of the 3 entries is outside the accepted tolerance (see the highlighted cells).",
           4: "Not quite: 1 of the 4 entries is outside the accepted tolerance (see the highlighted cells)."}
UNSCALED_SLIP = MISCONCEPTIONS["raw_weights_used"]
V_ON_THE_LEFT = MISCONCEPTIONS["values_on_left"]


def diagnose_options(V) -> dict:
    return {"kind": "attention", "Q": Q.tolist(), "K": K.tolist(), "V": V, "query_index": 0, "quantity": "output"}


def shown(V, answer) -> tuple:
    """(grade feedback, misconception, heatmap weights rounded to 4 places or None, note)."""
    options = {"decimals": 4, "diagnose": diagnose_options(V)}
    expected = attention(Q, K, np.asarray(V, dtype=float)).output[0].tolist()
    grade = answers.check("matrix", expected, answer, options)
    behind = weights_behind_output(
        answer, diagnose=options["diagnose"], misconception=grade.misconception
    )
    weights = None if behind.weights is None else [round(float(w), 4) for w in behind.weights[0]]
    return grade.feedback, grade.misconception, weights, behind.note


def outside_column(entry: int, value: str, side: str) -> str:
    word = ("first", "second", "third", "fourth")[entry]
    return (
        f"The {word} entry of your output ({value}) is {side} than every entry in the {word} column of V. "
        "Attention weights are positive and add up to 1, so each entry of the output lies between "
        "the smallest and the largest entry of its column of V."
    )


# ---------------------------------------------------------------------------
# More keys than value columns
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, feedback, misconception, weights, note",
    [
        # right: the correct weights, and no note
        ([1.6225, 0.3775, 1.8674], "Correct: every entry matches.", None, CORRECT_WEIGHTS, None),
        # diagnosed: the slip's own weights (they give this output), and no note
        ([1.7311, 0.2689, 2.1932], f"{ALL_OFF[3]} {UNSCALED_SLIP}", "raw_weights_used", UNSCALED_WEIGHTS, None),
        # undiagnosable: a sentence about the answer, never about recovering weights
        ([2.5, 0.3775, 1.8674], ONE_OFF[3], None, None, outside_column(0, "2.5", "larger")),
        ([1.6225, -0.2, 1.8674], ONE_OFF[3], None, None, outside_column(1, "-0.2", "smaller")),
        ([1.4602, 0.3398, 1.6806], ALL_OFF[3], None, None, NOTE_SUM_NOT_ONE),  # 0.9 × the right output
        ([1.5, 0.5, 1.5], ALL_OFF[3], None, None, NOTE_OTHER_WEIGHTS),  # uniform weights × V
    ],
)
def test_more_keys_than_value_columns(answer, feedback, misconception, weights, note):
    assert shown(WIDE, answer) == (feedback, misconception, weights, note)


@pytest.mark.parametrize(
    "answer, feedback, misconception, weights",
    [
        ([1.1525, 0.6125, 2.1024], "Correct: every entry matches.", None, CORRECT_WEIGHTS),
        ([1.3378, 0.4656, 2.3898], f"{ALL_OFF[3]} {UNSCALED_SLIP}", "raw_weights_used", UNSCALED_WEIGHTS),
        # undiagnosable, but the only weights adding up to 1 that give it are uniform: shown
        ([1.0, 0.75, 1.75], ALL_OFF[3], None, [0.25, 0.25, 0.25, 0.25]),
    ],
)
def test_more_keys_than_value_columns_when_weights_adding_up_to_one_are_unique(answer, feedback, misconception, weights):
    assert shown(WIDE_PINNED, answer) == (feedback, misconception, weights, None)


# ---------------------------------------------------------------------------
# Square V
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, feedback, misconception, weights",
    [
        ([1.1525, 0.6125, 2.1024, 0.765], "Correct: every entry matches.", None, CORRECT_WEIGHTS),
        ([1.3378, 0.4656, 2.3898, 0.8034], f"{ALL_OFF[4]} {UNSCALED_SLIP}", "raw_weights_used", UNSCALED_WEIGHTS),
        # V on the left (w Vᵀ): the weights were right, the product was not; nothing to draw
        ([1.7149, 0.765, 0.5201, 1.3275], f"{ALL_OFF[4]} {V_ON_THE_LEFT}", "values_on_left", None),
        # undiagnosable: the weights it implies, whatever they are (here one is negative)
        ([1.0, 0.75, 1.75, 0.75], ALL_OFF[4], None, [0.25, 0.25, 0.25, 0.25]),
        ([2.1525, 0.6125, 2.1024, 0.765], ONE_OFF[4], None, [1.3875, 0.1425, 0.235, -0.765]),
    ],
)
def test_square_value_matrix_with_independent_rows(answer, feedback, misconception, weights):
    assert shown(SQUARE, answer) == (feedback, misconception, weights, None)


@pytest.mark.parametrize(
    "answer, feedback, misconception, weights, note",
    [
        ([1.6225, 1.3775, 0.3775, 0.6225], "Correct: every entry matches.", None, CORRECT_WEIGHTS, None),
        ([1.7311, 1.2689, 0.2689, 0.7311], f"{ALL_OFF[4]} {UNSCALED_SLIP}", "raw_weights_used", UNSCALED_WEIGHTS, None),
        ([1.1525, 0.9075, 0.6225, 1.4375], f"{ALL_OFF[4]} {V_ON_THE_LEFT}", "values_on_left", None, None),
        ([1.6225, 1.3775, 1.3775, 0.6225], ONE_OFF[4], None, None, outside_column(2, "1.3775", "larger")),
        ([1.7225, 1.2775, 0.4775, 0.5225], ALL_OFF[4], None, None, NOTE_NOT_FROM_V),  # off V's row space
        ([1.4602, 1.2398, 0.3398, 0.5602], ALL_OFF[4], None, None, NOTE_SUM_NOT_ONE),  # 0.9 × the right output
        ([1.5, 1.5, 0.5, 0.5], ALL_OFF[4], None, None, NOTE_OTHER_WEIGHTS),  # uniform weights × V
    ],
)
def test_square_value_matrix_with_dependent_rows(answer, feedback, misconception, weights, note):
    assert shown(DEPENDENT, answer) == (feedback, misconception, weights, note)


# ---------------------------------------------------------------------------
# The rules behind the tables
# ---------------------------------------------------------------------------


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 6, 4)
    V = rng.integers(0, 4, (4, int(rng.integers(2, 5)))).astype(float)  # 2, 3 or 4 value columns
    return np.eye(4)[0:1], np.outer(scores, np.eye(4)[0]), V


@pytest.mark.parametrize("seed", range(40))
def test_a_right_or_diagnosed_answer_never_gets_a_note(seed):
    Q_, K_, V = _random_case(seed)
    diagnose = {"Q": Q_.tolist(), "K": K_.tolist(), "V": V.tolist(), "query_index": 0, "quantity": "output"}
    options = {"decimals": 4, "diagnose": diagnose}
    expected = attention(Q_, K_, V).output[0].tolist()
    right = np.round(expected, 4).tolist()
    unscaled = np.round(attention(Q_, K_, V, scale=1.0).output[0], 4).tolist()
    for answer in (right, unscaled):
        grade = answers.check("matrix", expected, answer, options)
        if not grade.correct and grade.misconception is None:
            continue  # this variant's unscaled output is too close to the right one to name
        behind = weights_behind_output(answer, diagnose=diagnose, misconception=grade.misconception)
        assert behind.note is None
        assert behind.weights is not None
        assert np.allclose(behind.weights @ V, answer, atol=5e-4)  # the weights shown give the answer


def test_the_notes_never_speak_of_the_method():
    for note in (NOTE_NOT_FROM_V, NOTE_SUM_NOT_ONE, NOTE_OTHER_WEIGHTS, output_note([9.0, 0.0, 0.0], WIDE)):
        assert "independent" not in note and "traced back" not in note


def test_weights_adding_up_to_one_are_recovered_when_they_are_unique():
    np.testing.assert_allclose(
        weights_implied_by_output(np.array(CORRECT_WEIGHTS) @ np.array(WIDE_PINNED), WIDE_PINNED),
        [CORRECT_WEIGHTS], atol=1e-12,
    )
    assert weights_implied_by_output([1.5, 0.5, 1.5], WIDE) is None  # Σ w = 1 does not pin them down


def test_weights_adding_up_to_one_are_not_used_when_rounding_could_move_them():
    # Two keys, one value column: Σ w = 1 pins the weights down. With values 1 and 2 an
    # output 1.5 means [0.5, 0.5]; with values 1 and 1.001 ([V | 1] has a smallest singular
    # value of about 0.0007) the last typed digit of the output would swing them wildly.
    np.testing.assert_allclose(weights_implied_by_output([1.5], [[1.0], [2.0]]), [[0.5, 0.5]], atol=1e-12)
    assert weights_implied_by_output([1.0005], [[1.0], [1.001]]) is None


@pytest.mark.parametrize("answer", [[[0.5, 0.5], [1.0, 1.0]], [1.0, 1.0], [[1.0, 1.0, 1.0, 1.0, 1.0]]])
def test_an_output_of_another_shape_gets_neither_weights_nor_a_note(answer):
    """A 2×2 or 1×2 answer to a 1×3 output part: the grade names the shape; the heatmap
    draws nothing (it raised LinAlgError and the exercise page answered 500)."""
    behind = weights_behind_output(answer, diagnose=diagnose_options(WIDE), misconception=None)
    assert (behind.weights, behind.note) == (None, None)
    assert output_note(answer, WIDE) == NOTE_NOT_FROM_V
