"""Symbolic answers: safe reading, assumptions, exactness of decimals, form checks, preview."""

import pytest
import sympy

from grading.core import safe_expr, symbolic
from grading.core.answers import check, parse
from grading.core.grades import AnswerFormatError, InvalidRequest
from grading.core.symbolic import diagnose_symbolic

ATTENTION = {"symbols": {"d_k": "positive", "sigma_q": "positive", "sigma_k": "positive", "d_model": "positive", "h": "positive"}}


@pytest.mark.parametrize("text, normalised_contains", [
    (r"\sqrt{d_k}\sigma_q", "sqrt(d_k"),
    (r"\frac{a}{b}", "((a)/(b))"),
    ("x^{2}", "x^(2)"),
    ("σ_q·σ_k", "sigma_q* sigma_k"),
    ("√d_k", "sqrt(d_k)"),
    (r"\mathrm{Var}\left(X\right)", "Var (X )"),
])
def test_normalisation(text, normalised_contains):
    assert normalised_contains in safe_expr.normalise(text)


def test_unknown_symbol_message_lists_the_allowed_names():
    grade = check("symbolic", "sqrt(d_k)", "sqrt(x)", {"symbols": {"d_k": "positive", "sigma_q": "positive"}})
    assert grade.error == "unknown symbol 'x'; this answer may use d_k, sigma_q"


def test_assumptions_decide_root_of_square():
    assert check("symbolic", "b", "sqrt(b^2)", {"symbols": {"b": "positive"}}).correct is True
    assert check("symbolic", "b", "sqrt(b^2)", {"symbols": {"b": "real"}}).correct is False


def test_decimals_are_exact_rationals():
    assert check("symbolic", "1/2", "0.5", {}).correct is True
    assert check("symbolic", "1/3", "0.33", {}).correct is False


def test_forbidden_symbol():
    grade = check("symbolic", "sqrt(d_k)", "sqrt(d_model/h)", ATTENTION | {"forbid_symbols": ["d_model"]})
    assert (grade.correct, grade.error, grade.feedback) == (False, None, "Your answer must be written without d_model.")


def test_form_checks_give_form_credit():
    options = ATTENTION | {"product_of_powers": True}
    grade = check("symbolic", "d_k*sigma_q^2", "d_k*sigma_q^2 + d_k - d_k", options)
    assert (grade.score, grade.correct) == (0.5, False)
    simplified = ATTENTION | {"require_simplified": True}
    assert check("symbolic", "sqrt(d_k)*sigma_q", "sqrt(d_k*sigma_q^2)", simplified).score == 0.5
    assert check("symbolic", "sqrt(d_k)*sigma_q", "sigma_q*sqrt(d_k)", simplified).correct is True


def test_preview_latex():
    parsed = parse("symbolic", r"\sqrt{d_k}\sigma_q\sigma_k", ATTENTION)
    assert parsed.error is None
    assert parsed.preview_latex == r"\sqrt{d_{k}} \sigma_{q} \sigma_{k}"
    assert parse("symbolic", "sqrt(", ATTENTION).error.startswith("unbalanced brackets")


def test_huge_exponent_is_refused_before_algebra():
    with pytest.raises(AnswerFormatError, match="exponent .* is too large"):
        safe_expr.read_expression("9**9**9**9")


def test_bad_requests_raise():
    with pytest.raises(InvalidRequest, match="unknown assumption 'purple'"):
        check("symbolic", "x", "x", {"symbols": {"x": "purple"}})
    with pytest.raises(InvalidRequest, match="expected expression cannot be read"):
        check("symbolic", "sqrt(", "x", {"symbols": {"x": "real"}})
    with pytest.raises(ValueError, match="unknown answer type"):
        check("algebra", "x", "x", {})


