"""The small, safe expression language exercise authors write reference answers in.

An expression is parsed with ``ast`` in eval mode and checked against a strict
whitelist of node types, names, functions and attributes *before* anything runs;
evaluation then walks the checked tree with NumPy. Python's ``eval`` is never used.

Examples: ``attention(X @ W_Q, X @ W_K, X @ W_V).weights[q]``,
``sqrt(d_k) * sigma_q * sigma_k``, ``softmax(scores / sqrt(d_k))``.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from grading.core import attention as attention_core
from grading.core.syntax_tree import parse_expression_tree

from .errors import ExpressionError

MAX_EXPRESSION_LENGTH = 2000
MAX_EXPRESSION_NODES = 400  # syntax-tree nodes: bounds checking and evaluating one expression
MAX_EXPRESSION_DEPTH = 50  # nesting; the checker and evaluator recurse once per level
MAX_ARRAY_ELEMENTS = 100_000
MAX_EXPONENT = 1000
MAX_INTEGER = 2**63
# Work, counted as entries made plus multiply-adds of matrix products. Each result fits in
# MAX_ARRAY_ELEMENTS, yet 400 terms of 316 × 316 products are 10^10 multiply-adds, and a
# draw evaluates every parameter, gate and answer: minutes of one web request for a student.
MAX_EXPRESSION_WORK = 2_000_000  # one evaluation of one expression (a few ms of NumPy)
MAX_DRAW_WORK = 10_000_000  # every expression of one draw, or of one variant's texts, together

# Fields an author may read off a value: the parts of an attention result and a transpose.
ALLOWED_ATTRIBUTES = frozenset({"weights", "output", "scores", "scaled_scores", "scale", "T"})
ALLOWED_KEYWORDS = frozenset({"scale", "causal", "axis", "decimals"})
CONSTANTS = {"pi": math.pi, "e": math.e, "true": True, "false": False}

_BINARY_OPERATORS: dict[type, Callable] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
}
_OPERATOR_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.MatMult: "@",
}
_UNARY_OPERATORS: dict[type, Callable] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_COMPARISONS: dict[type, Callable] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_NODE_NAMES = {
    ast.Lambda: "lambda",
    ast.ListComp: "comprehension",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "comprehension",
    ast.IfExp: "conditional expression",
    ast.Dict: "dict literal",
    ast.Set: "set literal",
    ast.Starred: "starred argument",
    ast.NamedExpr: "assignment expression",
    ast.JoinedStr: "f-string",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}


# ---------------------------------------------------------------------------
# Work budgets
# ---------------------------------------------------------------------------


class _WorkBudget:
    def __init__(self, limit: int, message: str):
        self.left, self.message = limit, message


_work_budgets: ContextVar[tuple] = ContextVar("expression_work_budgets", default=())


@contextmanager
def work_budget(limit: int, what: str):
    """Every expression evaluated inside shares ``limit`` units of work (entries made and
    multiply-adds); past it the expression being evaluated raises ExpressionError. Budgets
    nest: each open one is charged."""
    message = (f"{what} needs too much computation (more than {limit:,} steps, counting every "
               "entry made and every multiply-add); use smaller matrices or fewer of them")
    token = _work_budgets.set(_work_budgets.get() + (_WorkBudget(limit, message),))
    try:
        yield
    finally:
        _work_budgets.reset(token)


def _charge(amount) -> None:
    amount = int(amount)
    for budget in reversed(_work_budgets.get()):  # the innermost, most particular, says it first
        budget.left -= amount
        if budget.left < 0:
            raise ExpressionError(budget.message, detail=budget.message)


def _charge_product(left_shape: tuple, right_shape: tuple) -> None:
    """The multiply-adds of ``left @ right`` (or ``np.dot``): entries of the result times
    the length of the summed axis, charged before NumPy does them."""
    if not left_shape or not right_shape:
        return
    if len(left_shape) > 2 and len(right_shape) > 2:
        result = left_shape[:-1] + right_shape[:-2] + right_shape[-1:]
    else:
        result = _matmul_shape(left_shape, right_shape)
    _charge(math.prod(int(size) for size in result) * int(left_shape[-1]))


# ---------------------------------------------------------------------------
# The function library
# ---------------------------------------------------------------------------


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=float)


def _checked_size(shape: Iterable[int]) -> tuple[int, ...]:
    dims = tuple(int(d) for d in np.atleast_1d(shape))
    if any(d < 0 for d in dims) or math.prod(dims) > MAX_ARRAY_ELEMENTS:
        raise ExpressionError(f"array shape {dims} is not allowed (at most {MAX_ARRAY_ELEMENTS} entries)")
    return dims


def _checked_result(shape: Iterable[int], what: str) -> None:
    """Refuse, before NumPy allocates it, a result of more than MAX_ARRAY_ELEMENTS entries:
    each operand may be within the limit while their product is not (``outer`` of two
    vectors of 100,000 entries asks for 75 GiB)."""
    entries = math.prod(int(size) for size in shape)
    if entries > MAX_ARRAY_ELEMENTS:
        raise ExpressionError(
            f"{what} would make an array of {entries} entries (at most {MAX_ARRAY_ELEMENTS})"
        )


def _broadcast_checked(left, right, what: str) -> None:
    """Elementwise operands: their broadcast shape (a column and a row make a matrix)."""
    _checked_result(np.broadcast_shapes(np.shape(left), np.shape(right)), what)


def _matmul_shape(left_shape: tuple, right_shape: tuple) -> tuple:
    """The shape ``left @ right`` would have (a vector counts as one row or one column)."""
    left_shape = left_shape if len(left_shape) > 1 else (1,) + tuple(left_shape)
    right_shape = right_shape if len(right_shape) > 1 else tuple(right_shape) + (1,)
    batch = np.broadcast_shapes(left_shape[:-2], right_shape[:-2])
    return tuple(batch) + (left_shape[-2], right_shape[-1])


def _matmul_checked(left, right, what: str) -> None:
    left_shape, right_shape = np.shape(left), np.shape(right)
    if not left_shape or not right_shape:
        _broadcast_checked(left, right, what)
    elif len(left_shape) > 2 and len(right_shape) > 2:  # np.dot pairs every batch with every batch
        _checked_result(left_shape[:-1] + right_shape[:-2] + right_shape[-1:], what)
    else:
        _checked_result(_matmul_shape(left_shape, right_shape), what)


def _index(value) -> int:
    if isinstance(value, (bool, np.bool_)) or float(value) != int(value):
        raise ExpressionError(f"an index must be a whole number, got {value!r}")
    return int(value)


def _row(matrix, i):
    return _array(matrix)[_index(i)]


def _col(matrix, j):
    return _array(matrix)[:, _index(j)]


def _set_row(matrix, i, values):
    result = _array(matrix).copy()
    result[_index(i)] = _array(values)
    return result


def _zeros(*shape):
    return np.zeros(_checked_size(shape))


def _ones(*shape):
    return np.ones(_checked_size(shape))


def _eye(n):
    _checked_size((n, n))
    return np.eye(_index(n))


def _round(value, decimals=0):
    rounded = np.round(_array(value), _index(decimals))
    return float(rounded) if rounded.ndim == 0 else rounded


def _attention(Q, K, V, scale=None, causal=False):
    try:
        _attention_checked(_array(Q), _array(K), _array(V))
        _attention_charged(_array(Q), _array(K), _array(V))
        return attention_core.attention(Q, K, V, scale=scale, causal=bool(causal))
    except ValueError as exc:
        raise ExpressionError(str(exc)) from None


def _attention_checked(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    """The scores (n × m) and the output (n × d_v) must fit before they are computed."""
    if Q.ndim == 0 or K.ndim == 0 or V.ndim == 0:
        return  # attention_core refuses these itself
    scores = _matmul_shape(Q.shape, np.swapaxes(np.atleast_2d(K), -1, -2).shape)
    _checked_result(scores, "attention(...) scores")
    _checked_result(_matmul_shape(scores, V.shape), "attention(...) output")


def _attention_charged(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> None:
    if Q.ndim == 0 or K.ndim == 0 or V.ndim == 0:
        return
    keys_t = np.swapaxes(np.atleast_2d(K), -1, -2).shape
    _charge_product(Q.shape, keys_t)
    _charge_product(_matmul_shape(Q.shape, keys_t), V.shape)


def _outer(a, b):
    a, b = _array(a), _array(b)
    _checked_result((a.size, b.size), "outer(...)")
    return np.outer(a, b)  # (m,) x (k,) -> (m, k)


def _diag(v):
    v = _array(v)
    if v.ndim == 1:
        _checked_result((v.size, v.size), "diag(...)")
    return np.diag(v)


def _matmul(a, b):
    a, b = _array(a), _array(b)
    _matmul_checked(a, b, "matmul(...)")
    _charge_product(a.shape, b.shape)
    return a @ b


def _dot(a, b):
    a, b = _array(a), _array(b)
    _matmul_checked(a, b, "dot(...)")
    _charge_product(a.shape, b.shape)
    return np.dot(a, b)


def _whole_number(x) -> int:
    number = _index(round(float(x)))
    if abs(number) >= MAX_INTEGER:
        raise ExpressionError("a whole number in the expression is too large (at most 2^63)")
    return number


def _softmax(x, axis=-1):
    return attention_core.softmax(_array(x), axis=_index(axis))


def _softmax_jacobian(p):
    """d p_i / d x_j = p_i (delta_ij - p_j) for p = softmax(x)."""
    p = _array(p)
    _checked_result((p.size, p.size), "softmax_jacobian(...)")
    return np.diag(p) - np.outer(p, p)  # (m,) -> (m, m)


def _head_dim(d_model, num_heads):
    try:
        return attention_core.head_dim(_index(d_model), _index(num_heads))
    except ValueError as exc:
        raise ExpressionError(str(exc)) from None


def _equal_row_pairs(matrix) -> int:
    """How many pairs of rows are identical (equal keys get equal weight from any query).

    Rows are grouped by sorting, not compared pair by pair: 100,000 rows would be
    5·10⁹ pairs. -0.0 equals 0.0, and a row holding NaN equals no row (as ``==`` says)."""
    rows = np.atleast_2d(_array(matrix)) + 0.0  # + 0.0 turns -0.0 into 0.0
    comparable = rows[~np.isnan(rows.reshape(len(rows), -1)).any(axis=1)]
    if len(comparable) < 2:
        return 0
    _, counts = np.unique(comparable.reshape(len(comparable), -1), axis=0, return_counts=True)
    return int(sum(int(count) * (int(count) - 1) // 2 for count in counts))


def _shape(value):
    return list(np.shape(value))


def _scalar_or_array(function):
    def wrapped(*args, **kwargs):
        result = function(*args, **kwargs)
        if isinstance(result, np.ndarray) and result.ndim == 0:
            return result.item()
        if isinstance(result, np.generic):
            return result.item()
        return result

    wrapped.__name__ = getattr(function, "__name__", "function")
    return wrapped


FUNCTIONS: dict[str, Callable] = {
    name: _scalar_or_array(function)
    for name, function in {
        "attention": _attention,
        "softmax": _softmax,
        "softmax_jacobian": _softmax_jacobian,
        "head_dim": _head_dim,
        "sqrt": lambda x: np.sqrt(_array(x)),
        "exp": lambda x: np.exp(_array(x)),
        "log": lambda x: np.log(_array(x)),
        "abs": lambda x: np.abs(_array(x)),
        "transpose": lambda m: _array(m).T,
        "matmul": _matmul,
        "dot": _dot,
        "outer": _outer,
        "diag": _diag,
        "row": _row,
        "col": _col,
        "set_row": _set_row,
        "round": _round,
        "max": lambda x: np.max(_array(x)),
        "min": lambda x: np.min(_array(x)),
        "argmax": lambda x: int(np.argmax(_array(x))),
        "argmin": lambda x: int(np.argmin(_array(x))),
        "sum": lambda x, axis=None: np.sum(_array(x), axis=None if axis is None else _index(axis)),
        "mean": lambda x: np.mean(_array(x)),
        "var": lambda x: np.var(_array(x)),
        "std": lambda x: np.std(_array(x)),
        "sort": lambda x: np.sort(_array(x)),
        "zeros": _zeros,
        "ones": _ones,
        "eye": _eye,
        "shape": _shape,
        "equal_row_pairs": _equal_row_pairs,
        "len": lambda x: len(np.atleast_1d(x)),
        "int": _whole_number,
        "float": lambda x: float(x),
    }.items()
}


# ---------------------------------------------------------------------------
# Static check
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Expression:
    """A parsed, whitelist-checked expression and the parameter names it reads."""

    text: str
    tree: ast.Expression = field(compare=False)
    names: frozenset[str] = field(compare=False)


def compile_expression(text, *, known_names: Iterable[str] | None = None) -> Expression:
    """Parse and check ``text``; unknown names are refused if ``known_names`` is given."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ExpressionError(f"expected an expression, got {type(text).__name__}")
    text = str(text).strip()
    if not text:
        raise ExpressionError("empty expression")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = parse_expression_tree(text)
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error in '{text}' at column {exc.offset}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expression nested too deeply (at most {MAX_EXPRESSION_DEPTH} levels)") from None
    _check_size(tree)
    names: set[str] = set()
    _check_node(tree.body, names)
    if known_names is not None:
        unknown = sorted(names - set(known_names))
        if unknown:
            raise ExpressionError(f"unknown name {_quoted(unknown)} in '{text}'")
    return Expression(text=text, tree=tree, names=frozenset(names))


