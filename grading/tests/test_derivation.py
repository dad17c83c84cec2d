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
    assert grade.feedback == "Line 2: 'd_k E[q_m^2]' does not follow from line 1: under the exercise's assumptions the two are not equal."
    assert grade.details["first_wrong_step"] == 2


def test_first_step_must_follow_from_the_start():
    grade = check("derivation", TARGET, ["Var(q_m k_m)", "sigma_q^2 sigma_k^2"], MOMENTS)
    assert grade.feedback.startswith("Line 1: 'Var(q_m k_m)' does not follow from the starting expression")


def test_a_correct_chain_not_ending_at_the_target():
    grade = check("derivation", "sqrt(d_k)*sigma_q*sigma_k", ["d_k Var(q_m k_m)"], MOMENTS | {"partial_credit": True})
    assert (grade.score, grade.feedback) == (0.5, "Every step follows, but the last line (line 1) is not the required result.")


WITHOUT_START = {key: value for key, value in MOMENTS.items() if key != "start"}


@pytest.mark.parametrize("steps, misconception", [
    (["d_k (Var(q_m) + Var(k_m))", "d_k (sigma_q^2 + sigma_k^2)"], "sigmas_added"),
    (["d_k sqrt(Var(q_m) Var(k_m))", "d_k sigma_q sigma_k"], "forgot_squares"),
    (["d_k (Var(q_m) + 2 Var(k_m))", "d_k (sigma_q^2 + 2 sigma_k^2)"], None),
])
def test_a_chain_that_follows_but_ends_wrong_names_the_slip_of_its_last_line(steps, misconception):
    grade = check("derivation", TARGET, steps, WITHOUT_START)
    assert (grade.correct, grade.score, grade.misconception) == (False, 0.0, misconception)
    assert grade.feedback.startswith("Every step follows, but the last line (line 2) is not the required result.")


def test_step_errors_name_the_step():
    assert check("derivation", TARGET, ["d_k Var(q_m k_m)", "Var(x_m"], MOMENTS).error.startswith("Line 2:")


def test_each_step_names_its_rule_and_instance():
    steps = ["d_k Var(q_m k_m)", "d_k (E[q_m^2 k_m^2] - E[q_m k_m]^2)", "d_k (E[q_m^2] E[k_m^2] - E[q_m k_m]^2)",
             "d_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)", TARGET]
    grade = check("derivation", TARGET, steps, MOMENTS)
    assert grade.correct
    assert [step["rules"] for step in grade.details["steps"]] == [
        ["variance_of_sum", "identical_terms"], ["variance_definition"], ["independence"], ["independence"], ["substitution"]]
    assert grade.details["steps"][3]["because"] == ["independence: E[XY] = E[X]E[Y]: E[k_m*q_m] = E[k_m]*E[q_m]"]
    assert grade.details["steps"][3]["rule_words"] == ["independence: E[XY] = E[X]E[Y]"]
    assert "line 4: by independence: E[XY] = E[X]E[Y]" in grade.feedback
    assert "k_m*q_m" not in grade.feedback  # the canonical SymPy form stays out of the message


def test_too_big_a_step_names_the_rules_it_takes_and_earns_its_share():
    grade = check("derivation", TARGET, ["d_k Var(q_m k_m)", TARGET], MOMENTS)
    # 2 rules shown within the limit, 3 in one too-big step at 0.5 each: (2 + 0.5 * 3) / 5.
    assert (grade.correct, grade.score, grade.details["too_big_step"]) == (False, 0.7, 2)
    assert grade.feedback == (
        "The values are right, but line 2 is too big a step from line 1: it takes 3 rules (the definition "
        "Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean or variance)"
        " — show them (this exercise allows 2 rules per step).")


def test_big_step_credit_is_the_exercises_choice_up_to_one_half():
    steps = ["d_k Var(q_m k_m)", TARGET]
    assert check("derivation", TARGET, steps, MOMENTS | {"big_step_credit": 0}).score == 0.4
    assert check("derivation", TARGET, steps, MOMENTS | {"big_step_credit": 0.99}).score == 0.7
    assert check("derivation", TARGET, [TARGET], MOMENTS | {"big_step_credit": 0.99}).score == 0.0


@pytest.mark.parametrize("options", [MOMENTS, MOMENTS | {"max_rules_per_step": 0}, MOMENTS | {"big_step_credit": 0.5},
                                     MOMENTS | {"partial_credit": True}, MOMENTS | {"max_rules_per_step": 4}])
