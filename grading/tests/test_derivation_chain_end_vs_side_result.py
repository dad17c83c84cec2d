"""A line whose first expression has the value of the chain's end, but is another quantity,
is a side result when the derivation comes back to the chain's end later.

Every expression of a right derivation has the same value, so a side result that starts from
a quantity with that value (``E[(q·k)^2] = … = d_k`` below ``Var(q·k) = E[(q·k)^2] - E[q·k]^2``
in the unit-variance part, or ``Var(q_m) = E[q_m^2] - E[q_m]^2 = 1`` below a chain for
``Var(q_m k_m)``, which is 1 too) used to be read as a step of the chain: that step was not
justified or too big, or the line that came back to the chain "went back to an earlier line",
and a right derivation scored 0. Now such a line is a side result when its own chain is true
and a later line starts from the chain's end again, or from it with side results written in
(``d_k - 0``) while no rule step leads from the chain's end to the line; otherwise it is a step
as before. Rows marked "before:" give the old grade. The answers are graded against the bank's
own parts, as the worker does."""

from pathlib import Path

import pytest

from exercises.engine import draw_variant, load_spec, part_options, reference_answers
from grading.core.answers import check

BANK = Path(__file__).resolve().parents[2] / "exercises" / "bank"


def bank_part(slug: str, part_key: str) -> tuple[object, dict]:
    """The reference answer and checker options of one bank part, on the first variant."""
    spec = load_spec((BANK / f"{slug}.yaml").read_text())
    params = draw_variant(spec, 0).params
    return reference_answers(spec, params)[part_key], part_options(spec, params, part_key)


UNIT = bank_part("score-variance", "unit_variance")
GENERAL = bank_part("score-variance", "general_derivation")
UNIT_WITHOUT_START = (UNIT[0], {key: value for key, value in UNIT[1].items() if key != "start"})
PARTIAL = (UNIT[0], UNIT[1] | {"partial_credit": True})
# The unit-variance part's assumptions, asked for one term: every expression of the chain is 1.
ONE_TERM = ("1", UNIT[1] | {"start": "Var(q_m k_m)"})

DEFINITION_LINE = "Var(q·k) = E[(q·k)^2] - E[q·k]^2"
MEAN_LEMMA = "E[q·k] = d_k E[q_m k_m] = d_k E[q_m] E[k_m] = 0"
SQUARE_LEMMA = "E[(q·k)^2] = d_k E[(q_m k_m)^2] + d_k (d_k - 1) E[q_m k_m]^2 = d_k"
SQUARE_LEMMA_IN_FULL = ("E[(q·k)^2] = d_k E[(q_m k_m)^2] + d_k (d_k - 1) E[q_m k_m]^2 = d_k E[q_m^2] E[k_m^2] "
                        "+ d_k (d_k - 1) E[q_m]^2 E[k_m]^2 = d_k")
BACK_TO_THE_CHAIN = "E[(q·k)^2] - E[q·k]^2 = d_k - 0 = d_k"
ONE_TERM_CHAIN = "Var(q_m k_m) = E[q_m^2 k_m^2] - E[q_m k_m]^2 = E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2"
VAR_Q = "Var(q_m) = E[q_m^2] - E[q_m]^2 = 1"

CORRECT = "Correct: every step follows by a named rule and the last is the result."
DEFINITION = "the definition Var(X) = E[X²] − E[X]²"
INDEPENDENCE = "independence: E[XY] = E[X]E[Y]"
SUBSTITUTION = "substituting the declared mean or variance"
LINEARITY_AND_TERMS = "linearity of expectation and a sum of identical terms (their number times one term)"
SQUARE_OF_SUM = "expanding the square of a sum (its cross terms factor by independence)"
SUM_AND_TERMS = ("the variance of a sum of independent terms (the sum of their variances) and a sum of identical "
                 "terms (their number times one term)")
UNJUSTIFIED_TAIL = ("The rules turn a moment into simpler ones; a line that undoes a rule, goes back to an earlier "
                    "line, or only holds because of the declared means and variances is not a step.")
HOLLOW_TAIL = ("and no step applies a rule to show an intermediate result: padding (+ 0, · 1, + σ − σ) and "
               "restating are not steps. Show how the rules lead to the result.")
NOT_EQUAL = "under the exercise's assumptions the two are not equal."