def test_only_a_real_timeout_gives_could_not_grade(monkeypatch):
    def never_finishes(left, right, point):
        raise symbolic.DecisionTimeout()

    monkeypatch.setattr(symbolic, "_point_verdict", never_finishes)
    symbolic.decide_equivalent.cache_clear()
    grade = check("symbolic", "cos(2*x)", "1 - 2*sin(x)^2", {"symbols": {"x": "real"}})
    symbolic.decide_equivalent.cache_clear()
    assert (grade.correct, grade.error, grade.details) == (False, None, {"could_not_grade": True, "reason": "timeout"})
    assert grade.feedback.startswith("Checking your answer timed out")


def test_numeric_screen_rejects_without_simplify(monkeypatch):
    monkeypatch.setattr(sympy, "simplify", lambda *args: pytest.fail("simplify must not run"))
    symbolic.decide_equivalent.cache_clear()
    assert check("symbolic", "sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k)*sigma_q", ATTENTION).correct is False


# The symbolic answer's known mistakes, diagnosed by the symbolic checker.
D_K, SQ, SK, D_MODEL = sympy.symbols("d_k sigma_q sigma_k d_model", positive=True)


@pytest.mark.parametrize(
    "expected, answer, code",
    [
        (sympy.sqrt(D_K) * SQ * SK, sympy.sqrt(D_K), "forgot_sigma"),
        (D_K * SQ**2 * SK**2, D_K, "forgot_sigma"),
        (1 / sympy.sqrt(D_K), 1 / D_K, "divided_by_d_k"),
        (sympy.sqrt(D_K) * SQ * SK, sympy.sqrt(D_MODEL) * SQ * SK, "d_model_scale"),
        (1 / sympy.sqrt(D_K), sympy.Integer(1), "no_scaling"),
        (sympy.sqrt(D_K) * SQ * SK, sympy.sqrt(D_K) * SQ * SK, None),
        (sympy.sqrt(D_K) * SQ * SK, SK * SQ * sympy.sqrt(D_K), None),
        (sympy.sqrt(D_K) * SQ * SK, 2 * sympy.sqrt(D_K) * SQ * SK, None),
        (D_K * SQ**2 * SK**2, D_K * SQ * SK, "forgot_squares"),
    ],
)
def test_symbolic_diagnosis(expected, answer, code):
    assert diagnose_symbolic(expected, answer) == code


# sigmas_added: a product of σ factors in the expected expression answered as their sum.
S1, S2, S3, D_V = sympy.symbols("sigma_1 sigma_2 sigma_3 d_v", positive=True)
VARIANCE = D_K * SQ**2 * SK**2
STD = sympy.sqrt(D_K) * SQ * SK


@pytest.mark.parametrize(
    "expected, answer, code",
    [
        # the σ's added: variances, standard deviations, other σ names, three factors, a denominator
        (VARIANCE, D_K * (SQ**2 + SK**2), "sigmas_added"),
        (VARIANCE, D_K * SK**2 + D_K * SQ**2, "sigmas_added"),
        (STD, sympy.sqrt(D_K) * (SQ + SK), "sigmas_added"),
        (sympy.sqrt(VARIANCE), sympy.sqrt(D_K) * (SK + SQ), "sigmas_added"),
        (D_K * S1**2 * S2**2, D_K * (S1**2 + S2**2), "sigmas_added"),
        (sympy.sqrt(D_K) * S1 * S2, sympy.sqrt(D_K) * (S1 + S2), "sigmas_added"),
        (D_K * S1**2 * S2**2 * S3**2, D_K * (S1**2 + S2**2 + S3**2), "sigmas_added"),
        (D_V * SQ * SK, D_V * (SQ + SK), "sigmas_added"),
        (SQ**2 * SK**2, SQ**2 + SK**2, "sigmas_added"),
        (1 / STD, 1 / (sympy.sqrt(D_K) * (SQ + SK)), "sigmas_added"),
        # right answers, however written, are never labelled
        (VARIANCE, VARIANCE, None),
        (VARIANCE, STD**2, None),
        (VARIANCE, (SQ * SK) ** 2 * D_K, None),
        (STD, sympy.sqrt(VARIANCE), None),
        (1 / STD, 1 / (sympy.sqrt(D_K) * SQ) / SK, None),
        # other wrong answers are not this slip
        (VARIANCE, SQ**2 + SK**2, None),  # the sum, but d_k lost as well
        (VARIANCE, D_K * (SQ + SK) ** 2, None),
        (VARIANCE, D_K * (SQ**2 + SK**2) / 2, None),
        (VARIANCE, D_K + SQ**2 + SK**2, None),
        (STD, sympy.sqrt(D_K) * (SQ**2 + SK**2), None),
        (STD, sympy.sqrt(D_K) + SQ + SK, None),
        (1 / STD, 1 / sympy.sqrt(D_K) * (1 / SQ + 1 / SK), None),
        # no product of two σ's to add
        (sympy.sqrt(D_K) * SQ, sympy.sqrt(D_K) * (SQ + 1), None),
        (SQ / SK, SQ + SK, None),
        (D_K, D_K + SQ, None),
        # a substitution that leaves the value unchanged names nothing
        (D_K + sympy.sin(SQ * SK) ** 2 + sympy.cos(SQ * SK) ** 2,
         D_K + sympy.sin(SQ + SK) ** 2 + sympy.cos(SQ + SK) ** 2, None),
    ],
)
def test_sigmas_added_diagnosis(expected, answer, code):
    assert diagnose_symbolic(expected, answer) == code


