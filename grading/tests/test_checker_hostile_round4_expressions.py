"""Answers written to fool or stall the symbolic checker, a fourth round: numbers too small
for floats (1e-999, (1e-999)^10000), terms too small to see in 60 digits, fractions that add
up to thousands of digits, and Greek final sigma. Each row has its exact verdict."""

import time

import pytest

from grading.core.answers import check

SECONDS = 1.0  # each decision takes milliseconds; the bound leaves room for a loaded machine
EXPECTED = "sqrt(d_k)*sigma_q*sigma_k"
OPTIONS = {"symbols": {"d_k": "positive", "sigma_q": "positive", "sigma_k": "positive"}}
CORRECT = (True, 1.0, None, "Correct.")
NOT_EQUIVALENT = (False, 0.0, None, "Not equivalent to the correct expression.")
TOO_SMALL = "a number in the expression is too small (the limit is 1e-1000)"
TOO_LARGE = "a number in the expression is too large"
TOO_MANY_DIGITS = "a number in the expression has too many digits once its fractions are added up"


def verdict(answer, expected=EXPECTED, options=OPTIONS):
    started = time.monotonic()
    grade = check("symbolic", expected, answer, options)
    assert time.monotonic() - started < SECONDS, answer
    return grade.correct, grade.score, grade.error, grade.feedback


@pytest.mark.parametrize(
    "answer",
    [
        "sigma_qsigma_k sqrt(d_k)",
        "2sqrt(d_k)sigma_qsigma_k/2",
        r"\frac12 \cdot 2\sqrt{d_k}\sigma_q\sigma_k",
        r"\frac{1}2 2 \sqrt{d_k}\sigma_q\sigma_k",
        r"\sqrt[3]{d_k^{3/2}}\sigma_q\sigma_k",
        "sqrt(ｄ_k)σ_qσ_k",
        "sqrt(d_k) ς_q ς_k",  # the final sigma of a Greek keyboard is still sigma
        "exp(log(d_k)/2)sigma_q sigma_k",
        "sqrt(d_k*sigma_q^2*sigma_k^2)",
        "|sigma_q||sigma_k|sqrt(d_k)",
        "sqrt(-d_k)*sqrt(-1)*(-1)*sigma_q sigma_k",
        "d_k^(10^4)*sigma_q*sigma_k/d_k^(10^4-1/2)",
        "sqrt(d_k)sigma_q sigma_k*(sin(d_k)^2+cos(d_k)^2)",
        "sqrt(d_k)sigma_q sigma_k + 0*exp(exp(exp(d_k)))",
    ],
)
def test_right_answers_in_odd_notations_are_right(answer):
    assert verdict(answer) == CORRECT


@pytest.mark.parametrize(
    "answer",
    [
        # a term far below the 60 digits the points are compared in
        "sqrt(d_k)sigma_q sigma_k + 1e-999",
        "sqrt(d_k)sigma_q sigma_k + 10^(-999)",
        "sqrt(d_k)sigma_q sigma_k + 1e-999*d_k",
        "1e-999*(d_k+1) + sqrt(d_k)sigma_q sigma_k",
        "(1+1e-999)*(d_k+1)/(d_k+1)*sqrt(d_k)sigma_q sigma_k",
        "d_k^(1e-400)*sqrt(d_k)sigma_q sigma_k",
        # a term too small to compute at every point, which never cancels
        "sqrt(d_k)sigma_q sigma_k + exp(-10^6*d_k)",
        "sqrt(d_k)sigma_q sigma_k + exp(-10000*d_k)",
    ],
)
def test_a_vanishingly_small_extra_term_is_wrong(answer):
    assert verdict(answer) == NOT_EQUIVALENT


def test_a_tiny_difference_from_a_number_is_wrong():
    assert verdict("8+1e-999", "8", {}) == NOT_EQUIVALENT


@pytest.mark.parametrize(
    "answer, error",
    [
        ("d_k + (1e-999)^10000", TOO_SMALL),  # floats read this as 0; SymPy would build 10^7 digits
        ("d_k + (10^-999)^(10^4)", TOO_SMALL),
        ("d_k+((10^-999)^(10^4))^(10^4)", TOO_SMALL),
        ("d_k*((1/2)^1000)^(10000)", TOO_SMALL),
        ("sqrt(d_k)sigma_q sigma_k*(1 + 10^(-9999))", TOO_SMALL),
        ("sqrt(d_k)sigma_q sigma_k*(1+2^(-9999))", TOO_SMALL),
        ("8*(1+exp(-5000))", TOO_SMALL),
        ("d_k*1e-999*sigma_q*1e-999*sigma_k", TOO_SMALL),  # the coefficient SymPy would gather
        ("d_k*(1e-999)^(-1)*1e-999", TOO_LARGE),
        ("10^300*10^300", TOO_LARGE),
        ("sqrt(d_k)sigma_q sigma_k+1/2^963+1/3^607+1/5^414+1/7^343+1/11^278+1/13^260+1/17^235+1/19^226"
         "+1/23^212+1/29^198+1/31^194+1/37^184+1/41^179+1/43^177+1/47^173+1/53^168", TOO_MANY_DIGITS),
        ("2^2^2^2^2", "the exponent 65536 is too large (the limit is 10000)"),
        ("d_k^(10^9)", "the exponent 1e+09 is too large (the limit is 10000)"),
        ("sqrt(d_k)sigma_q sigma_k + 1e-1001", "the number 1e-1001 is too small (the limit is 1e-1000)"),
    ],
)
def test_numbers_out_of_range_are_refused_quickly_with_the_reason(answer, error):
    assert verdict(answer) == (False, 0.0, error, error)


@pytest.mark.parametrize(
    "answer",
    ["2^(-900)*sqrt(d_k)sigma_q sigma_k*2^900", "1e-500*1e-400*1e300*1e300*1e300*sqrt(d_k)sigma_q sigma_k",
     "(d_k/10^300)^(1/2)*10^150*sigma_q*sigma_k"],
)
def test_small_numbers_inside_the_limits_are_still_read(answer):
    assert verdict(answer) == CORRECT
