"""Derivations, third hostile pass: honest derivations laid out as students write them
(numbered, LaTeX rows and delimiters, words around the steps), hollow and wrong ones dressed up
the same way, partial credit that paid for nothing, and answers too large to look at.

Before this pass, a right derivation numbered ``1)`` or ``Step 1:``, wrapped in ``$…$``, typed
as LaTeX rows (``\\\\``, ``&=``, ``\\begin{align*}``) or closed by a sentence was refused or
scored 0; a derivation of leaps only (every step over the rule limit, the last a substitution)
earned 0.5-0.61; with ``partial_credit``, writing Var(X) as Cov(X, X) earned credit before a wrong step,
and without a start any true chain of another quantity earned half marks; a 20 MB answer took
3 s and 8 MB of ``d_k=`` 32 s before "too many steps"."""

import time

import pytest

from grading.core.answers import check, parse
from grading.core.derivation import MAX_ANSWER_CHARS, split_steps
from grading.tests.fixtures.answer_tests import MOMENTS

TARGET = "d_k*sigma_q^2*sigma_k^2"
EXERCISE = MOMENTS | {"min_steps": 2, "max_rules_per_step": 2}  # as the bank's general_derivation
WITHOUT_START = {key: value for key, value in EXERCISE.items() if key != "start"}
GOOD = ["Var(Sum(q_m*k_m, m, 1, d_k))", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
        "d_k sigma_q^2 sigma_k^2"]
CORRECT = "Correct: every step follows by a named rule and the last is the result."
SECONDS = 2.0
NOT_JUSTIFIED = ("is not justified: its value agrees with line 1, but no rule leads from line 1 to it. The rules turn a "
                 "moment into simpler ones; a line that undoes a rule, goes back to an earlier line, or only holds "
                 "because of the declared means and variances is not a step.")
RESTATES_QUESTION = ("only restates the question, and no step applies a rule to show an intermediate result: padding "
                     "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result.")
TOO_BIG_LAST = ("The values are right, but line 3 is too big a step from line 2: it takes 3 rules (the definition "
                "Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean or "
                "variance) — show them (this exercise allows 2 rules per step).")


def lines(*steps) -> str:
    return "\n".join(steps)


# --------------------------------------------------------------------------- right: full credit

