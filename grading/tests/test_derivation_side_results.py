"""Derivations with side results (lemmas) and with definitions read backwards.

The chapter proves Var(q·k) = d_k by first finding Var(q_m k_m) = 1 for one term and then
using it: that one-term line is a true side result, not a step that "does not follow".
A side result earns nothing by itself; a later step may use it; a leap written as a side
result is judged as the same leap in the chain would be; a false one is named as not true.
E[X²] = Var(X) + E[X]² and E[X]E[Y] = E[XY] are rule steps in either direction."""

import pytest
import sympy

from grading.core import moment_rules
from grading.core.answers import check
from grading.core.derivation import Canonicaliser
from grading.derivation_feedback import derivation_steps_html
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
# The unit-variance part of exercises/bank/score-variance.yaml.
UNIT = {"symbols": {"d_k": "positive"}, "start": "Var(dot(q, k))", "min_steps": 2, "max_rules_per_step": 2,
        "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}}}
CHAPTER = ("Var(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = 1*1 - 0 = 1\n"
           "Var(Sum(q_m k_m, m, 1, d_k)) = d_k * 1 = d_k")
SUM_AND_TERMS = ("the variance of a sum of independent terms (the sum of their variances) and a sum of identical "
                 "terms (their number times one term)")
DEFINITION_AND_INDEPENDENCE = "the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]"
SUBSTITUTION = "substituting the declared mean or variance"
HOLLOW_LINE_2 = ("'Var(q·k)' on line 2 only restates the question, and no step applies a rule to show an intermediate "
                 "result: padding (+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result.")
HOLLOW_LINE_4 = HOLLOW_LINE_2.replace("line 2", "line 4")
SIDE_NOTE = "(The line does not go on from the starting expression, so it is read as a separate result.)"
UNJUSTIFIED_TAIL = ("The rules turn a moment into simpler ones; a line that undoes a rule, goes back to an earlier line, "
                    "or only holds because of the declared means and variances is not a step.")
TOO_BIG_ONE_TERM = ("it takes 3 rules (the definition Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and "
                    "substituting the declared mean or variance) — show them (this exercise allows 2 rules per step).")

REVERSED_SECOND_MOMENT = [
    "Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2 k_m^2] - E[q_m k_m]^2)", "d_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)",
    "d_k ((Var(q_m) + E[q_m]^2)(Var(k_m) + E[k_m]^2) - (E[q_m] E[k_m])^2)", "d_k ((sigma_q^2 + 0)(sigma_k^2 + 0) - 0)",
    TARGET]
ONE_RULE_A_LINE = ["Var(q·k)", "Σ_m Var(q_m k_m)", "d_k Var(q_m k_m)", "d_k (E[q_m^2 k_m^2] - E[q_m k_m]^2)",
                   "d_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)", "d_k (1·1 - 0)", "d_k"]


# (expected, options, answer, correct, score, feedback) — the whole feedback, exactly.
TABLE = [
    pytest.param(
        "d_k", UNIT, CHAPTER, True, 1.0,
        "Correct: every step follows by a named rule and the last is the result. 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' "
        f"on line 1: by {DEFINITION_AND_INDEPENDENCE}; '1*1 - 0' on line 1: by {SUBSTITUTION}; 'd_k * 1' on line 2: by "
        f"{SUM_AND_TERMS} and the result on line 1 (Var(q_m k_m) = 1).",
        id="the chapter's two lines: the one-term lemma, then the sum using it"),
    pytest.param(
        TARGET, MOMENTS,
        "Var(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = sigma_q^2 sigma_k^2 - 0\n"
        "Var(q·k) = d_k Var(q_m k_m) = d_k sigma_q^2 sigma_k^2", True, 1.0,
        "Correct: every step follows by a named rule and the last is the result. 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' "
        f"on line 1: by {DEFINITION_AND_INDEPENDENCE}; 'sigma_q^2 sigma_k^2 - 0' on line 1: by {SUBSTITUTION}; "
        f"'d_k Var(q_m k_m)' on line 2: by {SUM_AND_TERMS}; 'd_k sigma_q^2 sigma_k^2' on line 2: by the result on line 1 "
        "(Var(q_m k_m) = sigma_q^2 sigma_k^2 - 0).",
        id="the same with general variances, the lemma used as the last step"),
    pytest.param(
        "d_k", UNIT,
        "Var(q·k) = d_k Var(q_m k_m)\nVar(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = 1\nd_k Var(q_m k_m) = d_k",
        True, 1.0,
        f"Correct: every step follows by a named rule and the last is the result. 'd_k Var(q_m k_m)' on line 1: by "
        f"{SUM_AND_TERMS}; 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 2: by {DEFINITION_AND_INDEPENDENCE}; '1' on "
        f"line 2: by {SUBSTITUTION}; 'd_k' on line 3: by the result on line 2 (Var(q_m k_m) = 1).",
        id="the lemma between two lines of the chain"),
    pytest.param(
        TARGET, MOMENTS, REVERSED_SECOND_MOMENT, True, 1.0,
        "Correct: every step follows by a named rule and the last is the result. line 2: by the variance of a sum of "
        "independent terms (the sum of their variances) and a sum of identical terms (their number times one term); "
        "line 3: by the definition Var(X) = E[X²] − E[X]²; line 4: by independence: E[XY] = E[X]E[Y]; line 5: by the "
        f"definition of variance read backwards: E[X²] = Var(X) + E[X]²; line 6: by {SUBSTITUTION}.",
        id="E[X²] = Var(X) + E[X]² before substituting"),
    pytest.param(
        TARGET, MOMENTS, ["d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
                          "d_k (E[q_m^2] E[k_m^2] - E[q_m k_m]^2)", "d_k (E[q_m^2] E[k_m^2] - 0)", TARGET], True, 1.0,
        f"Correct: every step follows by a named rule and the last is the result. line 1: by {SUM_AND_TERMS}; line 2: "
        f"by {DEFINITION_AND_INDEPENDENCE}; line 3: by independence read backwards: E[X]E[Y] = E[XY]; line 4: by "
        f"independence: E[XY] = E[X]E[Y] and {SUBSTITUTION}; line 5: by {SUBSTITUTION}.",
        id="E[X]E[Y] = E[XY] read backwards"),
    pytest.param(
        "d_k", UNIT, ONE_RULE_A_LINE, True, 1.0,
        f"Correct: every step follows by a named rule and the last is the result. line 2: by the variance of a sum of "
        "independent terms (the sum of their variances); line 3: by a sum of identical terms (their number times one "
        "term); line 4: by the definition Var(X) = E[X²] − E[X]²; line 5: by independence: E[XY] = E[X]E[Y]; line 6: "
        f"by {SUBSTITUTION}.",
        id="a seven-line chain, one rule a line: unchanged"),
    pytest.param(
        TARGET, MOMENTS,
        "Var(q_m k_m) = sigma_q^2 sigma_k^2\nVar(q·k) = d_k Var(q_m k_m)\nd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)\n"
        + TARGET, True, 1.0,
        f"Correct: every step follows by a named rule and the last is the result. 'd_k Var(q_m k_m)' on line 2: by "
        f"{SUM_AND_TERMS}; line 3: by {DEFINITION_AND_INDEPENDENCE}; line 4: by {SUBSTITUTION}.",
        id="a true lemma no step uses (a leap, even) costs nothing"),
    # hollow: 0 whatever the lemmas
    pytest.param("d_k", UNIT, "Var(q·k) = d_k", False, 0.0,
                 "'Var(q·k)' on line 1 only restates the question, and no step applies a rule to show an intermediate "
                 "result: padding (+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result.",
                 id="hollow: the goal restated"),
    pytest.param("d_k", UNIT, "Var(q_m) = E[q_m^2] - E[q_m]^2 = 1\nVar(q·k) = d_k", False, 0.0, HOLLOW_LINE_2,
                 id="hollow: a lemma, then one leap that does not use it"),
    pytest.param("d_k", UNIT, "Var(q_m k_m) = Var(q_m k_m)\nVar(q·k) = d_k", False, 0.0, HOLLOW_LINE_2,
                 id="hollow: x = x"),
    pytest.param("d_k", UNIT, "1 = 1\nVar(q·k) = d_k", False, 0.0, HOLLOW_LINE_2, id="hollow: 1 = 1"),
    pytest.param("d_k", UNIT, "E[q_m] = 0\nE[k_m^2] = 1\nVar(q_m) = E[q_m^2] - E[q_m]^2 = 1 - 0\nVar(q·k) = d_k",
                 False, 0.0, HOLLOW_LINE_4, id="hollow: padded with true but irrelevant lemmas"),
    pytest.param("d_k", UNIT, "Var(q_m k_m) = 1\nVar(q·k) = d_k", False, 0.0, HOLLOW_LINE_2,
                 id="hollow: the leap for one term as a lemma, then the leap for the sum"),
    # a leap written as a lemma is the same leap as in the chain
    pytest.param("d_k", UNIT, "Var(q_m k_m) = 1\nVar(q·k) = d_k Var(q_m k_m) = d_k", False, 0.7,
                 f"The values are right, but '1' on line 1 is too big a step from 'Var(q_m k_m)': {TOO_BIG_ONE_TERM}",
                 id="leap as a lemma: too big, like the same leap in the chain"),
    pytest.param("d_k", UNIT, "Var(q·k) = d_k Var(q_m k_m) = d_k", False, 0.7,
                 f"The values are right, but 'd_k' on line 1 is too big a step from 'd_k Var(q_m k_m)': {TOO_BIG_ONE_TERM}",
                 id="the same leap in the chain"),
    pytest.param("d_k", UNIT, "Var(q_m k_m) = E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2 = 1\nVar(q·k) = d_k Var(q_m k_m) = d_k",
                 False, 0.0,
                 "'E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2' on line 1 is not justified: its value agrees with "
                 "'Var(q_m k_m)', but no rule leads from 'Var(q_m k_m)' to it. " + UNJUSTIFIED_TAIL,
                 id="a used lemma with a sign slip hidden by zero means: not justified"),
    # false lemmas: named, and said to be not true
    pytest.param("d_k", UNIT, "Var(q_m k_m) = E[q_m^2 k_m^2] - E[q_m k_m]^2 = 2\nVar(q·k) = d_k Var(q_m k_m) = d_k",
                 False, 0.0,
                 "Line 1: 'E[q_m^2 k_m^2] - E[q_m k_m]^2 = 2' is not true: under the exercise's assumptions the two sides "
                 f"are not equal. {SIDE_NOTE}",
                 id="a false lemma"),
    pytest.param("d_k", UNIT, "Var(q·k)\nd_k^2 Var(q_m k_m) = d_k^2 (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)\nd_k^2",
                 False, 0.0,
                 "Line 2: 'd_k^2 Var(q_m k_m)' does not follow from line 1: under the exercise's assumptions the two are "
                 "not equal. The variance of a sum of d_k independent terms is d_k times the variance of one term, not "
                 "d_k² times: Var(aX) = a² Var(X) scales one variable, it does not add up independent copies.",
                 id="a line the next one goes on from was meant as a step: it is the break"),
    pytest.param(TARGET, MOMENTS, ["Var(q·k)", "Cov(q·k, q·k)", "Var(q·k)", "d_k Var(q_m k_m)",
                                   "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", TARGET], False, 0.0,
                 "Line 3 is not justified: its value agrees with line 2, but no rule leads from line 2 to it. "
                 + UNJUSTIFIED_TAIL, id="going back to an earlier line is not a step, even by a rule"),
]


@pytest.mark.parametrize("expected, options, answer, correct, score, feedback", TABLE)
def test_derivations_with_side_results(expected, options, answer, correct, score, feedback):
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (correct, score, None, feedback)
    assert "not equal" not in feedback or not correct


def test_the_walkers_derivation_is_not_called_unequal():
    grade = check("derivation", "d_k", CHAPTER, UNIT)
    assert "not equal" not in grade.feedback and "does not follow" not in grade.feedback
    assert [(step["step"], step["line"], step["kind"], step.get("side_result"), step.get("used"))
            for step in grade.details["steps"]] == [
        (1, 1, "lemma", 1, True), (2, 1, "rule", 1, True), (3, 1, "rule", 1, True), (4, 1, "restatement", 1, True),
        (5, 2, "restatement", None, None), (6, 2, "rule", None, None), (7, 2, "restatement", None, None)]
    assert grade.details["steps"][5]["rules"] == ["variance_of_sum", "identical_terms", "lemma"]
    assert grade.details["steps"][5]["rule_count"] == 2  # using the lemma is not a rule of its own


def test_a_false_lemma_names_its_line_and_the_slip():
    grade = check("derivation", "d_k", "Var(q_m k_m) = Var(q_m) + Var(k_m) = 2\nVar(q·k) = d_k Var(q_m k_m) = d_k", UNIT)
    assert (grade.correct, grade.score, grade.misconception) == (False, 0.0, "sum_of_variances")
    assert grade.feedback.startswith(
        f"Line 1: 'Var(q_m k_m) = Var(q_m) + Var(k_m)' is not true: under the exercise's assumptions the two sides are "
        f"not equal. {SIDE_NOTE} Var(q_m k_m) is not Var(q_m) + Var(k_m)")
    assert grade.details["first_wrong_step"] == 2
    assert [step["kind"] for step in grade.details["steps"]] == [
        "lemma", "wrong", "unchecked", "unchecked", "unchecked", "unchecked"]


@pytest.mark.parametrize("options", [{}, {"max_rules_per_step": 0}, {"max_rules_per_step": 4}, {"partial_credit": True},
                                     {"big_step_credit": 0.5}])
@pytest.mark.parametrize("answer", [
    "Var(q_m) = E[q_m^2] - E[q_m]^2 = 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = Var(q_m k_m)\nVar(q·k) = d_k",
    "1 = 1\nVar(q·k) = d_k",
    "E[q_m] = 0\nE[k_m^2] = 1\nVar(q_m) = E[q_m^2] - E[q_m]^2 = 1 - 0\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\nVar(q_m k_m) = 1 = 1\nVar(q·k) = d_k",
])
def test_hollow_derivations_with_lemmas_earn_zero_under_any_options(answer, options):
    grade = check("derivation", "d_k", answer, UNIT | options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), grade


def test_a_leap_as_a_lemma_earns_what_the_leap_earns_in_the_chain():
    as_lemma = "Var(q_m k_m) = 1\nVar(q·k) = d_k Var(q_m k_m) = d_k"
    in_chain = "Var(q·k) = d_k Var(q_m k_m) = d_k"
    for credit, score in ((0, 0.4), (0.5, 0.7)):  # 2 rules shown, 3 in the leap: (2 + credit · 3) / 5
        options = UNIT | {"big_step_credit": credit}
        assert check("derivation", "d_k", as_lemma, options).score == score
        assert check("derivation", "d_k", in_chain, options).score == score
    # with no limit on rules a step, the leap is accepted in either place
    assert check("derivation", "d_k", as_lemma, UNIT | {"max_rules_per_step": 0}).score == 1.0


def test_the_feedback_lists_a_side_result_as_such():
    html = derivation_steps_html({"details": check("derivation", "d_k", CHAPTER, UNIT).details},
                                 show_verdicts=True, show_instances=False)
    assert "<em>A side result: it does not go on from the line before, and need not; a later step uses it.</em>" in html
    assert ("By the variance of a sum of independent terms (the sum of their variances) and a sum of identical terms "
            "(their number times one term) and the result on line 1 (Var(q_m k_m) = 1).") in html
    assert "✗" not in html


def test_an_unused_lemma_is_never_marked():
    answer = "Var(q_m k_m) = 1\n" + "\n".join(ONE_RULE_A_LINE)
    grade = check("derivation", "d_k", answer, UNIT)
    assert (grade.correct, grade.score) == (True, 1.0)
    html = derivation_steps_html({"details": grade.details}, show_verdicts=True, show_instances=False)
    assert "✗" not in html
    assert ("<em>A side result: it does not go on from the line before; no later step uses it, so it earns "
            "nothing.</em>") in html
    assert "<em>Part of a side result no later step uses: equal to the expression before it, and not counted.</em>" in html


# --------------------------------------------------------------------------- the rules themselves


def _structure(text: str, options: dict = MOMENTS):
    return Canonicaliser(options).structure(text)


def _search(before: str, after: str, depth: int = 2, **kwargs):
    key = Canonicaliser(MOMENTS).model.key
    return moment_rules.rules_between(_structure(before), _structure(after), key, depth, **kwargs)


def test_definitions_read_backwards_only_on_request():
    pairs = [("E[q_m^2]", "Var(q_m) + E[q_m]^2", "second_moment"),
             ("E[q_m^2] E[k_m^2]", "(Var(q_m) + E[q_m]^2)(Var(k_m) + E[k_m]^2)", "second_moment"),
             ("E[q_m] E[k_m]", "E[q_m k_m]", "combine_independent"),
             ("E[q_m^2] E[k_m^2]", "E[q_m^2 k_m^2]", "combine_independent")]
    for before, after, rule in pairs:
        assert _search(before, after) is None
        assert [step[0] for step in _search(before, after, reverse=True)] == [rule]


def test_dependent_expectations_are_not_combined():
    assert _search("E[q_m] E[q_m k_m]", "E[q_m^2 k_m]", depth=1, reverse=True) is None
    assert _search("E[q_m]^2", "E[q_m^2]", depth=1, reverse=True) is None


def test_a_lemma_is_a_free_rewrite_but_never_inside_a_double_sum():
    key = Canonicaliser(MOMENTS).model.key
    lemma = (_structure("Cov(q_m k_m, q_n k_n)"), sympy.Integer(0))
    pairs = _structure("Σ_{m≠n} Cov(q_m k_m, q_n k_n)")
    double = _structure("Σ_m Σ_n Cov(q_m k_m, q_n k_n)")
    assert moment_rules.rules_between(pairs, sympy.Integer(0), key, 0, lemmas=(lemma,))[0][0] == "lemma"
    # in Σ_m Σ_n the terms with m = n are variances, not covariances of independent terms
    assert moment_rules.rules_between(double, sympy.Integer(0), key, 2, lemmas=(lemma,)) is None
