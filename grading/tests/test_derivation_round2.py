"""Derivations, second pass: constants inside and outside a sum, the inner product written
⟨q, k⟩, Var(X) = Cov(X, X) as a renaming rather than a step, and steps whose moments the
rules would multiply out into thousands of terms."""

import time

import pytest

from grading.core import moment_rules
from grading.core.answers import check
from grading.core.derivation import Canonicaliser, terms_after_rules
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
EXERCISE = MOMENTS | {"min_steps": 2, "max_rules_per_step": 2}  # as the bank's general_derivation
WITHOUT_START = {key: value for key, value in EXERCISE.items() if key != "start"}
SCALED = EXERCISE | {"start": "Var(dot(q, k)/sqrt(d_k))"}
SCALED_TARGET = "sigma_q^2*sigma_k^2"
TAIL = ["d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", "d_k sigma_q^2 sigma_k^2"]
SCALED_TAIL = ["Var(q_m k_m)", "E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2", "sigma_q^2 sigma_k^2"]
CORRECT = "Correct: every step follows by a named rule and the last is the result."
CPU_SECONDS = 0.3


def warm_checker():
    check("derivation", TARGET, ["Var(q·k)", "d_k Var(q_m k_m)", TARGET], MOMENTS)


# --------------------------------------------------------------------------- right: full credit

RIGHT = [
    # before: 0, "Line 2 is not justified" (Σ_m Var(q_m k_m/√d_k) was not reached from the start)
    pytest.param(["Var(q·k/sqrt(d_k))", "Σ_m Var(q_m k_m/sqrt(d_k))", "d_k Var(q_m k_m/sqrt(d_k))"] + SCALED_TAIL,
                 id="before 0: each term of the sum scaled"),
    # before: 0, "Line 1 is not justified"
    pytest.param(["Var(Σ_m q_m k_m/sqrt(d_k))", "Σ_m Var(q_m k_m/sqrt(d_k))", "d_k Var(q_m k_m/sqrt(d_k))"] + SCALED_TAIL,
                 id="before 0: the scale written inside the sum"),
    # before: 0, "Line 1 is not justified"
    pytest.param([r"\operatorname{Var}\left(\sum_{m=1}^{d_k} \frac{q_m k_m}{\sqrt{d_k}}\right)",
                  r"\sum_{m=1}^{d_k} \operatorname{Var}\left(\frac{q_m k_m}{\sqrt{d_k}}\right)",
                  r"d_k \cdot \frac{1}{d_k} \operatorname{Var}(q_m k_m)"] + SCALED_TAIL[1:],
                 id="before 0: LaTeX, the scale inside the sum"),
    # before: 0, "Line 3 is not justified" (Σ_m Var(q_m k_m)/d_k read as a sum of Var(q_m k_m)/d_k)
    pytest.param(["Var(q·k/sqrt(d_k))", "Var(q·k)/d_k", "Σ_m Var(q_m k_m)/d_k", "d_k Var(q_m k_m)/d_k"]
                 + SCALED_TAIL[1:], id="before 0: a constant divisor after the sum's term"),
    pytest.param(["Var(q·k/sqrt(d_k))", "Var(q·k)/d_k", "Σ_m (Var(q_m k_m)/d_k)", "d_k Var(q_m k_m)/d_k"]
                 + SCALED_TAIL[1:], id="before 0: a constant divisor inside the sum's brackets"),
    pytest.param(["Var(q·k/sqrt(d_k))", "Var(q·k)/d_k", "d_k Var(q_m k_m)/d_k"] + SCALED_TAIL, id="the scale taken out"),
    pytest.param([r"\operatorname{Var}\left(\frac{q^\top k}{\sqrt{d_k}}\right)", r"\frac{\operatorname{Var}(q^\top k)}{d_k}",
                  r"\frac{d_k \operatorname{Var}(q_m k_m)}{d_k}"] + SCALED_TAIL, id="\\frac and ^\\top"),
    pytest.param(["Var(q·k d_k^(-1/2))", "Var(q·k) (d_k^(1/2))^(-2)", "d_k Var(q_m k_m)/d_k"] + SCALED_TAIL,
                 id="^(1/2) for sqrt"),
    pytest.param(["Var(qᵀk/√d_k)", "Var(qᵀk)/d_k", "d_k Var(q_m k_m)/d_k"] + SCALED_TAIL, id="Unicode ᵀ and √"),
    pytest.param(["Var(q·k/sqrt(d_k))", "(1/d_k)Var(q·k)", "(1/d_k)(d_k)Var(q_m k_m)", "Var(q_m k_m)",
                  "E[q_m^2]E[k_m^2] - E[q_m]^2E[k_m]^2", "sigma_q^2sigma_k^2"], id="juxtaposition without spaces"),
    pytest.param(["Var(q·k/sqrt(d_k))", "Var(q·k) · 1/d_k", "1/d_k · d_k · Var(q_m k_m)", "Var(q_m k_m)",
                  "E[q_m^2] · E[k_m^2] - E[q_m]^2 · E[k_m]^2", "sigma_q^2 · sigma_k^2"], id="· for products"),
]


