"""Numeric answers with known wrong values (option ``value_feedback``): an inverted ratio
gets its own feedback, a right answer is never labelled, and a malformed option is the
exercise's error, not the student's."""

import math

import pytest

from grading.core.grades import InvalidRequest
from grading.core.numeric import CLOSE_NOT_PRECISE, NOT_CORRECT, check, known_wrong_values, self_test

RATIO = math.e  # w_a / w_b for scores that differ by 1
INVERTED = 1 / math.e  # w_b / w_a = 0.36787944...
INVERTED_FEEDBACK = "that is the weight of key 2 divided by that of key 3, the ratio the other way round."
OPTIONS = {"decimals": 4, "value_feedback": [{"value": INVERTED, "feedback": INVERTED_FEEDBACK}]}


@pytest.mark.parametrize(
    "answer, correct, feedback",
    [
        # right
        ("2.7183", True, "Correct."),
        ("2.71828", True, "Correct."),
        # the known wrong value, typed as a student would
        ("0.3679", False, f"Not quite: {INVERTED_FEEDBACK}"),
        ("0.36788", False, f"Not quite: {INVERTED_FEEDBACK}"),
        ("  .3679 ", False, f"Not quite: {INVERTED_FEEDBACK}"),
        # other wrong answers keep their own feedback
        ("0.3681", False, NOT_CORRECT),
        ("0.37", False, NOT_CORRECT),
        ("2.7170", False, CLOSE_NOT_PRECISE),
        ("-2.7183", False, "Not quite: the size is right but the sign is wrong."),
        ("27.1828", False, "Not quite: your value is off by a factor of 10; check the units or the decimal point."),
    ],
)
def test_right_known_wrong_and_other_wrong_answers(answer, correct, feedback):
    grade = check(RATIO, answer, OPTIONS)
    assert (grade.correct, grade.feedback, grade.error, grade.misconception) == (correct, feedback, None, None)


@pytest.mark.parametrize("answer", ["", "abc", "0,3679"])
def test_malformed_answers_stay_malformed(answer):
    grade = check(RATIO, answer, OPTIONS)
    assert grade.error is not None and not grade.correct


def test_a_known_value_that_is_right_on_this_variant_never_labels_an_answer():
    options = {"decimals": 4, "value_feedback": [{"value": RATIO, "feedback": "never said"}]}
    assert check(RATIO, "2.7183", options).feedback == "Correct."
    assert check(RATIO, "2.7190", options).feedback == CLOSE_NOT_PRECISE


def test_values_may_be_written_as_text_and_are_read_exactly():
    assert known_wrong_values({"value_feedback": [{"value": "1/4", "feedback": " a quarter "}]}) == [
        (pytest.approx(0.25), "a quarter")
    ]
    assert check("0.5", "0.25", {"value_feedback": [{"value": "1/4", "feedback": "half of it."}]}).feedback == (
        "Not quite: half of it."
    )


@pytest.mark.parametrize(
    "value_feedback",
    [
        "0.3679",
        [0.3679],
        [{"value": 0.3679}],
        [{"value": 0.3679, "feedback": "  "}],
        [{"value": 0.3679, "feedback": "inverted", "code": "x"}],
        [{"value": "abc", "feedback": "inverted"}],
        [{"value": True, "feedback": "inverted"}],
        [{"value": float("nan"), "feedback": "inverted"}],
        [{"value": [0.3679], "feedback": "inverted"}],
    ],
)
def test_a_malformed_option_is_a_request_error_even_for_a_right_answer(value_feedback):
    with pytest.raises(InvalidRequest, match="value_feedback"):
        check(RATIO, "2.7183", {"decimals": 4, "value_feedback": value_feedback})


def test_the_self_test_grades_each_known_wrong_value_as_wrong():
    samples = self_test(RATIO, OPTIONS)
    assert repr(INVERTED) in samples["wrong"]
    assert check(RATIO, repr(INVERTED), OPTIONS).feedback == f"Not quite: {INVERTED_FEEDBACK}"


def test_the_self_test_leaves_out_a_known_value_that_is_right_on_this_variant():
    # Equal scores: w_a / w_b = w_b / w_a = 1, so the "inverted" value is the right one here.
    options = {"decimals": 4, "value_feedback": [{"value": 1.0, "feedback": INVERTED_FEEDBACK}]}
    samples = self_test(1.0, options)
    assert "1.0" not in samples["wrong"]
    assert all(not check(1.0, answer, options).correct for answer in samples["wrong"])



# Var(q·k) = d_k σ_q² σ_k² with d_k = 64, σ_q = 0.5, σ_k = 1 is 16; two known slips of it.
ADDED = "the variances were added."
NO_SQUARES = "the squares were forgotten."
SCORE_OPTIONS = {"decimals": 4, "value_feedback": [{"value": "80", "feedback": ADDED},
                                                   {"value": 32.0, "feedback": NO_SQUARES}]}


@pytest.mark.parametrize(
    "answer, correct, feedback",
    [
        ("16", True, "Correct."),
        ("16.0000", True, "Correct."),
        ("80", False, f"Not quite: {ADDED}"),
        ("80.0000", False, f"Not quite: {ADDED}"),
        ("32", False, f"Not quite: {NO_SQUARES}"),
        ("32.0000", False, f"Not quite: {NO_SQUARES}"),
        ("16.0010", False, CLOSE_NOT_PRECISE),
        ("48", False, NOT_CORRECT),
    ],
)
def test_each_of_several_known_values_gets_its_own_feedback(answer, correct, feedback):
    grade = check("16", answer, SCORE_OPTIONS)
    assert (grade.correct, grade.feedback, grade.error) == (correct, feedback, None)