RIGHT = [
    # before: invalid "Line 1: unbalanced brackets: ')' at position 2 closes nothing"
    pytest.param(lines(*(f"{n}) {step}" for n, step in enumerate(GOOD, 1))), id="numbered 1)"),
    # before: invalid "Line 1: unexpected character ':' at position 7"
    pytest.param(lines(*(f"Step {n}: {step}" for n, step in enumerate(GOOD, 1))), id="Step 1:"),
    pytest.param([f"step {n}: {step}" for n, step in enumerate(GOOD, 1)], id="step 1: in a list"),
    # before: 0, "Line 2: '2. d_k Var(q_m k_m)' does not follow from line 1" (read as 2 times d_k ...)
    pytest.param(lines(*(f"{n}. {step}" for n, step in enumerate(GOOD, 1))), id="numbered 1."),
    pytest.param(lines(*(f"({n}) {step}" for n, step in enumerate(GOOD, 1))), id="numbered (1)"),
    pytest.param(lines(*(f"{n}. {step}" for n, step in enumerate(GOOD, 1)), "as required."), id="numbered 1., then words"),
    # before: invalid "Line 5: 'is' is a reserved word and cannot be used in an answer"
    pytest.param(lines(*GOOD, "which is the required result."), id="a closing sentence"),
    pytest.param(lines("We start from the definition:", *GOOD, "QED"), id="an opening sentence and QED"),
    pytest.param(lines(*GOOD) + " □", id="an end-of-proof box"),
    pytest.param(lines(GOOD[0], "Using independence:", GOOD[1], "Expanding the variance:", GOOD[2], GOOD[3]),
                 id="headings ending in a colon between the steps"),
    pytest.param(lines(GOOD[0], GOOD[1] + " (by independence and identical terms)",
                       GOOD[2] + " by the definition of variance", GOOD[3] + ", since the means are 0"),
                 id="justifications after the steps"),
    pytest.param(lines(GOOD[0], GOOD[1], GOOD[2] + " (since E[q_m] = E[k_m] = 0)", GOOD[3]),
                 id="a justification with its own = signs"),
    # before: invalid "Line 1: unbalanced brackets: ')' … closes nothing"
    pytest.param(GOOD[0] + " = " + GOOD[1] + " (by Var(X + Y) = Var(X) + Var(Y)) = " + GOOD[2] + " = " + GOOD[3],
                 id="a justification with = signs inside a chained line"),
    pytest.param(lines(GOOD[0], "= " + GOOD[1] + r" \quad \text{(independent terms)}",
                       "= " + GOOD[2] + r" \qquad \text{by definition}", "= " + GOOD[3]), id="\\quad \\text{...}"),
    # before: invalid "Line 1: unexpected character '$' at position 1"
    pytest.param(lines(*(f"${step}$" for step in GOOD)), id="each line in $...$"),
    pytest.param("$$" + " = ".join(GOOD) + "$$", id="one chain in $$...$$"),
    pytest.param(lines(*(f"\\({step}\\)" for step in GOOD)), id="each line in \\(...\\)"),
    # before: 0, "Line 1: '… \\\\ d_k Var(q_m k_m) \\\\ …' does not follow from the starting expression"
    pytest.param(" \\\\ ".join(GOOD), id="LaTeX rows on one line"),
    # before: invalid "Line 1: unsupported LaTeX command \\begin"
    pytest.param("\\begin{align*} " + GOOD[0] + " &= " + " \\\\ &= ".join(GOOD[1:]) + " \\end{align*}",
                 id="an align* environment on one line"),
    pytest.param("\\begin{aligned}\n" + GOOD[0] + "\n&= " + " \\\\\n&= ".join(GOOD[1:]) + "\n\\end{aligned}",
                 id="an aligned environment over lines"),
    pytest.param(lines(GOOD[0], GOOD[1], GOOD[2], "Thus " + GOOD[3]), id="Thus"),
    pytest.param(lines(GOOD[0], "=> " + GOOD[1], "⇒ " + GOOD[2], "\\implies " + GOOD[3]), id="=>, ⇒ and \\implies"),
    pytest.param("\n\n" + "\n\n\n".join(GOOD) + "\n\n", id="blank lines"),
    pytest.param("\r\n".join(GOOD), id="CRLF"),
    pytest.param(" = ".join(GOOD), id="one = chain"),
    pytest.param(GOOD[1:], id="without the start"),
]


@pytest.mark.parametrize("answer", RIGHT)
def test_honest_derivations_laid_out_as_students_write_them_earn_full_credit(answer):
    started = time.process_time()
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade
    assert grade.feedback.startswith(CORRECT)
    assert time.process_time() - started < SECONDS


def test_a_numbered_line_keeps_its_line_and_column_as_typed():
    steps = split_steps("1) Var(q·k) = d_k Var(q_m k_m)\n2)   d_k", frozenset({"d_k"}))
    assert [(step.number, step.text, step.line, step.column, step.line_text) for step in steps] == [
        (1, "Var(q·k)", 1, 3, "1) Var(q·k) = d_k Var(q_m k_m)"), (2, "d_k Var(q_m k_m)", 1, 14, "1) Var(q·k) = d_k Var(q_m k_m)"),
        (3, "d_k", 2, 5, "2)   d_k")]


def test_a_reading_error_after_a_label_names_the_column_as_typed():
    grade = check("derivation", TARGET, "Step 1: Var(q·k)\nStep 2: d_k Var((q_m k_m)", EXERCISE)
    assert grade.error == "Line 2: unbalanced brackets: '(' at position 16 is never closed"