@pytest.mark.parametrize("answer", RIGHT)
def test_scaled_score_derivations_earn_full_credit(answer):
    grade = check("derivation", SCALED_TARGET, answer, SCALED)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade
    assert grade.feedback.startswith(CORRECT)


ANGLE_AND_NOTATION = [
    # before: "Line 1: unexpected character '⟨' at position 5: it is not part of the answer syntax"
    pytest.param(["Var(⟨q, k⟩)"] + TAIL, id="before invalid: ⟨q, k⟩"),
    pytest.param(["Var(〈q,k〉)"] + TAIL, id="before invalid: 〈q,k〉"),
    # before: "Line 1: unsupported LaTeX command \\langle"
    pytest.param([r"\operatorname{Var}(\langle q, k \rangle)"] + TAIL, id="before invalid: \\langle q, k \\rangle"),
    pytest.param([r"Var\left(\left\langle \mathbf{q}, \mathbf{k} \right\rangle\right)"] + TAIL,
                 id="before invalid: \\left\\langle with bold vectors"),
    pytest.param(["Var(q^T k)"] + TAIL, id="^T"),
    pytest.param([r"Var(q^\top k)"] + TAIL, id="^\\top"),
    pytest.param([r"d_k \cdot Var(q_m k_m)", r"d_k \cdot (E[q_m^2] \cdot E[k_m^2] - E[q_m]^2 \cdot E[k_m]^2)",
                  r"d_k \cdot sigma_q^2 \cdot sigma_k^2"], id="\\cdot"),
    pytest.param(["d_k*Var(q_m*k_m)", "d_k*(E[q_m^2]*E[k_m^2] - E[q_m]^2*E[k_m]^2)", "d_k*sigma_q^2*sigma_k^2"], id="*"),
    pytest.param(TAIL[:2] + [r"\frac{d_k \sigma_q^2 \sigma_k^{2}}{1}"], id="\\frac on the last line"),
    pytest.param(TAIL[:2] + ["d_k ((sigma_q sigma_k)^2)^(1/1)"], id="a power of a power"),
]


@pytest.mark.parametrize("answer", ANGLE_AND_NOTATION)
def test_notations_of_the_score_variance_earn_full_credit(answer):
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade


@pytest.mark.parametrize("text, same_as", [
    ("Var(Σ_m q_m k_m/sqrt(d_k))", "Var(Sum(q_m*k_m, m, 1, d_k)/sqrt(d_k))"),
    ("Σ_m Var(q_m k_m)/d_k", "Sum(Var(q_m k_m), m, 1, d_k)/d_k"),
    ("Σ_m 2 sigma_q E[q_m^2]", "2 sigma_q Sum(E[q_m^2], m, 1, d_k)"),
    ("Var(⟨q, k⟩)", "Var(dot(q, k))"),
])
def test_a_constant_factor_of_every_term_is_a_factor_of_the_sum(text, same_as):
    canonicaliser = Canonicaliser(EXERCISE)
    assert moment_rules.same_up_to_algebra(canonicaliser.structure(text), canonicaliser.structure(same_as))