def _check_size(tree: ast.AST) -> None:
    """Refuse huge or deeply nested trees before the recursive checker walks them."""
    count = 0
    level: list[ast.AST] = [tree]
    depth = 0
    while level:
        depth += 1
        count += len(level)
        if depth > MAX_EXPRESSION_DEPTH:
            raise ExpressionError(f"expression nested too deeply (at most {MAX_EXPRESSION_DEPTH} levels)")
        if count > MAX_EXPRESSION_NODES:
            raise ExpressionError(f"expression too large (at most {MAX_EXPRESSION_NODES} terms)")
        level = [child for node in level for child in ast.iter_child_nodes(node)]


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


def _check_node(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.Constant):
        # True/False are fine (e.g. causal=False); strings, bytes, None and ... are not.
        if not isinstance(node.value, (bool, int, float)):
            raise ExpressionError(f"only numbers, True and False are allowed as constants, not {node.value!r}")
        # 1e400 reads as infinity, and a whole number past MAX_INTEGER overflows when drawn.
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise ExpressionError("a number in the expression is too large (at most about 1.8e308)")
        if isinstance(node.value, int) and abs(node.value) >= MAX_INTEGER:
            raise ExpressionError("a whole number in the expression is too large (at most 2^63)")
    elif isinstance(node, ast.Name):
        _check_name(node.id)
        if node.id not in FUNCTIONS and node.id not in CONSTANTS:
            names.add(node.id)
        elif node.id in FUNCTIONS:
            raise ExpressionError(f"function '{node.id}' must be called, not used as a value")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY_OPERATORS:
            raise ExpressionError(f"operator {type(node.op).__name__} is not allowed")
        _check_node(node.left, names)
        _check_node(node.right, names)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY_OPERATORS:
            raise ExpressionError(f"operator {type(node.op).__name__} is not allowed")
        _check_node(node.operand, names)
    elif isinstance(node, ast.Compare):
        if any(type(op) not in _COMPARISONS for op in node.ops):
            raise ExpressionError("only <, <=, >, >=, ==, != comparisons are allowed")
        for child in (node.left, *node.comparators):
            _check_node(child, names)
    elif isinstance(node, ast.Call):
        _check_call(node, names)
    elif isinstance(node, ast.Attribute):
        _check_name(node.attr)
        if node.attr not in ALLOWED_ATTRIBUTES:
            raise ExpressionError(
                f"attribute '.{node.attr}' is not allowed; allowed: "
                + ", ".join(f".{a}" for a in sorted(ALLOWED_ATTRIBUTES))
            )
        _check_node(node.value, names)
    elif isinstance(node, ast.Subscript):
        _check_node(node.value, names)
        _check_index(node.slice, names)
    elif isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            _check_node(element, names)
    else:
        label = _NODE_NAMES.get(type(node), type(node).__name__)
        raise ExpressionError(f"{label} is not allowed in an expression")


