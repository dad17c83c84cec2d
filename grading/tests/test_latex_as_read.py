"""Previews typeset the answer as read: nothing simplified, grouping kept."""

import pytest

from grading.core.answers import parse

SYMBOLS = {"symbols": {"d_k": "positive", "sigma_q": "positive", "sigma_k": "positive"}}
ANY = {**SYMBOLS, "allow_any_symbols": True}


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("sqrt(d_k) sigma_q sigma_k", r"\sqrt{d_{k}} \sigma_{q} \sigma_{k}"),
        (r"\sqrt{d_k}\sigma_q\sigma_k", r"\sqrt{d_{k}} \sigma_{q} \sigma_{k}"),
        ("sqrt(d_k)*sqrt(d_k)", r"\sqrt{d_{k}} \sqrt{d_{k}}"),
        ("2 d_k^2/2", r"\frac{2 d_{k}^{2}}{2}"),
        ("2*3", r"2 \cdot 3"),
        ("a + -b", r"a + -b"),
        ("a-(b-c)", r"a - \left(b - c\right)"),
        ("(a+b)^2", r"\left(a + b\right)^{2}"),
        ("(-x)^2", r"\left(-x\right)^{2}"),
        ("0.5 d_k", r"0.5 d_{k}"),
        ("exp(x)", r"\exp\left(x\right)"),
    ],
)
def test_symbolic_preview_is_the_text_as_read(text, latex):
    assert parse("symbolic", text, ANY).preview_latex == latex


def test_derivation_preview_does_not_give_the_result_away():
    options = {
        "symbols": {"d_k": "positive"},
        "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}},
    }
    parsed = parse("derivation", "Var(dot(q, k))\nSum(Var(q_m k_m), m, 1, d_k)", options)
    assert parsed.error is None
    assert parsed.preview_latex == (
        r"\operatorname{Var}\left[q \cdot k\right] \\ "
        r"\sum_{m=1}^{d_{k}} \operatorname{Var}\left[q_{m} k_{m}\right]"
    )
