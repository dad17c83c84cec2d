"""Answers written to fool or stall the checkers, a third round: attention formulas in the
notations a student types (Unicode subscripts dₖ, \\sqrt d_k, Q K^TV, K' for a transpose),
wrong answers fitted to the checker's seeded sizes or whole-number points, names typed
without their underscore, and choice keys pasted with full-width letters."""

import time

import numpy as np
import pytest

from grading.core import matrix_expression, symbolic
from grading.core.answers import check, parse

SECONDS = 0.5  # each decision takes milliseconds; the bound leaves room for a loaded machine
CORRECT = (True, None, "Correct.")
NOT_EQUIVALENT = "Not equivalent to the correct expression."
ATTENTION = "softmax(Q K^T / sqrt(d_k)) V"
SHAPED = {"matrices": {"Q": ["n", "d_k"], "K": ["n", "d_k"], "V": ["n", "d_v"]}, "scalars": {"n": 5, "d_k": 32, "d_v": 12}}
VARIANCE = "sqrt(d_k)*sigma_q*sigma_k"
VARIANCE_SYMBOLS = {"symbols": {"d_k": "positive", "sigma_q": "positive", "sigma_k": "positive"}}
WHOLE = {"symbols": {"n": "positive, integer", "d_k": "positive"}}
MATRIX_NAMES = "K, Q, V, d_k, d_v, n"
SCALAR_NAMES = "d_k, sigma_k, sigma_q"


def timed_check(answer_type, expected, answer, options):
    started = time.monotonic()
    grade = check(answer_type, expected, answer, options)
    return grade, time.monotonic() - started




# --------------------------------------------------------------------------- attention typed as students type it


@pytest.mark.parametrize(
    "answer",
    [
        "softmax(QKᵀ/√dₖ)V",  # a Unicode subscript k: NFKC alone would read dₖ as "dk"
        "softmax(Q K^T / √(dₖ)) V",
        r"softmax(QK^T/\sqrt d_k)V",  # TeX hangs the _k on the root; the student means √(d_k)
        r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt d_{k}}\right)V",
        r"softmax(Q K^T / \sqrt[2]{d_k}) V",
        r"softmax(Q K^T / \sqrt[\frac{4}{2}]{d_k}) V",  # the root's index is LaTeX too
        "softmax(Q K^T / dₖ^(1/2)) V",
        "softmax(QK^T/sqrt(d_k)) V^T^T",
    ],
)
def test_attention_in_the_notations_students_type_is_right(answer):
    grade, seconds = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.error, grade.feedback) == CORRECT
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, preview",
    [
        ("Q K^TV", r"Q \, {K}^\top \, V"),  # ^TV is the transpose and then V, not a name TV
        ("QK^TV", r"Q \, {K}^\top \, V"),
        ("QK^Td_k", r"Q \, {K}^\top \, d_k"),
        ("Q^TTV", None),  # TTV is no transpose and no product of names: still refused
    ],
)
def test_a_transpose_glued_to_the_next_matrix_is_read_as_a_product(answer, preview):
    parsed = parse("matrix_expression", answer, SHAPED)
    assert parsed.preview_latex == preview
    if preview is None:
        assert parsed.error == f"unknown name 'TTV'; this answer may use {MATRIX_NAMES}"


@pytest.mark.parametrize(
    "answer, feedback",
    [
        ("Q K^TV", "Not quite: your expression has the right shape but gives different values."),
        ("softmax(QK^T/sqrt(d_k))V^TV", "Not quite: softmax(...) V^T has shapes 5×5 and 12×5: the inner sizes do not "
                                         "match; did you mean V?"),
    ],
)
def test_glued_transposes_are_graded_as_read(answer, feedback):
    grade, _ = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.error, grade.feedback) == (False, None, feedback)


