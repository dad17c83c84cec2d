"""Derivations: the moment canonicaliser and step-by-step feedback."""

import pytest
import sympy

from grading.core.answers import check
from grading.core.derivation import Canonicaliser
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"


@pytest.mark.parametrize("step, value", [
    ("Var(q_m k_m)", "sigma_q**2*sigma_k**2"),
    ("E[q_m^2]", "sigma_q**2"),
    ("E[q_m k_m]", "0"),
    ("Var(Sum(q_m*k_m, m, 1, d_k))", "d_k*sigma_q**2*sigma_k**2"),
    ("Var(Sum(q_m*k_m, m, 1, d_k)/sqrt(d_k))", "sigma_q**2*sigma_k**2"),
    ("Var(dot(q, k))", "d_k*sigma_q**2*sigma_k**2"),
    ("Cov(q_1, q_2)", "0"),
    ("Var(q_1 + q_2)", "2*sigma_q**2"),
    ("Var(2 q)", "4*sigma_q**2"),
    ("E[Sum(q_m, m, 1, d_k)]", "0"),
])
def test_canonical_values(step, value):
    canonicaliser = Canonicaliser(MOMENTS)
    symbols = canonicaliser.symbols
    assert canonicaliser.value(step) == sympy.sympify(value, locals=symbols)


def test_first_broken_step_is_named():
    grade = check("derivation", TARGET, ["d_k Var(q_m k_m)", "d_k E[q_m^2]", TARGET], MOMENTS)
    assert grade.feedback == "Step 2 does not follow from step 1: under the exercise's assumptions the two are not equal."
    assert grade.details["first_wrong_step"] == 2


def test_first_step_must_follow_from_the_start():
    grade = check("derivation", TARGET, ["Var(q_m k_m)", "sigma_q^2 sigma_k^2"], MOMENTS)
    assert grade.feedback.startswith("Step 1 does not follow from the starting expression")


def test_a_correct_chain_not_ending_at_the_target():
    grade = check("derivation", "sqrt(d_k)*sigma_q*sigma_k", ["d_k Var(q_m k_m)"], MOMENTS | {"partial_credit": True})
    assert (grade.score, grade.feedback) == (0.5, "Every step follows, but the last step (step 1) is not the required result.")


def test_step_errors_name_the_step():
    assert check("derivation", TARGET, ["d_k Var(q_m k_m)", "Var(x_m"], MOMENTS).error.startswith("Step 2:")


def test_each_step_names_its_rule_and_instance():
    steps = ["d_k Var(q_m k_m)", "d_k (E[q_m^2 k_m^2] - E[q_m k_m]^2)", "d_k (E[q_m^2] E[k_m^2] - E[q_m k_m]^2)",
             "d_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)", TARGET]
    grade = check("derivation", TARGET, steps, MOMENTS)
    assert grade.correct
    assert [step["rules"] for step in grade.details["steps"]] == [
        ["variance_of_sum", "identical_terms"], ["variance_definition"], ["independence"], ["independence"], ["substitution"]]
    assert grade.details["steps"][3]["because"] == ["independence, E[XY] = E[X] E[Y]: E[k_m*q_m] = E[k_m]*E[q_m]"]
    assert "step 4: by independence, E[XY] = E[X] E[Y]: E[k_m*q_m] = E[k_m]*E[q_m]" in grade.feedback


def test_too_big_a_step_names_the_rules_it_skips():
    grade = check("derivation", TARGET, ["d_k Var(q_m k_m)", TARGET], MOMENTS)
    assert (grade.correct, grade.score, grade.details["too_big_step"]) == (False, 0.5, 2)
    assert grade.feedback == (
        "The values are right, but step 2 is too big a step from step 1: it needs the definition "
        "Var(X) = E[X²] − E[X]², independence, E[XY] = E[X] E[Y] and substituting the declared mean or variance"
        " — show them (this exercise allows 2 rules per step).")


def test_big_step_credit_is_the_exercises_choice():
    grade = check("derivation", TARGET, [TARGET], MOMENTS | {"big_step_credit": 0})
    assert (grade.score, grade.details["steps"][0]["needed"]) == (0.0, [
        "variance_of_sum", "identical_terms", "variance_definition", "independence", "substitution"])


def test_restatements_and_padding_are_not_a_derivation():
    grade = check("derivation", TARGET, ["Var(dot(q, k)) + 0", "Var(Sum(q_m k_m, m, 1, d_k)) * 1"], MOMENTS)
    assert grade.feedback.startswith("The last step still contains Var(Sum(k_m*q_m, m, 1, d_k))")
    no_start = {key: value for key, value in MOMENTS.items() if key != "start"}
    assert check("derivation", TARGET, [TARGET], no_start).error.startswith("A derivation is a chain")
    only_algebra = check("derivation", "2*d_k", ["d_k + d_k", "2*d_k"], no_start)
    assert only_algebra.feedback.startswith("This only restates the expression")


@pytest.mark.parametrize("text", ["Var(q·k)", "Var(Σ_m q_m k_m)", r"\operatorname{Var}\left(\sum_{m=1}^{d_k} q_m k_m\right)",
                                  "Var(dot(q, k))", "Var(Sum(q_i k_i, i, 1, d_k))", r"Var(\mathbf{q}\cdot\mathbf{k})"])
def test_ways_of_writing_the_score_variance_read_the_same(text):
    canonicaliser = Canonicaliser(MOMENTS)
    assert canonicaliser.structure(text) == canonicaliser.structure("Var(Sum(q_m*k_m, m, 1, d_k))")


def test_self_test_covers_the_derivation_kinds():
    from grading.core.derivation import self_test

    samples = self_test(TARGET, MOMENTS)
    assert len(samples["right"]) == 2 and len(samples["wrong"]) == 5
    for kind, expected_correct in (("right", True), ("wrong", False)):
        for answer in samples[kind]:
            grade = check("derivation", TARGET, answer, MOMENTS)
            assert (grade.correct, grade.error) == (expected_correct, None), (answer, grade)
