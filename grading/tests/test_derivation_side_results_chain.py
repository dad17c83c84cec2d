"""How the lines of a derivation join into chains when a side result ends at the value the
next line starts from.

Under unit variances many expressions are 1: a side result such as ``Var(q_m) = 1`` ends at
the value the next line may start from. Equal values used to join the two: without a start
the side result opened the derivation and the next line went on from it (a chain the student
did not write: the right answer "did not follow", and with partial credit a hollow answer
earned up to 0.125 for the side result's steps), and with a start a stray line equal to the
side result's end turned the side result into a step ("'Var(q_m k_m)' does not follow"). A
line that starts with = was read like any other line, so ``= 1`` under a side result broke
the derivation instead of finishing the side result.

Now a line goes on from the chain, never from a side result, unless it starts with = (then
it goes on from the line above, whatever that is). A side result is a step only when the rest
of the answer goes on from it and never comes back to the chain. Rows marked "before:" give
the old grade. The answers are graded against the bank's own parts, as the worker does."""

from pathlib import Path

import pytest

from exercises.engine import draw_variant, load_spec, part_options, reference_answers
from grading.core.answers import check
from grading.core.derivation import split_steps

BANK = Path(__file__).resolve().parents[2] / "exercises" / "bank"


def bank_part(slug: str, part_key: str) -> tuple[object, dict]:
    """The reference answer and checker options of one bank part, on the first variant."""
    spec = load_spec((BANK / f"{slug}.yaml").read_text())
    params = draw_variant(spec, 0).params
    return reference_answers(spec, params)[part_key], part_options(spec, params, part_key)


UNIT = bank_part("score-variance", "unit_variance")
GENERAL = bank_part("score-variance", "general_derivation")
# The checker also reads derivations without a start (the chain then opens where the answer does).
UNIT_WITHOUT_START = (UNIT[0], {key: value for key, value in UNIT[1].items() if key != "start"})
PARTIAL = (UNIT[0], UNIT[1] | {"partial_credit": True})

LEMMA = "Var(q_m k_m) = E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2"
CHAIN_TO_ONE_TERM = "Var(q·k) = d_k Var(q_m k_m)"

CORRECT = "Correct: every step follows by a named rule and the last is the result."
SUM_AND_TERMS = ("the variance of a sum of independent terms (the sum of their variances) and a sum of identical "
                 "terms (their number times one term)")
DEFINITION_AND_INDEPENDENCE = "the definition Var(X) = E[X²] − E[X]² and independence: E[XY] = E[X]E[Y]"
SUBSTITUTION = "substituting the declared mean or variance"
NOT_EQUAL = "under the exercise's assumptions the two are not equal."
HOLLOW_TAIL = ("and no step applies a rule to show an intermediate result: padding (+ 0, · 1, + σ − σ) and "
               "restating are not steps. Show how the rules lead to the result.")
LEMMA_CONTINUED_AND_USED = (
    f"{CORRECT} 'd_k Var(q_m k_m)' on line 1: by {SUM_AND_TERMS}; 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 2: "
    f"by {DEFINITION_AND_INDEPENDENCE}; line 3: by {SUBSTITUTION}; ")
TWO_LEMMAS_SECOND_USED = (
    f"{CORRECT} 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2' on line 2: by {DEFINITION_AND_INDEPENDENCE}; '1' on line 2: "
    f"by {SUBSTITUTION}; 'd_k Var(q_m k_m)' on line 3: by {SUM_AND_TERMS}; 'd_k' on line 3: by the result on line 2 "
    "(Var(q_m k_m) = 1).")
CHAIN_ON_LINE_3 = (
    f"{CORRECT} 'd_k Var(q_m k_m)' on line 3: by {SUM_AND_TERMS}; 'd_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)' on "
    f"line 3: by {DEFINITION_AND_INDEPENDENCE}; 'd_k' on line 3: by {SUBSTITUTION}.")
FULL_CHAIN_ON_LINE_3 = "Var(q·k) = d_k Var(q_m k_m) = d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2) = d_k"
UNIT_LEMMAS = f"Var(q_m) = E[q_m^2] - E[q_m]^2 = 1\n{LEMMA} = 1\n{CHAIN_TO_ONE_TERM} = d_k"

