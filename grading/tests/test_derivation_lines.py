"""Derivation messages name the student's own lines: a line chained with = is one line,
blank lines still count, and a reading problem's position is counted on the line as typed.
The notation the help text shows is read, and the preview keeps a chained line's = signs."""

import pytest

from grading.core.answers import check, parse
from grading.core.derivation import split_steps
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
NOT_EQUAL = "under the exercise's assumptions the two are not equal."
RANDOM_SUM = ("a sum of random terms (such as Sum(q_m k_m, m, 1, d_k) or q·k) is random itself: a step is a formula, "
              "so keep the sum inside E[...] or Var(...), e.g. Var(Sum(q_m k_m, m, 1, d_k))")


@pytest.mark.parametrize("answer, feedback", [
    # Two lines, the first chained: the break is on line 2 (it was "Step 3 does not follow from step 2").
    ("Var(q·k) = d_k Var(q_m k_m)\nd_k E[q_m^2]",
     f"Line 2: 'd_k E[q_m^2]' does not follow from line 1: {NOT_EQUAL}"),
    # The break inside a chained line names the expression before it on that line.
    ("Var(q·k) = d_k Var(q_m k_m) = d_k E[q_m^2]",
     f"Line 1: 'd_k E[q_m^2]' does not follow from 'd_k Var(q_m k_m)': {NOT_EQUAL}"),
    ("d_k E[q_m^2]", f"Line 1: 'd_k E[q_m^2]' does not follow from the starting expression: {NOT_EQUAL}"),
    # A blank line is skipped but counted: line 3 is the third line of the box.
    ("d_k Var(q_m k_m)\n\nd_k E[q_m^2]", f"Line 3: 'd_k E[q_m^2]' does not follow from line 1: {NOT_EQUAL}"),
    (["d_k Var(q_m k_m)", "d_k E[q_m^2]"], f"Line 2: 'd_k E[q_m^2]' does not follow from line 1: {NOT_EQUAL}"),
    ("Var(q·k) = d_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2)\n" + TARGET,
     "Line 2 is not justified: its value agrees with line 1, but no rule leads from line 1 to it. The rules turn a "
     "moment into simpler ones; a line that undoes a rule, goes back to an earlier line, or only holds because of the "
     "declared means and variances is not a step."),
    ("Var(q·k) = d_k Var(q_m k_m)\n" + TARGET,
     "The values are right, but line 2 is too big a step from line 1: it takes 3 rules (the definition "
     "Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean or variance)"
     " — show them (this exercise allows 2 rules per step)."),
    ("Var(q·k) = d_k Var(q_m k_m) = " + TARGET,
     f"The values are right, but '{TARGET}' on line 1 is too big a step from 'd_k Var(q_m k_m)': it takes 3 rules "
     "(the definition Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean or "
     "variance) — show them (this exercise allows 2 rules per step)."),
    ("Var(q·k)\n\n" + TARGET,
     "Line 1 only restates the question, and no step applies a rule to show an intermediate result: padding "
     "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result."),
    (f"{TARGET}\n{TARGET} + 0",
     "Line 2 only restates line 1, and no step applies a rule to show an intermediate result: padding "
     "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result."),
    ("Var(q·k) = d_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) = d_k sigma_q^2 sigma_k^2",
     "Correct: every step follows by a named rule and the last is the result. 'd_k Var(q_m k_m)' on line 1: by the "
     "variance of a sum of independent terms (the sum of their variances) and a sum of identical terms (their number "
     "times one term); 'd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)' on line 2: by the definition Var(X) = E[X²] − "
     "E[X]² and independence: E[XY] = E[X]E[Y]; 'd_k sigma_q^2 sigma_k^2' on line 2: by substituting the declared "
     "mean or variance."),
])
def test_feedback_names_the_students_lines(answer, feedback):
    assert check("derivation", TARGET, answer, MOMENTS).feedback == feedback


@pytest.mark.parametrize("answer, feedback", [
    ("Var(q·k)\n\nd_k Var(q_m k_m)", "Every step follows, but the last line (line 3) is not the required result."),
    ("Var(q·k) = d_k Var(q_m k_m)",
     "Every step follows, but the last expression ('d_k Var(q_m k_m)' on line 1) is not the required result."),
])
def test_a_wrong_last_step_names_its_line(answer, feedback):
    grade = check("derivation", "sqrt(d_k)*sigma_q*sigma_k", answer, MOMENTS | {"partial_credit": True})
    assert (grade.correct, grade.score, grade.feedback) == (False, 0.5, feedback)


