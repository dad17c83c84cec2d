"""Derivations: the words a student writes before a line (Claim:, Result:, Therefore, Hence, So,
Thus, ⇒, =>, ∴), conclusions appended after the derivation reached the result (the result stated
twice, or Var(q·k) = d_k and then Var(q·k/√d_k) = 1), and the covariance identity
E[XY] = Cov(X, Y) + E[X]E[Y] as a rule.

Before: a line starting with Claim: or Result: was refused ("unexpected character ':'"), a second
conclusion was read as a step back to the question ("not justified", score 0), and
E[q_m q_m] = Cov(q_m, q_m) + E[q_m]E[q_m] was "not justified" although it holds for any X and Y.
A prefix never makes a step right, a false conclusion is still caught, and the false variants of
the identity (a wrong sign, E[XY] = E[X]E[Y] for dependent X and Y, E[XY] = Cov(X, Y) by a zero
mean) are still refused."""

import time

import pytest

from grading.core import moment_rules
from grading.core.answers import check
from grading.core.derivation import Canonicaliser
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
GENERAL = (TARGET, MOMENTS | {"min_steps": 2, "max_rules_per_step": 2})  # as the bank's general_derivation
RESULT = "d_k sigma_q^2 sigma_k^2"
GOOD = ["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", RESULT]
STATEMENT = f"Var(q·k) = {RESULT}"