# (part, answer, correct, score, misconception, feedback, marks, kinds): the whole feedback, the
# details other than the steps (``marks``) and the kind of every step, exactly.
TABLE = [
    # right
    pytest.param(
        UNIT, f"{CHAIN_TO_ONE_TERM}\n{LEMMA}\n= 1\nd_k Var(q_m k_m) = d_k", True, 1.0, None,
        LEMMA_CONTINUED_AND_USED + "'d_k' on line 4: by the result on line 2 (Var(q_m k_m) = 1).", {},
        ["restatement", "rule", "lemma", "rule", "rule", "restatement", "rule"],
        id="'= 1' finishes the side result above it, which the last line uses (before: line 2 'does not follow', 0)"),
    pytest.param(
        UNIT, f"{CHAIN_TO_ONE_TERM}\n{LEMMA}\n＝ 1\nd_k Var(q_m k_m) = d_k", True, 1.0, None,
        LEMMA_CONTINUED_AND_USED + "'d_k' on line 4: by the result on line 2 (Var(q_m k_m) = 1).", {},
        ["restatement", "rule", "lemma", "rule", "rule", "restatement", "rule"],
        id="the same with a fullwidth equals sign (before: 0)"),
    pytest.param(
        GENERAL, f"{CHAIN_TO_ONE_TERM}\n{LEMMA}\n= sigma_q^2 sigma_k^2\nd_k Var(q_m k_m) = d_k sigma_q^2 sigma_k^2",
        True, 1.0, None,
        LEMMA_CONTINUED_AND_USED + "'d_k sigma_q^2 sigma_k^2' on line 4: by the result on line 2 "
        "(Var(q_m k_m) = sigma_q^2 sigma_k^2).", {},
        ["restatement", "rule", "lemma", "rule", "rule", "restatement", "rule"],
        id="the general part: '= σ_q² σ_k²' finishes the side result (before: 0)"),
    pytest.param(
        UNIT, UNIT_LEMMAS, True, 1.0, None, TWO_LEMMAS_SECOND_USED, {},
        ["lemma", "side", "side", "lemma", "rule", "rule", "restatement", "rule", "rule"],
        id="Var(q_m) = 1, then a line starting at 1, with a start: two side results, the second used"),
    pytest.param(
        UNIT_WITHOUT_START, UNIT_LEMMAS, True, 1.0, None, TWO_LEMMAS_SECOND_USED, {},
        ["lemma", "side", "side", "lemma", "rule", "rule", "start", "rule", "rule"],
        id="the same without a start (before: line 1 opened the chain, 'line 3 does not follow', 0)"),
    pytest.param(
        UNIT_WITHOUT_START, f"Var(q_i) = 1\n1 = Var(k_i)\n{FULL_CHAIN_ON_LINE_3}", True, 1.0, None, CHAIN_ON_LINE_3,
        {}, ["lemma", "side", "lemma", "side", "start", "rule", "rule", "rule"],
        id="Var(q_i) = 1, then '1 = Var(k_i)', no start: both side results (before: 'line 3 does not follow', 0)"),
    pytest.param(
        UNIT, f"Var(q_i) = 1\n1 = Var(k_i)\n{FULL_CHAIN_ON_LINE_3}", True, 1.0, None, CHAIN_ON_LINE_3, {},
        ["lemma", "side", "lemma", "side", "restatement", "rule", "rule", "rule"],
        id="the same with a start"),
    pytest.param(
        UNIT, "Var(q·k)\n= d_k Var(q_m k_m)\n= d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)\n= d_k", True, 1.0, None,
        f"{CORRECT} line 2: by {SUM_AND_TERMS}; line 3: by {DEFINITION_AND_INDEPENDENCE}; line 4: by {SUBSTITUTION}.",
        {}, ["restatement", "rule", "rule", "rule"],
        id="the chain itself written with '= ' lines: unchanged"),
    # wrong
    pytest.param(
        UNIT, f"{CHAIN_TO_ONE_TERM}\n{LEMMA} = 1\n1\nd_k", False, 0.0, None,
        f"Line 3: '1' does not follow from line 1: {NOT_EQUAL}", {"first_wrong_step": 6},
        ["restatement", "rule", "lemma", "side", "side", "wrong", "unchecked"],
        id="a stray '1' under a true side result is the break, not the side result (before: line 2 named)"),
    pytest.param(
        PARTIAL, f"{CHAIN_TO_ONE_TERM}\n{LEMMA} = 1\n1\nd_k", False, 0.0714, None,
        f"Line 3: '1' does not follow from line 1: {NOT_EQUAL}", {"first_wrong_step": 6},
        ["restatement", "rule", "lemma", "side", "side", "wrong", "unchecked"],
        id="with partial credit: 0.5 x the one rule step before the break / 7 steps; the side result earns nothing"),
    pytest.param(
        GENERAL, f"{CHAIN_TO_ONE_TERM}\n{LEMMA} = sigma_q^2 sigma_k^2\nsigma_q^2 sigma_k^2\nd_k sigma_q^2 sigma_k^2",
        False, 0.0, None, f"Line 3: 'sigma_q^2 sigma_k^2' does not follow from line 1: {NOT_EQUAL}",
        {"first_wrong_step": 6}, ["restatement", "rule", "lemma", "side", "side", "wrong", "unchecked"],
        id="the general part: a stray 'σ_q² σ_k²' is the break (before: line 2 named)"),
    pytest.param(
        UNIT, f"{CHAIN_TO_ONE_TERM}\n{LEMMA} = 1\n1", False, 0.0, None,
        f"Line 2: 'Var(q_m k_m)' does not follow from line 1: {NOT_EQUAL}", {"first_wrong_step": 3},
        ["restatement", "rule", "wrong", "unchecked", "unchecked", "unchecked"],
        id="the answer ends on the side result's branch: it was meant as a step and is the break"),
    pytest.param(
        UNIT, "Var(q·k)\nd_k^2 Var(q_m k_m) = d_k^2 (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)\nd_k^2\nd_k^2 + 0",
        False, 0.0, "count_squared",
        f"Line 2: 'd_k^2 Var(q_m k_m)' does not follow from line 1: {NOT_EQUAL} The variance of a sum of d_k "
        "independent terms is d_k times the variance of one term, not d_k² times: Var(aX) = a² Var(X) scales one "
        "variable, it does not add up independent copies.",
        {"first_wrong_step": 2}, ["restatement", "wrong", "unchecked", "unchecked", "unchecked"],
        id="d_k² meant as a step, the rest never back on the chain: the slip is named on it"),
    pytest.param(
        UNIT, f"{CHAIN_TO_ONE_TERM}\n{LEMMA}\n= 2\nd_k Var(q_m k_m) = d_k", False, 0.0, None,
        "Line 3: 'E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2 = 2' is not true: under the exercise's assumptions the two "
        "sides are not equal. (The line does not go on from line 1, so it is read as a separate result.)",
        {"first_wrong_step": 5}, ["restatement", "rule", "lemma", "side", "wrong", "unchecked", "unchecked"],
        id="'= 2' finishes a side result that is not true (before: ''2' does not follow from line 1')"),
    pytest.param(
        UNIT, "Var(q_m k_m) = E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2\n= 1\nVar(q·k) = d_k Var(q_m k_m) = d_k",
        False, 0.0, None,
        "'E[q_m^2] E[k_m^2] + E[q_m]^2 E[k_m]^2' on line 1 is not justified: its value agrees with 'Var(q_m k_m)', "
        "but no rule leads from 'Var(q_m k_m)' to it. The rules turn a moment into simpler ones; a line that undoes a "
        "rule, goes back to an earlier line, or only holds because of the declared means and variances is not a step.",
        {"first_unjustified_step": 2}, ["lemma", "not_justified", "rule", "restatement", "rule", "rule"],
        id="a side result with a sign slip hidden by zero means, used: not justified, 0"),
    pytest.param(
        UNIT, f"Var(q_i) = 1\n{CHAIN_TO_ONE_TERM} = d_k", False, 0.7, None,
        "The values are right, but 'd_k' on line 2 is too big a step from 'd_k Var(q_m k_m)': it takes 3 rules (the "
        "definition Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean or "
        "variance) — show them (this exercise allows 2 rules per step).",
        {"too_big_step": 5}, ["lemma", "side", "restatement", "rule", "too_big"],
        id="Var(q_i) = 1 that no step can use does not shrink the leap after it"),
    # hollow, or steps that do not follow: 0
    pytest.param(
        UNIT, "Var(q_i) = 1\n1\nVar(q·k) = d_k", False, 0.0, None,
        f"Line 2: '1' does not follow from the starting expression: {NOT_EQUAL}", {"first_wrong_step": 3},
        ["lemma", "side", "wrong", "unchecked", "unchecked"],
        id="Var(q_i) = 1, a stray 1, then the bare leap: the stray line is the break"),
    pytest.param(
        UNIT, "Var(q_m k_m) = 1\n= 1\nVar(q·k) = d_k", False, 0.0, None, f"Line 2 only restates line 1, {HOLLOW_TAIL}",
        {"hollow": True}, ["lemma", "too_big", "restatement", "restatement", "rule"],
        id="hollow: a leap as a side result padded with '= 1', then the leap for the sum"),
    pytest.param(
        UNIT, "Var(q·k)\n= d_k", False, 0.0, None, f"Line 1 only restates the question, {HOLLOW_TAIL}",
        {"hollow": True}, ["restatement", "too_big"],
        id="hollow: the question, then '= d_k'"),
    pytest.param(
        UNIT_WITHOUT_START, "Var(q_i) = 1\n1 = 1\nVar(q·k) = d_k", False, 0.0, None,
        "This line only states the result: no step applies a rule. Show how the rules lead from the question to it, "
        "a few at a time.",
        {"hollow": True}, ["lemma", "side", "lemma", "side", "start", "too_big"],
        id="hollow without a start: two side results ending at 1, then the bare leap (before: 'does not follow')"),
]