def test_a_sum_of_constant_terms_is_still_one_rule_away_from_count_times_term():
    canonicaliser = Canonicaliser(EXERCISE)
    constant_terms = canonicaliser.structure("Σ_m sigma_q^2 sigma_k^2")
    assert isinstance(constant_terms, moment_rules.RSum)
    path = moment_rules.rules_between(constant_terms, canonicaliser.structure(TARGET), canonicaliser.model.key, 1)
    assert [rule for rule, _, _ in path] == [moment_rules.IDENTICAL_TERMS]


# --------------------------------------------------------------------------- hollow: nothing earned

RESTATES_QUESTION = "Line 1 only restates the question, and no step applies a rule to show an intermediate result"
HOLLOW = [
    # before: 0.5714, "too big a step" (Var(X) = Cov(X, X) counted as a step that shows a moment)
    pytest.param(TARGET, EXERCISE, ["Cov(q·k, q·k)", TARGET], RESTATES_QUESTION, id="before 0.5714: Cov(X, X), then the result"),
    pytest.param(TARGET, EXERCISE, ["Var(q·k) = Cov(q·k, q·k) = " + TARGET],
                 "'Var(q·k)' on line 1 only restates the question", id="before 0.5714: chained on one line"),
    # before: 0.5625
    pytest.param(SCALED_TARGET, SCALED, ["Cov(q·k/sqrt(d_k), q·k/sqrt(d_k))", SCALED_TARGET], RESTATES_QUESTION,
                 id="before 0.5625: the scaled score's Cov(X, X), then the result"),
    # before: 0.6 (no start: the line renaming the first one counted as a rule step)
    pytest.param("14 sigma_q^2", WITHOUT_START,
                 ["Var(" + " + ".join(f"q_{index}" for index in range(1, 15)) + ")",
                  "Cov(" + ", ".join([" + ".join(f"q_{index}" for index in range(1, 15))] * 2) + ")", "14 sigma_q^2"],
                 "Line 2 only restates line 1", id="before 0.6: no start, Var(X) then Cov(X, X) then the result"),
    pytest.param(TARGET, EXERCISE, [TARGET], "This line only states the result", id="the bare result"),
    pytest.param(TARGET, EXERCISE, ["Var(q·k)", TARGET], RESTATES_QUESTION, id="the question, then the result"),
    pytest.param(TARGET, EXERCISE, [f"{TARGET} = {TARGET}"], "'d_k*sigma_q^2*sigma_k^2' on line 1 only restates",
                 id="the result as x = x"),
    pytest.param(TARGET, EXERCISE, ["Var(q·k) = Var(q·k)", f"{TARGET} = {TARGET}"],
                 "'Var(q·k)' on line 1 only restates the question", id="two tautologies"),
    pytest.param(TARGET, EXERCISE, ["E[q_m] = 0", "E[k_m] = 0", TARGET], "This line only states the result",
                 id="true but irrelevant lines"),
]