@pytest.mark.parametrize("answer, error", [
    # The column on the student's line, not within the text after "=".
    ("Var(q·k) = d_k Var((q_m k_m)\n" + TARGET, "Line 1: unbalanced brackets: '(' at position 19 is never closed"),
    ("d_k Var(q_m k_m\n" + TARGET, "Line 1: unbalanced brackets: '(' at position 8 is never closed"),
    ("d_k Var(q_m k_m)\n\n  d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2))",
     "Line 3: unbalanced brackets: ')' at position 46 closes nothing"),
    ("d_k Var(q_m k_m) = d_k (E[q_m^2] ! E[k_m^2])",
     "Line 1: unexpected character '!' at position 34: factorials are not supported"),
    # Where the notation is rewritten (q·k -> dot(q, k)) the expression is quoted instead.
    ("Var(q·k = d_k Var(q_m k_m)", "Line 1: unbalanced brackets: '(' in 'Var(q·k' is never closed"),
    ("Var(q·k) = 1e-999999", "Line 1: the number 1e-999999 is too small (the limit is 1e-1000)"),
    ("Sum(q_m k_m, m, 1, d_k)", f"Line 1: {RANDOM_SUM}"),
    ("Var(q·k)\nΣ_m q_m k_m", f"Line 2: {RANDOM_SUM}"),
    ("Var(q·k)\nq_m + Var(q_m)", "Line 2: q_m is random: keep it inside E[...] or Var[...]"),
])
def test_reading_problems_name_the_line_and_the_position_as_typed(answer, error):
    assert check("derivation", TARGET, answer, MOMENTS).error == error
    assert parse("derivation", answer, MOMENTS).error == error


@pytest.mark.parametrize("answer", [
    "Var(Sum(q_m k_m, m, 1, d_k)) = d_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)\n" + TARGET,
    "Var(q.k) = d_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)\n" + TARGET,
    "Var(q . k) = Σ_m Var(q_m k_m) = d_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)\n" + TARGET,
])
def test_the_notation_of_the_help_text_is_graded(answer):
    grade = check("derivation", TARGET, answer, MOMENTS)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade


@pytest.mark.parametrize("answer, latex", [
    ("Var(q.k)", r"\operatorname{Var}\left[q \cdot k\right]"),
    ("Var(Sum(q_m k_m, m, 1, d_k))", r"\operatorname{Var}\left[\sum_{m=1}^{d_{k}} q_{m} k_{m}\right]"),
    ("Var(q·k) = d_k Var(q_m k_m)",
     r"\operatorname{Var}\left[q \cdot k\right] = d_{k} \operatorname{Var}\left[q_{m} k_{m}\right]"),
    ("Var(q·k) = d_k Var(q_m k_m)\n\nd_k",
     r"\operatorname{Var}\left[q \cdot k\right] = d_{k} \operatorname{Var}\left[q_{m} k_{m}\right] \\ d_{k}"),
])
def test_the_preview_keeps_the_equals_signs_of_a_chained_line(answer, latex):
    parsed = parse("derivation", answer, MOMENTS)
    assert (parsed.error, parsed.preview_latex) == (None, latex)


def test_steps_carry_their_line_and_column():
    steps = split_steps("Var(q·k) =  d_k Var(q_m k_m)\n\n   d_k")
    assert [(step.number, step.text, step.line, step.column, step.alone) for step in steps] == [
        (1, "Var(q·k)", 1, 0, False), (2, "d_k Var(q_m k_m)", 1, 12, False), (3, "d_k", 3, 3, True)]


def test_the_details_of_each_step_carry_its_line():
    grade = check("derivation", TARGET, "Var(q·k) = d_k Var(q_m k_m)\nd_k E[q_m^2]", MOMENTS)
    assert [(step["step"], step["line"], step["kind"]) for step in grade.details["steps"]] == [
        (1, 1, "restatement"), (2, 1, "rule"), (3, 2, "wrong")]
    assert grade.details["first_wrong_step"] == 3