@pytest.mark.parametrize(
    "answer, error",
    [
        ("softmax(Q K'/sqrt(d_k)) V", "unexpected character \"'\" at position 12: write K^T for a transpose, not K'"),
        ("softmax(Q K′/sqrt(d_k)) V", "unexpected character '′' at position 12: write K^T for a transpose, not K'"),
        ("softmax(QK^T/sqrt(dk))V", f"unknown name 'dk' (did you mean d_k?); this answer may use {MATRIX_NAMES}"),
        ("softmax(QK^T/sqrt(D_K))V", f"unknown name 'D_K' (did you mean d_k?); this answer may use {MATRIX_NAMES}"),
        ("softmax(qk^T/sqrt(d_k))V", f"unknown name 'qk'; this answer may use {MATRIX_NAMES}"),
        ("softmax(Q K.T / sqrt(d_k)) V", "unexpected character '.' at position 12: a dot is only allowed inside numbers "
                                         "(write K^T for a transpose, not K.T)"),
    ],
)
def test_misspelt_attention_is_refused_with_the_fix(answer, error):
    grade, seconds = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, feedback",
    [
        ("softmax(Q K^T / d_k^1/2) V", "Not quite. A power such as x^1/2 is read as (x^1)/2; write a fractional power "
                                       "in brackets: x^(1/2)."),
        ("softmax(Q K^T d_k**-1/2) V", "Not quite. A power such as x^1/2 is read as (x^1)/2; write a fractional power "
                                       "in brackets: x^(1/2)."),
        ("softmax(Q K^T / d_k^3/2) V", "Not quite: your expression has the right shape but gives different values."),
    ],
)
def test_an_unbracketed_fractional_power_in_the_scale_is_named(answer, feedback):
    grade, seconds = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.score, grade.error, grade.feedback, grade.misconception) == (False, 0.0, None, feedback, None)
    assert seconds < SECONDS


# --------------------------------------------------------------------------- matrix answers fitted to the seeded sizes


def fitted_coefficients() -> tuple[float, float, float]:
    """(a, b, c) of a quadratic in d_k through √d_k at the d_k of every seeded shape assignment."""
    shapes, scalars, dimensions = matrix_expression._declared(SHAPED)
    sizes = [assigned["d_k"] for _, assigned in matrix_expression.shape_assignments(shapes, scalars, dimensions)]
    a, b, c = (float(value) for value in np.polyfit(sizes, np.sqrt(sizes), 2))
    return a, b, c


def fitted_scale() -> str:
    a, b, c = fitted_coefficients()
    return f"({a!r}*d_k*d_k + {b!r}*d_k + {c!r})"


def test_the_fitted_scale_really_agrees_at_the_seeded_sizes():
    # Without this the test below would pass for the wrong reason.
    shapes, scalars, dimensions = matrix_expression._declared(SHAPED)
    for _, assigned in matrix_expression.shape_assignments(shapes, scalars, dimensions):
        d_k = assigned["d_k"]
        a, b, c = fitted_coefficients()
        fitted = a * d_k * d_k + b * d_k + c
        assert abs(fitted - np.sqrt(d_k)) < 1e-9 * np.sqrt(d_k)


@pytest.mark.parametrize("key", [b"a" * 32, b"b" * 32, b"c" * 32])
def test_an_answer_fitted_to_the_seeded_sizes_is_wrong_whatever_the_key(key, points_key):
    points_key(key)
    answer = f"softmax(Q K^T / {fitted_scale()}) V"
    grade, seconds = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (
        False, 0.0, None, matrix_expression.ONLY_AT_SOME_SIZES)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer",
    [ATTENTION, "softmax(Q K^T d_k^(-1/2)) V", "softmax((K Q^T)^T / sqrt(d_k)) V", "softmax(Q K^T / sqrt(d_k) + n) V",
     "softmax(Q K^T / sqrt(d_k)) V + 0 V", "transpose(V^T softmax(Q K^T / sqrt(d_k))^T)"],
)
def test_true_rewrites_stay_right_whatever_the_key(answer, points_key):
    for key in range(4):
        points_key(bytes([key]) * 32)
        grade, _ = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
        assert (grade.correct, grade.error, grade.feedback) == CORRECT


def test_the_keyed_sizes_follow_the_key_and_the_two_expressions():
    shapes, scalars, dimensions = matrix_expression._declared(SHAPED)
    expected = matrix_expression.read(ATTENTION, shapes, scalars)
    answer = matrix_expression.read("softmax(Q K^T / sqrt(d_k)) V + 0 V", shapes, scalars)
    first = matrix_expression.keyed_draw(expected, answer, shapes, scalars, dimensions)
    again = matrix_expression.keyed_draw(expected, answer, shapes, scalars, dimensions)
    assert {name: np.shape(value) for name, value in first.items()} == {name: np.shape(value) for name, value in again.items()}
    assert all(np.array_equal(first[name], again[name]) for name in first)  # a regrade decides at the same sizes
    n, d_k, d_v = (int(first[name]) for name in ("n", "d_k", "d_v"))
    assert (np.shape(first["Q"]), np.shape(first["K"]), np.shape(first["V"])) == ((n, d_k), (n, d_k), (n, d_v))
    assert len({n, d_k, d_v}) == 3 and all(size in matrix_expression.KEYED_SIZES for size in (n, d_k, d_v))