UNIT_OPTIONS = {"symbols": {"d_k": "positive"}, "min_steps": 2, "max_rules_per_step": 2,
                "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}}}
SCALED = ("1", UNIT_OPTIONS | {"start": "Var(dot(q, k)/sqrt(d_k))"})  # the scaled score has variance 1
SCALED_GOOD = ["Var(q·k/√d_k)", "Var(q·k)/d_k", "d_k Var(q_m k_m)/d_k", "Var(q_m k_m)",
               "E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2", "1"]
ZERO_MEANS = UNIT_OPTIONS | {"min_steps": 1}
# Means that are not 0: a false identity then changes the value ("does not follow").
MEANS = {"symbols": {"mu": "positive", "nu": "positive", "s": "positive"}, "min_steps": 1, "max_rules_per_step": 2,
         "random_variables": {"q": {"mean": "mu", "variance": "s**2"}, "k": {"mean": "nu", "variance": 1}}}

CORRECT = "Correct: every step follows by a named rule and the last is the result. "
BY_THE_RULES = ("by the variance of a sum of independent terms (the sum of their variances) and a sum of identical "
                "terms (their number times one term); line {}: by the definition Var(X) = E[X²] − E[X]² and "
                "independence: E[XY] = E[X]E[Y]; line {}: by substituting the declared mean or variance.")
RIGHT_FROM_LINE_1 = CORRECT + "line 2: " + BY_THE_RULES.format(3, 4)
RIGHT_FROM_LINE_2 = CORRECT + "line 3: " + BY_THE_RULES.format(4, 5)
SCALED_RIGHT = (CORRECT + "line 2: by Var(aX + b) = a² Var(X); line 3: by the variance of a sum of independent terms "
                "(the sum of their variances) and a sum of identical terms (their number times one term); line 5: by "
                "the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]; line 6: by substituting the "
                "declared mean or variance.")
IDENTITY = "the definition of covariance: E[XY] = Cov(X, Y) + E[X]E[Y]"
SUBSTITUTION = "substituting the declared mean or variance"
NOT_EQUAL = "under the exercise's assumptions the two are not equal."
NOT_JUSTIFIED = ("Line {} is not justified: its value agrees with line {}, but no rule leads from line {} to it. The "
                 "rules turn a moment into simpler ones; a line that undoes a rule, goes back to an earlier line, or "
                 "only holds because of the declared means and variances is not a step.")
HOLLOW = ("Line 1 only restates the question, and no step applies a rule to show an intermediate result: padding "
          "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result.")
SIDE = "(The line does not go on from line {}, so it is read as a separate result.)"
PRODUCT_OF_VARIANCES = (" Var(q_m k_m) is not Var(q_m) Var(k_m): for independent factors Var(XY) = E[X²] E[Y²] − "
                        "E[X]² E[Y]². The two agree here only because the means are 0, which is not a rule.")


def lines(*steps) -> str:
    return "\n".join(steps)


def verdict(part, answer):
    expected, options = part
    grade = check("derivation", expected, answer, options)
    return grade.correct, grade.score, grade.error, grade.misconception, grade.feedback


RIGHT = [
    # before: invalid, "Line 1: unexpected character ':' at position 6: ':' is not part of a math expression"
    pytest.param(GENERAL, lines(f"Claim: {STATEMENT}", *GOOD), RIGHT_FROM_LINE_2, id="Claim: above"),
    pytest.param(GENERAL, lines(f"claim:{STATEMENT}", *GOOD), RIGHT_FROM_LINE_2, id="claim: without a space"),
    # before: invalid, "Line 5: unexpected character ':' at position 7 ..."
    pytest.param(GENERAL, lines(*GOOD, f"Result: {STATEMENT}"), RIGHT_FROM_LINE_1, id="Result: below"),
    pytest.param(GENERAL, lines(*GOOD, f"Therefore {STATEMENT}"), RIGHT_FROM_LINE_1, id="Therefore"),
    pytest.param(GENERAL, lines(*GOOD, f"Hence, {STATEMENT}"), RIGHT_FROM_LINE_1, id="Hence,"),
    pytest.param(GENERAL, lines(*GOOD, f"So {STATEMENT}"), RIGHT_FROM_LINE_1, id="So"),
    pytest.param(GENERAL, lines(*GOOD, f"Thus {STATEMENT}"), RIGHT_FROM_LINE_1, id="Thus"),
    pytest.param(GENERAL, lines(*GOOD, f"⇒ {STATEMENT}"), RIGHT_FROM_LINE_1, id="⇒"),
    pytest.param(GENERAL, lines(*GOOD, f"=> {STATEMENT}"), RIGHT_FROM_LINE_1, id="=>"),
    pytest.param(GENERAL, lines(*GOOD, f"∴ {STATEMENT}"), RIGHT_FROM_LINE_1, id="∴"),
    pytest.param(GENERAL, lines(*GOOD, f"Hence, Result: {STATEMENT}"), RIGHT_FROM_LINE_1, id="Hence, Result:"),
    pytest.param(GENERAL, lines(GOOD[0], f"⇒ {GOOD[1]}", f"∴ {GOOD[2]}", f"Therefore {GOOD[3]}"), RIGHT_FROM_LINE_1,
                 id="prefixes before the steps"),
    # before: 0, "'Var(q·k)' on line 6 is not justified: its value agrees with line 5, ..."
    pytest.param(GENERAL, lines(*GOOD, STATEMENT, STATEMENT), RIGHT_FROM_LINE_1, id="the result stated twice"),
    pytest.param(GENERAL, lines(f"Claim: {STATEMENT}", *GOOD, f"Hence {STATEMENT}", f"Result: {STATEMENT}"),
                 RIGHT_FROM_LINE_2, id="a claim and two conclusions"),
    pytest.param(GENERAL, lines(*GOOD, "Var(q_m k_m) = σ_q² σ_k²", STATEMENT), RIGHT_FROM_LINE_1,
                 id="a conclusion about one term, then the result"),
    pytest.param(GENERAL, lines(*GOOD, STATEMENT, "Var(q_m k_m) = σ_q² σ_k²"), RIGHT_FROM_LINE_1,
                 id="the result, then a conclusion about one term"),
    # before: 0, "'Var(q·k/sqrt(d_k))' on line 8 is not justified: its value agrees with line 6, ..."
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k) = d_k", "Var(q·k/√d_k) = 1"), SCALED_RIGHT,
                 id="Var(q·k) = d_k, then Var(q·k/√d_k) = 1"),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Hence Var(q·k) = d_k", "so Var(q·k/√d_k) = 1"), SCALED_RIGHT,
                 id="Hence ..., so ..."),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k/√d_k) = 1", "Var(q·k) = d_k"), SCALED_RIGHT,
                 id="the result, then Var(q·k) = d_k"),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k/√d_k) = 1", "Var(q·k/√d_k) = 1"), SCALED_RIGHT,
                 id="the scaled result twice"),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k/√d_k) = Var(q·k)/d_k = d_k/d_k = 1"), SCALED_RIGHT,
                 id="a conclusion that retells the derivation"),
    # before: 0, "Line 7 is not justified" (the covariance identity was no rule)
    pytest.param(SCALED, lines(*SCALED_GOOD[:5], "E[q_m q_m] E[k_m k_m] - E[q_m]^2 E[k_m]^2",
                               "(Cov(q_m, q_m) + E[q_m]E[q_m]) (Cov(k_m, k_m) + E[k_m]E[k_m]) - E[q_m]^2 E[k_m]^2",
                               "(Var(q_m) + E[q_m]^2) (Var(k_m) + E[k_m]^2) - E[q_m]^2 E[k_m]^2", "(1 + 0)(1 + 0) - 0",
                               "1", "Var(q·k) = d_k", "Var(q·k/√d_k) = 1"),
                 CORRECT + "line 2: by Var(aX + b) = a² Var(X); line 3: by the variance of a sum of independent terms "
                 "(the sum of their variances) and a sum of identical terms (their number times one term); line 5: by "
                 "the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]; line 7: by "
                 f"{IDENTITY}; line 8: by Cov(X, X) = Var(X); line 9: by {SUBSTITUTION}.",
                 id="the covariance identity inside the scaled derivation, two conclusions"),
    pytest.param(("s^2 + mu^2", MEANS | {"start": "E[q_m^2]"}),
                 lines("E[q_m q_m]", "Cov(q_m, q_m) + E[q_m]E[q_m]", "Var(q_m) + E[q_m]^2", "s^2 + mu^2"),
                 f"{CORRECT}line 2: by {IDENTITY}; line 3: by Cov(X, X) = Var(X); line 4: by {SUBSTITUTION}.",
                 id="E[q_m q_m] = Cov(q_m, q_m) + E[q_m]E[q_m]"),
    pytest.param(("mu*nu", MEANS | {"start": "E[q_m k_m]"}),
                 lines("E[q_m k_m]", "Cov(q_m, k_m) + E[q_m]E[k_m]", "0 + mu nu"),
                 f"{CORRECT}line 2: by {IDENTITY}; line 3: by independence: E[XY] = E[X]E[Y] and {SUBSTITUTION}.",
                 id="E[XY] = Cov(X, Y) + E[X]E[Y], X and Y independent"),
    pytest.param(("(s^2+mu^2)*nu", MEANS | {"start": "E[q_m^2 k_m]", "max_rules_per_step": 0}),
                 lines("E[q_m^2 k_m]", "Cov(q_m k_m, q_m) + E[q_m k_m] E[q_m]", "s^2 nu + mu^2 nu"),
                 f"{CORRECT}line 2: by {IDENTITY}; line 3: by the definition Var(X) = E[X²] − E[X]² and independence: "
                 f"E[XY] = E[X]E[Y] and {SUBSTITUTION}.", id="E[XY] = Cov(X, Y) + E[X]E[Y], X and Y dependent"),
    pytest.param(("d_k", UNIT_OPTIONS | {"start": "E[(q·k)^2]"}),
                 lines("E[(q·k)^2]", "Cov(q·k, q·k) + E[q·k]^2", "Var(q·k) + E[q·k]^2", "d_k Var(q_m k_m) + E[q·k]^2",
                       "d_k Var(q_m k_m) + (d_k E[q_m k_m])^2",
                       "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) + (d_k E[q_m] E[k_m])^2", "d_k"),
                 f"{CORRECT}line 2: by {IDENTITY}; line 3: by Cov(X, X) = Var(X); line 4: by the variance of a sum of "
                 "independent terms (the sum of their variances) and a sum of identical terms (their number times one "
                 "term); line 5: by linearity of expectation and a sum of identical terms (their number times one "
                 "term); line 6: by the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]; line 7: "
                 f"by {SUBSTITUTION}.", id="E[(q·k)^2] = Cov(q·k, q·k) + E[q·k]^2"),
    # already right, pinned beside the identity
    pytest.param(("s^2", MEANS | {"start": "Var(q_m)"}), lines("Var(q_m)", "E[q_m^2] - E[q_m]^2", "s^2 + mu^2 - mu^2"),
                 f"{CORRECT}line 2: by the definition Var(X) = E[X²] − E[X]²; line 3: by {SUBSTITUTION}.",
                 id="Var(X) = E[X^2] - E[X]^2"),
    pytest.param(("s^2", MEANS | {"start": "Var(q_m)"}),
                 lines("Var(q_m)", "Cov(q_m, q_m)", "E[q_m q_m] - E[q_m]E[q_m]", "s^2 + mu^2 - mu^2"),
                 f"{CORRECT}line 2: by Var(X) = Cov(X, X); line 3: by the definition Var(X) = E[X²] − E[X]²; line 4: by "
                 f"{SUBSTITUTION}.", id="Var(X) = Cov(X, X)"),
]


