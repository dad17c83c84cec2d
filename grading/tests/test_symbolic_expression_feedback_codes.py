"""A known wrong expression may name its slip with a misconception code: a wrong answer that
matches the entry is graded as before (its feedback, a score of 0) and carries the code, as a
built-in diagnosis does, so the slip counts against the code's skill; an entry without one
carries none; a code outside the catalogue is the exercise's fault (the strict reading names
it, grading leaves the entry out)."""

import logging

import pytest

from exercises.engine.skills import skill_for_misconception
from grading.core import symbolic
from grading.core.answers import check
from grading.core.grades import InvalidRequest

SCALE = "1/sqrt(d_model/h)"  # one head's scale: 1/sqrt(d_k) with d_k = d_model/h
WHOLE_WIDTH = "you scaled by the whole width d_model, not by one head's d_k = d_model / h."
NO_ROOT = "that divides by d_k itself, the variance; the scale divides by its square root."
MULTIPLIED = "that multiplies by sqrt(d_k); the scale divides by it."
OPTIONS = {
    "symbols": {"d_model": "positive", "h": "positive"},
    "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": WHOLE_WIDTH, "misconception": "d_model_scale"},
        {"expression": "1/(d_model/h)", "feedback": NO_ROOT, "misconception": "divided_by_d_k"},
        {"expression": "sqrt(d_model/h)", "feedback": MULTIPLIED},
    ],
}
GENERIC = "Not equivalent to the correct expression."

# (answer as a student types it, correct, score, feedback, misconception)
TABLE = [
    # a slip whose entry names its code, in any equivalent form: the entry's feedback and code
    ("1/sqrt(d_model)", False, 0.0, f"Not quite: {WHOLE_WIDTH}", "d_model_scale"),
    ("d_model^(-1/2)", False, 0.0, f"Not quite: {WHOLE_WIDTH}", "d_model_scale"),
    (r"\frac{1}{\sqrt{d_model}}", False, 0.0, f"Not quite: {WHOLE_WIDTH}", "d_model_scale"),
    ("h/d_model", False, 0.0, f"Not quite: {NO_ROOT}", "divided_by_d_k"),
    # a slip whose entry names no code: its feedback, no code
    ("sqrt(d_model/h)", False, 0.0, f"Not quite: {MULTIPLIED}", None),
    ("sqrt(d_model)/sqrt(h)", False, 0.0, f"Not quite: {MULTIPLIED}", None),
    # right: no slip and no code
    (SCALE, True, 1.0, "Correct.", None),
    ("sqrt(h/d_model)", True, 1.0, "Correct.", None),
    # wrong, matching no entry: the checker's own message, no code
    ("2/sqrt(d_model)", False, 0.0, GENERIC, None),
    ("-1/sqrt(d_model/h)", False, 0.0, f"{GENERIC} Check the sign.", None),
]


@pytest.mark.parametrize(("answer", "correct", "score", "feedback", "misconception"), TABLE)
def test_a_matching_answer_carries_its_entrys_code(answer, correct, score, feedback, misconception):
    grade = check("symbolic", SCALE, answer, OPTIONS)
    assert (grade.correct, grade.score, grade.feedback, grade.error, grade.misconception) == (
        correct, score, feedback, None, misconception)


def test_the_code_reveals_its_skill_as_a_built_in_diagnosis_does():
    symbols = {"symbols": {"d_k": "positive", "d_model": "positive"}}
    built_in = check("symbolic", "1/sqrt(d_k)", "1/sqrt(d_model)", symbols)
    named = check("symbolic", SCALE, "1/sqrt(d_model)", OPTIONS)
    assert (built_in.misconception, named.misconception) == ("d_model_scale", "d_model_scale")
    assert skill_for_misconception(named.misconception) == "multi-head-shapes"


def test_an_entry_with_a_code_comes_before_a_built_in_misconception_and_carries_its_own_code():
    options = {"symbols": {"d_k": "positive", "d_model": "positive"}, "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": "one head is d_k wide.", "misconception": "no_scaling"}]}
    grade = check("symbolic", "1/sqrt(d_k)", "1/sqrt(d_model)", options)
    assert (grade.correct, grade.feedback, grade.misconception) == (False, "Not quite: one head is d_k wide.",
                                                                    "no_scaling")


def test_a_null_code_is_no_code():
    options = {**OPTIONS, "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": WHOLE_WIDTH, "misconception": None}]}
    grade = check("symbolic", SCALE, "1/sqrt(d_model)", options)
    assert (grade.feedback, grade.misconception) == (f"Not quite: {WHOLE_WIDTH}", None)


def test_the_strict_reading_keeps_each_entrys_code():
    known = symbolic.known_wrong_expressions(OPTIONS, strict=True)
    assert [(entry.text, entry.misconception) for entry in known] == [
        ("1/sqrt(d_model)", "d_model_scale"), ("1/(d_model/h)", "divided_by_d_k"), ("sqrt(d_model/h)", None)]


MALFORMED = [
    ("no_such_slip", "option 'expression_feedback': 'no_such_slip' is not a misconception code (entry 1)"),
    ("D_MODEL_SCALE", "option 'expression_feedback': 'D_MODEL_SCALE' is not a misconception code (entry 1)"),
    (3, "option 'expression_feedback': 3 is not a misconception code (entry 1)"),
    (["d_model_scale"], "option 'expression_feedback': ['d_model_scale'] is not a misconception code (entry 1)"),
    ({"code": "d_model_scale"},
     "option 'expression_feedback': {'code': 'd_model_scale'} is not a misconception code (entry 1)"),
]


@pytest.mark.parametrize(("code", "message"), MALFORMED)
def test_a_code_outside_the_catalogue_is_named_by_the_strict_reading(code, message):
    options = {"symbols": OPTIONS["symbols"], "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": WHOLE_WIDTH, "misconception": code}]}
    with pytest.raises(InvalidRequest) as caught:
        symbolic.known_wrong_expressions(options, strict=True)
    assert str(caught.value) == message
    with pytest.raises(InvalidRequest) as caught:
        symbolic.self_test(SCALE, options)
    assert str(caught.value) == message


@pytest.mark.parametrize(("code", "message"), MALFORMED)
def test_when_grading_an_entry_with_a_code_outside_the_catalogue_is_left_out(code, message, caplog):
    options = {"symbols": OPTIONS["symbols"], "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": WHOLE_WIDTH, "misconception": code},
        {"expression": "1/(d_model/h)", "feedback": NO_ROOT, "misconception": "divided_by_d_k"}]}
    with caplog.at_level(logging.WARNING, logger="grading.core.symbolic"):
        left_out = check("symbolic", SCALE, "1/sqrt(d_model)", options)
        kept = check("symbolic", SCALE, "h/d_model", options)
    assert (left_out.correct, left_out.feedback, left_out.misconception) == (False, GENERIC, None)
    assert (kept.feedback, kept.misconception) == (f"Not quite: {NO_ROOT}", "divided_by_d_k")
    assert f"{message}; left out, the answer is graded without it" in caplog.messages


def test_any_other_field_of_an_entry_is_still_refused():
    options = {"symbols": OPTIONS["symbols"], "expression_feedback": [
        {"expression": "1/sqrt(d_model)", "feedback": "x", "misconception": "d_model_scale", "skill": "scaling"}]}
    with pytest.raises(InvalidRequest) as caught:
        symbolic.known_wrong_expressions(options, strict=True)
    assert str(caught.value) == ("option 'expression_feedback' must be a list of {expression, feedback}: "
                                 "a known wrong expression and why it is wrong (entry 1)")