def test_the_keyed_sizes_are_never_one_a_dimension_takes_at_the_seeded_sizes(points_key):
    # A formula fitted to the seeded sizes agrees there by construction: a keyed size among
    # them let it through for about one key in eight.
    shapes, scalars, dimensions = matrix_expression._declared(SHAPED)
    seeded = {label: {int(assigned[label]) for _, assigned in matrix_expression.shape_assignments(shapes, scalars, dimensions)}
              for label in ("n", "d_k", "d_v")}
    assert seeded == {"n": {5, 3, 10}, "d_k": {32, 9, 11}, "d_v": {12, 10, 5}}
    expected = matrix_expression.read(ATTENTION, shapes, scalars)
    answer = matrix_expression.read(f"softmax(Q K^T / {fitted_scale()}) V", shapes, scalars)
    for key in range(200):
        points_key(key.to_bytes(2, "big") * 16)
        draw = matrix_expression.keyed_draw(expected, answer, shapes, scalars, dimensions)
        picked = {label: int(draw[label]) for label in seeded}
        assert all(picked[label] not in seeded[label] for label in seeded), (key, picked)
        assert len(set(picked.values())) == 3


def test_an_answer_fitted_to_the_seeded_sizes_is_wrong_under_many_keys(points_key):
    answer = f"softmax(Q K^T / {fitted_scale()}) V"
    verdicts = set()
    for key in range(40):
        points_key(key.to_bytes(1, "big") * 32)
        grade, _ = timed_check("matrix_expression", ATTENTION, answer, SHAPED)
        verdicts.add((grade.correct, grade.feedback))
    assert verdicts == {(False, matrix_expression.ONLY_AT_SOME_SIZES)}


# --------------------------------------------------------------------------- symbolic: notations


@pytest.mark.parametrize(
    "answer",
    ["√dₖ σ_q σ_k", "√dₖ σₖ σ_q", "√d_ₖ σ_q σ_k", "dₖ^(1/2) σ_q σ_k", r"\sqrt d_k \sigma_q \sigma_k",
     r"\sqrt d_{k}\sigma_q\sigma_k", r"\sqrt[2]{d_k}\sigma_q\sigma_k", r"\sqrt[{2}]{d_k}\sigma_q\sigma_k",
     "(d_k σ_q^² σ_k^²)^(1/2)"],  # ^² typed with both a caret and a superscript
)
def test_scale_in_unicode_subscripts_and_bare_latex_roots_is_right(answer):
    grade, seconds = timed_check("symbolic", VARIANCE, answer, VARIANCE_SYMBOLS)
    assert (grade.correct, grade.error, grade.feedback) == CORRECT
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, error",
    [
        ("sqrt(dk)*sigma_q*sigma_k", f"unknown symbol 'dk' (did you mean d_k?); this answer may use {SCALAR_NAMES}"),
        ("sigmaq sigmak sqrt(d_k)", f"unknown symbol 'sigmaq' (did you mean sigma_q?); this answer may use {SCALAR_NAMES}"),
        ("PI*d_k", f"unknown symbol 'PI' (did you mean pi?); this answer may use {SCALAR_NAMES}"),
        ("x", f"unknown symbol 'x'; this answer may use {SCALAR_NAMES}"),
        ("x₁", f"unknown symbol 'x_1'; this answer may use {SCALAR_NAMES}"),
        ("ₖ", f"unknown symbol 'k'; this answer may use {SCALAR_NAMES}"),  # a subscript of nothing
        (r"\sqrt d_", "a _ must be followed by a subscript"),
        (r"\sqrt[2}]{d_k}", "unbalanced braces: a } has no matching {"),
    ],
)
def test_misspelt_symbols_are_refused_with_the_fix(answer, error):
    grade, seconds = timed_check("symbolic", VARIANCE, answer, VARIANCE_SYMBOLS)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)
    assert seconds < SECONDS


def test_subscript_digits_after_a_digit_stay_digits():
    # Only a letter takes a subscript: in a number NFKC reads them as digits, as before.
    assert check("numeric", 0.25, "0.2₅", {"decimals": 2}).correct is True
    assert check("matrix", [[12, 2]], "[[1₂, 2]]", {"decimals": 0}).correct is True


