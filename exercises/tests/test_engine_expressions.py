"""The expression language evaluates what authors need and refuses everything else."""

import time

import numpy as np
import pytest

from exercises.engine import ExpressionError, compile_expression, evaluate
from exercises.engine.expressions import to_json_value

CHAPTER = {
    "X": [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]],
    "W_Q": [[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]],
    "W_K": [[1, 0, 1, 0], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1]],
    "W_V": [[2, 0, 0, 1], [0, 1, 0, 0], [0, 0, 3, 0], [1, 0, 0, 1]],
    "q": 3,
    "d_k": 4,
}


def value(text, env=CHAPTER):
    return to_json_value(evaluate(compile_expression(text), env))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("(X @ W_Q)[q]", [1, 0, 2, 1]),
        ("attention(X @ W_Q, X @ W_K, X @ W_V).scores[q]", [5, 3, 4, 4]),
        ("round(attention(X @ W_Q, X @ W_K, X @ W_V).weights[q], 4)", [0.3875, 0.1425, 0.235, 0.235]),
        ("round(attention(X @ W_Q, X @ W_K, X @ W_V).output[q], 4)", [1.6225, 0.3775, 1.8674, 1]),
        ("round(softmax([5, 3, 4, 4]), 4)", [0.5344, 0.0723, 0.1966, 0.1966]),
        ("round(softmax([5, 3, 4, 4] / sqrt(d_k)), 4)", [0.3875, 0.1425, 0.235, 0.235]),
        ("sqrt(d_k) * 2 * 3", 12),
        ("head_dim(512, 8)", 64),
        ("shape(X @ W_V.T)", [4, 4]),
        ("argmax(row(X @ W_Q, 0))", 0),
        ("X[1:3, 0]", [0, 1]),
        ("2 ** 10", 1024),
        ("-q + 1 < 0", True),
        ("True", True),
        ("round(attention(X @ W_Q, X @ W_K, X @ W_V, causal=False).weights[q], 4)", [0.3875, 0.1425, 0.235, 0.235]),
        ("round(attention(X @ W_Q, X @ W_K, X @ W_V, causal=True).weights[0], 4)", [1, 0, 0, 0]),
    ],
)
def test_allowed_expressions_evaluate_exactly(text, expected):
    assert value(text) == expected


HOSTILE = [
    ("__import__('os')", "name '__import__' is not allowed (names may not start with '_')"),
    ("__import__('os').system('true')", "only the built-in functions may be called"),
    ("X.__class__", "name '__class__' is not allowed (names may not start with '_')"),
    ("X.shape", "attribute '.shape' is not allowed; allowed: .T, .output, .scale, .scaled_scores, .scores, .weights"),
    ("(lambda: 1)()", "only the built-in functions may be called"),
    ("lambda: 1", "lambda is not allowed in an expression"),
    ("[x for x in X]", "comprehension is not allowed in an expression"),
    ("'text'", "only numbers, True and False are allowed as constants, not 'text'"),
    ("None", "only numbers, True and False are allowed as constants, not None"),
    ("[" + "1, " * 450 + "1]", "expression too large (at most 400 terms)"),
    ("1+" * 300 + "1", "expression nested too deeply (at most 50 levels)"),
    ("-" * 60 + "1", "expression nested too deeply (at most 50 levels)"),
    ("open('/etc/passwd')", "unknown function 'open'; known: "),
    ("eval('1')", "unknown function 'eval'; known: "),
    ("{1: 2}", "dict literal is not allowed in an expression"),
    ("X if q else W_Q", "conditional expression is not allowed in an expression"),
    ("(y := 3)", "assignment expression is not allowed in an expression"),
    ("sum(*X)", "starred argument is not allowed in an expression"),
    ("softmax(X, key=1)", "keyword argument 'key' is not allowed"),
    ("q | 1", "operator BitOr is not allowed"),
    ("not q", "operator Not is not allowed"),
    ("q and X", "BoolOp is not allowed in an expression"),
    ("q in X", "only <, <=, >, >=, ==, != comparisons are allowed"),
    ("f'{q}'", "f-string is not allowed in an expression"),
    ("softmax", "function 'softmax' must be called, not used as a value"),
    ("import os", "syntax error in 'import os' at column 1"),
    ("", "empty expression"),
]


@pytest.mark.parametrize("text, message", HOSTILE)
def test_hostile_expressions_are_refused_before_running(text, message):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert str(caught.value).startswith(message)


def test_unknown_names_are_refused_when_the_known_names_are_given():
    with pytest.raises(ExpressionError) as caught:
        compile_expression("X @ W_Z + d_q", known_names={"X", "W_Q"})
    assert str(caught.value) == "unknown name 'W_Z', 'd_q' in 'X @ W_Z + d_q'"


@pytest.mark.parametrize(
    "text, message",
    [
        ("9 ** 9 ** 9", "exponent 3.8742e+08 is too large (at most 1000)"),
        ("zeros(100000, 100000)", "array shape (100000, 100000) is not allowed (at most 100000 entries)"),
        ("eye(10 ** 6)", "array shape (1000000, 1000000) is not allowed (at most 100000 entries)"),
        ("X[q + 10]", "cannot evaluate 'X[q + 10]': index 13 is out of bounds for axis 0 with size 4"),
        ("X @ [1, 2]", "cannot evaluate 'X @ [1, 2]': shapes (4,4) and (2,) do not align"),
        ("X[0.5]", "an index must be a whole number, got 0.5"),
        ("attention(X, X, X).weights + attention(X, W_Q, X)", "cannot evaluate"),
        ("1 // 0", "cannot evaluate '1 // 0': integer division or modulo by zero"),
        ("99999999999 * 99999999999 * 99999999999", "number too large"),
    ],
)
def test_runtime_abuse_gives_a_clear_error_quickly(text, message):
    started = time.monotonic()
    with pytest.raises(ExpressionError) as caught:
        evaluate(compile_expression(text), CHAPTER)
    assert str(caught.value).startswith(message)
    assert time.monotonic() - started < 1.0


def test_attention_result_must_be_narrowed_before_storing():
    with pytest.raises(ExpressionError, match=r"must be narrowed"):
        to_json_value(evaluate(compile_expression("attention(X, X, X)"), CHAPTER))


def test_list_literals_are_arrays_so_repetition_cannot_explode():
    assert np.asarray(evaluate(compile_expression("[1, 2] * 3"), {})).tolist() == [3.0, 6.0]
