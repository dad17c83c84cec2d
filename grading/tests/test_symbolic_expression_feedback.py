"""Symbolic answers with known wrong expressions (option ``expression_feedback``): a wrong
answer equal to one of the author's expressions is told that expression's feedback, in any
equivalent form; the first listed match wins, before the built-in misconceptions and hints;
the score stays that of a wrong answer, and a right answer is never told a slip."""

import logging

import pytest

from grading.core import symbolic
from grading.core.answers import check
from grading.core.grades import InvalidRequest

SCALE = "1/sqrt(d_model/h)"  # one head's scale: 1/sqrt(d_k) with d_k = d_model/h
WHOLE_WIDTH = "you scaled by the whole width d_model, not by one head's d_k = d_model / h."
NO_ROOT = "that divides by d_k itself, the variance; the scale divides by its square root."
MULTIPLIED = "that multiplies by sqrt(d_k); the scale divides by it."
TIMES_H = "that uses d_model × h; the heads split the width, d_k = d_model / h."
OPTIONS = {
    "symbols": {"d_model": "positive", "h": "positive"},
    "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": WHOLE_WIDTH},
        {"expression": "1/(d_model/h)", "feedback": NO_ROOT},
        {"expression": "sqrt(d_model/h)", "feedback": MULTIPLIED},
        {"expression": "1/sqrt(d_model*h)", "feedback": TIMES_H},
    ],
}
GENERIC = "Not equivalent to the correct expression."

# (answer as a student types it, correct, score, feedback, error)
TABLE = [
    # each slip, as written and in other equivalent forms: its own feedback, still wrong
    ("1/sqrt(d_model)", False, 0.0, f"Not quite: {WHOLE_WIDTH}", None),
    ("d_model^(-1/2)", False, 0.0, f"Not quite: {WHOLE_WIDTH}", None),
    ("sqrt(d_model)/d_model", False, 0.0, f"Not quite: {WHOLE_WIDTH}", None),
    (r"\frac{1}{\sqrt{d_model}}", False, 0.0, f"Not quite: {WHOLE_WIDTH}", None),
    ("1/(d_model/h)", False, 0.0, f"Not quite: {NO_ROOT}", None),
    ("h/d_model", False, 0.0, f"Not quite: {NO_ROOT}", None),
    ("sqrt(d_model/h)", False, 0.0, f"Not quite: {MULTIPLIED}", None),
    ("sqrt(d_model)/sqrt(h)", False, 0.0, f"Not quite: {MULTIPLIED}", None),
    ("1/sqrt(d_model*h)", False, 0.0, f"Not quite: {TIMES_H}", None),
    ("(h d_model)^(-1/2)", False, 0.0, f"Not quite: {TIMES_H}", None),
    # right in several equivalent forms: right, and no slip is named
    (SCALE, True, 1.0, "Correct.", None),
    ("sqrt(h/d_model)", True, 1.0, "Correct.", None),
    ("sqrt(h)/sqrt(d_model)", True, 1.0, "Correct.", None),
    ("(d_model/h)^(-1/2)", True, 1.0, "Correct.", None),
    ("sqrt(h*d_model)/d_model", True, 1.0, "Correct.", None),
    ("1/sqrt(d_model)*sqrt(h)", True, 1.0, "Correct.", None),
    # wrong, but none of the listed slips: the checker's own message, as before
    ("2/sqrt(d_model)", False, 0.0, GENERIC, None),
    ("h", False, 0.0, GENERIC, None),
    ("-1/sqrt(d_model/h)", False, 0.0, f"{GENERIC} Check the sign.", None),
    ("exp(exp(exp(exp(d_model))))", False, 0.0, GENERIC, None),
    # unreadable: a format error, never a slip
    ("1/sqrt(d_k)", False, 0.0, "unknown symbol 'd_k'; this answer may use d_model, h",
     "unknown symbol 'd_k'; this answer may use d_model, h"),
    ("1/sqrt(d_model", False, 0.0, "unbalanced brackets: '(' at position 7 is never closed",
     "unbalanced brackets: '(' at position 7 is never closed"),
    ("", False, 0.0, "the answer is empty: type an expression", "the answer is empty: type an expression"),
]