@pytest.mark.parametrize("part, answer, feedback", RIGHT)
def test_right_derivations_score_full_marks(part, answer, feedback):
    assert verdict(part, answer) == (True, 1.0, None, None, feedback)


WRONG = [
    # a false step behind a prefix is graded as the step alone
    pytest.param(GENERAL, lines(GOOD[0], f"⇒ {GOOD[1]}", "∴ d_k Var(q_m) Var(k_m)", f"Therefore {RESULT}"), 0.0,
                 "product_of_variances", NOT_JUSTIFIED.format(3, 2, 2) + PRODUCT_OF_VARIANCES,
                 id="a product of variances behind ∴"),
    pytest.param(GENERAL, lines(GOOD[0], "Hence d_k E[q_m^2]", RESULT), 0.0, None,
                 f"Line 2: 'd_k E[q_m^2]' does not follow from line 1: {NOT_EQUAL}", id="a wrong step behind Hence"),
    pytest.param(GENERAL, lines(GOOD[0], GOOD[1], f"Result: {RESULT}"), 0.7, None,
                 "The values are right, but line 3 is too big a step from line 2: it takes 3 rules (the definition "
                 "Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean or variance)"
                 " — show them (this exercise allows 2 rules per step).", id="a leap behind Result:"),
    pytest.param(GENERAL, lines(GOOD[0], f"Therefore {RESULT}"), 0.0, None, HOLLOW, id="the bare result behind Therefore"),
    # false claims and conclusions
    pytest.param(GENERAL, lines(f"Claim: Var(q·k) = 2 {RESULT}", *GOOD), 0.0, None,
                 f"Line 1: '2 d_k sigma_q^2 sigma_k^2' does not follow from 'Var(q·k)': {NOT_EQUAL}", id="a false claim"),
    pytest.param(GENERAL, lines(*GOOD, f"Result: Var(q·k) = 2 {RESULT}"), 0.0, None,
                 f"Line 5: '2 d_k sigma_q^2 sigma_k^2' does not follow from line 4: {NOT_EQUAL}",
                 id="a false conclusion behind Result:"),
    pytest.param(GENERAL, lines(*GOOD, STATEMENT, f"Var(q·k) = 2 {RESULT}"), 0.0, None,
                 f"Line 6: '2 d_k sigma_q^2 sigma_k^2' does not follow from line 5: {NOT_EQUAL}",
                 id="a true conclusion, then a false one"),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k) = 2 d_k", "Var(q·k/√d_k) = 1"), 0.0, "sum_of_variances",
                 "Line 7: 'Var(q·k) = 2 d_k' is not true: under the exercise's assumptions the two sides are not equal. "
                 + SIDE.format(6) + " Var(q_m k_m) is not Var(q_m) + Var(k_m): variances add for a sum of independent "
                 "variables, X + Y, not for a product. For independent factors Var(XY) = E[X²] E[Y²] − E[X]² E[Y]², a "
                 "product of the second moments when the means are 0.", id="a false conclusion about Var(q·k)"),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k/√d_k) = 1", "Var(q·k) = d_k^2"), 0.0, "count_squared",
                 "Line 8: 'Var(q·k) = d_k^2' is not true: under the exercise's assumptions the two sides are not equal. "
                 + SIDE.format(7) + " The variance of a sum of d_k independent terms is d_k times the variance of one "
                 "term, not d_k² times: Var(aX) = a² Var(X) scales one variable, it does not add up independent copies.",
                 id="a false last conclusion about Var(q·k)"),
    pytest.param(SCALED, lines(*SCALED_GOOD, "Var(q·k) = d_k", "Var(q·k/√d_k) = 2"), 0.0, None,
                 f"Line 8: '2' does not follow from line 6: {NOT_EQUAL}", id="a false conclusion about the question"),
    pytest.param(SCALED, lines("Var(q·k/√d_k)", "1", "Var(q·k) = d_k", "Var(q·k/√d_k) = 1"), 0.0, None, HOLLOW,
                 id="the bare result dressed in two conclusions"),
    # without a start, a conclusion about the question does not turn a derivation of another quantity into one of it
    pytest.param(("1", ZERO_MEANS), lines("Var(q_m) = E[q_m^2] - E[q_m]^2 = 1", "Var(q_m k_m) = 1"), 0.0, None,
                 "'Var(q_m k_m)' on line 2 is not justified: its value agrees with line 1, but no rule leads from line 1 "
                 "to it. The rules turn a moment into simpler ones; a line that undoes a rule, goes back to an earlier "
                 "line, or only holds because of the declared means and variances is not a step.",
                 id="no start: Var(q_m) derived, Var(q_m k_m) concluded"),
    # false variants of the covariance identity
    pytest.param(("mu*nu", MEANS | {"start": "E[q_m k_m]"}),
                 lines("E[q_m k_m]", "Cov(q_m, k_m) - E[q_m]E[k_m]", "-mu nu"), 0.0, None,
                 f"Line 2: 'Cov(q_m, k_m) - E[q_m]E[k_m]' does not follow from line 1: {NOT_EQUAL}",
                 id="E[XY] = Cov(X, Y) - E[X]E[Y]"),
    pytest.param(("0", ZERO_MEANS | {"start": "E[q_m k_m]"}), lines("E[q_m k_m]", "Cov(q_m, k_m) - E[q_m]E[k_m]", "0"),
                 0.0, None, NOT_JUSTIFIED.format(2, 1, 1), id="E[XY] = Cov(X, Y) - E[X]E[Y], equal only for zero means"),
    pytest.param(("s^2", MEANS | {"start": "Cov(q_m, q_m)"}), lines("Cov(q_m, q_m)", "E[q_m^2] + E[q_m]^2", "s^2"),
                 0.0, None, f"Line 2: 'E[q_m^2] + E[q_m]^2' does not follow from line 1: {NOT_EQUAL}",
                 id="Cov(X, Y) = E[XY] + E[X]E[Y]"),
    pytest.param(("1", ZERO_MEANS | {"start": "Cov(q_m, q_m)"}), lines("Cov(q_m, q_m)", "E[q_m^2] + E[q_m]^2", "1"),
                 0.0, None, NOT_JUSTIFIED.format(2, 1, 1), id="Cov(X, Y) = E[XY] + E[X]E[Y], equal only for zero means"),
    pytest.param(("1", ZERO_MEANS | {"start": "E[q_m^2]"}), lines("E[q_m^2]", "Cov(q_m, q_m) - E[q_m]^2", "1"),
                 0.0, None, NOT_JUSTIFIED.format(2, 1, 1), id="E[X²] = Cov(X, X) - E[X]²"),
    pytest.param(("mu^2", MEANS | {"start": "E[q_m^2]"}), lines("E[q_m q_m]", "E[q_m] E[q_m]", "mu^2"), 0.0,
                 "square_of_mean", f"Line 2: 'E[q_m] E[q_m]' does not follow from line 1: {NOT_EQUAL} E[X²] is not "
                 "E[X]²: the mean of a square is the variance plus the square of the mean.",
                 id="E[XY] = E[X]E[Y], X = Y"),
    pytest.param(("(s^2+mu^2)*nu", MEANS | {"start": "E[q_m^2 k_m]", "max_rules_per_step": 0}),
                 lines("E[q_m^2 k_m]", "E[q_m k_m] E[q_m]", "s^2 nu + mu^2 nu"), 0.0, "square_of_mean",
                 f"Line 2: 'E[q_m k_m] E[q_m]' does not follow from line 1: {NOT_EQUAL} E[X²] is not E[X]²: the mean "
                 "of a square is the variance plus the square of the mean.", id="E[XY] = E[X]E[Y], X = q_m k_m, Y = q_m"),
    pytest.param(("0", {"symbols": {}, "start": "E[q_m^3]", "min_steps": 1, "random_variables": {
                     "q": {"mean": 0, "variance": 1, "distribution": "normal"}}}),
                 lines("E[q_m^3]", "E[q_m] E[q_m^2]", "0"), 0.0, None, NOT_JUSTIFIED.format(2, 1, 1),
                 id="E[XY] = E[X]E[Y] for dependent X, Y, equal only because both are 0"),
    pytest.param(("1", ZERO_MEANS | {"start": "E[q_m^2]"}), lines("E[q_m^2]", "Cov(q_m, q_m)", "1"), 0.0, None,
                 NOT_JUSTIFIED.format(2, 1, 1), id="E[XY] = Cov(X, Y), true only for zero means"),
    pytest.param(("(s^2+mu^2)*nu", MEANS | {"start": "E[q_m^2 k_m]", "max_rules_per_step": 0}),
                 lines("E[q_m^2 k_m]", "Cov(q_m k_m, q_m)", "s^2 nu + mu^2 nu"), 0.0, None,
                 f"Line 2: 'Cov(q_m k_m, q_m)' does not follow from line 1: {NOT_EQUAL}",
                 id="E[XY] = Cov(X, Y), means not 0"),
]