SIGMA_NAMES = {"symbols": {"d_k": "positive", "sigma_1": "positive", "sigma_2": "positive"}}
SIGMAS_ADDED_FEEDBACK = (
    "Not equivalent to the correct expression. It looks as if the σ factors were added where they multiply: "
    "with zero means, Var(q_m k_m) = E[q_m²] E[k_m²] = σ_q² σ_k², a product, so the variance carries "
    "σ_q² σ_k² and the standard deviation σ_q σ_k."
)


@pytest.mark.parametrize(
    "expected, answer, options, correct, misconception",
    [
        ("d_k*sigma_q^2*sigma_k^2", "d_k*(sigma_q^2 + sigma_k^2)", ATTENTION, False, "sigmas_added"),
        ("d_k*sigma_q^2*sigma_k^2", "d_k σ_q² + d_k σ_k²", ATTENTION, False, "sigmas_added"),
        ("sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k)*(sigma_q + sigma_k)", ATTENTION, False, "sigmas_added"),
        ("sqrt(d_k)*sigma_q*sigma_k", r"\sqrt{d_k}\left(\sigma_q+\sigma_k\right)", ATTENTION, False, "sigmas_added"),
        ("d_k*sigma_1^2*sigma_2^2", "d_k*(sigma_1^2 + sigma_2^2)", SIGMA_NAMES, False, "sigmas_added"),
        ("d_k*sigma_q^2*sigma_k^2", "d_k (sigma_q sigma_k)^2", ATTENTION, True, None),
        ("sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k sigma_q^2 sigma_k^2)", ATTENTION, True, None),
        ("d_k*sigma_1^2*sigma_2^2", "sigma_2^2 sigma_1^2 d_k", SIGMA_NAMES, True, None),
        ("d_k*sigma_q^2*sigma_k^2", "d_k*(sigma_q + sigma_k)^2", ATTENTION, False, None),
        ("sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k) + sigma_q + sigma_k", ATTENTION, False, None),
    ],
)
def test_sigmas_added_feedback(expected, answer, options, correct, misconception):
    grade = check("symbolic", expected, answer, options)
    assert (grade.correct, grade.misconception, grade.error) == (correct, misconception, None)
    if misconception:
        assert grade.feedback == SIGMAS_ADDED_FEEDBACK
    elif not correct:
        assert grade.feedback == "Not equivalent to the correct expression."


