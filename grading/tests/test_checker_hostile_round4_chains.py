"""Matrix expressions and derivations, a fourth hostile pass: answers typed by testers who have
not seen the checkers, each row with its exact verdict.

Matrix expressions (the bank's ``softmax(Q K^T / sqrt(d_k)) V``): transposes of products,
softmax on the wrong axis or twice, shifts softmax ignores, terms that vanish only at one size,
names and functions the format does not have (I, inv, det, max, ⊙), powers, deep nesting and
look-alike letters. All of these were already graded right; the rows pin them.

Derivations: a right derivation with the result stated as students write it -- the claim above
(``Var(q·k) = d_k σ_q² σ_k²``, then the proof) or the conclusion below (``Hence Var(q·k) = …``)
-- scored 0 before this pass: read as a step, the statement went back to the question and was
"not justified". A statement is now set aside (it earns nothing); hollow chains dressed as a
statement still earn nothing, and a statement that leaps or is wrong is still graded as a step.
The other rows pin what was already right: independence of a variable with itself, E[X²] read as
Var(X) when the mean is not 0, restating and padding, other notations, look-alike letters and
answers too long to read."""

import time

import pytest

from grading.core.answers import check
from grading.derivation_feedback import derivation_steps_html
from grading.tests.fixtures.answer_tests import MOMENTS
from grading.tests.test_derivation_chain_end_vs_side_result import ONE_TERM, UNIT_WITHOUT_START

SECONDS = 2.0  # each answer takes milliseconds; the bound leaves room for a loaded machine

# --------------------------------------------------------------------------- matrix expressions

ATTENTION = "softmax(Q K^T / sqrt(d_k)) V"
SHAPES = {"matrices": {"Q": ["n", "d_k"], "K": ["n", "d_k"], "V": ["n", "d_v"]},
          "scalars": {"n": 5, "d_k": 16, "d_v": 12}}
CORRECT = (True, 1.0, None, None, "Correct.")
DIFFERENT_VALUES = (False, 0.0, None, None, "Not quite: your expression has the right shape but gives different values.")
UNDEFINED = (False, 0.0, None, None, "Not quite: your expression overflows or is undefined for some matrices.")
NOT_IN_SYNTAX = "unexpected character {!r} at position {}: it is not part of the answer syntax"
POWER = ("{} is raised to a power: powers and inverses of matrices are not part of this answer. After a matrix, "
         "^ only marks a transpose (K^T); write products out, e.g. Q K^T, and divide only by numbers.")
FUNCTIONS = "the functions you may use are exp, softmax, sqrt, transpose"
NAMES = "this answer may use K, Q, V, d_k, d_v, n"


def invalid(message):
    return (False, 0.0, message, None, message)


def matrix_verdict(answer):
    started = time.monotonic()
    grade = check("matrix_expression", ATTENTION, answer, SHAPES)
    assert time.monotonic() - started < SECONDS, answer
    return grade.correct, grade.score, grade.error, grade.misconception, grade.feedback