def _two_side_results(result: str) -> str:
    """The feedback of DEFINITION_LINE, MEAN_LEMMA, the full square lemma ending at ``result``, then
    the chain again: both side results used by 'd_k - 0' (or its σ form)."""
    return (f"{CORRECT} 'E[(q·k)^2] - E[q·k]^2' on line 1: by {DEFINITION}; 'd_k E[q_m k_m]' on line 2: by "
            f"{LINEARITY_AND_TERMS}; 'd_k E[q_m] E[k_m]' on line 2: by {INDEPENDENCE}; '0' on line 2: by "
            f"{SUBSTITUTION}; 'd_k E[(q_m k_m)^2] + d_k (d_k - 1) E[q_m k_m]^2' on line 3: by {SQUARE_OF_SUM}; "
            f"'d_k E[q_m^2] E[k_m^2] + d_k (d_k - 1) E[q_m]^2 E[k_m]^2' on line 3: by {INDEPENDENCE}; '{result}' on "
            f"line 3: by {SUBSTITUTION}; '{result} - 0' on line 4: by the result on line 2 (E[q·k] = 0) and the "
            f"result on line 3 (E[(q·k)^2] = {result}).")


TWO_SIDE_RESULTS_KINDS = ["restatement", "rule", "lemma", "rule", "rule", "rule", "lemma", "rule", "rule", "rule",
                          "restatement", "rule", "restatement"]
SWAPPED = (f"{CORRECT} 'E[(q·k)^2] - E[q·k]^2' on line 1: by {DEFINITION}; 'd_k E[(q_m k_m)^2] + d_k (d_k - 1) "
           f"E[q_m k_m]^2' on line 2: by {SQUARE_OF_SUM}; 'd_k E[q_m^2] E[k_m^2] + d_k (d_k - 1) E[q_m]^2 E[k_m]^2' "
           f"on line 2: by {INDEPENDENCE}; 'd_k' on line 2: by {SUBSTITUTION}; 'd_k E[q_m k_m]' on line 3: by "
           f"{LINEARITY_AND_TERMS}; 'd_k E[q_m] E[k_m]' on line 3: by {INDEPENDENCE}; '0' on line 3: by "
           f"{SUBSTITUTION}; 'd_k - 0' on line 4: by the result on line 2 (E[(q·k)^2] = d_k) and the result on line 3 "
           "(E[q·k] = 0).")
ONE_TERM_RIGHT = (f"{CORRECT} 'E[q_m^2 k_m^2] - E[q_m k_m]^2' on line 1: by {DEFINITION}; 'E[q_m^2] E[k_m^2] - "
                  f"E[q_m]^2 E[k_m]^2' on line 1: by {INDEPENDENCE}; '1' on line 3: by {SUBSTITUTION}.")
ONE_TERM_TWO_SIDE_RESULTS = (
    f"{CORRECT} 'E[q_m^2 k_m^2] - E[q_m k_m]^2' on line 1: by {DEFINITION}; 'E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2' "
    f"on line 4: by {INDEPENDENCE}; '1·1 - 0' on line 4: by {SUBSTITUTION}.")
CHAIN_AFTER_THE_SIDE_RESULT = (
    f"{CORRECT} 'd_k Var(q_m k_m)' on line 2: by {SUM_AND_TERMS}; 'd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)' on "
    f"line 2: by {DEFINITION} and {INDEPENDENCE}; 'd_k' on line 2: by {SUBSTITUTION}.")
RULE_STEP_BY_THE_SIDE_RESULT = (
    f"{CORRECT} 'E[(q·k)^2] - E[q·k]^2' on line 1: by {DEFINITION}; 'd_k E[q_m k_m]' on line 2: by "
    f"{LINEARITY_AND_TERMS}; 'd_k E[q_m] E[k_m]' on line 2: by {INDEPENDENCE}; '0' on line 2: by {SUBSTITUTION}; "
    f"'E[(q·k)^2]' on line 3: by the result on line 2 (E[q·k] = 0); 'd_k E[(q_m k_m)^2] + d_k (d_k - 1) "
    f"E[q_m k_m]^2' on line 3: by {SQUARE_OF_SUM}; 'd_k' on line 3: by {INDEPENDENCE} and {SUBSTITUTION}.")
CONCLUDED_BY_THE_DEFINITION = (
    f"{CORRECT} 'd_k E[(q_m k_m)^2] + d_k (d_k - 1) E[q_m k_m]^2' on line 2: by {SQUARE_OF_SUM}; 'd_k' on line 2: by "
    f"{INDEPENDENCE} and {SUBSTITUTION}; 'd_k E[q_m k_m]' on line 3: by {LINEARITY_AND_TERMS}; 'd_k E[q_m] E[k_m]' on "
    f"line 3: by {INDEPENDENCE}; '0' on line 3: by {SUBSTITUTION}; 'd_k' on line 4: by {DEFINITION} and the result on "
    "line 2 (E[(q·k)^2] = d_k) and the result on line 3 (E[q·k] = 0).")

