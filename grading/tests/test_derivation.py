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