@pytest.mark.parametrize("answer", [
    pytest.param("softmax((K Q^T)^T / sqrt(d_k)) V", id="(K Q^T)^T is Q K^T"),
    pytest.param("softmax(transpose(K Q^T) / sqrt(d_k)) V", id="transpose(K Q^T)"),
    pytest.param("softmax(transpose(transpose(Q K^T)) / sqrt(d_k)) V", id="transposed twice"),
    pytest.param("(V^T softmax(Q K^T / sqrt(d_k))^T)^T", id="the transpose of the transposed product"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V^T^T^T^T", id="four transposes of V"),
    pytest.param("softmax(Q K^T / sqrt(d_k) + n) V", id="a shift of every score: softmax ignores it"),
    pytest.param("softmax((Q / d_k^(1/4)) (K / d_k^(1/4))^T) V", id="the scale split between Q and K"),
    pytest.param("softmax(Q K^T * d_k^(-1/2)) V", id="times d_k^(-1/2)"),
    pytest.param("softmax(Q·K^T / sqrt(d_k)) · V", id="· for the products"),
    pytest.param("softmax(Q @ K^T / sqrt(d_k)) @ V", id="@ for the products"),
    pytest.param("softmax(Q × K^T / sqrt(d_k)) V", id="× for a product"),
    pytest.param("softmax(Q ⋅ Kᵀ / √d_k) V", id="⋅, ᵀ and √"),
    pytest.param("softmax(Ｑ K^T / sqrt(d_ｋ)) Ⅴ", id="fullwidth letters and the roman numeral five"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V * d_k^0", id="times d_k^0"),
])
def test_right_matrix_expressions(answer):
    assert matrix_verdict(answer) == CORRECT


@pytest.mark.parametrize("answer, expected", [
    pytest.param("softmax(softmax(Q K^T / sqrt(d_k))) V", DIFFERENT_VALUES, id="softmax twice"),
    pytest.param("softmax(softmax(Q K^T / sqrt(d_k))^T)^T V", DIFFERENT_VALUES,
                 id="softmax over rows, then over columns"),
    pytest.param("transpose(softmax(transpose(Q K^T / sqrt(d_k)))) V",
                 (False, 0.0, None, "softmax_wrong_axis",
                  "Not quite. It looks as if the softmax normalised each column; each query's row of scores is what "
                  "must sum to 1."), id="softmax over columns"),
    pytest.param("softmax(Q K^T / sqrt(d_k) + Q Q^T) V", DIFFERENT_VALUES, id="a shift that is not the same per row"),
    pytest.param("softmax(Q K^T / sqrt(d_k) * (n - 4)) V",
                 (False, 0.0, None, "dimension_as_number",
                  "Not quite: your expression only gives the right result when n = 5. Write it in terms of n, not as "
                  "a number."), id="a factor that is 1 only at the declared n"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V * (n-5)/(n-5)", UNDEFINED, id="0/0 at the declared n"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V / (d_k - d_k)", UNDEFINED, id="divided by zero written as d_k - d_k"),
    pytest.param("softmax(Q K^T / sqrt(d_v)) V", DIFFERENT_VALUES, id="sqrt(d_v) for sqrt(d_k)"),
    pytest.param("softmax(Q K^T / sqrt(d_k) * 1.000000001) V", DIFFERENT_VALUES, id="a scale one part in 1e9 off"),
    pytest.param("softmax(1) V",
                 (False, 0.0, None, None, "Not quite: softmax is applied to a matrix of scores, not to a single number"),
                 id="softmax of a number"),
    pytest.param("0*V", DIFFERENT_VALUES, id="the zero matrix"),
    pytest.param("1", (False, 0.0, None, None, "Not quite: your expression gives a number, but the answer is 5×12."),
                 id="a number"),
])
def test_wrong_matrix_expressions(answer, expected):
    assert matrix_verdict(answer) == expected


@pytest.mark.parametrize("answer, message", [
    pytest.param("softmax(Q ⊙ K^T / sqrt(d_k)) V", NOT_IN_SYNTAX.format("⊙", 11), id="⊙"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) ∘ V", NOT_IN_SYNTAX.format("∘", 28), id="∘"),
    pytest.param("softmax(Q К^T / sqrt(d_k)) V", "unexpected character 'К' at position 11: it is a Cyrillic letter (cyrillic capital letter ka), not a Latin one: type names with Latin letters a–z", id="a Cyrillic K"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) I", f"unknown name 'I'; {NAMES}", id="an identity matrix"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) W", f"unknown name 'W'; {NAMES}", id="an undeclared matrix"),
    pytest.param("inv(Q)", f"unknown function 'inv'; {FUNCTIONS}", id="inv"),
    pytest.param("det(Q K^T)", f"unknown function 'det'; {FUNCTIONS}", id="det"),
    pytest.param("trace(Q K^T)", f"unknown function 'trace'; {FUNCTIONS}", id="trace"),
    pytest.param("max(Q)", f"max(...) is not supported here; {FUNCTIONS}", id="max"),
    pytest.param("abs(Q)", f"unknown function 'abs'; {FUNCTIONS}", id="abs"),
    pytest.param("(Q K^T)^1000", POWER.format("a matrix expression"), id="a huge power"),
    pytest.param("softmax(Q K^T / sqrt(d_k))^(-1) V", POWER.format("softmax(...)"), id="an inverse"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V^n", POWER.format("V"), id="a power by a dimension"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) 2^V",
                 "V is used as an exponent: a matrix cannot be a power here. After a matrix, ^ only marks a transpose "
                 "(K^T).", id="a matrix exponent"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V * 2^2^2^2^2", "the exponent 65536 is too large (the limit is 10000)",
                 id="a tower of powers"),
    pytest.param("softmax(Q K^T / sqrt(d_k)) V * 10^400", "a number in the expression is too large", id="10^400"),
    pytest.param("(" * 200 + ATTENTION + ")" * 200, "the expression is nested too deeply (more than 40 brackets)",
                 id="200 brackets"),
    pytest.param("exp(" * 300 + "Q K^T" + ")" * 300 + " V", "the expression is too long (more than 600 symbols)",
                 id="300 nested exps"),
    pytest.param("softmax(Q K^T / sqrt(d_k), axis=0) V",
                 "unexpected character '=' at position 32: write an expression, not an equation: leave out '='",
                 id="an axis argument"),
])
def test_invalid_matrix_expressions_cost_no_attempt(answer, message):
    assert matrix_verdict(answer) == invalid(message)


# --------------------------------------------------------------------------- derivations

TARGET = "d_k*sigma_q^2*sigma_k^2"
EXERCISE = MOMENTS | {"min_steps": 2, "max_rules_per_step": 2}  # as the bank's general_derivation
RESULT = "d_k sigma_q^2 sigma_k^2"
GOOD = ["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)", RESULT]
STATEMENT = f"Var(q·k) = {RESULT}"
CUBE = "E[q_m^3] + 3 E[q_m^2 k_m] + 3 E[q_m k_m^2] + E[k_m^3]"
# E[(q_m + k_m)^3] with normal entries of mean 0: every odd moment is 0.
ODD_MOMENTS = ("0", {"symbols": {"s": "positive"}, "start": "E[(q_m + k_m)^3]", "min_steps": 1,
                     "random_variables": {"q": {"mean": 0, "variance": "s**2", "distribution": "normal"},
                                          "k": {"mean": 0, "variance": 1, "distribution": "normal"}}})
# E[q_m^2] when the mean is not 0: the variance plus the square of the mean.
NONZERO_MEAN = ("s^2 + mu^2", {"symbols": {"mu": "positive", "s": "positive"}, "start": "E[q_m^2]", "min_steps": 1,
                               "random_variables": {"q": {"mean": "mu", "variance": "s**2"},
                                                    "k": {"mean": 0, "variance": 1}}})
GENERAL = (TARGET, EXERCISE)

BY_THE_RULES = ("by the variance of a sum of independent terms (the sum of their variances) and a sum of identical "
                "terms (their number times one term); line {}: by the definition Var(X) = E[X²] − E[X]² and "
                "independence: E[XY] = E[X]E[Y]; {}: by substituting the declared mean or variance.")
RIGHT_FROM_LINE_1 = "Correct: every step follows by a named rule and the last is the result. line 2: " + \
    BY_THE_RULES.format(3, "line 4")
RIGHT_FROM_LINE_2 = "Correct: every step follows by a named rule and the last is the result. line 3: " + \
    BY_THE_RULES.format(4, "line 5")
HOLLOW_TAIL = ("only restates the question, and no step applies a rule to show an intermediate result: padding "
               "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result.")
NOT_JUSTIFIED = ("Line {} is not justified: its value agrees with line {}, but no rule leads from line {} to it. The "
                 "rules turn a moment into simpler ones; a line that undoes a rule, goes back to an earlier line, or "
                 "only holds because of the declared means and variances is not a step.")
NOT_EQUAL = "under the exercise's assumptions the two are not equal."


def lines(*steps) -> str:
    return "\n".join(steps)


def derivation_verdict(part, answer):
    expected, options = part
    started = time.monotonic()
    grade = check("derivation", expected, answer, options)
    assert time.monotonic() - started < SECONDS
    return grade.correct, grade.score, grade.error, grade.misconception, grade.feedback


RIGHT = [
    # before: 0, "'Var(q·k)' on line 5 is not justified: its value agrees with line 4, ..."
    pytest.param(GENERAL, lines(*GOOD, STATEMENT), RIGHT_FROM_LINE_1, id="the result stated below"),
    pytest.param(GENERAL, lines(*GOOD, "Hence Var(q·k) = d_k σ_q² σ_k², as required."), RIGHT_FROM_LINE_1,
                 id="Hence ..., as required"),
    pytest.param(GENERAL, [*GOOD, STATEMENT], RIGHT_FROM_LINE_1, id="stated below, as a list of steps"),
    pytest.param(GENERAL, lines(*GOOD, f"{STATEMENT} = σ_q² σ_k² d_k"), RIGHT_FROM_LINE_1,
                 id="stated below, then rearranged"),
    # before: 0, "Line 2 is not justified: its value agrees with line 1, ..."
    pytest.param(GENERAL, lines(STATEMENT, *GOOD), RIGHT_FROM_LINE_2, id="the claim stated above"),
    pytest.param(GENERAL, lines(STATEMENT, *GOOD, STATEMENT), RIGHT_FROM_LINE_2, id="stated above and below"),
    # before: 0, "'Var(q·k)' on line 4 is not justified": the last step written as the conclusion
    pytest.param(GENERAL, lines(*GOOD[:3], STATEMENT),
                 "Correct: every step follows by a named rule and the last is the result. line 2: "
                 + BY_THE_RULES.format(3, "'d_k sigma_q^2 sigma_k^2' on line 4"), id="the last step as the conclusion"),
    pytest.param(ONE_TERM, lines("Var(q_m k_m) = 1", "Var(q_m k_m)", "E[q_m^2 k_m^2] - E[q_m k_m]^2",
                                 "E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2", "1"),
                 "Correct: every step follows by a named rule and the last is the result. line 3: by the definition "
                 "Var(X) = E[X²] − E[X]²; line 4: by independence: E[XY] = E[X]E[Y]; line 5: by substituting the "
                 "declared mean or variance.", id="the claim above, every expression 1"),
    pytest.param(UNIT_WITHOUT_START, lines("Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
                                           "d_k", "Var(q·k) = d_k"), RIGHT_FROM_LINE_1,
                 id="stated below, without a start"),
    # already right
    pytest.param(GENERAL, lines("Var(q·k)", "Σ_i Var(q_i k_i)", "d_k Var(q_i k_i)",
                                "d_k (E[q_i^2] E[k_i^2] - E[q_i]^2 E[k_i]^2)", RESULT),
                 "Correct: every step follows by a named rule and the last is the result. line 2: by the variance of "
                 "a sum of independent terms (the sum of their variances); line 3: by a sum of identical terms (their "
                 "number times one term); line 4: by the definition Var(X) = E[X²] − E[X]² and independence: "
                 "E[XY] = E[X]E[Y]; line 5: by substituting the declared mean or variance.", id="Σ with index i"),
    pytest.param(ODD_MOMENTS, lines("E[(q_m + k_m)^3]", CUBE,
                                    "E[q_m^3] + 3 E[q_m^2] E[k_m] + 3 E[q_m] E[k_m^2] + E[k_m^3]", "0"),
                 "Correct: every step follows by a named rule and the last is the result. line 2: by linearity of "
                 "expectation; line 3: by independence: E[XY] = E[X]E[Y]; line 4: by substituting the declared mean "
                 "or variance.", id="independence used only between q and k"),
    pytest.param(NONZERO_MEAN, lines("E[q_m^2]", "\\operatorname{Var}(q_m) + \\mathbb{E}[q_m]^2", "s^2 + mu^2"),
                 "Correct: every step follows by a named rule and the last is the result. line 2: by the definition "
                 "of variance read backwards: E[X²] = Var(X) + E[X]²; line 3: by substituting the declared mean or "
                 "variance.", id="\\operatorname{Var} and \\mathbb{E}"),
]


@pytest.mark.parametrize("part, answer, feedback", RIGHT)
def test_right_derivations(part, answer, feedback):
    assert derivation_verdict(part, answer) == (True, 1.0, None, None, feedback)


WRONG = [
    # hollow, dressed as a statement: still 0
    pytest.param(GENERAL, lines(STATEMENT, "Var(q·k)", RESULT), 0.0, None, f"Line 2 {HOLLOW_TAIL}",
                 id="the claim, then the question and the bare result"),
    pytest.param(GENERAL, lines("Var(q·k)", RESULT, STATEMENT), 0.0, None, f"Line 1 {HOLLOW_TAIL}",
                 id="the bare result, then the statement"),
    pytest.param(GENERAL, lines(STATEMENT, STATEMENT), 0.0, None, f"'Var(q·k)' on line 2 {HOLLOW_TAIL}",
                 id="the statement twice"),
    pytest.param(ONE_TERM, lines("Var(q_m k_m)", "1", "Var(q_m k_m) = 1"), 0.0, None, f"Line 1 {HOLLOW_TAIL}",
                 id="every expression 1: the bare result, then the statement"),
    pytest.param(ONE_TERM, lines("Var(q_m) = E[q_m^2] - E[q_m]^2 = 1", "Var(q_m k_m) = 1"), 0.0, None,
                 f"'Var(q_m k_m)' on line 2 {HOLLOW_TAIL}", id="a side result of another quantity, then the statement"),
    # a statement that leaps or is wrong is graded as the step it makes
    pytest.param(GENERAL, lines("Var(q·k)", "d_k Var(q_m k_m)", STATEMENT), 0.7, None,
                 "The values are right, but 'd_k sigma_q^2 sigma_k^2' on line 3 is too big a step from line 2: it "
                 "takes 3 rules (the definition Var(X) = E[X²] − E[X]², independence: E[XY] = E[X]E[Y] and "
                 "substituting the declared mean or variance) — show them (this exercise allows 2 rules per step).",
                 id="a conclusion that leaps"),
    pytest.param(GENERAL, lines(*GOOD, f"Var(q·k) = 2 {RESULT}"), 0.0, None,
                 f"Line 5: '2 d_k sigma_q^2 sigma_k^2' does not follow from line 4: {NOT_EQUAL}", id="a wrong conclusion"),
    pytest.param(GENERAL, lines(f"Var(q·k) = 2 {RESULT}", *GOOD), 0.0, None,
                 f"Line 1: '2 d_k sigma_q^2 sigma_k^2' does not follow from 'Var(q·k)': {NOT_EQUAL}", id="a wrong claim"),
    # already right
    pytest.param(GENERAL, lines("Var(q·k)", f"{RESULT} + Var(q·k) - {RESULT}", RESULT), 0.0, None,
                 f"Line 1 {HOLLOW_TAIL}", id="the question restated in disguise"),
    pytest.param(GENERAL, lines("Var(q·k)", *(["Var(q·k) + 0"] * 25), RESULT), 0.0, None, f"Line 1 {HOLLOW_TAIL}",
                 id="25 lines of + 0"),
    pytest.param(GENERAL, lines("Var(q·k)", "d_k Var(q_m k_m)", "d_k Var(q_m) Var(k_m)", RESULT), 0.0,
                 "product_of_variances",
                 NOT_JUSTIFIED.format(3, 2, 2) + " Var(q_m k_m) is not Var(q_m) Var(k_m): for independent factors "
                 "Var(XY) = E[X²] E[Y²] − E[X]² E[Y]². The two agree here only because the means are 0, which is not "
                 "a rule.", id="a product of variances, true only because the means are 0"),
    pytest.param(ODD_MOMENTS, lines("E[(q_m + k_m)^3]", CUBE, "E[q_m] E[q_m^2] + 3 E[q_m^2] E[k_m] + 3 E[q_m] E[k_m^2] "
                                    "+ E[k_m] E[k_m^2]", "0"), 0.0, None, NOT_JUSTIFIED.format(3, 2, 2),
                 id="q_m independent of itself: E[q_m^3] = E[q_m] E[q_m^2], equal only because both are 0"),
    pytest.param(ODD_MOMENTS, lines("E[(q_m + k_m)^3]", "E[q_m + k_m]^3", "0"), 0.0, None, NOT_JUSTIFIED.format(2, 1, 1),
                 id="the mean of a cube as the cube of the mean"),
    pytest.param(NONZERO_MEAN, lines("E[q_m^2]", "Var(q_m)", "s^2 + mu^2"), 0.0, None,
                 f"Line 2: 'Var(q_m)' does not follow from line 1: {NOT_EQUAL}", id="E[q_m^2] as Var(q_m), mean not 0"),
    pytest.param(NONZERO_MEAN, lines("E[q_m^2]", "E[q_m] E[q_m]", "mu^2"), 0.0, "square_of_mean",
                 f"Line 2: 'E[q_m] E[q_m]' does not follow from line 1: {NOT_EQUAL} E[X²] is not E[X]²: the mean of a "
                 "square is the variance plus the square of the mean.", id="q_m independent of itself, mean not 0"),
]


@pytest.mark.parametrize("part, answer, score, misconception, feedback", WRONG)
def test_wrong_and_hollow_derivations(part, answer, score, misconception, feedback):
    assert derivation_verdict(part, answer) == (False, score, None, misconception, feedback)


INVALID = [
    pytest.param(lines("Var(q·k)", "d_k Vаr(q_m k_m)", RESULT),
                 "Line 2: unexpected character 'а' at position 6: it is a Cyrillic letter (cyrillic small letter a), not a Latin one: type names with Latin letters a–z",
                 id="a Cyrillic a in Var"),
    pytest.param(lines(*GOOD, *([RESULT] * 30)), "too many steps (34; the limit is 30)", id="the result 30 more times"),
    pytest.param(lines(*GOOD[:3], RESULT + " + " + "+".join(["0"] * 40000)),
                 "Line 4: the answer is too long (80025 characters; the limit is 2000)", id="a line of 80 000 characters"),
    pytest.param("(by " * 49_997, "Line 1: the answer is too long (199987 characters; the limit is 2000)",
                 id="200 000 characters of justifications"),
    pytest.param("\\\\" * 99_995, "the derivation is empty: write one step per line", id="200 000 characters of row breaks"),
]


@pytest.mark.parametrize("answer, message", INVALID)
def test_invalid_derivations_cost_no_attempt(answer, message):
    assert derivation_verdict(GENERAL, answer) == (False, 0.0, message, None, message)


def test_a_stated_result_is_shown_as_a_statement_not_a_step():
    grade = check("derivation", TARGET, lines(STATEMENT, *GOOD, "Hence " + STATEMENT), EXERCISE)
    steps = grade.details["steps"]
    assert [(step["step"], step["line"], step["kind"]) for step in steps] == [
        (1, 1, "statement"), (2, 1, "statement"), (3, 2, "restatement"), (4, 3, "rule"), (5, 4, "rule"),
        (6, 5, "rule"), (7, 6, "statement"), (8, 6, "restatement")]
    assert [step.get("line_text") for step in steps] == [
        STATEMENT, None, None, None, None, None, "Hence " + STATEMENT, "Hence " + STATEMENT]
    html = derivation_steps_html(grade.as_dict(), show_verdicts=True, show_instances=False)
    assert html.count("A statement of a result (the question and its answer, or a result on the way): not a step, and not counted.") == 3
