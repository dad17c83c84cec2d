"""An expression pasted whole with its maths delimiters ($…$, $$…$$, \\(…\\), \\[…\\]) is read
as the numeric reader reads such a number; before, a symbolic or matrix-expression answer got
"unexpected character '$'" or "unsupported LaTeX command \\(". Only a whole expression is
unwrapped: a "$" elsewhere is still refused, and what is inside is judged as usual."""

from __future__ import annotations

import pytest

from grading.core.answers import check
from grading.tests.fixtures.answer_tests import ATTENTION, MATRICES

SD = "sqrt(d_k)*sigma_q*sigma_k"
ATT = "softmax(Q K^T / sqrt(d_k)) V"


@pytest.mark.parametrize("answer", [
    r"$\sqrt{d_k}\sigma_q\sigma_k$", r"$$\sqrt{d_k}\sigma_q\sigma_k$$", r"\(\sqrt{d_k}\sigma_q\sigma_k\)",
    r"\[\sqrt{d_k}\,\sigma_q\sigma_k\]", "  $sqrt(d_k) sigma_q sigma_k$\n",
])
def test_a_right_symbolic_answer_in_delimiters_is_right(answer):
    grade = check("symbolic", SD, answer, ATTENTION)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None)


def test_a_right_matrix_expression_in_delimiters_is_right():
    grade = check("matrix_expression", ATT, r"$\mathrm{softmax}\left(\frac{QK^T}{\sqrt{d_k}}\right)V$", MATRICES)
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None)


@pytest.mark.parametrize("answer, outcome", [
    ("$d_k$", (False, 0.0, None)),  # read, and wrong
    ("$d_k$ $sigma_q$", (False, 0.0, "unexpected character '$' at position 1: it is not part of the answer syntax")),
    ("$", (False, 0.0, "unexpected character '$' at position 1: it is not part of the answer syntax")),
    ("$ $", (False, 0.0, "the answer is empty: type an expression")),
    (r"\(", (False, 0.0, r"unsupported LaTeX command \(")),
])
def test_anything_else_with_a_dollar_is_judged_as_before(answer, outcome):
    grade = check("symbolic", SD, answer, ATTENTION)
    assert (grade.correct, grade.score, grade.error) == outcome