@pytest.mark.parametrize(("answer", "correct", "score", "feedback", "error"), TABLE)
def test_each_slip_gets_its_feedback_and_nothing_else_changes(answer, correct, score, feedback, error):
    grade = check("symbolic", SCALE, answer, OPTIONS)
    assert (grade.correct, grade.score, grade.feedback, grade.error, grade.misconception) == (
        correct, score, feedback, error, None)


def test_without_the_option_the_slips_get_the_generic_messages():
    plain = {"symbols": OPTIONS["symbols"]}
    assert check("symbolic", SCALE, "1/sqrt(d_model)", plain).feedback == GENERIC
    assert check("symbolic", SCALE, "h/d_model", plain).feedback == (
        f"{GENERIC} You may have given the square (a variance) where the square root (a standard deviation) "
        "is asked for.")


def test_the_first_listed_match_is_said():
    options = {**OPTIONS, "expression_feedback": [
        {"expression": "d_model^(-1/2)", "feedback": "first."},
        {"expression": "1/sqrt(d_model)", "feedback": "second."},
    ]}
    assert check("symbolic", SCALE, "1/sqrt(d_model)", options).feedback == "Not quite: first."


def test_the_authors_slip_comes_before_a_built_in_misconception():
    options = {"symbols": {"d_k": "positive", "d_model": "positive"}}
    built_in = check("symbolic", "1/sqrt(d_k)", "1/sqrt(d_model)", options)
    assert (built_in.correct, built_in.misconception) == (False, "d_model_scale")
    named = check("symbolic", "1/sqrt(d_k)", "1/sqrt(d_model)", {
        **options, "expression_feedback": [{"expression": "1/sqrt(d_model)", "feedback": "one head is d_k wide."}]})
    assert (named.correct, named.score, named.feedback, named.misconception) == (
        False, 0.0, "Not quite: one head is d_k wide.", None)


def test_an_expression_equal_to_the_right_answer_is_never_said():
    # e.g. filled in from a {{ }} template on a variant where it is right
    options = {**OPTIONS, "expression_feedback": [
        {"expression": "sqrt(h/d_model)", "feedback": "never said."},
        {"expression": "2*sqrt(h/d_model)", "feedback": "doubled."},
    ]}
    assert check("symbolic", SCALE, "sqrt(h)/sqrt(d_model)", options).feedback == "Correct."
    assert check("symbolic", SCALE, "2/sqrt(d_model/h)", options).feedback == "Not quite: doubled."
    assert check("symbolic", SCALE, "3/sqrt(d_model/h)", options).feedback == (
        f"{GENERIC} It differs from the correct expression by a constant factor.")


def test_a_partly_right_answer_with_a_form_problem_is_told_its_form_only():
    options = {**OPTIONS, "require_simplified": True,
               "expression_feedback": [{"expression": "sqrt(h)/sqrt(d_model)", "feedback": "never said."}]}
    grade = check("symbolic", "sqrt(h/d_model)", "sqrt(h*d_model)/d_model", options)
    assert (grade.correct, grade.score, grade.feedback) == (
        False, 0.5, "Your answer is equivalent, but it is not fully simplified.")


def test_a_number_filled_in_from_a_template_is_an_expression():
    options = {"symbols": {"d_k": "positive"}, "expression_feedback": [{"expression": 64, "feedback": "that is d_k."}]}
    assert check("symbolic", "sqrt(d_k)", "64", options).feedback == "Not quite: that is d_k."