def _check_name(name: str) -> None:
    if name.startswith("_"):
        raise ExpressionError(f"name '{name}' is not allowed (names may not start with '_')")


def _check_call(node: ast.Call, names: set[str]) -> None:
    if not isinstance(node.func, ast.Name):
        raise ExpressionError("only the built-in functions may be called")
    _check_name(node.func.id)
    if node.func.id not in FUNCTIONS:
        raise ExpressionError(
            f"unknown function '{node.func.id}'; known: {', '.join(sorted(FUNCTIONS))}"
        )
    for argument in node.args:
        _check_node(argument, names)
    for keyword in node.keywords:
        if keyword.arg not in ALLOWED_KEYWORDS:
            raise ExpressionError(f"keyword argument '{keyword.arg}' is not allowed")
        _check_node(keyword.value, names)


def _check_index(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.Slice):
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                _check_node(part, names)
    elif isinstance(node, ast.Tuple):
        for element in node.elts:
            _check_index(element, names)
    else:
        _check_node(node, names)


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


def evaluate(expression: Expression | str, env: dict):
    """Evaluate a checked expression with the parameter values in ``env``."""
    if not isinstance(expression, Expression):
        expression = compile_expression(expression)
    try:
        with np.errstate(all="ignore"), work_budget(MAX_EXPRESSION_WORK, "the expression"):
            return _evaluate(expression.tree.body, _ReadOnce(env))
    except ExpressionError:
        raise
    except (ArithmeticError, ValueError, TypeError, IndexError, KeyError) as exc:
        raise ExpressionError(f"cannot evaluate '{expression.text}': {exc}", detail=str(exc)) from None


class _ReadOnce(dict):
    """The parameters, each stored list made an array the first time it is read (a name
    read twenty times is converted once). Expressions never change an array in place."""

    def __init__(self, env: dict):
        super().__init__()
        self.env = env

    def __contains__(self, name) -> bool:
        return name in self.env

    def __getitem__(self, name):
        if not dict.__contains__(self, name):
            dict.__setitem__(self, name, _as_value(self.env[name]))
        return dict.__getitem__(self, name)


def _evaluate(node: ast.AST, env: dict):
    value = _evaluate_node(node, env)
    _charge(value.size + 1 if isinstance(value, np.ndarray) else 1)
    return value


def _evaluate_node(node: ast.AST, env: dict):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id not in env:
            raise ExpressionError(f"name '{node.id}' has no value yet")
        return _as_value(env[node.id])
    if isinstance(node, ast.BinOp):
        return _binary(node, _evaluate(node.left, env), _evaluate(node.right, env))
    if isinstance(node, ast.UnaryOp):
        return _UNARY_OPERATORS[type(node.op)](_evaluate(node.operand, env))
    if isinstance(node, ast.Compare):
        return _compare(node, env)
    if isinstance(node, ast.Call):
        args = [_evaluate(argument, env) for argument in node.args]
        kwargs = {k.arg: _evaluate(k.value, env) for k in node.keywords}
        return FUNCTIONS[node.func.id](*args, **kwargs)
    if isinstance(node, ast.Attribute):
        return _attribute(_evaluate(node.value, env), node.attr)
    if isinstance(node, ast.Subscript):
        value = _evaluate(node.value, env)
        if not isinstance(value, np.ndarray):
            value = np.asarray(value, dtype=float)
        result = value[_evaluate_index(node.slice, env)]
        return result.item() if isinstance(result, np.generic) else result
    if isinstance(node, (ast.List, ast.Tuple)):
        elements = [_evaluate(element, env) for element in node.elts]
        _checked_result((sum(np.size(element) for element in elements),), "a list")
        return np.asarray(elements, dtype=float)
    raise ExpressionError(f"{type(node).__name__} is not allowed")  # unreachable after checking