@pytest.mark.parametrize(
    "answer, latex",
    [("√dₖ", r"\sqrt{d_{k}}"), ("d_k^²", r"d_{k}^{2}"), ("d_k^⁻¹", r"d_{k}^{-1}"), (r"\sqrt d_k", r"\sqrt{d_{k}}")],
)
def test_previews_of_subscripts_and_superscripts(answer, latex):
    parsed = parse("symbolic", answer, VARIANCE_SYMBOLS)
    assert (parsed.error, parsed.preview_latex) == (None, latex)


@pytest.mark.parametrize(
    "answer, feedback",
    [
        ("d_k^1/2 sigma_q sigma_k", symbolic.BARE_FRACTION_POWER),  # (d_k^1)/2: the brackets were meant
        ("sigma_q sigma_k d_k**1/2", symbolic.BARE_FRACTION_POWER),
        ("sigma_q sigma_k / d_k^-1/2", symbolic.BARE_FRACTION_POWER),
        ("d_k^3/2 sigma_q sigma_k", NOT_EQUIVALENT),  # bracketed it is still wrong: nothing to say
        (r"d_k^{1}/2 \sigma_q \sigma_k", NOT_EQUIVALENT),  # braces say the student meant d_k^1
        ("-d_k^1/2 sigma_q sigma_k", NOT_EQUIVALENT),  # bracketed it is the negative: not the slip named
    ],
)
def test_an_unbracketed_fractional_power_is_named_when_it_was_the_slip(answer, feedback):
    grade, seconds = timed_check("symbolic", VARIANCE, answer, VARIANCE_SYMBOLS)
    assert (grade.correct, grade.score, grade.error, grade.feedback, grade.misconception) == (
        False, 0.0, None, feedback, None)
    assert seconds < SECONDS


def test_a_bracketed_fractional_power_is_right():
    for answer in ("d_k^(1/2) sigma_q sigma_k", "sigma_q sigma_k d_k^0.5/1", r"d_k^{1/2}\sigma_q\sigma_k"):
        assert timed_check("symbolic", VARIANCE, answer, VARIANCE_SYMBOLS)[0].feedback == "Correct."


REAL = {"symbols": {"x": "real", "d_k": "positive"}}


@pytest.mark.parametrize(
    "expected, answer",
    [
        ("exp(1000*x)", "exp(1000*x)*(1 + 10^-30)"),  # 0 where it underflows, too large elsewhere
        ("(x+1)^10000", "(1+x)^9999*(x + 1.0000000001)"),
        ("0", "exp(-exp(exp(exp(d_k))))"),  # 0 in floats at every point, but not 0 (nor 0²)
    ],
)
def test_values_that_underflow_to_zero_suggest_no_sign_or_square_slip(expected, answer):
    grade, seconds = timed_check("symbolic", expected, answer, REAL)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, None, NOT_EQUIVALENT)
    assert seconds < SECONDS


def test_a_real_sign_slip_is_still_named():
    grade, _ = timed_check("symbolic", "exp(-x^2)*d_k", "-exp(-x^2)*d_k", REAL)
    assert grade.feedback == "Not equivalent to the correct expression. Check the sign."


# --------------------------------------------------------------------------- symbolic: whole-number points

SEEDED_WHOLE_NUMBERS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 100, 1000, 1000000)


def vanishing_at_the_seeded_whole_numbers() -> str:
    return "*".join(f"(n - {value})" for value in SEEDED_WHOLE_NUMBERS)


def test_the_vanishing_product_covers_every_seeded_whole_number():
    table = symbolic.symbol_table(symbolic.symbols_key(WHOLE))
    symbols = set(table.values())
    values = {int(point[table["n"]].real) for point in symbolic.sample_points(symbols) + symbolic.wide_points(symbols)}
    assert values <= set(SEEDED_WHOLE_NUMBERS)