@pytest.mark.parametrize("part, answer, score, misconception, feedback", WRONG)
def test_wrong_derivations_keep_their_grade(part, answer, score, misconception, feedback):
    assert verdict(part, answer) == (False, score, None, misconception, feedback)


@pytest.mark.parametrize("prefix", ["Claim: ", "Result: ", "Therefore ", "Hence ", "So ", "Thus ", "⇒ ", "=> ", "∴ "])
@pytest.mark.parametrize("wrong", ["d_k Var(q_m) Var(k_m)", "d_k E[q_m^2]", RESULT, "d_k (E[q_m^2] E[k_m^2] + 1)"])
def test_a_prefix_never_changes_a_steps_grade(prefix, wrong):
    plain = verdict(GENERAL, lines(GOOD[0], GOOD[1], wrong, RESULT))
    assert plain[0] is False
    assert verdict(GENERAL, lines(GOOD[0], GOOD[1], prefix + wrong, RESULT)) == plain


def test_conclusions_are_shown_as_statements_not_steps():
    grade = check("derivation", *(SCALED[0],), lines(*SCALED_GOOD, "Hence Var(q·k) = d_k", "Result: Var(q·k/√d_k) = 1"),
                  SCALED[1])
    assert [(step["step"], step["line"], step["kind"], step.get("line_text")) for step in grade.details["steps"]] == [
        (1, 1, "restatement", None), (2, 2, "rule", None), (3, 3, "rule", None), (4, 4, "restatement", None),
        (5, 5, "rule", None), (6, 6, "rule", None), (7, 7, "statement", "Hence Var(q·k) = d_k"),
        (8, 7, "statement", None), (9, 8, "statement", "Result: Var(q·k/√d_k) = 1"),
        (10, 8, "restatement", "Result: Var(q·k/√d_k) = 1")]