@pytest.mark.parametrize("steps, feedback", [
    ([TARGET], "This line only states the result: no step applies a rule."),
    (["Var(dot(q, k))", TARGET], "Line 1 only restates the question, and no step applies a rule"),
    (["Var(q·k) + 0", "Var(q·k) * 1", TARGET], "Line 1 only restates the question"),
    (["Var(q·k) + sigma_q - sigma_q", TARGET], "Line 1 only restates the question"),
    ([TARGET, TARGET + " + 0"], "Line 2 only restates line 1"),
    (["Var(q·k) = " + TARGET], "'Var(q·k)' on line 1 only restates the question"),
    (["d_k Var(q_m k_m)", "Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", TARGET],
     "Line 2 is not justified"),
    ([TARGET, "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", TARGET], "Line 2 is not justified"),
    (["d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2)", TARGET], "Line 2 is not justified"),
    (["d_k Var(q_m k_m)", "d_k Var(q_m) Var(k_m)", TARGET], "Line 2 is not justified"),
    (["Var(q·k) + E[q_1]", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", TARGET],
     "Line 1 is not justified"),
])
def test_hollow_and_unjustified_derivations_score_zero_under_any_options(options, steps, feedback):
    grade = check("derivation", TARGET, steps, options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade
    assert grade.feedback.startswith(feedback), grade.feedback


def test_restatements_and_padding_are_not_a_derivation():
    grade = check("derivation", TARGET, ["Var(dot(q, k)) + 0", "Var(Sum(q_m k_m, m, 1, d_k)) * 1"], MOMENTS)
    assert grade.feedback.startswith("The last step still contains Var(Sum(k_m*q_m, m, 1, d_k))")
    no_start = {key: value for key, value in MOMENTS.items() if key != "start"}
    assert check("derivation", TARGET, [TARGET], no_start).error.startswith("A derivation is a chain")
    only_algebra = check("derivation", "2*d_k", ["d_k + d_k", "2*d_k"], no_start)
    assert only_algebra.feedback.startswith("Line 2 only restates line 1")


def test_the_score_is_the_share_of_the_rule_path_justified():
    steps = ["Σ_m Var(q_m k_m)", "d_k (sigma_q^2 sigma_k^2)"]  # 1 rule, then 4 in one step
    grade = check("derivation", TARGET, steps, MOMENTS)
    assert (grade.score, [step["kind"] for step in grade.details["steps"]]) == (0.6, ["rule", "too_big"])
    assert [step["rule_count"] for step in grade.details["steps"]] == [1, 4]


def test_each_step_is_reported_as_written_with_its_latex():
    steps = ["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", "d_k σ_q² σ_k²"]
    grade = check("derivation", TARGET, steps, MOMENTS)
    assert grade.correct
    assert [step["text"] for step in grade.details["steps"]] == steps
    assert [step["kind"] for step in grade.details["steps"]] == ["restatement", "rule", "rule", "rule"]
    assert grade.details["steps"][1]["latex"].startswith("d_{k}")


@pytest.mark.parametrize("text", ["Var(q·k)", "Var(Σ_m q_m k_m)", r"\operatorname{Var}\left(\sum_{m=1}^{d_k} q_m k_m\right)",
                                  "Var(dot(q, k))", "Var(Sum(q_i k_i, i, 1, d_k))", r"Var(\mathbf{q}\cdot\mathbf{k})"])
def test_ways_of_writing_the_score_variance_read_the_same(text):
    canonicaliser = Canonicaliser(MOMENTS)
    assert canonicaliser.structure(text) == canonicaliser.structure("Var(Sum(q_m*k_m, m, 1, d_k))")


def test_self_test_covers_the_derivation_kinds():
    from grading.core.derivation import self_test

    samples = self_test(TARGET, MOMENTS)
    assert (len(samples["right"]), len(samples["wrong"]), len(samples["hollow"])) == (2, 3, 6)
    for kind, expected_correct in (("right", True), ("wrong", False), ("hollow", False)):
        for answer in samples[kind]:
            grade = check("derivation", TARGET, answer, MOMENTS)
            assert (grade.correct, grade.error) == (expected_correct, None), (answer, grade)
            if kind == "hollow":
                assert grade.score == 0.0, (answer, grade)


def _derivation_rows(outcome: str):
    from grading.tests.fixtures.answer_tests import ROWS

    return [row for row in ROWS if row["type"] == "derivation" and row["outcome"] == outcome
            and row["options"].get("start") and row["options"].get("max_rules_per_step") in (None, 2)]


@pytest.mark.parametrize("limit", [None, 0])
@pytest.mark.parametrize("row", _derivation_rows("right"), ids=lambda row: row["note"][:40] or repr(row["answer"])[:40])
def test_every_rule_reached_chain_earns_full_credit_with_and_without_a_limit(row, limit):
    options = row["options"] if limit is None else row["options"] | {"max_rules_per_step": limit}
    grade = check("derivation", row["expected"], row["answer"], options)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade


HOLLOW_ROWS = [row for row in _derivation_rows("wrong") if row["note"].startswith("hollow:")]


def test_every_hollow_class_is_in_the_table():
    notes = " ".join(row["note"] for row in HOLLOW_ROWS)
    for kind in ("bare result", "restated", "padding", "circular", "backward"):
        assert kind in notes


@pytest.mark.parametrize("options", [{}, {"max_rules_per_step": 0}, {"max_rules_per_step": 4}, {"partial_credit": True},
                                     {"big_step_credit": 0.5}])
@pytest.mark.parametrize("row", HOLLOW_ROWS, ids=lambda row: row["note"][:40])
def test_every_hollow_class_earns_zero_under_any_options(row, options):
    grade = check("derivation", row["expected"], row["answer"], row["options"] | options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade
