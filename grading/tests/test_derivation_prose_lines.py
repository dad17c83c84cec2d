"""A derivation line written as a sentence ("Hence the variance is d_k") is told it reads as
words and what to write instead; it still earns nothing. Before, the student read about the
first word the reader tripped on: "'is' is a reserved word and cannot be used in an answer" or
"unknown symbol 'the'". An expression with a Python keyword that is not plainly English
(lambda, if, or, not, None) and other wrong expressions keep their precise messages."""

import pytest

from grading.core.answers import check, parse
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
EXERCISE = MOMENTS | {"min_steps": 2, "max_rules_per_step": 2}  # as the bank's general_derivation
GOOD = ["Var(Sum(q_m*k_m, m, 1, d_k))", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
        "d_k sigma_q^2 sigma_k^2"]
CORRECT = "Correct: every step follows by a named rule and the last is the result."
ADVICE = "reads as words, not maths: write the step as an equation (“so” or “hence” may lead it: hence a = b)."
NAMES = "this answer may use d_k, sigma_k, sigma_q, k, k_m, q, q_m"


def with_line_3(line: str) -> list[str]:
    """The right derivation with its third line replaced by ``line``."""
    return [GOOD[0], GOOD[1], line, GOOD[3]]


PROSE = [
    # before: "Line 3: 'is' is a reserved word and cannot be used in an answer"
    pytest.param("Hence the variance is d_k", id="Hence ... is"),
    # before: "Line 3: unknown symbol 'the'; this answer may use ..."
    pytest.param("so the variance equals d_k", id="so ... equals"),
    pytest.param("Therefore Var(q_m k_m) is sigma_q^2 sigma_k^2", id="Therefore, with maths in it"),
    pytest.param("d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) is the variance", id="maths, then words"),
    pytest.param("the terms are independent so we add them", id="a sentence without maths"),
    # before: "Line 3: 'and' is a reserved word and cannot be used in an answer"
    pytest.param("by linearity and independence", id="by ... and ..."),
    pytest.param("Var is additive", id="a function name in a sentence"),
    pytest.param("We get d_k times the variance of q_m k_m", id="We get ... the ... of"),
    pytest.param(r"\text{so the variance is } d_k", id="words in \\text{}"),
    pytest.param("THE VARIANCE IS D_K", id="in capitals"),
]


@pytest.mark.parametrize("line", PROSE)
def test_a_line_in_words_is_told_to_be_written_as_an_equation(line):
    grade = check("derivation", TARGET, with_line_3(line), EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, f"Line 3 {ADVICE}")


@pytest.mark.parametrize("line", PROSE)
def test_the_preview_gives_the_same_message(line):
    assert parse("derivation", "\n".join(with_line_3(line)), EXERCISE).error == f"Line 3 {ADVICE}"


def test_a_sentence_as_the_only_line_is_named_line_1():
    grade = check("derivation", TARGET, "Hence the variance is d_k", EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, f"Line 1 {ADVICE}")


def test_words_in_a_chained_line_name_the_expression_and_its_line():
    grade = check("derivation", TARGET, f"{GOOD[0]} = {GOOD[1]} = the variance is d_k", EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, f"'the variance is d_k' on line 1 {ADVICE}")


@pytest.mark.parametrize("line, error", [
    pytest.param("lambda x: x", "Line 3: 'lambda' is a reserved word and cannot be used in an answer", id="lambda"),
    pytest.param("d_k Var(q_m k_m) if d_k", "Line 3: 'if' is a reserved word and cannot be used in an answer", id="if"),
    pytest.param("d_k Var(q_m k_m) or 0", "Line 3: 'or' is a reserved word and cannot be used in an answer", id="or"),
    pytest.param("None", "Line 3: 'None' is a reserved word and cannot be used in an answer", id="None"),
    pytest.param("variance", f"Line 3: unknown symbol 'variance'; {NAMES}", id="one unknown word"),
    pytest.param("d_k Var(q_m k_m", "Line 3: unbalanced brackets: '(' at position 8 is never closed", id="unclosed ("),
    pytest.param("d_k @ q_m", "Line 3: '@' is only used in matrix expressions; write * for a product", id="@"),
])
def test_a_wrong_expression_keeps_its_precise_message(line, error):
    grade = check("derivation", TARGET, with_line_3(line), EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)


@pytest.mark.parametrize("answer", [
    pytest.param(GOOD, id="the steps alone"),
    pytest.param([GOOD[0], GOOD[1], GOOD[2], "Hence " + GOOD[3]], id="Hence before the last step"),
    pytest.param([*GOOD, "which is the required result."], id="a closing sentence"),
    pytest.param(["We start from the definition:", *GOOD], id="an opening sentence"),
    pytest.param([GOOD[0], GOOD[1] + " (by independence and identical terms)", GOOD[2], GOOD[3]],
                 id="a justification after a step"),
])
def test_a_right_derivation_with_words_around_its_steps_is_still_right(answer):
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score, grade.error, grade.feedback.startswith(CORRECT)) == (True, 1.0, None, True)
