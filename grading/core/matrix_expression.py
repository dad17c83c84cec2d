"""Matrix-expression answers such as ``softmax(Q K^T / sqrt(d_k)) V``.

Options:
    matrices  {name: [rows, cols]}; sizes are numbers or names from ``scalars``
    scalars   {name: value}; ``d_k`` defaults to the width of K (or Q) when not given

Syntax: products by juxtaposition, ``*`` or ``@`` (matrix products do not commute),
``K^T`` / ``K^{\\top}`` / ``Kᵀ`` / ``transpose(K)`` for a transpose, ``/`` by a scalar,
functions ``softmax`` (row-wise), ``sqrt``, ``exp`` (element-wise), ``transpose``.
The text goes through the same safe reader as symbolic answers (no eval).
Grading evaluates both expressions with NumPy on three seeded random draws of the
declared matrices; a product of incompatible shapes is explained, with a transpose hint.
"""

from __future__ import annotations

import ast
from functools import lru_cache

import numpy as np

from grading.core import attention, misconceptions, safe_expr
from grading.core.grades import AnswerFormatError, Grade, InvalidRequest, Parsed, invalid, right, wrong

GRAMMAR = safe_expr.Grammar(
    functions=frozenset({"softmax", "sqrt", "exp", "transpose"}),
    transpose=True,
    matmul=True,
)
TRIALS = 3
SEED = 20240611
MAX_SIZE = 64


class ShapeMismatch(Exception):
    """The expression is well formed but multiplies or adds incompatible shapes."""

    def __init__(self, message: str, misconception: str | None = None):
        super().__init__(message)
        self.misconception = misconception


def _shapes_and_scalars(options: dict) -> tuple[dict, dict]:
    scalars = options.get("scalars") or {}
    matrices = options.get("matrices")
    if not isinstance(matrices, dict) or not matrices:
        raise InvalidRequest("option 'matrices' must map matrix names to [rows, cols]")
    if not isinstance(scalars, dict):
        raise InvalidRequest("option 'scalars' must map names to numbers")
    try:
        scalar_values = {str(name): float(value) for name, value in scalars.items()}
    except (TypeError, ValueError):
        raise InvalidRequest("every value in option 'scalars' must be a number") from None
    shapes = {}
    for name, shape in matrices.items():
        if not isinstance(shape, (list, tuple)) or len(shape) != 2:
            raise InvalidRequest(f"shape of {name!r} must be [rows, cols]")
        shapes[str(name)] = tuple(_size(size, scalar_values, name) for size in shape)
    if "d_k" not in scalar_values:
        source = shapes.get("K") or shapes.get("Q")
        if source:
            scalar_values["d_k"] = float(source[1])
    return shapes, scalar_values


def _size(size, scalars: dict, name: str) -> int:
    value = scalars.get(size) if isinstance(size, str) else size
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        raise InvalidRequest(f"size {size!r} of {name!r} must be a whole number from 1 to {MAX_SIZE}")
    return value


def _known_names(shapes: dict, scalars: dict) -> frozenset:
    return frozenset(shapes) | frozenset(scalars)


@lru_cache(maxsize=512)
def _read_cached(text: str, known: frozenset) -> safe_expr.CheckedExpression:
    return safe_expr.read_expression(text, GRAMMAR, known)


def read(text, shapes: dict, scalars: dict) -> safe_expr.CheckedExpression:
    known = _known_names(shapes, scalars)
    checked = _read_cached(text, known) if isinstance(text, str) else safe_expr.read_expression(text, GRAMMAR, known)
    unknown = sorted(checked.names - known - {safe_expr.TRANSPOSE_MARKER})
    if unknown:
        raise AnswerFormatError(f"unknown name {unknown[0]!r}; this answer may use {', '.join(sorted(known))}")
    return checked


def random_draws(shapes: dict, trials: int = TRIALS, seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{name: rng.standard_normal(shape) for name, shape in sorted(shapes.items())} for _ in range(trials)]