def test_the_preview_shows_the_steps_without_their_layout():
    parsed = parse("derivation", "$Var(q·k)$ \\\\ $= d_k Var(q_m k_m)$ (by linearity)", EXERCISE)
    assert (parsed.error, parsed.preview_latex) == (
        None, r"\operatorname{Var}\left[q \cdot k\right] \\ d_{k} \operatorname{Var}\left[q_{m} k_{m}\right]")


# --------------------------------------------------------------------------- hollow and wrong: no credit

NO_CREDIT = [
    pytest.param([TARGET], "This line only states the result: no step applies a rule. Show how the rules lead from "
                 "the question to it, a few at a time.", id="the goal restated"),
    pytest.param(GOOD[0] + " = " + TARGET, f"'{GOOD[0]}' on line 1 {RESTATES_QUESTION}", id="one jump on one line"),
    pytest.param(lines("1) " + GOOD[0], "2) " + TARGET), f"Line 1 {RESTATES_QUESTION}", id="one jump, numbered"),
    pytest.param([GOOD[0], TARGET + " as required"], f"Line 1 {RESTATES_QUESTION}", id="one jump, then words"),
    pytest.param(GOOD[0] + " = " + TARGET + " by linearity, independence and the definition",
                 f"'{GOOD[0]}' on line 1 {RESTATES_QUESTION}", id="one jump justified in words"),
    pytest.param(lines("We know that", GOOD[0], "Hence:", TARGET), f"Line 2 {RESTATES_QUESTION}",
                 id="one jump between sentences"),
    pytest.param([GOOD[0]] * 20 + [TARGET], f"Line 1 {RESTATES_QUESTION}", id="the question twenty times"),
    pytest.param([TARGET] + GOOD, f"Line 2 {NOT_JUSTIFIED}", id="the goal as the first line"),
    pytest.param("$" + TARGET + "$ \\\\ " + " \\\\ ".join(GOOD), f"Line 2 {NOT_JUSTIFIED}",
                 id="the goal as the first LaTeX row"),
    pytest.param([GOOD[0], "d_k Var(q_m) Var(k_m)", TARGET],
                 f"Line 2 {NOT_JUSTIFIED} Var(q_m k_m) is not Var(q_m) Var(k_m): for independent factors Var(XY) = "
                 "E[X²] E[Y²] − E[X]² E[Y]². The two agree here only because the means are 0, which is not a rule.",
                 id="a step true only because the means are 0"),
    pytest.param([GOOD[0], "d_k^2 Var(q_m k_m)", GOOD[2], TARGET],
                 "Line 2: 'd_k^2 Var(q_m k_m)' does not follow from line 1: under the exercise's assumptions the two "
                 "are not equal. The variance of a sum of d_k independent terms is d_k times the variance of one "
                 "term, not d_k² times: Var(aX) = a² Var(X) scales one variable, it does not add up independent "
                 "copies.", id="a wrong step, then right-looking lines"),
]


@pytest.mark.parametrize("answer, feedback", NO_CREDIT)
def test_hollow_and_wrong_derivations_earn_nothing_however_laid_out(answer, feedback):
    grade = check("derivation", TARGET, answer, EXERCISE)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, None, feedback)


@pytest.mark.parametrize("answer, leap", [
    pytest.param([GOOD[0], GOOD[1], TARGET], 3, id="one rule step, then a leap"),
    pytest.param([GOOD[0]] + [GOOD[1]] * 20 + [TARGET], 22, id="the same with its middle line twenty times"),
    pytest.param([GOOD[0], GOOD[1], GOOD[1] + " + 0", "1 · " + GOOD[1], TARGET], 5, id="the same padded"),
    pytest.param(lines("1. " + GOOD[0], "2. " + GOOD[1], "3. " + TARGET, "as required."), 3,
                 id="the same numbered, then words"),
])
def test_repeating_or_dressing_up_a_line_adds_nothing_to_a_leap(answer, leap):
    grade = check("derivation", TARGET, answer, EXERCISE)
    feedback = TOO_BIG_LAST.replace("line 3 is", f"line {leap} is").replace("from line 2", f"from line {leap - 1}")
    assert (grade.correct, grade.score, grade.feedback) == (False, 0.7, feedback)