@pytest.mark.parametrize(("answer_type", "answer", "error"), [
    ("symbolic", "1e-999999", "the number 1e-999999 is too small (the limit is 1e-1000)"),
    ("symbolic", "d_k*0.1e-1000", "the number 0.1e-1000 is too small (the limit is 1e-1000)"),
    ("symbolic", "0.000e-4000*d_k + 1", None),
    ("symbolic", "1e-1000*d_k", None),
    ("symbolic", "1e-310", None),
    ("derivation", "Var(q·k) = 1e-999999", "Line 1: the number 1e-999999 is too small (the limit is 1e-1000)"),
])
def test_a_number_too_small_to_read_exactly_is_refused_by_the_preview_and_the_checker(answer_type, answer, error):
    # Read exactly, 1e-999999 is a fraction with a million-digit denominator: printing it
    # for the preview raised Python's integer-digits limit, and the preview answered 400.
    from grading.core import answers

    options = {"symbols": {"d_k": "positive"}}
    if answer_type == "derivation":
        options |= {"start": "Var(dot(q, k))", "random_variables": {"q": {"mean": 0, "variance": 1},
                                                                     "k": {"mean": 0, "variance": 1}}}
    parsed = answers.parse(answer_type, answer, options)
    graded = answers.check(answer_type, "d_k", answer, options)
    assert (parsed.error, graded.error) == (error, error)


# sigmas_added with one shared σ (variance-shared-sigma): σ_q² σ_k² is the single power σ⁴,
# and the same slip reads it as σ² + σ² = 2σ² (σ² of a standard deviation as σ + σ = 2σ).
SHARED = {"symbols": {"d_k": "positive", "sigma": "positive"}}
SHARED_VARIANCE_NOTE = "Here σ_q = σ_k = σ, so the product is σ² · σ² = σ⁴, not σ² + σ² = 2σ²."
SHARED_STD_NOTE = "Here σ_q = σ_k = σ, so the product is σ · σ = σ², not σ + σ = 2σ."
FORGOT_SQUARES_FEEDBACK = (
    "Not equivalent to the correct expression. It looks as if the squares on σ were forgotten: E[q_m²] = σ_q², "
    "so a variance carries σ_q² σ_k²; σ_q σ_k belongs to the standard deviation."
)


@pytest.mark.parametrize(
    "expected, answer, correct, misconception, feedback",
    [
        # right, however written
        ("d_k*sigma^4", "d_k*sigma^4", True, None, "Correct."),
        ("d_k*sigma^4", "d_k*sigma^2*sigma^2", True, None, "Correct."),
        ("d_k*sigma^4", "d_k (σ²)²", True, None, "Correct."),
        ("sqrt(d_k)*sigma^2", "sqrt(d_k sigma^4)", True, None, "Correct."),
        # the σ's added, in every spelling
        ("d_k*sigma^4", "d_k*(sigma^2+sigma^2)", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_VARIANCE_NOTE}"),
        ("d_k*sigma^4", "d_k*(sigma**2+sigma**2)", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_VARIANCE_NOTE}"),
        ("d_k*sigma^4", "2*d_k*sigma^2", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_VARIANCE_NOTE}"),
        ("d_k*sigma^4", "2 d_k σ²", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_VARIANCE_NOTE}"),
        ("d_k*sigma^4", "d_k σ² + d_k σ²", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_VARIANCE_NOTE}"),
        ("d_k*sigma^4", r"d_k\left(\sigma^2+\sigma^2\right)", False, "sigmas_added",
         f"{SIGMAS_ADDED_FEEDBACK} {SHARED_VARIANCE_NOTE}"),
        ("sqrt(d_k)*sigma^2", "sqrt(d_k)*(sigma+sigma)", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_STD_NOTE}"),
        ("sqrt(d_k)*sigma^2", "2*sqrt(d_k)*sigma", False, "sigmas_added", f"{SIGMAS_ADDED_FEEDBACK} {SHARED_STD_NOTE}"),
        ("1/(sqrt(d_k)*sigma^2)", "1/(sqrt(d_k)*(sigma+sigma))", False, "sigmas_added",
         f"{SIGMAS_ADDED_FEEDBACK} {SHARED_STD_NOTE}"),
        # other slips keep their own names
        ("d_k*sigma^4", "d_k*sigma^2", False, "forgot_squares", FORGOT_SQUARES_FEEDBACK),
        ("sqrt(d_k)*sigma^2", "sqrt(d_k)*sigma", False, "forgot_squares", FORGOT_SQUARES_FEEDBACK),
        # wrong, but not this slip
        ("d_k*sigma^4", "d_k*(sigma+sigma)^2", False, None, "Not equivalent to the correct expression."),
        ("d_k*sigma^4", "4*d_k*sigma^2", False, None, "Not equivalent to the correct expression."),
        ("d_k*sigma^4", "2*sigma^2", False, None, "Not equivalent to the correct expression."),
        ("d_k*sigma^4", "2*d_k*sigma", False, None, "Not equivalent to the correct expression."),
        ("d_k*sigma^4", "d_k + sigma^2 + sigma^2", False, None, "Not equivalent to the correct expression."),
    ],
)
def test_sigmas_added_with_one_shared_sigma(expected, answer, correct, misconception, feedback):
    grade = check("symbolic", expected, answer, SHARED)
    assert (grade.correct, grade.misconception, grade.error, grade.feedback) == (correct, misconception, None, feedback)


