"""A conclusion ``Var(q·k) = d_k σ_q² σ_k²`` written under a side result it uses goes on from the
derivation, not from the side result. Before, the line above the conclusion had to be the
derivation's own, so a right derivation with its lemma last earned 0 ("'Var(q·k)' on line 3 is
not justified"). Hollow answers (only the question above the side results) still earn nothing."""

from __future__ import annotations

import pytest

from grading.core.answers import check
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
EXERCISE = MOMENTS | {"min_steps": 2, "max_rules_per_step": 2}
CHAIN = "Var(q·k) = Σ_m Var(q_m k_m) = d_k Var(q_m k_m)"
LEMMA = "Var(q_m k_m) = E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2 = σ_q² σ_k²"
CORRECT = "Correct: every step follows by a named rule and the last is the result."


@pytest.mark.parametrize("answer", [
    pytest.param([CHAIN, LEMMA, "Var(q·k) = d_k σ_q² σ_k²"], id="the lemma, then the conclusion"),
    pytest.param([CHAIN, "E[q_m^2] = σ_q²", LEMMA, "Var(q·k) = d_k σ_q² σ_k²"], id="two side results, then the conclusion"),
    pytest.param([CHAIN, LEMMA, "Var(q·k) = σ_q² σ_k² d_k"], id="the conclusion's factors in another order"),
    pytest.param([LEMMA, CHAIN + " = d_k σ_q² σ_k²"], id="the lemma first (right before too)"),
])
def test_a_right_derivation_with_its_side_result_above_the_conclusion_is_correct(answer):
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None)
    assert grade.feedback.startswith(CORRECT)


def test_a_wrong_conclusion_under_a_side_result_is_named_against_the_derivation():
    grade = check("derivation", TARGET, [CHAIN, LEMMA, "Var(q·k) = d_k^2 σ_q² σ_k²"], EXERCISE)
    assert (grade.correct, grade.score) == (False, 0.0)
    assert grade.feedback == ("Line 3: 'd_k^2 σ_q² σ_k²' does not follow from line 1: under the exercise's "
                              "assumptions the two are not equal.")


def test_a_false_side_result_is_still_caught():
    grade = check("derivation", TARGET, [CHAIN, "Var(q_m k_m) = E[q_m^2] E[k_m^2] = 2 σ_q² σ_k²",
                                         "Var(q·k) = d_k σ_q² σ_k²"], EXERCISE)
    assert (grade.correct, grade.score) == (False, 0.0)
    assert grade.feedback == ("Line 2: 'E[q_m^2] E[k_m^2] = 2 σ_q² σ_k²' is not true: under the exercise's "
                              "assumptions the two sides are not equal. (The line does not go on from line 1, "
                              "so it is read as a separate result.)")


@pytest.mark.parametrize("answer", [
    pytest.param(["Var(q·k)", "E[(q·k)^2] = d_k", "Var(q·k) = d_k σ_q² σ_k²"], id="only the question above"),
    pytest.param(["Var(q·k)", "E[q·k] = 0", "E[(q·k)^2] = d_k σ_q² σ_k²", "Var(q·k) = d_k σ_q² σ_k²"],
                 id="only the question above two side results"),
])
def test_the_question_alone_above_side_results_earns_nothing(answer):
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score) == (False, 0.0)


def test_a_sum_without_its_index_is_told_to_write_one():
    # before: "Line 1: unknown symbol 'Sigma'; this answer may use d_k, sigma_k, ..."
    grade = check("derivation", TARGET, "Var(q·k) = Σ Var(q_m k_m) = d_k Var(q_m k_m) = d_k σ_q² σ_k²", EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (
        False, 0.0, "Line 1: a sum needs its index: write it under Σ, as in Σ_m x_m, or use Sum(x_m, m, 1, n)")