@pytest.mark.parametrize(
    "expected, answer, feedback",
    [
        ("sqrt(n)*d_k", "sqrt(n)*d_k + " + vanishing_at_the_seeded_whole_numbers(), NOT_EQUIVALENT),
        ("sqrt(n)*d_k", "sqrt(n)*d_k + sqrt(d_k)*" + vanishing_at_the_seeded_whole_numbers(), NOT_EQUIVALENT),
        ("sqrt(n)", "sqrt(n) + " + vanishing_at_the_seeded_whole_numbers(), NOT_EQUIVALENT),
        ("n*d_k", "n*d_k + " + vanishing_at_the_seeded_whole_numbers(), NOT_EQUIVALENT),  # exact, modulo a prime
    ],
)
def test_an_answer_vanishing_at_the_seeded_whole_numbers_is_wrong(expected, answer, feedback, points_key):
    for key in range(3):
        points_key(bytes([key]) * 32)
        grade, seconds = timed_check("symbolic", expected, answer, WHOLE)
        assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, None, feedback)
        assert seconds < SECONDS


NINE_FACTORS = "*".join(f"(n - {value})" for value in range(1, 10))


@pytest.mark.parametrize(
    "extra, feedback",
    [
        # 0 at n = 1..9, too large to compute at every keyed n: bounded there, it is far from 0.
        ("exp(exp(n))*" + NINE_FACTORS, NOT_EQUIVALENT),
        ("exp(exp(n))*sin(exp(n))*" + NINE_FACTORS, NOT_EQUIVALENT),
        # ... and where no bound decides either, it is not marked right: could not grade.
        ("(exp(exp(n)) - exp(exp(n) + 10^-40))*" + NINE_FACTORS, symbolic.TOO_COMPLEX_FEEDBACK),
    ],
)
def test_an_answer_too_large_at_every_keyed_point_is_not_marked_right(extra, feedback):
    grade, seconds = timed_check("symbolic", "sqrt(n)*d_k", "sqrt(n)*d_k + " + extra, WHOLE)
    assert (grade.correct, grade.score, grade.feedback) == (False, 0.0, feedback)
    assert grade.details.get("could_not_grade") is (True if feedback == symbolic.TOO_COMPLEX_FEEDBACK else None)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer",
    [
        VARIANCE + " + 10^-1000*exp(exp(exp(d_k)))",  # below 60 digits where d_k < 2.3, huge beyond
        VARIANCE + " + 10^-300*exp(exp(d_k))",
    ],
)
def test_a_term_negligible_at_small_values_and_too_large_elsewhere_is_wrong(answer, points_key):
    for key in range(3):
        points_key(bytes([key]) * 32)
        grade, seconds = timed_check("symbolic", VARIANCE, answer, VARIANCE_SYMBOLS)
        assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, None, NOT_EQUIVALENT)
        assert seconds < SECONDS


@pytest.mark.parametrize(
    "expected, answer",
    [("exp(exp(exp(d_k)))", "exp(exp(exp(d_k)))*(1 + exp(-d_k) - exp(-d_k))"),
     ("1", "sin(exp(exp(exp(d_k))))^2 + cos(exp(exp(exp(d_k))))^2"), ("exp(exp(d_k))", "log(exp(exp(exp(d_k))))"),
     (VARIANCE, VARIANCE + " + (d_k - d_k)*exp(exp(exp(exp(d_k))))")],
)
def test_identities_with_values_too_large_to_compute_stay_right(expected, answer):
    grade, seconds = timed_check("symbolic", expected, answer, VARIANCE_SYMBOLS)
    assert (grade.correct, grade.error, grade.feedback) == CORRECT
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "expected, answer",
    [("sqrt(n)", "n^2/n^(3/2)"), ("exp(n)*sqrt(n)", "exp(n)*n/sqrt(n)"), ("(-1)^n", "cos(pi*n)"),
     ("n*(n+1)/2", "(n^2 + n)/2"), ("sqrt(n)*d_k", "sqrt(n*d_k^2)"),
     ("2*exp(exp(n))", "exp(exp(n) + log(2))")],  # too large at every keyed n, equal once multiplied out
)
def test_whole_number_identities_stay_right_whatever_the_key(expected, answer, points_key):
    for key in range(4):
        points_key(bytes([key]) * 32)
        grade, _ = timed_check("symbolic", expected, answer, WHOLE)
        assert (grade.correct, grade.error, grade.feedback) == CORRECT


def test_whole_number_keyed_points_are_drawn_outside_the_seeded_values(points_key):
    points_key(b"w" * 32)
    table = symbolic.symbol_table(symbolic.symbols_key(WHOLE))
    n = table["n"]
    points = symbolic.unpredictable_points(n, n + 1, set(table.values()))
    values = [point[n] for point in points]
    assert all(value.imag == 0 and value.real == int(value.real) for value in values)
    assert all(symbolic.KEYED_INTEGERS[0] <= value.real <= symbolic.KEYED_INTEGERS[1] for value in values)
    assert all(point[table["d_k"]].real > 0 for point in points)