def _structures(options: dict, *texts):
    canonicaliser = Canonicaliser(options)
    return canonicaliser.model.key, [canonicaliser.structure(text) for text in texts]


@pytest.mark.parametrize("before, after, path", [
    ("E[q_m^2]", "Cov(q_m, q_m) + E[q_m]^2",
     [(moment_rules.COVARIANCE_IDENTITY, "E[q_m^2]", "E[q_m]^2 + Cov(q_m, q_m)")]),
    ("E[q_m k_m]", "Cov(k_m, q_m) + E[q_m] E[k_m]",
     [(moment_rules.COVARIANCE_IDENTITY, "E[k_m*q_m]", "E[k_m]*E[q_m] + Cov(k_m, q_m)")]),
    ("E[q_m^2 k_m]", "Cov(q_m, q_m k_m) + E[q_m] E[q_m k_m]",
     [(moment_rules.COVARIANCE_IDENTITY, "E[k_m*q_m^2]", "E[q_m]*E[k_m*q_m] + Cov(q_m, k_m*q_m)")]),
    ("E[q_m^2]", "Cov(q_m, q_m)", None),  # needs a zero mean substituted: not the identity
    ("E[q_m k_m]", "Cov(q_m, k_m) - E[q_m] E[k_m]", None),
    ("E[q_m^2]", "Cov(q_m, q_m) + 2 E[q_m]^2", None),
    ("E[q_m^2]", "Cov(q_m, k_m) + E[q_m] E[k_m]", None),  # another product
    ("E[q_m^2]", "E[q_m] E[q_m]", None),
])
def test_the_covariance_identity_as_a_rule(before, after, path):
    key, (start, goal) = _structures(MEANS, before, after)
    found = moment_rules.rules_between(start, goal, key, 2, reverse=True)
    if path is None:
        assert found is None
    else:
        assert [(rule, moment_rules.describe(moment), moment_rules.describe(replacement))
                for rule, moment, replacement in found] == path