def _as_value(value):
    if isinstance(value, list):
        return np.asarray(value, dtype=float)
    return value


def _binary(node: ast.BinOp, left, right):
    if isinstance(node.op, ast.Pow):
        exponent = np.max(np.abs(np.asarray(right, dtype=float)))
        if exponent > MAX_EXPONENT:
            raise ExpressionError(f"exponent {exponent:g} is too large (at most {MAX_EXPONENT})")
        if isinstance(left, int) and isinstance(right, int):
            left = float(left)
    if isinstance(node.op, ast.MatMult):
        left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
        if left.ndim == 0 or right.ndim == 0:
            raise ExpressionError("@ needs vectors or matrices on both sides")
        inner = right.shape[0] if right.ndim == 1 else right.shape[-2]
        if left.shape[-1] != inner:
            # NumPy's own message speaks of gufunc signatures; say it as an author would.
            raise ValueError(f"shapes {_shape_text(left)} and {_shape_text(right)} do not align")
        _checked_result(_matmul_shape(left.shape, right.shape), "@")
        _charge_product(left.shape, right.shape)
    else:
        _broadcast_checked(left, right, _OPERATOR_SYMBOLS[type(node.op)])
    try:
        result = _BINARY_OPERATORS[type(node.op)](left, right)
    except OverflowError:  # Python says "(34, 'Numerical result out of range')"
        raise ExpressionError(
            f"the result of {_OPERATOR_SYMBOLS[type(node.op)]} is too large (beyond about ±1.8e308)"
        ) from None
    if isinstance(result, int) and abs(result) >= MAX_INTEGER:
        raise ExpressionError("number too large")
    if isinstance(result, np.generic):
        return result.item()
    return result


