"""Hypothesis fuzzing of every parser: any input gives a Grade (invalid or graded), never
another exception, and in bounded time."""

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grading.core.answers import Grade, check
from grading.tests.fixtures.answer_tests import ATTENTION, CHOICES, MATRICES, MOMENTS

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MATH_ALPHABET = list("0123456789+-*/^()[]{},. _=|'\"\\:;@!") + ["d_k", "sigma_q", "sigma_k", "sqrt", "exp", "log",
    "E", "Var", "Sum", "K", "Q", "V", "^T", "softmax", "\\frac", "\\sqrt", "√", "σ", "·", "²", "ᵀ", "**", "e", "1e9", "m"]
expression_text = st.lists(st.sampled_from(MATH_ALPHABET), max_size=40).map("".join) | st.text(max_size=60)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=12,
)


def _graded_quickly(answer_type, expected, answer, options, limit_seconds=3.0):
    started = time.perf_counter()
    grade = check(answer_type, expected, answer, options)
    assert isinstance(grade, Grade)
    assert 0.0 <= grade.score <= 1.0
    assert grade.correct == (grade.score == 1.0)
    if grade.error is not None:
        assert grade.score == 0.0
    assert time.perf_counter() - started < limit_seconds


@FUZZ
@given(answer=st.text(max_size=40) | json_like)
def test_numeric(answer):
    _graded_quickly("numeric", "0.3875", answer, {})


@FUZZ
@given(answer=st.text(alphabet="0123456789 ,;[]./-e\n", max_size=40) | json_like)
def test_matrix(answer):
    _graded_quickly("matrix", [[1, 2], [3, 4]], answer, {})


@FUZZ
@given(answer=expression_text | json_like)
def test_symbolic(answer):
    _graded_quickly("symbolic", "sqrt(d_k)*sigma_q*sigma_k", answer, ATTENTION)


@FUZZ
@given(answer=expression_text | json_like)
def test_matrix_expression(answer):
    _graded_quickly("matrix_expression", "softmax(Q K^T / sqrt(d_k)) V", answer, MATRICES)


@FUZZ
@given(answer=st.lists(expression_text, max_size=4) | expression_text | json_like)
def test_derivation(answer):
    _graded_quickly("derivation", "d_k*sigma_q^2*sigma_k^2", answer, MOMENTS)


@FUZZ
@given(answer=st.text(max_size=10) | st.lists(st.text(max_size=3), max_size=4) | json_like)
def test_choice(answer):
    _graded_quickly("choice", "B", answer, CHOICES)
    _graded_quickly("choice", ["A", "C"], answer, CHOICES | {"multiple": True})