# --------------------------------------------------------------------------- choices pasted from elsewhere


@pytest.mark.parametrize(
    "expected, answer, options",
    [
        ("A", "Ａ", {"choices": ["A", "B", "C"]}),  # full-width, from a phone keyboard
        ("A", "A\u200b", {"choices": ["A", "B", "C"]}),
        ("A", "\ufeffa", {"choices": ["A", "B", "C"]}),
        (["A", "B"], "A，B", {"choices": ["A", "B", "C"], "multiple": True}),
        (["A", "B"], ["Ａ", "B\u200b"], {"choices": ["A", "B", "C"], "multiple": True}),
    ],
)
def test_choice_keys_pasted_with_full_width_or_invisible_characters_are_read(expected, answer, options):
    grade, _ = timed_check("choice", expected, answer, options)
    assert (grade.correct, grade.error, grade.feedback) == CORRECT


@pytest.mark.parametrize(
    "answer, options, error",
    [
        ("Ｄ", {"choices": ["A", "B"]}, "'D' is not one of the choices (A, B)"),
        ("A，B", {"choices": ["A", "B"]}, "'A,B' is not one of the choices (A, B)"),
        ("\u200b", {"choices": ["A", "B"]}, "no choice selected"),
    ],
)
def test_choice_keys_that_are_still_not_choices_are_refused(answer, options, error):
    grade, _ = timed_check("choice", "A", answer, options)
    assert (grade.correct, grade.error) == (False, error)


def test_an_exact_key_wins_over_a_folded_one():
    options = {"choices": ["A", "a"]}
    assert check("choice", "a", "a", options).correct is True
    assert check("choice", "a", "A", options).correct is False


# --------------------------------------------------------------------------- nothing escapes, nothing stalls

HOSTILE = [
    "\\sqrt d_" * 200, "\\sqrt[" * 300, "\\sqrt[\\sqrt[\\sqrt[2]{2}]{2}]{d_k}", "\\sqrt[" + "{" * 100 + "2" + "}" * 100 + "]{2}",
    "ₖ" * 1500, "d" + "ₖ" * 1999, "K^T" + "V" * 600, "Q" + "^TV" * 300, "^T" * 700, "'" * 100, "′",
    "√" * 600 + "dₖ", "d_k" + "^²" * 400, "⁻" * 1000, "²" * 2000, "sqrt(dk)" * 200, "D_K" * 600,
    "exp(exp(n))*" + "*".join(f"(n-{value})" for value in range(1, 120)),
]
PARTS = [
    ("symbolic", VARIANCE, VARIANCE_SYMBOLS),
    ("symbolic", "sqrt(n)*d_k", WHOLE),
    ("matrix_expression", ATTENTION, SHAPED),
    ("choice", "A", {"choices": ["A", "B"]}),
]


@pytest.mark.parametrize("answer_type, expected, options", PARTS)
def test_hostile_answers_are_refused_or_graded_quickly_and_never_marked_right(answer_type, expected, options):
    for answer in HOSTILE:
        grade, seconds = timed_check(answer_type, expected, answer, options)
        label = answer if len(answer) < 40 else answer[:40] + "…"
        assert seconds < SECONDS, (label, seconds)
        assert (grade.correct, grade.score) == (False, 0.0), label
        assert grade.feedback, label
        parsed = parse(answer_type, answer, options)
        assert (parsed.value is None) == (parsed.error is not None), label


# --------------------------------------------------------------------------- free text


@pytest.mark.parametrize("answer", ["\u200b", "\u200b \ufeff\u00ad", "\u3000", "\u2060\n\u200d"])
def test_an_explanation_of_invisible_characters_only_is_empty(answer):
    grade = check("free_text", None, answer, {})
    assert (grade.correct, grade.error, grade.details.get("manual")) == (
        False, "the answer is empty: write your explanation", None)


@pytest.mark.parametrize("answer", ["ok\u200b", "\u2060x", "√d_k keeps the variance at 1"])
def test_an_explanation_with_some_text_is_queued(answer):
    grade = check("free_text", None, answer, {})
    assert (grade.correct, grade.error, grade.feedback, grade.details) == (
        False, None, "Your answer was received and is queued for manual grading.", {"manual": True})