class _Evaluator:
    def __init__(self, checked: safe_expr.CheckedExpression, values: dict):
        self.literals = checked.literals
        self.values = values

    def value(self, node: ast.AST):
        if isinstance(node, ast.Constant):
            return float(self.literals.get(node.col_offset, node.value))
        if isinstance(node, ast.Name):
            return self.values[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise AnswerFormatError(f"{type(node).__name__} is not allowed in an answer")

    def binary(self, node: ast.BinOp):
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
            return _transposed(self.value(node.left), node.left)
        left, right = self.value(node.left), self.value(node.right)
        if isinstance(node.op, (ast.Mult, ast.MatMult)):
            return _product(left, right, node)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            _check_same_shape(left, right, node)
            return left + right if isinstance(node.op, ast.Add) else left - right
        if isinstance(node.op, ast.Div):
            if np.ndim(right):
                raise ShapeMismatch(f"{describe(node.right)} is a matrix: dividing by a matrix is not defined")
            return left / right
        if np.ndim(left) or np.ndim(right):
            raise ShapeMismatch("powers of matrices are not used here; write products out, e.g. Q K^T")
        return left**right

    def call(self, node: ast.Call):
        name = node.func.id
        if len(node.args) != 1:
            raise AnswerFormatError(f"{name}(...) takes one argument")
        argument = self.value(node.args[0])
        if name == "transpose":
            return _transposed(argument, node.args[0])
        if name == "softmax":
            if not np.ndim(argument):
                raise ShapeMismatch("softmax is applied to a matrix of scores, not to a single number")
            return attention.softmax(argument, axis=-1)
        return np.sqrt(argument) if name == "sqrt" else np.exp(argument)


class _SlipEvaluator(_Evaluator):
    """Evaluates the *expected* expression the way a known slip would (for diagnosis)."""

    def __init__(self, checked, values: dict, slip: str):
        super().__init__(checked, values)
        self.slip = slip

    def call(self, node: ast.Call):
        name = node.func.id
        if name == "sqrt" and self.slip in ("no_scaling", "divided_by_d_k"):
            argument = self.value(node.args[0])
            if not np.ndim(argument):
                return 1.0 if self.slip == "no_scaling" else argument
        if name == "softmax" and self.slip == "softmax_wrong_axis":
            argument = self.value(node.args[0])
            if np.ndim(argument):
                return attention.softmax(argument, axis=-2)
        return super().call(node)


SLIPS = ("no_scaling", "divided_by_d_k", "softmax_wrong_axis")


def diagnose_slip(expected_checked, answer_values: list, draws: list) -> str | None:
    """The known slip whose version of the expected expression the answer matches, if any."""
    for slip in SLIPS:
        with np.errstate(all="ignore"):
            slipped = [_SlipEvaluator(expected_checked, draw, slip).value(expected_checked.body) for draw in draws]
        if all(
            np.shape(s) == np.shape(a) and np.allclose(a, s, rtol=1e-7, atol=1e-9)
            for s, a in zip(slipped, answer_values)
        ):
            return slip
    return None


def describe(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.BinOp) and isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
        return describe(node.left) + "^T"
    if isinstance(node, ast.Call):
        return f"{node.func.id}(...)"
    return "(...)"


def _shape_text(value) -> str:
    return "×".join(str(size) for size in np.shape(value)) or "a number"


def _transposed(value, node):
    if not np.ndim(value):
        return value
    return np.swapaxes(value, -1, -2)


def _check_same_shape(left, right, node: ast.BinOp) -> None:
    if np.ndim(left) and np.ndim(right) and np.shape(left) != np.shape(right):
        raise ShapeMismatch(
            f"{describe(node.left)} and {describe(node.right)} have shapes {_shape_text(left)} and "
            f"{_shape_text(right)}: only matrices of the same shape can be added"
        )


def _product(left, right, node: ast.BinOp):
    if not np.ndim(left) or not np.ndim(right):
        return left * right
    if left.shape[-1] == right.shape[-2]:
        return left @ right  # (a, b) x (b, c) -> (a, c)
    left_text, right_text = describe(node.left), describe(node.right)
    message = f"{left_text} {right_text} has shapes {_shape_text(left)} and {_shape_text(right)}: the inner sizes do not match"
    if left.shape[-1] == right.shape[-1]:
        suggestion = right_text[:-2] if right_text.endswith("^T") else right_text + "^T"
        code = "k_not_transposed" if right_text == "K" else None
        raise ShapeMismatch(f"{message}; did you mean {suggestion}?", code)
    raise ShapeMismatch(message)


def evaluate(checked: safe_expr.CheckedExpression, values: dict):
    with np.errstate(all="ignore"):
        return _Evaluator(checked, values).value(checked.body)


def check(expected, answer, options: dict) -> Grade:
    shapes, scalars = _shapes_and_scalars(options)
    if not isinstance(expected, str):
        raise InvalidRequest("expected must be a matrix expression as text")
    draws = [{**draw, **scalars} for draw in random_draws(shapes)]
    try:
        expected_checked = read(expected, shapes, scalars)
        expected_values = [evaluate(expected_checked, draw) for draw in draws]
    except (AnswerFormatError, ShapeMismatch) as problem:
        raise InvalidRequest(f"expected expression is not usable: {problem}") from None
    try:
        checked = read(answer, shapes, scalars)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    try:
        answer_values = [evaluate(checked, draw) for draw in draws]
    except ShapeMismatch as mismatch:
        return wrong(f"Not quite: {mismatch}", misconception=mismatch.misconception)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    grade = _compare(expected_values, answer_values)
    if not grade.correct:
        slip = diagnose_slip(expected_checked, answer_values, draws)
        if slip is not None:
            return wrong(f"Not quite. {misconceptions.MISCONCEPTIONS[slip]}", misconception=slip)
    return grade


def _compare(expected_values: list, answer_values: list) -> Grade:
    for expected_value, answer_value in zip(expected_values, answer_values):
        if np.shape(expected_value) != np.shape(answer_value):
            return wrong(
                f"Not quite: your expression gives {_shape_text(answer_value)}, "
                f"but the answer is {_shape_text(expected_value)}."
            )
        if not np.all(np.isfinite(answer_value)):
            return wrong("Not quite: your expression overflows or is undefined for some matrices.")
        if not np.allclose(answer_value, expected_value, rtol=1e-7, atol=1e-9):
            return wrong("Not quite: your expression has the right shape but gives different values.")
    return right("Correct.")


def parse_answer(answer, options: dict) -> Parsed:
    try:
        shapes, scalars = _shapes_and_scalars(options)
        checked = read(answer, shapes, scalars)
    except (AnswerFormatError, InvalidRequest) as problem:
        return Parsed(None, str(problem), None)
    return Parsed(checked.text, None, _latex(checked.body))


def _latex(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp):
        return ("-" if isinstance(node.op, ast.USub) else "+") + _latex(node.operand)
    if isinstance(node, ast.Call):
        inner = _latex(node.args[0]) if node.args else ""
        if node.func.id == "sqrt":
            return rf"\sqrt{{{inner}}}"
        if node.func.id == "transpose":
            return rf"\left({inner}\right)^\top"
        return rf"\operatorname{{{node.func.id}}}\left({inner}\right)"
    if isinstance(node, ast.BinOp):
        if isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
            return rf"{{{_latex(node.left)}}}^\top"
        left, right = _latex(node.left), _latex(node.right)
        if isinstance(node.op, ast.Div):
            return rf"\frac{{{left}}}{{{right}}}"
        if isinstance(node.op, ast.Pow):
            return rf"{{{left}}}^{{{right}}}"
        symbol = {ast.Add: " + ", ast.Sub: " - "}.get(type(node.op), r" \, ")
        return rf"\left({left}{symbol}{right}\right)" if symbol != r" \, " else f"{left}{symbol}{right}"
    return ""


def self_test(expected, options: dict) -> dict[str, list]:
    shapes, _ = _shapes_and_scalars(options)
    first = sorted(shapes)[0]
    right_answers = [expected, f"({expected})", f"1*({expected})"]
    wrong_answers = [f"2*({expected})", f"({expected}) + ({expected})"]
    invalid_answers = ["", f"({expected}", f"{first}[0]", "unknown_matrix_name", f"{first}.T"]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