@pytest.mark.parametrize("part, answer, correct, score, misconception, feedback, marks, kinds", TABLE)
def test_lines_join_the_chain_only_from_the_chain_or_after_an_equals_sign(part, answer, correct, score, misconception,
                                                                          feedback, marks, kinds):
    expected, options = part
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.misconception, grade.feedback) == (
        correct, score, None, misconception, feedback)
    assert {key: value for key, value in grade.details.items() if key != "steps"} == marks
    assert [step["kind"] for step in grade.details["steps"]] == kinds


INVALID = [
    pytest.param(UNIT, f"{CHAIN_TO_ONE_TERM}\nVar(q_m k_m) = E[q_m^2] E[k_m^2]\n= E[q_m^2\nd_k",
                 "Line 3: unbalanced brackets: '[' at position 4 is never closed",
                 id="an unreadable '=' line is named by its own line and column"),
    pytest.param(UNIT, f"{CHAIN_TO_ONE_TERM}\nVar(q_m k_m) = E[q_m^2] E[k_m^2]\n= x\nd_k",
                 "Line 3: unknown symbol 'x'; this answer may use d_k, k, k_m, q, q_m", id="an unknown symbol after '='"),
    pytest.param(UNIT, "=\n =", "the derivation is empty: write one step per line", id="equals signs only"),
    pytest.param(UNIT_WITHOUT_START, "= d_k",
                 "A derivation is a chain: write the expression you start from, then one step per line.",
                 id="one expression after '=' with nothing to go on from"),
]