UNIT = {"symbols": {"d_k": "positive"}, "start": "Var(dot(q, k))", "min_steps": 2, "max_rules_per_step": 2,
        "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}}}  # as the bank's unit_variance
LEAPS = " No step within that limit shows an intermediate result: a derivation of leaps earns nothing."
FIVE_RULES = ("The values are right, but line 2 is too big a step from line 1: it takes 5 rules (the variance of a sum of "
              "independent terms (the sum of their variances), a sum of identical terms (their number times one term), "
              "the definition Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and substituting the declared mean "
              "or variance) — show them (this exercise allows 2 rules per step).")
FOUR_RULES = ("The values are right, but line 2 is too big a step from line 1: it takes 4 rules (the definition Var(X) = "
              "E[X²] − E[X]², linearity of expectation, independence: E[XY] = E[X]E[Y] and substituting the declared "
              "mean or variance) — show them (this exercise allows 2 rules per step).")


@pytest.mark.parametrize("answer, feedback", [
    # before: 0.5833: one leap to the line before the result, then one substitution
    pytest.param(["Var(q·k)", "d_k E[q_m^2] E[k_m^2]", "d_k"], FIVE_RULES + LEAPS, id="a leap, then a substitution"),
    # before: 0.5
    pytest.param(["Var(q·k)", "E[(q·k)^2]", "d_k"], FOUR_RULES + LEAPS, id="two leaps"),
    # before: 0.6111
    pytest.param(["Var(q·k)", "E[(q·k)^2]", "d_k E[(q_m k_m)^2]", "d_k"], FOUR_RULES + LEAPS, id="three leaps"),
])
@pytest.mark.parametrize("options", [{}, {"partial_credit": True}, {"big_step_credit": 0.5}, {"min_steps": 1}])
def test_a_derivation_of_leaps_only_is_hollow(answer, feedback, options):
    grade = check("derivation", "d_k", answer, UNIT | options)
    assert (grade.correct, grade.score, grade.feedback, grade.details["hollow"]) == (False, 0.0, feedback, True)


def test_without_a_limit_on_rules_the_same_steps_are_right():
    grade = check("derivation", "d_k", ["Var(q·k)", "d_k E[q_m^2] E[k_m^2]", "d_k"], UNIT | {"max_rules_per_step": 0})
    assert (grade.correct, grade.score) == (True, 1.0)


def test_words_between_steps_without_a_colon_are_still_read_as_a_step():
    grade = check("derivation", TARGET, [GOOD[0], "by linearity and independence", TARGET], EXERCISE)
    # before: "Line 2: 'and' is a reserved word and cannot be used in an answer"
    assert (grade.score, grade.error) == (0.0, "Line 2 reads as words, not maths: write the step as an "
                                               "equation (“so” or “hence” may lead it: hence a = b).")


def test_a_plain_number_label_on_some_lines_only_is_read_as_a_number():
    grade = check("derivation", TARGET, [GOOD[0], "2. d_k Var(q_m k_m)", GOOD[2], TARGET], EXERCISE)
    assert (grade.score, grade.feedback) == (
        0.0, "Line 2: '2. d_k Var(q_m k_m)' does not follow from line 1: under the exercise's assumptions the two are "
        "not equal.")


# --------------------------------------------------------------------------- partial credit for nothing

PARTIAL = EXERCISE | {"partial_credit": True}
WRONG_END = "2 d_k sigma_q^2 sigma_k^2"


@pytest.mark.parametrize("options, answer, score, feedback", [
    # before: 0.1667, for writing Var(q·k) as Cov(q·k, q·k)
    pytest.param(PARTIAL, ["Var(q·k)", "Cov(q·k, q·k)", WRONG_END], 0.0,
                 f"Line 3: '{WRONG_END}' does not follow from line 2: under the exercise's assumptions the two are not "
                 "equal.", id="a renaming, then a wrong step"),
    pytest.param(PARTIAL, [GOOD[0], GOOD[1], WRONG_END], 0.1667,
                 f"Line 3: '{WRONG_END}' does not follow from line 2: under the exercise's assumptions the two are not "
                 "equal.", id="a rule step, then a wrong step"),
    pytest.param(PARTIAL, [GOOD[0], GOOD[0] + " + 0", WRONG_END], 0.0,
                 f"Line 3: '{WRONG_END}' does not follow from line 2: under the exercise's assumptions the two are not "
                 "equal.", id="padding, then a wrong step"),
    # before: 0.5, for a true chain of another quantity (any Var(X) = E[X²] − E[X]² would do)
    pytest.param(WITHOUT_START | {"partial_credit": True},
                 ["Var(q_m k_m)", "E[q_m^2]E[k_m^2] - E[q_m]^2E[k_m]^2", "sigma_q^2 sigma_k^2"], 0.0,
                 "Every step follows, but the last line (line 3) is not the required result.",
                 id="without a start: another quantity derived"),
    pytest.param(WITHOUT_START | {"partial_credit": True}, ["Var(q_m)", "E[q_m^2] - E[q_m]^2"], 0.0,
                 "Every step follows, but the last line (line 2) is not the required result.",
                 id="without a start: one definition written out"),
])
def test_partial_credit_pays_only_for_steps_shown(options, answer, score, feedback):
    grade = check("derivation", TARGET, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, score, None, feedback)


def test_with_a_start_a_chain_that_ends_short_keeps_its_half_mark():
    grade = check("derivation", "sqrt(d_k)*sigma_q*sigma_k", ["d_k Var(q_m k_m)"], MOMENTS | {"partial_credit": True})
    assert (grade.score, grade.feedback) == (0.5, "Every step follows, but the last line (line 1) is not the required result.")


# --------------------------------------------------------------------------- hostile: quick, clear, never raises

TOO_LONG = "the derivation is too long ({}; the limit is 200000): write at most 30 steps, one per line"
ONLY_WORDS = ("the derivation has no formula, only words: write one step per line, each a formula such as Var(q·k) "
              "or d_k Var(q_m k_m)")

HOSTILE = [
    # before: 3.4 s
    pytest.param("\n".join(["d" * 1999] * 10000), TOO_LONG.format("19999999 characters"), id="10 000 lines of 1999"),
    pytest.param(["x" * 1999] * 10000, TOO_LONG.format("19990000 characters"), id="a list of 10 000 long steps"),
    # before: 32 s
    pytest.param("d_k=" * 2_000_000, TOO_LONG.format("8000000 characters"), id="8 MB of d_k="),
    pytest.param("{" * 5_000_000 + "}" * 5_000_000, TOO_LONG.format("10000000 characters"), id="10 MB of braces"),
    pytest.param("x" * (MAX_ANSWER_CHARS + 1), TOO_LONG.format(f"{MAX_ANSWER_CHARS + 1} characters"),
                 id="one character over"),
    pytest.param("\n".join(["d_k Var(q_m k_m)"] * 10000), "too many steps (10000; the limit is 30)", id="10 000 lines"),
    pytest.param("\\\\[" * 60000, "too many steps (60000; the limit is 30)", id="60 000 LaTeX rows"),
    pytest.param("\\tag{" * 40000, "Line 1: the answer is too long (200000 characters; the limit is 2000)",
                 id="40 000 unclosed \\tag{"),
    pytest.param("d_k" + " " * 150000 + "by", "Line 1: the answer is too long (150005 characters; the limit is 2000)",
                 id="a run of spaces before a justifying word"),
    pytest.param([GOOD[0], "d_k" + " " * 1990 + "x", TARGET],
                 "Line 2: unknown symbol 'x'; this answer may use d_k, sigma_k, sigma_q, k, k_m, q, q_m",
                 id="1990 spaces inside a step"),
    pytest.param([GOOD[0], "d_k " + "\\quad " * 300 + "\\text{" + " a" * 500, TARGET],
                 "Line 2: the answer is too long (2810 characters; the limit is 2000)", id="an unclosed \\text{"),
    pytest.param("a " * 99000, ONLY_WORDS, id="99 000 words"),
    pytest.param("\n".join(["hello there"] * 10000), ONLY_WORDS, id="10 000 lines of words"),
    pytest.param("Step " * 30000, ONLY_WORDS, id="30 000 Step labels"),
    pytest.param("This is just a sentence.", ONLY_WORDS, id="a sentence"),
    pytest.param("$\n" * 10000, "the derivation is empty: write one step per line", id="10 000 dollar signs"),
    pytest.param("=\n =", "the derivation is empty: write one step per line", id="equals signs only"),
    pytest.param([GOOD[0], "d_k\u200b Var(q_m k_m)", TARGET],
                 "Line 2: unexpected character '\\u200b' at position 4: it is an invisible or special space character (zero width space): delete it",
                 id="a zero-width space"),
    pytest.param([GOOD[0], "d_k Vаr(q_m k_m)", TARGET],
                 "Line 2: unexpected character 'а' at position 6: it is a Cyrillic letter (cyrillic small letter a), not a Latin one: type names with Latin letters a–z",
                 id="a Cyrillic a"),
    pytest.param([GOOD[0], "\u202ed_k Var(q_m k_m)", TARGET],
                 "Line 2: unexpected character '\\u202e' at position 1: it is an invisible or special space character (right-to-left override): delete it",
                 id="a right-to-left override"),
    pytest.param([GOOD[0], "d_k \udc80", TARGET],
                 "Line 2: unexpected character '\\udc80' at position 5: it is not part of the answer syntax",
                 id="a lone surrogate"),
    pytest.param([GOOD[0], "Var(" * 50 + "q_m" + ")" * 50, TARGET],
                 "Line 2: the expression is nested too deeply (more than 40 brackets)", id="50 nested Var"),
    pytest.param([GOOD[0], "(" * 500 + "d_k" + ")" * 500, TARGET],
                 "Line 2: the expression is too long (more than 600 symbols)", id="500 nested brackets"),
    pytest.param([GOOD[0], "9^9^9 d_k", TARGET], "Line 2: the exponent 3.8742e+08 is too large (the limit is 10000)",
                 id="9^9^9"),
    pytest.param([GOOD[0], "E[(q_m+k_m)^1000]", TARGET],
                 "Line 2: the step is too big to check: multiplied out it has 1001 terms (the limit is 100); write it "
                 "in smaller pieces", id="a binomial to the 1000th"),
    pytest.param([GOOD[0], "Var(" + "+".join(f"q_{i}*k_{i}" for i in range(1, 40)) + ")", TARGET],
                 "Line 2: the step is too big to check: its moments taken apart by the rules have 780 terms (the "
                 "limit is 200); write it in smaller pieces", id="the variance of 39 products"),
    pytest.param([GOOD[0], 5, TARGET], "a derivation is a list of steps (text), or one step per line", id="a number"),
    pytest.param(None, "a derivation is a list of steps (text), or one step per line", id="None"),
]


@pytest.mark.parametrize("answer, error", HOSTILE)
def test_hostile_derivations_are_refused_quickly_and_clearly(answer, error):
    check("derivation", TARGET, GOOD, EXERCISE)  # warm
    started = time.process_time()
    grade = check("derivation", TARGET, answer, EXERCISE)
    seconds = time.process_time() - started
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)
    assert seconds < SECONDS
