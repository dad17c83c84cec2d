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


MALFORMED_VALUE_FEEDBACK = [
    ("0.3679", "option 'value_feedback' must be a list of {value, feedback}"),
    ([0.3679], "option 'value_feedback' must be a list of {value, feedback}"),
    ([{"value": 0.3679}], "option 'value_feedback' must be a list of {value, feedback}"),
    ([{"value": 0.3679, "feedback": "  "}], "a feedback is empty"),
    ([{"value": 0.3679, "feedback": "inverted", "code": "x"}], "option 'value_feedback' must be a list"),
    ([{"value": "abc", "feedback": "inverted"}], "could not read 'abc' as a number"),
    ([{"value": "a+1", "feedback": "inverted"}], r"could not read 'a\+1' as a number"),
    ([{"value": "d_k", "feedback": "inverted"}], "could not read 'd_k' as a number"),
    ([{"value": True, "feedback": "inverted"}], "True is not a number"),
    ([{"value": float("nan"), "feedback": "inverted"}], "nan is not a finite number"),
    ([{"value": [0.3679], "feedback": "inverted"}], r"\[0.3679\] is not a number"),
]


@pytest.mark.parametrize("value_feedback, message", MALFORMED_VALUE_FEEDBACK)
def test_a_malformed_option_is_named_by_the_strict_reading(value_feedback, message):
    with pytest.raises(InvalidRequest, match=message):
        known_wrong_values({"value_feedback": value_feedback}, strict=True)


@pytest.mark.parametrize("value_feedback, message", MALFORMED_VALUE_FEEDBACK)
@pytest.mark.parametrize(
    "answer, correct, feedback",
    [("2.7183", True, "Correct."), ("0.3679", False, NOT_CORRECT), ("2.7170", False, CLOSE_NOT_PRECISE)],
)
def test_a_malformed_option_is_left_out_and_the_answer_still_graded(
    value_feedback, message, answer, correct, feedback, caplog
):
    # The exercise's fault: never an error on the student's answer (which the service would
    # report as "could not read that answer"), only a warning for the people who run it.
    caplog.set_level("WARNING", logger="grading.core.numeric")
    grade = check(RATIO, answer, {"decimals": 4, "value_feedback": value_feedback})
    assert (grade.correct, grade.feedback, grade.error) == (correct, feedback, None)
    assert [record.levelname for record in caplog.records] == ["WARNING"]
    assert "left out, the answer is graded without it" in caplog.records[0].getMessage()


def test_only_the_unreadable_entry_is_left_out():
    options = {"decimals": 4, "value_feedback": [{"value": "a+1", "feedback": "never said"},
                                                 {"value": INVERTED, "feedback": INVERTED_FEEDBACK}]}
    assert known_wrong_values(options) == [(pytest.approx(INVERTED), INVERTED_FEEDBACK)]
    assert check(RATIO, "0.3679", options).feedback == f"Not quite: {INVERTED_FEEDBACK}"
    with pytest.raises(InvalidRequest, match=r"could not read 'a\+1' as a number.*\(entry 1\)"):
        known_wrong_values(options, strict=True)


def test_the_self_test_names_an_unreadable_value():
    # The variant test exists to find the exercise's faults: it reads the option strictly.
    with pytest.raises(InvalidRequest, match="could not read 'd_k' as a number"):
        self_test(RATIO, {"decimals": 4, "value_feedback": [{"value": "d_k", "feedback": "inverted"}]})


def test_the_grading_service_does_not_blame_the_student_for_the_exercises_option():
    from grading import services
    from grading.services import PartContext

    context = PartContext(
        answer_type="numeric", expected=RATIO, attempts_allowed=3,
        options={"decimals": 4, "value_feedback": [{"value": "a+1", "feedback": "never said"}]},
    )
    assert services.answer_format_error(context=context, raw_answer="2.7183") is None
    assert services.answer_format_error(context=context, raw_answer="0.37") is None
    assert services.grade_answer(context=context, raw_answer="2.7183").correct is True
    assert services.answer_format_error(context=context, raw_answer="abc") == (
        "could not read 'abc' as a number: it contains letters; type a number such as 0.25 or 1/4"
    )


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
