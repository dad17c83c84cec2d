"""The public entry points: self-test answers round-trip through check; choice and free text."""

import pytest

from grading.core.answers import ANSWER_TYPES, check, parse, self_test_answers
from grading.tests.fixtures.answer_tests import ATTENTION, CHOICES, MATRICES, MOMENTS

EXERCISES = [
    ("numeric", "0.3875", {}),
    ("numeric", 0.38753, {"sigfigs": 3}),
    ("matrix", [[2, 0, 1, 1], [0, 1, 1, 1]], {}),
    ("matrix", [0.3875, 0.1425, 0.235, 0.235], {}),
    ("symbolic", "sqrt(d_k)*sigma_q*sigma_k", ATTENTION),
    ("symbolic", "d_model/h", ATTENTION | {"require_simplified": True}),
    ("matrix_expression", "softmax(Q K^T / sqrt(d_k)) V", MATRICES),
    ("derivation", "d_k*sigma_q^2*sigma_k^2", MOMENTS),
    ("choice", "B", CHOICES),
    ("choice", ["A", "C"], CHOICES | {"multiple": True}),
    ("free_text", None, {}),
]


@pytest.mark.parametrize("answer_type, expected, options", EXERCISES)
def test_self_test_answers_come_out_as_labelled(answer_type, expected, options):
    generated = self_test_answers(answer_type, expected, options)
    assert generated["invalid"]
    for answer in generated["right"]:
        assert check(answer_type, expected, answer, options).correct is True, answer
    for answer in generated["wrong"]:
        grade = check(answer_type, expected, answer, options)
        assert (grade.correct, grade.error) == (False, None), answer
    for answer in generated["invalid"]:
        assert check(answer_type, expected, answer, options).error, answer


def test_every_type_has_a_checker():
    assert {answer_type for answer_type, _, _ in EXERCISES} == set(ANSWER_TYPES)


def test_free_text_is_queued_not_scored():
    grade = check("free_text", None, "Because the variance grows with d_k.")
    assert (grade.score, grade.correct, grade.error, grade.details) == (0.0, False, None, {"manual": True})
    assert grade.feedback == "Your answer was received and is queued for manual grading."
    assert check("free_text", None, "   ").error == "the answer is empty: write your explanation"


def test_choice_partial_credit():
    options = CHOICES | {"multiple": True, "partial_credit": True}
    assert check("choice", ["A", "C"], ["A"], options).score == 0.5
    assert check("choice", ["A", "C"], ["A", "B"], options).score == 0.0
    assert check("choice", "B", "E", CHOICES).error == "'E' is not one of the choices (A, B, C, D)"


def test_parse_previews():
    assert parse("numeric", "5/2").preview_latex == r"\frac{5}{2}"
    assert parse("matrix", "[1, 2]").value == [1.0, 2.0]
    assert parse("numeric", "abc").error.startswith("could not read 'abc'")


def test_as_dict_is_json_ready():
    import json

    assert json.loads(json.dumps(check("matrix", [1, 2], "[1, 3]").as_dict()))["details"]["entry_correct"] == [True, False]


def test_options_must_be_a_dict():
    with pytest.raises(ValueError, match="options must be a JSON object"):
        check("numeric", 1, "1", ["rtol"])


def test_a_failing_checker_becomes_a_could_not_grade_verdict(monkeypatch):
    from grading.core import numeric

    def broken(expected, answer, options):
        raise KeyError("_T")

    monkeypatch.setattr(numeric, "check", broken)
    grade = check("numeric", "1", "1", {})
    assert (grade.correct, grade.error, grade.details) == (False, None, {"could_not_grade": True, "reason": "KeyError: '_T'"})


def test_matrix_expressions_run_under_the_sandbox_limits():
    from grading.core.answers import SANDBOXED_TYPES

    assert set(SANDBOXED_TYPES) == {"symbolic", "derivation", "matrix_expression"}


@pytest.mark.parametrize(("typed", "latex"), [
    ("0.40", "0.40"), ("0.403", "0.403"), ("-0.5", "-0.5"), ("−0.25", "-0.25"), ("+3.0", "3.0"),
    ("4e-3", r"4 \times 10^{-3}"), ("1E+5", r"1 \times 10^{5}"), (" 12 ", "12"),
    ("2/5", r"\frac{2}{5}"), ("1 ⅜", r"\frac{11}{8}"), ("-3/4", r"-\frac{3}{4}"),
])
def test_a_numeric_preview_shows_a_decimal_as_typed_and_a_fraction_as_a_fraction(typed, latex):
    # Read exactly, 0.40 is 2/5, which the preview and the attempt history used to show.
    assert parse("numeric", typed).preview_latex == latex