@pytest.mark.parametrize("part, answer, error", INVALID)
def test_unreadable_continuations_are_format_errors(part, answer, error):
    expected, options = part
    grade = check("derivation", expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, error, error)


@pytest.mark.parametrize("options", [{}, {"max_rules_per_step": 0}, {"max_rules_per_step": 4}, {"partial_credit": True},
                                     {"big_step_credit": 0.5}])
@pytest.mark.parametrize("answer", [
    "Var(q_i) = 1\n1\nVar(q·k) = d_k",
    "Var(q_i) = 1\n1 = 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\n= 1\nVar(q·k) = d_k",
    "Var(q_m k_m) = 1\n1\nd_k",
    "Var(q·k)\n= d_k",
    "Var(q·k)\nVar(q_i) = 1\n= 1\nd_k",
])
def test_hollow_answers_and_steps_that_do_not_follow_earn_zero_under_any_options(answer, options):
    expected, part_options_ = UNIT
    for graded_options in (part_options_ | options, UNIT_WITHOUT_START[1] | options):
        grade = check("derivation", expected, answer, graded_options)
        assert (grade.correct, grade.score, grade.error) == (False, 0.0, None), (answer, graded_options, grade.feedback)


def test_a_side_result_finished_on_the_next_line_is_one_side_result():
    grade = check("derivation", UNIT[0], f"{CHAIN_TO_ONE_TERM}\n{LEMMA}\n= 1\nd_k Var(q_m k_m) = d_k", UNIT[1])
    assert [(step["step"], step["line"], step.get("side_result"), step.get("used")) for step in grade.details["steps"]] == [
        (1, 1, None, None), (2, 1, None, None), (3, 2, 2, True), (4, 2, 2, True), (5, 3, 2, True), (6, 4, None, None),
        (7, 4, None, None)]
    assert grade.details["steps"][6]["rules"] == ["lemma"]


@pytest.mark.parametrize("answer, continues", [
    ("Var(q·k)\n= d_k Var(q_m k_m)\n  ＝ d_k", [False, True, True]),
    ("= Var(q·k)\nd_k Var(q_m k_m) = d_k", [False, False, False]),  # the first line has no line above it
    ("Var(q·k)\n\n= d_k", [False, True]),  # a blank line between does not matter
    ("Σ_{m=1}^{d_k} Var(q_m k_m)\nd_k Var(q_m k_m)", [False, False]),  # = inside braces is not a continuation
])
def test_a_line_continues_the_one_above_only_when_it_starts_with_an_equals_sign(answer, continues):
    assert [step.continues for step in split_steps(answer)] == continues