def _shape_text(array: np.ndarray) -> str:
    sizes = ",".join(str(size) for size in array.shape)
    return f"({sizes},)" if array.ndim == 1 else f"({sizes})"


def _compare(node: ast.Compare, env: dict):
    left = _evaluate(node.left, env)
    for op, comparator in zip(node.ops, node.comparators):
        right = _evaluate(comparator, env)
        _broadcast_checked(left, right, "a comparison")
        if not bool(np.all(_COMPARISONS[type(op)](left, right))):
            return False
        left = right
    return True


def _attribute(value, name: str):
    if name == "T":
        return np.asarray(value, dtype=float).T
    if not isinstance(value, attention_core.AttentionResult):
        raise ExpressionError(f"'.{name}' can only be read from the result of attention(...)")
    return getattr(value, name)


def _evaluate_index(node: ast.AST, env: dict):
    if isinstance(node, ast.Slice):
        return slice(
            *(None if part is None else _index(_evaluate(part, env)) for part in (node.lower, node.upper, node.step))
        )
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate_index(element, env) for element in node.elts)
    return _index(_evaluate(node, env))


def _json_numbers(flat: np.ndarray) -> list:
    """The entries of a 1-d numeric array as Python numbers: a whole number below 2^53 as an
    int, any other as a float (as ``to_json_value`` stores one number)."""
    if flat.dtype.kind in "iu":
        return [int(item) for item in flat.tolist()]
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(flat) & (np.abs(flat) < 2**53)
        whole &= flat == np.trunc(np.where(whole, flat, 0))
    if whole.all():
        return flat.astype(np.int64).tolist()
    as_ints = np.where(whole, flat, 0).astype(np.int64).tolist()
    return [i if w else f for i, f, w in zip(as_ints, flat.tolist(), whole.tolist())]


def _nested(flat: list, shape: tuple) -> list:
    """``flat`` cut into nested lists of ``shape`` (row-major, as ``ravel`` made it)."""
    for size in reversed(shape[1:]):
        flat = [flat[start:start + size] for start in range(0, len(flat), size)]
    return flat


def to_json_value(value):
    """A JSON-able copy of an evaluated value: floats, ints, nested lists."""
    if isinstance(value, attention_core.AttentionResult):
        raise ExpressionError("an attention result must be narrowed, e.g. with .weights[q]")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.ndarray):
        if value.size and value.dtype.kind in "iuf":  # one pass in C, not a call per entry
            return _nested(_json_numbers(value.ravel()), value.shape)
        return [to_json_value(item) for item in value] if value.ndim else to_json_value(value.item())
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        number = float(value)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    raise ExpressionError(f"cannot store a value of type {type(value).__name__}")