@pytest.mark.parametrize("options", [{}, {"max_rules_per_step": 0}, {"partial_credit": True}, {"big_step_credit": 0.5}])
@pytest.mark.parametrize("expected, exercise, answer, feedback", HOLLOW)
def test_hollow_derivations_earn_nothing(expected, exercise, answer, feedback, options):
    grade = check("derivation", expected, answer, exercise | options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade
    assert grade.feedback.startswith(feedback), grade.feedback


@pytest.mark.parametrize("options", [{}, {"partial_credit": True}, {"big_step_credit": 0.5}])
def test_a_side_result_then_the_result_in_a_leap_earns_nothing_under_a_rule_limit(options):
    answer = ["Var(q_m k_m) = E[q_m^2 k_m^2] - E[q_m k_m]^2 = E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2", TARGET]
    grade = check("derivation", TARGET, answer, EXERCISE | options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade
    assert grade.feedback.startswith("This line only states the result")


@pytest.mark.parametrize("answer, score", [
    (["d_k Var(q_m k_m)", TARGET], 0.7),  # 2 rules shown, 3 skipped at 0.5 each
    # before: 0.7143, more than the honest answer above: the renaming counted as a rule shown
    (["d_k Var(q_m k_m)", "d_k Cov(q_m k_m, q_m k_m)", TARGET], 0.6667),
    (["Var(q·k/sqrt(d_k))", "Var(q_m k_m)"] + SCALED_TAIL[1:], 0.75),
])
def test_a_renaming_step_earns_no_share_of_a_too_big_derivation(answer, score):
    expected, options = (SCALED_TARGET, SCALED) if answer[0].startswith("Var(q·k/") else (TARGET, EXERCISE)
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error) == (False, score, None), grade
    assert grade.feedback.startswith("The values are right, but")


def test_a_full_derivation_that_also_renames_is_still_right():
    answer = ["Var(q·k)", "Cov(q·k, q·k)", "Σ_i Σ_j Cov(q_i k_i, q_j k_j)",
              "Σ_i Var(q_i k_i) + Σ_{i≠j} Cov(q_i k_i, q_j k_j)", "d_k Var(q_1 k_1)",
              "d_k (E[q_1^2] E[k_1^2] - E[q_1]^2 E[k_1]^2)", "d_k σ_q² σ_k²"]
    grade = check("derivation", TARGET, answer, MOMENTS | {"max_rules_per_step": 0})
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade


# --------------------------------------------------------------------------- wrong

WRONG = [
    (SCALED_TARGET, SCALED, ["Var(q·k/sqrt(d_k))", "Var(q·k)", "d_k Var(q_m k_m)", SCALED_TARGET],
     "Line 2: 'Var(q·k)' does not follow from line 1"),
    (SCALED_TARGET, SCALED, ["Var(q·k/sqrt(d_k))", "Var(q·k)/sqrt(d_k)", "sqrt(d_k) Var(q_m k_m)", "Var(q_m k_m)",
                             SCALED_TARGET], "Line 2: 'Var(q·k)/sqrt(d_k)' does not follow from line 1"),
    (SCALED_TARGET, SCALED, ["Var(q·k/sqrt(d_k))", "Var(q_m k_m/sqrt(d_k))", "Var(q_m k_m)/d_k", SCALED_TARGET],
     "Line 2: 'Var(q_m k_m/sqrt(d_k))' does not follow from line 1"),
    (SCALED_TARGET, SCALED, ["Var(q·k/sqrt(d_k))", "Σ_m Var(q_m k_m)/sqrt(d_k)", SCALED_TARGET],
     "Line 2: 'Σ_m Var(q_m k_m)/sqrt(d_k)' does not follow from line 1"),
    (SCALED_TARGET, SCALED, ["Var(q·k/sqrt(d_k))", "Var(q·k)/d_k", "Var(q·k/sqrt(d_k))", SCALED_TARGET],
     "Line 3 is not justified"),
    (TARGET, EXERCISE, ["d_k Var(q_m k_m)", "d_k Var(q_m) Var(k_m)", TARGET], "Line 2 is not justified"),
    (TARGET, EXERCISE, [f"{TARGET} = Var(q·k)", TARGET], "'Var(q·k)' on line 1 is not justified"),
]


@pytest.mark.parametrize("expected, options, answer, feedback", WRONG)
def test_wrong_steps_earn_nothing_even_when_the_last_line_is_right(expected, options, answer, feedback):
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade
    assert grade.feedback.startswith(feedback), grade.feedback


# --------------------------------------------------------------------------- too big to check, answered at once

TEN_Q = " + ".join(f"q_{index}" for index in range(1, 11))
TEN_K = " + ".join(f"k_{index}" for index in range(1, 11))
NORMAL = EXERCISE | {"random_variables": {"q": {"mean": 0, "variance": "sigma_q**2", "distribution": "normal"},
                                          "k": {"mean": 0, "variance": "sigma_k**2", "distribution": "normal"}}}


def too_big(terms: int) -> str:
    return (f"Line 1: the step is too big to check: its moments taken apart by the rules have {terms} terms "
            "(the limit is 200); write it in smaller pieces")


TOO_BIG = [
    # before: 1.2 s, then "the exercise does not give E[k^3]"
    pytest.param(EXERCISE, ["d_k Var((q_m + k_m)^50)", "1"], too_big(1326), id="before 1.2 s: Var of a 50th power"),
    # before: 3.4 s
    pytest.param(EXERCISE, ["Var((q_1 + q_2 + k_1)^12)", "1"], too_big(4186), id="before 3.4 s: Var of a 12th power"),
    # before: 3.0 s
    pytest.param(EXERCISE, ["Var((q_1 + q_2 + k_1 + k_2)^6)", "1"], too_big(3570), id="before 3 s: four terms to the 6th"),
    # before: 1.75 s
    pytest.param(EXERCISE, ["Var((q_m + 1)^99)", "1"], too_big(5050), id="before 1.75 s: Var((q_m + 1)^99)"),
    # before: 1.24 s and graded (normal entries have every moment)
    pytest.param(NORMAL, ["Var((q_m + k_m)^50)", "1"], too_big(1326), id="before 1.24 s: normal entries"),
    # before: 4.65 s
    pytest.param(EXERCISE, [f"Cov(({TEN_Q})^2, ({TEN_K})^2)", "0"], too_big(3025), id="before 4.65 s: Cov of squares"),
    # before: 1.08 s
    pytest.param(EXERCISE, [f"E[({TEN_Q})^2] E[({TEN_K})^2]", "0"], too_big(3025), id="before 1.08 s: product of moments"),
    pytest.param(EXERCISE, ["E[(q_1+q_2+q_3+q_4+q_5)^2] E[(k_1+k_2+k_3+k_4+k_5)^2] E[(q_6+q_7+q_8+q_9)^2]", "0"],
                 too_big(2250), id="before 1.05 s: three moments"),
]


@pytest.mark.parametrize("options, answer, error", TOO_BIG)
def test_steps_the_rules_would_multiply_out_are_refused_at_once(options, answer, error):
    warm_checker()
    started = time.process_time()
    grade = check("derivation", "1", answer, options)
    seconds = time.process_time() - started
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, error, error)
    assert seconds < CPU_SECONDS, seconds


