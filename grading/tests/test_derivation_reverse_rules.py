"""Rules read right to left, side results in a derivation without a start, and hostile derivations.

The definition of covariance, the variance of a sum of independent terms, bilinearity and the
splitting of a double sum were accepted left to right only: ``E[q_1 k_1] - E[q_1] E[k_1] =
Cov(q_1, k_1)`` or ``Var(q_1) + Var(k_1) = Var(q_1 + k_1)`` was "not justified". Read right to
left they are rule steps too, with the same assumption as the forward rule (independent terms
for a variance of a sum), and only when the rules forwards do not reach the step.

Without a ``start``, the first line opened the derivation even when it was a side result (the
chapter's ``Var(q_m k_m) = ... = 1`` before ``Var(q·k) = d_k · 1 = d_k``), so the next line
"did not follow from line 1" (and with partial credit a hollow answer earned 0.125). A chained
line the next line does not go on from, whose value is not the required result, is now a side
result there too, and a false one is "not true".

Hostile derivations are answered (refused, or graded wrong) within the sandbox's CPU time;
a few took seconds to minutes before (the rows marked "before:")."""

import time

import pytest

from grading.core import moment_rules
from grading.core.answers import check
from grading.core.derivation import Canonicaliser
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
WITHOUT_START = {key: value for key, value in MOMENTS.items() if key != "start"}
# Means that are not 0: a step that holds only for zero means does not hold here.
WITH_MEANS = {"symbols": {"mu_q": "real", "mu_k": "real", "sigma_q": "positive", "sigma_k": "positive",
                          "d_k": "positive, integer"},
              "random_variables": {"q": {"mean": "mu_q", "variance": "sigma_q**2"},
                                   "k": {"mean": "mu_k", "variance": "sigma_k**2"}}}