# (part, answer, correct, score, misconception, feedback, marks, kinds): the whole feedback, the
# details other than the steps (``marks``) and the kind of every step, exactly.
TABLE = [
    # right
    pytest.param(
        UNIT, f"{DEFINITION_LINE}\n{MEAN_LEMMA}\n{SQUARE_LEMMA_IN_FULL}\n{BACK_TO_THE_CHAIN}", True, 1.0, None,
        _two_side_results("d_k"), {}, TWO_SIDE_RESULTS_KINDS,
        id="E[(q·k)^2] = … = d_k, then back to the chain (before: 'line 4 goes back', not justified, 0)"),
    pytest.param(
        UNIT_WITHOUT_START, f"{DEFINITION_LINE}\n{MEAN_LEMMA}\n{SQUARE_LEMMA_IN_FULL}\n{BACK_TO_THE_CHAIN}", True, 1.0,
        None, _two_side_results("d_k"), {}, ["start"] + TWO_SIDE_RESULTS_KINDS[1:],
        id="the same without a start (before: not justified, 0)"),
    pytest.param(
        GENERAL,
        f"{DEFINITION_LINE}\n{MEAN_LEMMA}\n{SQUARE_LEMMA_IN_FULL[:-len('d_k')]}d_k sigma_q^2 sigma_k^2\n"
        "E[(q·k)^2] - E[q·k]^2 = d_k sigma_q^2 sigma_k^2 - 0 = d_k sigma_q^2 sigma_k^2", True, 1.0, None,
        _two_side_results("d_k sigma_q^2 sigma_k^2"), {}, TWO_SIDE_RESULTS_KINDS,
        id="the general part: E[(q·k)^2] = … = d_k σ_q² σ_k² (before: not justified, 0)"),
    pytest.param(
        UNIT, f"{DEFINITION_LINE}\n{SQUARE_LEMMA_IN_FULL}\n{MEAN_LEMMA}\nd_k - 0 = d_k", True, 1.0, None, SWAPPED, {},
        ["restatement", "rule", "lemma", "rule", "rule", "rule", "lemma", "rule", "rule", "rule", "rule",
         "restatement"],
        id="E[(q·k)^2] first, E[q·k] next, then the chain with both written in (before: 'too big', 0.7857)"),
    pytest.param(
        ONE_TERM, f"{ONE_TERM_CHAIN}\n{VAR_Q}\nE[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2 = 1", True, 1.0, None,
        ONE_TERM_RIGHT, {}, ["restatement", "rule", "rule", "lemma", "side", "side", "restatement", "rule"],
        id="the chain at a value 1, then Var(q_m) = … = 1, then the chain again (before: 'Var(q_m)' not justified, 0)"),
    pytest.param(
        ONE_TERM,
        "Var(q_m k_m) = E[q_m^2 k_m^2] - E[q_m k_m]^2\n" + VAR_Q + "\nVar(k_m) = E[k_m^2] - E[k_m]^2 = 1\n"
        "E[q_m^2 k_m^2] - E[q_m k_m]^2 = E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2 = 1·1 - 0 = 1", True, 1.0, None,
        ONE_TERM_TWO_SIDE_RESULTS, {},
        ["restatement", "rule", "lemma", "side", "side", "lemma", "side", "side", "restatement", "rule", "rule",
         "restatement"],
        id="two side results of value 1 between two lines of the chain (before: 'Var(q_m)' not justified, 0)"),
    pytest.param(
        UNIT, f"{SQUARE_LEMMA}\nVar(q·k) = d_k Var(q_m k_m) = d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) = d_k",
        True, 1.0, None, CHAIN_AFTER_THE_SIDE_RESULT, {},
        ["lemma", "side", "side", "restatement", "rule", "rule", "rule"],
        id="a side result of value d_k first, then the chain from the question (before: 'Var(q·k)' not justified, 0)"),
    pytest.param(
        UNIT, f"{DEFINITION_LINE}\n{MEAN_LEMMA}\n{SQUARE_LEMMA}\nd_k", True, 1.0, None, RULE_STEP_BY_THE_SIDE_RESULT,
        {}, ["restatement", "rule", "lemma", "rule", "rule", "rule", "rule", "rule", "rule", "restatement"],
        id="unchanged: a line a rule step reaches (by E[q·k] = 0) stays a step of the chain"),
    pytest.param(
        UNIT, f"Var(q·k)\n{SQUARE_LEMMA}\n{MEAN_LEMMA}\nVar(q·k) = d_k", True, 1.0, None,
        CONCLUDED_BY_THE_DEFINITION, {},
        ["restatement", "lemma", "rule", "rule", "lemma", "rule", "rule", "rule", "restatement", "rule"],
        id="the question, two side results, then the question again and the result by the definition and both "
           "(before: 'Var(q·k)' on line 4 not justified, 0)"),
    # wrong
    pytest.param(
        UNIT, "E[q·k] = 0\nE[(q·k)^2] = d_k\nVar(q·k) = E[(q·k)^2] - E[q·k]^2 = d_k - 0 = d_k", False, 0.5625, None,
        "The values are right, but '0' on line 1 is too big a step from 'E[q·k]': it takes 4 rules (linearity of "
        "expectation, a sum of identical terms (their number times one term), independence: E[XY] = E[X]E[Y] and "
        "substituting the declared mean or variance) — show them (this exercise allows 2 rules per step).",
        {"too_big_step": 2}, ["lemma", "too_big", "lemma", "too_big", "restatement", "rule", "rule", "restatement"],
        id="two side results stated without their steps, both used: too big, half credit for their rules "
           "(before: 'Var(q·k)' on line 3 not justified, 0)"),
    pytest.param(
        UNIT, f"{SQUARE_LEMMA}\nE[(q·k)^2] = d_k\nd_k", False, 0.7143, None,
        "The values are right, but 'E[(q·k)^2]' on line 1 is too big a step from the starting expression: it takes 4 "
        "rules (the definition Var(X) = E[X²] − E[X]², linearity of expectation, independence: E[XY] = E[X]E[Y] and "
        "substituting the declared mean or variance) — show them (this exercise allows 2 rules per step).",
        {"too_big_step": 1}, ["too_big", "rule", "rule", "lemma", "side", "restatement"],
        id="a result restated on its own line is not a step back: the leap to E[(q·k)^2] is named "
           "(before: line 2 not justified, 0)"),
    pytest.param(
        UNIT, f"{DEFINITION_LINE}\n{SQUARE_LEMMA}\nE[(q·k)^2] - E[q·k]^2 = d_k - E[q·k]^2 = d_k", False, 0.75, None,
        "The values are right, but 'd_k' on line 3 is too big a step from 'd_k - E[q·k]^2': it takes 4 rules "
        "(linearity of expectation, a sum of identical terms (their number times one term), independence: "
        "E[XY] = E[X]E[Y] and substituting the declared mean or variance) — show them (this exercise allows 2 rules "
        "per step).",
        {"too_big_step": 8}, ["restatement", "rule", "lemma", "rule", "rule", "restatement", "rule", "too_big"],
        id="back to the chain, then a leap over E[q·k]^2 (before: 'line 3 goes back', not justified, 0)"),
    pytest.param(
        ONE_TERM, f"{ONE_TERM_CHAIN}\n{VAR_Q}\nE[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2 = Var(q_m) Var(k_m) = 1", False,
        0.0, None,
        "'Var(q_m) Var(k_m)' on line 3 is not justified: its value agrees with 'E[q_m^2] E[k_m^2] - E[q_m]^2 "
        "E[k_m]^2', but no rule leads from 'E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2' to it. " + UNJUSTIFIED_TAIL,
        {"first_unjustified_step": 8},
        ["restatement", "rule", "rule", "lemma", "side", "side", "restatement", "not_justified", "rule"],
        id="back to the chain, then Var(q_m) Var(k_m) (zero means only): named there (before: line 2 named)"),
    pytest.param(
        UNIT, f"{DEFINITION_LINE}\n{SQUARE_LEMMA[:-len('d_k')]}2 d_k\n{BACK_TO_THE_CHAIN}", False, 0.0, None,
        f"Line 2: '2 d_k' does not follow from 'd_k E[(q_m k_m)^2] + d_k (d_k - 1) E[q_m k_m]^2': {NOT_EQUAL}",
        {"first_wrong_step": 5}, ["restatement", "rule", "too_big", "rule", "wrong", "unchecked", "unchecked",
                                  "unchecked"],
        id="unchanged: a line of equal value whose own chain is false stays a step, and breaks there"),
    pytest.param(
        PARTIAL, f"{DEFINITION_LINE}\n{MEAN_LEMMA}\n{SQUARE_LEMMA}\nE[(q·k)^2] - E[q·k]^2 = 2 d_k", False, 0.0455, None,
        f"Line 4: '2 d_k' does not follow from 'E[(q·k)^2] - E[q·k]^2': {NOT_EQUAL}", {"first_wrong_step": 11},
        ["restatement", "rule", "lemma", "side", "side", "side", "lemma", "side", "side", "restatement", "wrong"],
        id="with partial credit: 0.5 x the one rule step of the chain / 11 steps; unused side results earn nothing "
           "(before: 0, the return to the chain was not justified)"),
    # hollow: 0
    pytest.param(
        ONE_TERM, f"{VAR_Q}\nVar(q_m k_m) = 1", False, 0.0, None,
        f"'Var(q_m k_m)' on line 2 only restates the question, {HOLLOW_TAIL}", {"hollow": True},
        ["lemma", "side", "side", "restatement", "too_big"],
        id="hollow: Var(q_m) = … = 1, then the question and the bare result (before: not justified, 0)"),
    pytest.param(
        UNIT, "Var(q·k)\nE[(q·k)^2] = d_k\nVar(q·k) = d_k", False, 0.0, None,
        f"Line 1 only restates the question, {HOLLOW_TAIL}", {"hollow": True},
        ["restatement", "lemma", "side", "restatement", "too_big"],
        id="hollow: the question, a bare side result of value d_k, the question and the result (before: line 3 "
           "not justified, 0)"),
    pytest.param(
        UNIT, f"{SQUARE_LEMMA}\nVar(q·k) = d_k", False, 0.0, None,
        f"'Var(q·k)' on line 2 only restates the question, {HOLLOW_TAIL}", {"hollow": True},
        ["lemma", "side", "side", "restatement", "too_big"],
        id="hollow: a side result of value d_k, then the bare leap (before: not justified, 0)"),
]