@pytest.mark.parametrize("text, terms", [
    ("Var(q_m k_m)", 1),
    (f"Var({TEN_Q})", 55),
    (f"E[({TEN_Q})^2] - E[{TEN_Q}]^2", 110),
    (f"Cov({TEN_Q}, {TEN_K})", 100),
    ("d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", 2),
    ("E[(q·k)^2]", 1),
])
def test_terms_after_rules_of_steps_that_are_still_read(text, terms):
    canonicaliser = Canonicaliser(EXERCISE)
    assert terms_after_rules(canonicaliser.structure(text)) == terms


@pytest.mark.parametrize("answer, expected, feedback", [
    ([f"Var({TEN_Q})", f"Cov({TEN_Q}, {TEN_Q})", "10 sigma_q^2"], "10 sigma_q^2", "Line 2 only restates line 1"),
    ([f"Cov({TEN_Q}, {TEN_K})", "0"], "0", "This line only states the result"),
], ids=["ten terms renamed", "ten by ten covariance"])
def test_steps_below_the_bound_are_graded_within_the_time(answer, expected, feedback):
    warm_checker()
    started = time.process_time()
    grade = check("derivation", expected, answer, WITHOUT_START)
    seconds = time.process_time() - started
    assert (grade.correct, grade.error) == (False, None), grade
    assert grade.feedback.startswith(feedback), grade.feedback
    assert seconds < CPU_SECONDS, seconds


@pytest.mark.parametrize("answer, error", [
    (None, "a derivation is a list of steps (text), or one step per line"),
    ([["Var(q·k)"]], "a derivation is a list of steps (text), or one step per line"),
    (["Var(⟨q, q_1⟩)", TARGET], "Line 1: unexpected character '⟨' at position 5: it is not part of the answer syntax"),
    (["Var(⟨q, k)", TARGET], "Line 1: unexpected character '⟨' at position 5: it is not part of the answer syntax"),
    (["Var(q·k)"] * 31, "too many steps (31; the limit is 30)"),
])
def test_invalid_derivations_get_a_clear_message(answer, error):
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)