MALFORMED = [
    ("1/sqrt(d_model)", "option 'expression_feedback' must be a list of {expression, feedback}: "
                        "a known wrong expression and why it is wrong"),
    (["1/sqrt(d_model)"], "option 'expression_feedback' must be a list of {expression, feedback}: "
                          "a known wrong expression and why it is wrong (entry 1)"),
    ([{"expression": "1/sqrt(d_model)"}], "option 'expression_feedback' must be a list of {expression, feedback}: "
                                          "a known wrong expression and why it is wrong (entry 1)"),
    ([{"expression": "1/sqrt(d_model)", "feedback": "x", "code": "y"}],
     "option 'expression_feedback' must be a list of {expression, feedback}: "
     "a known wrong expression and why it is wrong (entry 1)"),
    ([{"expression": "1/sqrt(d_model)", "feedback": "  "}],
     "option 'expression_feedback' must be a list of {expression, feedback}: "
     "a known wrong expression and why it is wrong; a feedback is empty (entry 1)"),
    ([{"expression": "1/sqrt(d_k)", "feedback": "x"}],
     "option 'expression_feedback': '1/sqrt(d_k)' cannot be read: unknown symbol 'd_k'; "
     "this answer may use d_model, h (entry 1)"),
    ([{"expression": "__import__('os')", "feedback": "x"}],
     "option 'expression_feedback': \"__import__('os')\" cannot be read: unexpected character '_' at position 1: "
     "names must start with a letter (entry 1)"),
    ([{"expression": None, "feedback": "x"}], "option 'expression_feedback': None is not an expression (entry 1)"),
    ([{"expression": "1/sqrt(d_model)", "feedback": "x"}] * 21,
     "option 'expression_feedback' may list at most 20 known wrong expressions, got 21"),
]


@pytest.mark.parametrize(("expression_feedback", "message"), MALFORMED)
def test_a_malformed_option_is_named_by_the_strict_reading(expression_feedback, message):
    options = {"symbols": OPTIONS["symbols"], "expression_feedback": expression_feedback}
    with pytest.raises(InvalidRequest) as caught:
        symbolic.known_wrong_expressions(options, strict=True)
    assert str(caught.value) == message
    with pytest.raises(InvalidRequest) as caught:
        symbolic.self_test(SCALE, options)
    assert str(caught.value) == message


@pytest.mark.parametrize(("expression_feedback", "message"), MALFORMED)
def test_when_grading_a_malformed_entry_is_left_out_with_a_warning(expression_feedback, message, caplog):
    options = {"symbols": OPTIONS["symbols"], "expression_feedback": expression_feedback}
    with caplog.at_level(logging.WARNING, logger="grading.core.symbolic"):
        wrong = check("symbolic", SCALE, "1/sqrt(d_model)", options)
        right = check("symbolic", SCALE, "sqrt(h/d_model)", options)
    assert (wrong.correct, wrong.feedback, wrong.error) == (False, GENERIC, None)
    assert (right.correct, right.feedback) == (True, "Correct.")
    assert f"{message}; left out, the answer is graded without it" in caplog.messages


def test_a_readable_entry_is_kept_beside_a_malformed_one():
    options = {"symbols": OPTIONS["symbols"], "expression_feedback": [
        {"expression": "1/sqrt(d_k)", "feedback": "unreadable."},
        {"expression": "1/sqrt(d_model)", "feedback": "the whole width."},
    ]}
    assert check("symbolic", SCALE, "1/sqrt(d_model)", options).feedback == "Not quite: the whole width."


def test_the_self_test_grades_every_slip_as_a_wrong_answer():
    samples = symbolic.self_test(SCALE, OPTIONS)
    assert samples["wrong"] == [f"({SCALE}) + 1", f"2*({SCALE})", "1/sqrt(d_model)", "1/(d_model/h)",
                                "sqrt(d_model/h)", "1/sqrt(d_model*h)"]
    right_here = {**OPTIONS, "expression_feedback": [{"expression": "sqrt(h/d_model)", "feedback": "right here."}]}
    assert symbolic.self_test(SCALE, right_here)["wrong"] == [f"({SCALE}) + 1", f"2*({SCALE})"]