@pytest.mark.parametrize(
    "answer, error",
    [
        ("d_k*(sigma^2+", "unbalanced brackets: '(' at position 5 is never closed"),
        ("d_k*(sigma_q^2+sigma_k^2)", "unknown symbol 'sigma_q'; this answer may use d_k, sigma"),
        ("", "the answer is empty: type an expression"),
        ("2*d_k*sigma^2 = x", "unexpected character '=' at position 15: write an expression, not an equation: leave out '='"),
    ],
)
def test_shared_sigma_answers_that_cannot_be_read(answer, error):
    grade = check("symbolic", "d_k*sigma^4", answer, SHARED)
    assert (grade.correct, grade.misconception, grade.error) == (False, None, error)


S = sympy.Symbol("sigma", positive=True)


@pytest.mark.parametrize(
    "expected, answer, code",
    [
        (D_K * S**4, 2 * D_K * S**2, "sigmas_added"),
        (D_K * S**4, D_K * S**2, "forgot_squares"),
        (sympy.sqrt(D_K) * S**2, 2 * sympy.sqrt(D_K) * S, "sigmas_added"),
        # with σ_q and σ_k the single-σ reading does not apply: σ_q² alone is no product of two σ's
        (SQ**2 / SK**2, 2 * SQ / SK**2, None),
        (D_K * SQ**2 * SK, 2 * D_K * SQ * SK, None),
        # an odd power has no two equal halves
        (sympy.sqrt(D_K) * S, 2 * sympy.sqrt(D_K) * sympy.sqrt(S), None),
    ],
)
def test_shared_sigma_diagnosis(expected, answer, code):
    assert diagnose_symbolic(expected, answer) == code


def test_the_bank_shared_sigma_part_names_the_sigmas_added():
    from pathlib import Path

    from exercises.engine import draw_variant, grade_part, load_spec

    spec = load_spec((Path(__file__).resolve().parents[2] / "exercises" / "bank" / "variance-shared-sigma.yaml").read_text())
    params = draw_variant(spec, 0).params
    grades = {answer: grade_part(spec, params, "general_variance", answer)
              for answer in ("d_k*sigma^4", "d_k(sigma^2+sigma^2)", "2*d_k*sigma^2", "d_k*sigma^2")}
    assert {answer: (grade.correct, grade.misconception) for answer, grade in grades.items()} == {
        "d_k*sigma^4": (True, None),
        "d_k(sigma^2+sigma^2)": (False, "sigmas_added"),
        "2*d_k*sigma^2": (False, "sigmas_added"),
        "d_k*sigma^2": (False, "forgot_squares"),
    }