@pytest.mark.parametrize("part, answer, correct, score, misconception, feedback, marks, kinds", TABLE)
def test_a_line_equal_to_the_chain_end_only_in_value_is_a_side_result_when_the_derivation_comes_back(
        part, answer, correct, score, misconception, feedback, marks, kinds):
    expected, options = part
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.misconception, grade.feedback) == (
        correct, score, None, misconception, feedback)
    assert {key: value for key, value in grade.details.items() if key != "steps"} == marks
    assert [step["kind"] for step in grade.details["steps"]] == kinds


def test_the_side_result_of_equal_value_is_used_and_counted_once():
    answer = f"{DEFINITION_LINE}\n{MEAN_LEMMA}\n{SQUARE_LEMMA_IN_FULL}\n{BACK_TO_THE_CHAIN}"
    grade = check("derivation", UNIT[0], answer, UNIT[1])
    assert [(step["line"], step.get("side_result"), step.get("used")) for step in grade.details["steps"]] == [
        (1, None, None), (1, None, None), (2, 2, True), (2, 2, True), (2, 2, True), (2, 2, True), (3, 3, True),
        (3, 3, True), (3, 3, True), (3, 3, True), (4, None, None), (4, None, None), (4, None, None)]
    assert grade.details["steps"][11]["rules"] == ["lemma"]