UNIT = {"symbols": {"d_k": "positive"}, "start": "Var(dot(q, k))", "min_steps": 2, "max_rules_per_step": 2,
        "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}}}
UNIT_WITHOUT_START = {key: value for key, value in UNIT.items() if key != "start"}

CORRECT = "Correct: every step follows by a named rule and the last is the result."
COVARIANCE_BACKWARDS = "the definition of covariance read backwards: E[XY] − E[X]E[Y] = Cov(X, Y)"
VARIANCES_BACKWARDS = "the variance of a sum of independent terms read backwards: Var(X) + Var(Y) = Var(X + Y)"
BILINEARITY_BACKWARDS = "bilinearity read backwards: Σ_m Σ_n Cov(X_m, Y_n) = Cov(Σ_m X_m, Σ_n Y_n)"
JOIN = "joining the m = n and m ≠ n terms into one double sum"
INDEPENDENCE = "independence: E[XY] = E[X]E[Y]"
SUBSTITUTION = "substituting the declared mean or variance"
SUM_AND_TERMS = ("the variance of a sum of independent terms (the sum of their variances) and a sum of identical "
                 "terms (their number times one term)")
DEFINITION_AND_INDEPENDENCE = f"the definition Var(X) = E[X²] − E[X]² and {INDEPENDENCE}"
UNJUSTIFIED_TAIL = ("The rules turn a moment into simpler ones; a line that undoes a rule, goes back to an earlier line, "
                    "or only holds because of the declared means and variances is not a step.")
PAIRS = "Σ_{m≠n} Cov(q_m k_m, q_n k_n)"
DOUBLE = "Σ_m Σ_n Cov(q_m k_m, q_n k_n)"


# --------------------------------------------------------------------------- the rules read backwards


def _search(before: str, after: str, depth: int = 2, options: dict = MOMENTS, **kwargs):
    canonicaliser = Canonicaliser(options)
    return moment_rules.rules_between(canonicaliser.structure(before), canonicaliser.structure(after),
                                      canonicaliser.model.key, depth, **kwargs)


@pytest.mark.parametrize("before, after, rules", [
    ("E[q_1 k_1] - E[q_1] E[k_1]", "Cov(q_1, k_1)", ["covariance_from_moments"]),
    ("E[q_1 k_1] - E[q_1] E[k_1]", "Cov(k_1, q_1)", ["covariance_from_moments"]),
    ("d_k E[q_1 k_1] - d_k E[q_1] E[k_1] + 1", "d_k Cov(q_1, k_1) + 1", ["covariance_from_moments"]),
    ("E[q_1 k_1 q_2 k_2] - E[q_1 k_1] E[q_2 k_2]", "Cov(q_1 k_1, q_2 k_2)", ["covariance_from_moments"]),
    ("Var(q_1) + Var(k_1)", "Var(q_1 + k_1)", ["combine_variances"]),
    ("Var(q_1 + k_1) + Var(q_2)", "Var(q_1 + k_1 + q_2)", ["combine_variances"]),
    ("Var(q_1) + Var(q_2) + Var(q_3)", "Var(q_1 + q_2 + q_3)", ["combine_variances"]),  # all at once: one rule
    ("2 Var(q_1) + 2 Var(q_2)", "2 Var(q_1 + q_2)", ["combine_variances"]),
    ("Σ_m Var(q_m k_m)", "Var(Σ_m q_m k_m)", ["combine_variances"]),
    ("Σ_m Var(q_m k_m)", "Var(q·k)", ["combine_variances"]),
    (DOUBLE, "Cov(q·k, q·k)", ["bilinearity_backwards"]),
    (f"Σ_m Cov(q_m k_m, q_m k_m) + {PAIRS}", DOUBLE, ["join_double_sum"]),
    (f"Σ_m Var(q_m k_m) + {PAIRS}", DOUBLE, ["variance_as_covariance", "join_double_sum"]),
])
def test_a_rule_read_backwards_is_found_only_on_request(before, after, rules):
    assert _search(before, after) is None  # the rules forwards do not reach it
    assert [step[0] for step in _search(before, after, reverse=True)] == rules


@pytest.mark.parametrize("before, after", [
    # q_1 appears in both terms: Var(X) + Var(Y) = Var(X + Y) needs independent terms (the values agree
    # here only because E[k] = 0)
    ("Var(q_1) + Var(q_1 k_1)", "Var(q_1 + q_1 k_1)"),
    # Var(q) + Var(q) is not Var(2q)
    ("Var(q_1) + Var(q_1)", "Var(q_1 + q_1)"),
    # inside Σ_m Σ_n the indices may coincide: q_m and q_n are not independent there
    ("Σ_m Σ_n (Var(q_m) + Var(q_n))", "Σ_m Σ_n Var(q_m + q_n)"),
    # different factors in front: not one variance of a sum
    ("Var(q_1) + 2 Var(k_1)", "Var(q_1 + k_1)"),
    # E[XY] = Cov(X, Y) holds only for zero means: the covariance needs its − E[X]E[Y]
    ("E[q_1 k_1]", "Cov(q_1, k_1)"),
    ("E[q_1 k_1] + E[q_1] E[k_1]", "Cov(q_1, k_1)"),
    # the factor in front must be the same on both terms
    ("2 E[q_1 k_1] - E[q_1] E[k_1]", "Cov(q_1, k_1)"),
    # the m = n terms must be the m ≠ n terms' own
    (f"Σ_m Cov(q_m, q_m) + {PAIRS}", DOUBLE),
])
def test_what_a_rule_read_backwards_does_not_allow(before, after):
    assert _search(before, after, reverse=True) is None
    assert _search(before, after, depth=3, reverse=True, exclude=("substitution",)) is None


# (expected, options, answer, correct, score, feedback) — the whole feedback, exactly.
TABLE = [
    pytest.param(
        "0", WITH_MEANS | {"start": "E[q_1 k_1] - E[q_1] E[k_1]"}, ["Cov(q_1, k_1)", "0"], True, 1.0,
        f"{CORRECT} line 1: by {COVARIANCE_BACKWARDS}; line 2: by {INDEPENDENCE}.",
        id="covariance right to left, means not zero"),
    pytest.param(
        "0", WITH_MEANS | {"start": "E[q_1 k_1] - E[q_1] E[k_1]"}, ["Cov(k_1, q_1)", "0"], True, 1.0,
        f"{CORRECT} line 1: by {COVARIANCE_BACKWARDS}; line 2: by {INDEPENDENCE}.",
        id="covariance right to left, the other order"),
    pytest.param(
        "0", MOMENTS | {"start": "E[q_1 k_1]"}, ["Cov(q_1, k_1)", "0"], False, 0.0,
        f"Line 1 is not justified: its value agrees with the starting expression, but no rule leads from the "
        f"starting expression to it. {UNJUSTIFIED_TAIL}",
        id="E[XY] = Cov(X, Y) only for zero means: not justified"),
    pytest.param(
        "sigma_q^2 + sigma_k^2", MOMENTS | {"start": "Var(q_1) + Var(k_1)"},
        ["Var(q_1 + k_1)", "E[(q_1 + k_1)^2] - E[q_1 + k_1]^2",
         "E[q_1^2] + 2 E[q_1] E[k_1] + E[k_1^2] - (E[q_1] + E[k_1])^2", "sigma_q^2 + sigma_k^2"], True, 1.0,
        f"{CORRECT} line 1: by {VARIANCES_BACKWARDS}; line 2: by the definition Var(X) = E[X²] − E[X]²; line 3: by "
        f"linearity of expectation and {INDEPENDENCE}; line 4: by {SUBSTITUTION}.",
        id="the variance of a sum right to left"),
    pytest.param(
        "sigma_q^2 + sigma_q^2 sigma_k^2", MOMENTS | {"start": "Var(q_1) + Var(q_1 k_1)"},
        ["Var(q_1 + q_1 k_1)", "sigma_q^2 + sigma_q^2 sigma_k^2"], False, 0.0,
        f"Line 1 is not justified: its value agrees with the starting expression, but no rule leads from the "
        f"starting expression to it. {UNJUSTIFIED_TAIL}",
        id="dependent terms are not combined, even when the values agree"),
    pytest.param(
        TARGET, MOMENTS | {"start": f"Σ_m Var(q_m k_m) + {PAIRS}"},
        [DOUBLE, "Cov(q·k, q·k)", "Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
         TARGET], True, 1.0,
        f"{CORRECT} line 1: by Var(X) = Cov(X, X) and {JOIN}; line 2: by {BILINEARITY_BACKWARDS}; line 3: by "
        f"Cov(X, X) = Var(X); line 4: by {SUM_AND_TERMS}; line 5: by {DEFINITION_AND_INDEPENDENCE}; line 6: by "
        f"{SUBSTITUTION}.",
        id="the chapter's covariance route read back to Var(q·k)"),
]


@pytest.mark.parametrize("expected, options, answer, correct, score, feedback", TABLE)
def test_derivations_that_read_a_rule_right_to_left(expected, options, answer, correct, score, feedback):
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (correct, score, None, feedback)


# --------------------------------------------------------------------------- side results without a start

CHAPTER = ("Var(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = 1*1 - 0 = 1\n"
           "Var(Sum(q_m k_m, m, 1, d_k)) = d_k * 1 = d_k")
CHAPTER_FEEDBACK = (f"{CORRECT} 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 1: by {DEFINITION_AND_INDEPENDENCE}; "
                    f"'1*1 - 0' on line 1: by {SUBSTITUTION}; 'd_k * 1' on line 2: by {SUM_AND_TERMS} and the result "
                    "on line 1 (Var(q_m k_m) = 1).")
SEPARATE = "(The next line does not go on from it, so it is read as a separate result.)"

SIDE_TABLE = [
    pytest.param("d_k", UNIT_WITHOUT_START, CHAPTER, True, 1.0, CHAPTER_FEEDBACK,
                 id="the chapter's lemma first, no start"),
    pytest.param("d_k", UNIT, CHAPTER, True, 1.0, CHAPTER_FEEDBACK, id="the same with a start"),
    pytest.param(
        TARGET, WITHOUT_START,
        "Var(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = sigma_q^2 sigma_k^2 - 0\n"
        "Var(q·k) = d_k Var(q_m k_m) = d_k sigma_q^2 sigma_k^2", True, 1.0,
        f"{CORRECT} 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 1: by {DEFINITION_AND_INDEPENDENCE}; "
        f"'sigma_q^2 sigma_k^2 - 0' on line 1: by {SUBSTITUTION}; 'd_k Var(q_m k_m)' on line 2: by {SUM_AND_TERMS}; "
        "'d_k sigma_q^2 sigma_k^2' on line 2: by the result on line 1 (Var(q_m k_m) = sigma_q^2 sigma_k^2 - 0).",
        id="general variances, the lemma used as the last step, no start"),
    pytest.param(
        TARGET, WITHOUT_START,
        "Var(q_m) = E[q_m^2] - E[q_m]^2 = sigma_q^2\n"
        "Var(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = sigma_q^2 sigma_k^2\n"
        "Var(q·k) = d_k Var(q_m k_m) = d_k sigma_q^2 sigma_k^2", True, 1.0,
        f"{CORRECT} 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 2: by {DEFINITION_AND_INDEPENDENCE}; "
        f"'sigma_q^2 sigma_k^2' on line 2: by {SUBSTITUTION}; 'd_k Var(q_m k_m)' on line 3: by {SUM_AND_TERMS}; "
        "'d_k sigma_q^2 sigma_k^2' on line 3: by the result on line 2 (Var(q_m k_m) = sigma_q^2 sigma_k^2).",
        id="two side results before the derivation, one unused"),
    # With unit variances Var(q_m k_m) = 1 is the value the line above ends with; equal values do not join
    # the two lines: the derivation opens at line 3, which starts from the required value.
    pytest.param(
        "d_k", UNIT_WITHOUT_START, "Var(q_m) = E[q_m^2] - E[q_m]^2 = 1\n" + CHAPTER, True, 1.0,
        f"{CORRECT} 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 2: by {DEFINITION_AND_INDEPENDENCE}; "
        f"'1*1 - 0' on line 2: by {SUBSTITUTION}; 'd_k * 1' on line 3: by {SUM_AND_TERMS} and the result "
        "on line 2 (Var(q_m k_m) = 1).",
        id="a side result ending at the value the next line starts from is still a side result"),
    pytest.param(
        "d_k", UNIT_WITHOUT_START, "Var(q_m k_m) = E[q_m^2 k_m^2] - E[q_m k_m]^2 = 2\nVar(q·k) = d_k Var(q_m k_m) = d_k",
        False, 0.0,
        f"Line 1: 'E[q_m^2 k_m^2] - E[q_m k_m]^2 = 2' is not true: under the exercise's assumptions the two sides "
        f"are not equal. {SEPARATE}",
        id="a false lemma, no start: not true"),
    pytest.param(
        "d_k", UNIT_WITHOUT_START, "Var(q_m k_m) = 1\nVar(q·k) = d_k", False, 0.0,
        "This line only states the result: no step applies a rule. Show how the rules lead from the question to it, "
        "a few at a time.",
        id="hollow: the leap for one term as a lemma, then the leap for the sum, no start"),
    # A first line whose value is the required result is the derivation itself: the next line is its break.
    pytest.param(
        "d_k", UNIT_WITHOUT_START, "Var(q·k) = d_k Var(q_m k_m)\nd_k^2 Var(q_m k_m) = d_k^2", False, 0.0,
        "Line 2: 'd_k^2 Var(q_m k_m)' does not follow from line 1: under the exercise's assumptions the two are not "
        "equal.",
        id="a first line that starts from the question is not a side result"),
    pytest.param(
        "d_k", UNIT_WITHOUT_START, "Var(q·k) = d_k^2 Var(q_m k_m)\nd_k Var(q_m k_m) = d_k", False, 0.0,
        "Line 1: 'd_k^2 Var(q_m k_m)' does not follow from 'Var(q·k)': under the exercise's assumptions the two are "
        "not equal. The variance of a sum of d_k independent terms is d_k times the variance of one term, not d_k² "
        "times: Var(aX) = a² Var(X) scales one variable, it does not add up independent copies.",
        id="a wrong first line that starts from the question breaks the derivation"),
]


@pytest.mark.parametrize("expected, options, answer, correct, score, feedback", SIDE_TABLE)
def test_side_results_with_and_without_a_start(expected, options, answer, correct, score, feedback):
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (correct, score, None, feedback)


def test_without_a_start_a_side_result_is_read_as_with_one():
    with_start = check("derivation", "d_k", CHAPTER, UNIT)
    without = check("derivation", "d_k", CHAPTER, UNIT_WITHOUT_START)
    assert (without.correct, without.score, without.feedback) == (with_start.correct, with_start.score, with_start.feedback)
    kinds = [(step["step"], step["line"], step["kind"], step.get("side_result"), step.get("used"))
             for step in without.details["steps"]]
    assert kinds == [(1, 1, "lemma", 1, True), (2, 1, "rule", 1, True), (3, 1, "rule", 1, True),
                     (4, 1, "restatement", 1, True), (5, 2, "start", None, None), (6, 2, "rule", None, None),
                     (7, 2, "restatement", None, None)]


def test_a_false_lemma_without_a_start_names_its_slip():
    grade = check("derivation", "d_k", "Var(q_m k_m) = Var(q_m) + Var(k_m) = 2\nVar(q·k) = d_k Var(q_m k_m) = d_k",
                  UNIT_WITHOUT_START)
    assert (grade.correct, grade.score, grade.misconception, grade.details["first_wrong_step"]) == (
        False, 0.0, "sum_of_variances", 2)
    assert grade.feedback.startswith(
        f"Line 1: 'Var(q_m k_m) = Var(q_m) + Var(k_m)' is not true: under the exercise's assumptions the two sides are "
        f"not equal. {SEPARATE} Var(q_m k_m) is not Var(q_m) + Var(k_m)")


@pytest.mark.parametrize("options", [{}, {"max_rules_per_step": 0}, {"max_rules_per_step": 4}, {"partial_credit": True},
                                     {"big_step_credit": 0.5}])
@pytest.mark.parametrize("answer", [
    "Var(q_m) = E[q_m^2] - E[q_m]^2 = 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = Var(q_m k_m)\nVar(q·k) = d_k",
    "1 = 1\nVar(q·k) = d_k",
    "E[q_m] = 0\nE[k_m^2] = 1\nVar(q_m) = E[q_m^2] - E[q_m]^2 = 1 - 0\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\nVar(q_m k_m) = 1 = 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\nd_k",
])
def test_hollow_derivations_with_lemmas_and_no_start_earn_zero(answer, options):
    grade = check("derivation", "d_k", answer, UNIT_WITHOUT_START | options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade


# --------------------------------------------------------------------------- hostile derivations

# The sandbox gives a check 2 s of CPU time (grading.core.sandbox.run_limited); past that the
# answer is "passed on for review" instead of answered.
CPU_SECONDS = 2.0
SEVEN_TERMS = "q_1 + q_2 + q_3 + q_4 + q_5 + k_1 + k_2"
TEN_VARIANCES = " + ".join(f"Var(q_{index})" for index in range(1, 11))
TEN_TERMS = " + ".join(f"q_{index}" for index in range(1, 11))
TOO_MANY_TERMS = ("the step is too big to check: multiplied out it has {} terms (the limit is 100); write it in "
                  "smaller pieces")
NOT_JUSTIFIED_LINE_2 = ("Line 2 is not justified: its value agrees with line 1, but no rule leads from line 1 to it. "
                        + UNJUSTIFIED_TAIL)


TEN = "10*sigma_q^2"
E_39_DEEP = ("Line 2: 'E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E[E…' does not follow from line 1: under "
             "the exercise's assumptions the two are not equal. E[X²] is not E[X]²: the mean of a square is the variance "
             "plus the square of the mean.")
FULLWIDTH = (f"{CORRECT} 'd_k Var(q_m k_m)' on line 1: by {SUM_AND_TERMS}; 'd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)' "
             f"on line 1: by {DEFINITION_AND_INDEPENDENCE}; 'd_k*sigma_q^2*sigma_k^2' on line 1: by {SUBSTITUTION}.")
DROPPED_MEAN_SQUARE = (" Var(X) = E[X²] − E[X]²: the second term was dropped. It is 0 here only because the means are "
                       "0; say so with a rule (independence, then the declared means) instead of leaving it out.")
TEN_COMBINED = (f"{CORRECT} line 2: by {VARIANCES_BACKWARDS}; line 3: by the variance of a sum of independent terms (the "
                f"sum of their variances) and {SUBSTITUTION}.")

# (expected, options, answer, error, feedback): an answer that cannot be read has the error as
# its feedback. The rows marked "before:" were not answered within the bound, or wrongly.
HOSTILE = [
    pytest.param(TARGET, MOMENTS, "\n".join(["Var(q·k)"] * 100), "too many steps (100; the limit is 30)", None,
                 id="100 lines"),
    pytest.param(TARGET, MOMENTS, "d_k Var(q_m k_m)" + " + 0" * 1246,
                 "Line 1: the answer is too long (5000 characters; the limit is 2000)", None, id="a 5,000-character line"),
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", "(" * 200 + TARGET + ")" * 200],
                 "Line 2: the expression is nested too deeply (more than 40 brackets)", None, id="200 brackets"),
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", "E[" * 200 + "q_m" + "]" * 200],
                 "Line 2: the expression is too long (more than 600 symbols)", None, id="E[E[E[...]]] 200 deep"),
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", "E[" * 39 + "q_m" + "]" * 39], None, E_39_DEEP,
                 id="E[E[E[...]]] 39 deep"),
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", "d_k Var(q_m k_m)", "d_k (Е[q_m^2] Е[k_m^2])", TARGET],
                 "Line 3: unexpected character 'Е' at position 6: it is a Cyrillic letter (cyrillic capital letter ie), not a Latin one: type names with Latin letters a–z", None,
                 id="a Cyrillic Е for E"),
    pytest.param(TARGET, MOMENTS, ["Vаr(q·k)", "d_k Var(q_m k_m)", TARGET],
                 "Line 1: unexpected character 'а' at position 2: it is a Cyrillic letter (cyrillic small letter a), not a Latin one: type names with Latin letters a–z", None,
                 id="a Cyrillic а in Var"),
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", "d_k Var(q_m\u200b k_m)", TARGET],
                 "Line 2: unexpected character '\\u200b' at position 12: it is an invisible or special space character (zero width space): delete it", None,
                 id="a zero-width space"),
    # before: "unexpected character '=' ... write an expression, not an equation: leave out '='"
    pytest.param(TARGET, MOMENTS,
                 "Var(q·k) ＝ d_k Var(q_m k_m) ＝ d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) ＝ " + TARGET, None,
                 FULLWIDTH, id="before: fullwidth equals signs chain steps like ="),
    # before: minutes (multiplied out, then evaluated term by term)
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", f"E[({SEVEN_TERMS})^12]", "0"], "Line 2: " + TOO_MANY_TERMS.format(18564),
                 None, id="before: a power of a sum that expands to 18,564 terms"),
    # before: 9 s
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", f"E[({SEVEN_TERMS})^6]", "0"], "Line 2: " + TOO_MANY_TERMS.format(924),
                 None, id="before: a power of a sum that expands to 924 terms"),
    # before: 9 s, in the search for rules and for a slip
    pytest.param(TEN, WITHOUT_START, [TEN_VARIANCES, f"E[({TEN_TERMS})^2]", "10 sigma_q^2"], None, NOT_JUSTIFIED_LINE_2,
                 id="before: ten variances, then a step that holds only for zero means"),
    # before: 5 s
    pytest.param(TEN, WITHOUT_START, [TEN_VARIANCES, " + ".join(f"E[q_{index}^2]" for index in range(1, 11)),
                                      "10 sigma_q^2"], None, NOT_JUSTIFIED_LINE_2 + DROPPED_MEAN_SQUARE,
                 id="before: ten variances, then their second moments (zero means only)"),
    # before: 20 s (every step searched in full)
    pytest.param(TEN, WITHOUT_START,
                 # 29 lines and the result: the most steps an answer may have. No rule brings in a random
                 # variable, so the search from line 1 stops at once at q_11 (before: most of a second)
                 [" + ".join(f"Var(q_{index})" for index in range(first, first + 10)) for first in range(1, 30)]
                 + ["10 sigma_q^2"], None, NOT_JUSTIFIED_LINE_2, id="before: 29 lines of ten variances, none justified"),
    # before: 13 s, and not justified
    pytest.param(TEN, WITHOUT_START, [TEN_VARIANCES, f"Var({TEN_TERMS})", "10 sigma_q^2"], None, TEN_COMBINED,
                 id="before: ten variances, then the variance of their sum"),
]


@pytest.mark.parametrize("expected, options, answer, error, feedback", HOSTILE)
def test_hostile_derivations_are_answered_within_the_time_bound(expected, options, answer, error, feedback):
    # The sandbox's checker processes are warm (they serve many checks each): a right
    # derivation first, so the bound is not spent on this process's first symbolic work
    # (0.3-0.6 s here), which depended on which test a worker ran before this one.
    check("derivation", TARGET, ["Var(q·k)", "d_k Var(q_m k_m)", TARGET], MOMENTS)
    started = time.process_time()
    grade = check("derivation", expected, answer, options)
    seconds = time.process_time() - started
    assert (grade.error, grade.feedback) == (error, feedback or error)
    assert (grade.correct, grade.score) == ((True, 1.0) if feedback and feedback.startswith(CORRECT) else (False, 0.0))
    assert not grade.details.get("could_not_grade")
    assert seconds < CPU_SECONDS
