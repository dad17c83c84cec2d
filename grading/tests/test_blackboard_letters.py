"""Blackboard letters in typed expressions: MathLive writes the expectation as \\mathbb{E}[X] and
many texts the variance as \\mathbb{V}(X). Where the answer holds moments (a derivation) they are
E and Var; where it holds none (a symbolic or matrix expression) they are refused, as is any
other blackboard letter, with a message saying what is read (never Euler's e, never the matrix V)."""

import ast

import pytest

from grading.core import derivation, matrix_expression, safe_expr
from grading.core.grades import AnswerFormatError

MOMENTS = derivation.GRAMMAR
NOT_READ = (r"cannot be read here: the blackboard letters read are \mathbb{E} (expectation, \mathbb{E}[X]) and "
            r"\mathbb{V} (variance, \mathbb{V}(X))")


def read(text: str, grammar) -> str:
    return ast.unparse(safe_expr.read_expression(text, grammar).body)


@pytest.mark.parametrize("typed, read_as", [
    (r"\mathbb{V}[q\cdot k]", "Var(q * k)"),
    (r"\mathbb{V}(X)", "Var(X)"),
    (r"\mathbb{V}\left(q_m k_m\right)", "Var(q_m * k_m)"),
    (r"\mathbb{E}[q_m k_m]", "E(q_m * k_m)"),
    (r"\mathbb{E}\left[q_m^2\right]", "E(q_m ** 2)"),
    (r"\mathbb E[X]", "E(X)"),
    (r"\mathbb{ E }[X]", "E(X)"),
    (r"\mathbb{Var}(X)", "Var(X)"),
    (r"\mathbb{Cov}(X, Y)", "Cov(X, Y)"),
    (r"d_k \mathbb{E}[q_m^2] \mathbb{E}[k_m^2]", "d_k * E(q_m ** 2) * E(k_m ** 2)"),
    (r"\operatorname{Var}(X) + \mathbb{V}(Y)", "Var(X) + Var(Y)"),
])
def test_blackboard_moments_read_as_the_moments_of_a_derivation(typed, read_as):
    assert read(typed, MOMENTS) == read_as


@pytest.mark.parametrize("typed, message", [
    (r"\mathbb{R}", r"\mathbb{R} " + NOT_READ),
    (r"\mathbb{P}(X)", r"\mathbb{P} " + NOT_READ),
    (r"\mathbb{1}", r"\mathbb{1} " + NOT_READ),
    (r"\mathbb{}(X)", r"\mathbb{} " + NOT_READ),
    (r"\mathbb{E_1}[X]", r"\mathbb{...} " + NOT_READ),
])
def test_other_blackboard_letters_in_a_derivation_are_refused_saying_what_is_read(typed, message):
    with pytest.raises(AnswerFormatError) as refused:
        read(typed, MOMENTS)
    assert str(refused.value) == message


@pytest.mark.parametrize("grammar", [safe_expr.SCALAR_GRAMMAR, matrix_expression.GRAMMAR], ids=["symbolic", "matrix"])
@pytest.mark.parametrize("typed, message", [
    (r"\mathbb{E}^{x}", r"\mathbb{E} stands for an expectation, which this answer does not use: "
                        "write it with the symbols of the question"),
    (r"\mathbb{V}(q\cdot k)", r"\mathbb{V} stands for a variance, which this answer does not use: "
                              "write it with the symbols of the question"),
    (r"\sqrt[\mathbb{E}]{2}", r"\mathbb{E} stands for an expectation, which this answer does not use: "
                              "write it with the symbols of the question"),
    (r"\mathbb{R}", r"\mathbb{R} cannot be read here: write plain letters, not blackboard bold"),
])
def test_blackboard_letters_where_there_are_no_moments_are_refused(grammar, typed, message):
    with pytest.raises(AnswerFormatError) as refused:
        read(typed, grammar)
    assert str(refused.value) == message


def test_plain_e_and_v_keep_their_meaning():
    assert read(r"\mathrm{e}^{x}", safe_expr.SCALAR_GRAMMAR) == "e ** x"
    assert read(r"\mathrm{softmax}(Q K^\top) \mathbf{V}", matrix_expression.GRAMMAR) == "softmax(Q * K ** _T) * V"


def test_a_derivation_reports_a_refused_letter_at_its_position_on_the_line():
    from grading.core.answers import check

    options = {"symbols": {"d_k": "positive, integer"}, "start": "Var(dot(q, k))",
               "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}}}
    grade = check("derivation", "d_k", [r"\mathbb{V}(q \cdot k)", r"d_k \mathbb{P}(q_m k_m)"], options)
    assert grade.error == r"Line 2: \mathbb{P} " + NOT_READ