@pytest.mark.parametrize("options", [{}, {"max_rules_per_step": 0}, {"max_rules_per_step": 4}, {"partial_credit": True},
                                     {"big_step_credit": 0.5}])
@pytest.mark.parametrize("answer", [
    "Var(q·k)\nE[(q·k)^2] = d_k\nVar(q·k) = d_k",
    "Var(q·k) = d_k\nE[(q·k)^2] = d_k = d_k\nd_k",
    "E[(q·k)^2] = d_k\nVar(q·k) = d_k",
    "Var(q·k) + 0\nE[(q·k)^2] = d_k + 0\nVar(q·k) = d_k",
    "Var(q·k)\nE[q·k] = 0\nE[(q·k)^2] = d_k\nVar(q·k) = d_k",
    "Var(q·k)\nE[(q·k)^2] = d_k * 1\nVar(q·k) * 1 = d_k",
    "Var(q_m) = 1\nE[(q·k)^2] = d_k\nVar(q·k) = d_k",
])
def test_hollow_answers_with_side_results_of_equal_value_earn_zero_under_any_options(answer, options):
    expected, unit_options = UNIT
    for graded_options in (unit_options | options, UNIT_WITHOUT_START[1] | options):
        grade = check("derivation", expected, answer, graded_options)
        assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), (answer, graded_options, grade.feedback)