def test_a_derivation_with_conclusions_is_graded_quickly():
    answer = lines(*SCALED_GOOD[:5], "E[q_m q_m] E[k_m k_m] - E[q_m]^2 E[k_m]^2",
                   "(Cov(q_m, q_m) + E[q_m]E[q_m]) (Cov(k_m, k_m) + E[k_m]E[k_m]) - E[q_m]^2 E[k_m]^2",
                   "(Var(q_m) + E[q_m]^2) (Var(k_m) + E[k_m]^2) - E[q_m]^2 E[k_m]^2", "1",
                   "Var(q·k) = d_k", "Claim: Var(q·k/√d_k) = 1", "Var(q·k/√d_k) = 1")
    started = time.process_time()
    grade = check("derivation", SCALED[0], answer, SCALED[1])
    seconds = time.process_time() - started
    assert (grade.correct, grade.score) == (True, 1.0)
    assert seconds < 2.0, seconds


# A sentence's full stop (or comma, semicolon) closing a line is layout: before, a right
# derivation ending "Hence Var(q·k) = ... ." was refused: "unexpected character '.'".
CLOSING_MARKS = [
    pytest.param(lines(*GOOD[:-1], RESULT + "."), RIGHT_FROM_LINE_1, id="full stop after the result"),
    pytest.param(lines(*GOOD, f"Hence {STATEMENT}."), RIGHT_FROM_LINE_1, id="full stop after the conclusion"),
    pytest.param(lines(GOOD[0] + ",", GOOD[1] + ";", GOOD[2] + " .", RESULT + "."), RIGHT_FROM_LINE_1,
                 id="comma, semicolon and spaced full stop"),
]


@pytest.mark.parametrize("answer, feedback", CLOSING_MARKS)
def test_a_closing_full_stop_is_layout(answer, feedback):
    assert verdict(GENERAL, answer) == (True, 1.0, None, None, feedback)


def test_a_closing_full_stop_never_makes_a_wrong_step_right():
    wrong = lines(GOOD[0], "d_k Var(q_m) Var(k_m).", RESULT + ".")
    assert verdict(GENERAL, wrong)[:3] == verdict(GENERAL, lines(GOOD[0], "d_k Var(q_m) Var(k_m)", RESULT))[:3]
    assert verdict(GENERAL, wrong)[:2] == (False, 0.0)


def test_an_ellipsis_is_still_refused_as_a_format_error():
    grade = check("derivation", GENERAL[0], lines(*GOOD[:-1], RESULT + "..."), GENERAL[1])
    assert (grade.correct, grade.score) == (False, 0.0) and grade.error is not None
