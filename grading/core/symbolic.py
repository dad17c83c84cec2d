"""Symbolic answers: read an expression safely, build SymPy from the checked AST,
decide equivalence with the expected expression.

Options:
    symbols            {name: assumptions}; assumptions a string ("positive", "real, integer")
                       or a list; a plain list of names means real symbols
    allow_any_symbols  undeclared names become real symbols instead of being refused
    forbid_symbols     names the answer must not use (e.g. ["d_model"])
    require_simplified the answer may not be longer than the expected expression
    product_of_powers  the answer must be a product of powers (no sums)
    form_credit        score for an equivalent answer that fails a form check (default 0.5)
    time_limit         seconds for the exact decision (default 2)

Equivalence: a numeric screen at seeded random points that respect the assumptions
(exits early on any clear difference), then an exact SymPy decision
(structural equality, expansion, ``simplify``, ``equals``) under a time limit.
"""

from __future__ import annotations

import ast
import cmath
import random
import signal
import threading
from contextlib import contextmanager
from functools import lru_cache

import sympy

from grading.core import misconceptions, safe_expr
from grading.core.grades import (
    AnswerFormatError,
    Grade,
    InvalidRequest,
    Parsed,
    could_not_grade,
    invalid,
    option_float,
    right,
    wrong,
)
from grading.core.latex_as_read import latex_as_read

_ASSUMPTION_WORDS = {
    "positive": {"positive": True},
    "negative": {"negative": True},
    "nonnegative": {"nonnegative": True},
    "nonpositive": {"nonpositive": True},
    "nonzero": {"nonzero": True},
    "real": {"real": True},
    "integer": {"integer": True},
    "complex": {},
    "": {},
}
_CONSTANTS = {"pi": sympy.pi, "e": sympy.E, "E": sympy.E}
SCREEN_POINTS = 6
DEFAULT_TIME_LIMIT = 2.0


class DecisionTimeout(Exception):
    """The exact decision ran past its time limit."""


# --------------------------------------------------------------------------- symbols


def symbols_key(options: dict) -> tuple:
    """A hashable, validated form of options['symbols']: ((name, (assumption, ...)), ...)."""
    declared = options.get("symbols") or {}
    if isinstance(declared, (list, tuple)):
        declared = {name: "real" for name in declared}
    if not isinstance(declared, dict):
        raise InvalidRequest("option 'symbols' must map names to assumptions")
    items = []
    for name, assumption in declared.items():
        if not isinstance(name, str) or not _is_plain_name(name):
            raise InvalidRequest(f"symbol name {name!r} is not a plain name")
        items.append((name, _assumption_words(name, assumption)))
    return tuple(sorted(items))


def _is_plain_name(name: str) -> bool:
    return name.isidentifier() and name[0].isalpha() and "__" not in name and name.isascii()


def _assumption_words(name: str, assumption) -> tuple:
    if assumption is None or assumption is True:
        words = []
    elif isinstance(assumption, str):
        words = [word.strip().lower() for word in assumption.replace(";", ",").split(",")]
    elif isinstance(assumption, (list, tuple)):
        words = [str(word).strip().lower() for word in assumption]
    else:
        raise InvalidRequest(f"assumptions of {name!r} must be a string or list")
    unknown = [word for word in words if word not in _ASSUMPTION_WORDS]
    if unknown:
        raise InvalidRequest(f"unknown assumption {unknown[0]!r} for symbol {name!r}")
    return tuple(sorted(word for word in words if word))


@lru_cache(maxsize=256)
def symbol_table(key: tuple) -> dict:
    table = {}
    for name, words in key:
        flags = {}
        for word in words:
            flags.update(_ASSUMPTION_WORDS[word])
        table[name] = sympy.Symbol(name, **flags)
    return table


# --------------------------------------------------------------------------- AST -> SymPy

_FUNCTIONS = {
    "sqrt": sympy.sqrt,
    "exp": sympy.exp,
    "log": sympy.log,
    "ln": sympy.log,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "abs": sympy.Abs,
    "Abs": sympy.Abs,
}


class SympyBuilder:
    """Builds a SymPy expression from a checked AST. Subclass hooks add functions (E, Var)."""

    def __init__(self, symbols: dict, *, allow_any_symbols: bool, literals: dict):
        self.symbols = symbols
        self.allow_any_symbols = allow_any_symbols
        self.literals = literals

    def build(self, node: ast.AST):
        if isinstance(node, ast.Constant):
            return sympy.Rational(self.literals.get(node.col_offset, repr(node.value)))
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.build(node.left), self.build(node.right))
        if isinstance(node, ast.Call):
            return self.call(node)
        raise AnswerFormatError(f"{type(node).__name__} is not allowed in an answer")

    def name(self, name: str):
        if name in self.symbols:
            return self.symbols[name]
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if self.allow_any_symbols:
            return sympy.Symbol(name, real=True)
        allowed = ", ".join(sorted(self.symbols)) or "no letters (numbers only)"
        raise AnswerFormatError(f"unknown symbol {name!r}; this answer may use {allowed}")

    @staticmethod
    def binary(op: ast.operator, left, right):
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            return left / right
        return sympy.Pow(left, right)

    def call(self, node: ast.Call):
        name = node.func.id
        args = [self.build(arg) for arg in node.args]
        if name in ("log", "ln") and len(args) == 2:
            return sympy.log(args[0]) / sympy.log(args[1])
        if len(args) != 1:
            raise AnswerFormatError(f"{name}(...) takes one argument, got {len(args)}")
        return _FUNCTIONS[name](args[0])


def build_expression(checked: safe_expr.CheckedExpression, options: dict, key: tuple | None = None):
    key = symbols_key(options) if key is None else key
    builder = SympyBuilder(symbol_table(key), allow_any_symbols=bool(options.get("allow_any_symbols")), literals=checked.literals)
    expression = builder.build(checked.body)
    if expression.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise AnswerFormatError("the expression is undefined (it divides by zero)")
    return expression


def read_answer(answer, options: dict, key: tuple | None = None):
    """(checked AST, SymPy expression) for a student's answer; raises AnswerFormatError."""
    key = symbols_key(options) if key is None else key
    known = frozenset(name for name, _ in key)
    checked = safe_expr.read_expression(answer, safe_expr.SCALAR_GRAMMAR, known)
    return checked, build_expression(checked, options, key)


@lru_cache(maxsize=1024)
def _read_expected_cached(text: str, key: tuple, allow_any: bool):
    options = {"allow_any_symbols": allow_any}
    known = frozenset(name for name, _ in key)
    checked = safe_expr.read_expression(text, safe_expr.SCALAR_GRAMMAR, known)
    return checked, build_expression(checked, options, key)


def read_expected(expected, options: dict, key: tuple | None = None):
    key = symbols_key(options) if key is None else key
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        expected = repr(expected)
    if not isinstance(expected, str):
        raise InvalidRequest(f"expected must be an expression as text, got {type(expected).__name__}")
    try:
        return _read_expected_cached(expected, key, bool(options.get("allow_any_symbols")))
    except AnswerFormatError as problem:
        raise InvalidRequest(f"expected expression cannot be read: {problem}") from None


# --------------------------------------------------------------------------- numbers


def numeric_value(expression, values: dict) -> complex:
    """Evaluate a SymPy tree at a point with complex floats; fast for the usual node types."""
    if expression.is_Symbol:
        return values[expression]
    if expression.is_Number or expression.is_NumberSymbol:
        return complex(float(expression))
    args = expression.args
    if expression.is_Add:
        return sum((numeric_value(arg, values) for arg in args), 0j)
    if expression.is_Mul:
        product = 1 + 0j
        for arg in args:
            product *= numeric_value(arg, values)
        return product
    if expression.is_Pow:
        base, exponent = args
        if exponent.is_Integer:
            return numeric_value(base, values) ** int(exponent)
        return numeric_value(base, values) ** numeric_value(exponent, values)
    function = _NUMERIC_FUNCTIONS.get(expression.func)
    if function is not None and len(args) == 1:
        return function(numeric_value(args[0], values))
    substituted = expression.xreplace({symbol: sympy.Float(value.real, 20) for symbol, value in values.items()})
    return complex(substituted.evalf(20))


_NUMERIC_FUNCTIONS = {
    sympy.exp: cmath.exp,
    sympy.log: cmath.log,
    sympy.sin: cmath.sin,
    sympy.cos: cmath.cos,
    sympy.tan: cmath.tan,
    sympy.Abs: lambda value: complex(abs(value)),
}


def sample_points(symbols, count: int = SCREEN_POINTS, seed: int = 20240611) -> list[dict]:
    """Seeded random points honouring each symbol's sign and integer assumptions."""
    rng = random.Random(seed)
    ordered = sorted(symbols, key=lambda symbol: symbol.name)
    return [{symbol: complex(_sample_value(symbol, rng)) for symbol in ordered} for _ in range(count)]


def _sample_value(symbol, rng: random.Random) -> float:
    if symbol.is_integer:
        magnitude = rng.randint(1, 9)
        if symbol.is_positive or symbol.is_nonnegative:
            return magnitude
        return -magnitude if symbol.is_negative or rng.random() < 0.5 else magnitude
    magnitude = rng.uniform(0.3, 3.0)
    if symbol.is_positive or symbol.is_nonnegative:
        return magnitude
    if symbol.is_negative or symbol.is_nonpositive:
        return -magnitude
    return -magnitude if rng.random() < 0.5 else magnitude


def _values_close(left: complex, right: complex) -> bool:
    return abs(left - right) <= 1e-9 * max(abs(left), abs(right)) + 1e-13


def _usable(value: complex) -> bool:
    return cmath.isfinite(value) and abs(value) < 1e250


def numeric_screen(left, right, points: list[dict]) -> bool | None:
    """False on a clear difference at some point, True if equal at >= 2 points, else None."""
    agreeing = 0
    for point in points:
        try:
            left_value, right_value = numeric_value(left, point), numeric_value(right, point)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            continue
        if not (_usable(left_value) and _usable(right_value)):
            continue
        if _values_close(left_value, right_value):
            agreeing += 1
        elif not _near_miss_confirms_equal(left, right, point, left_value, right_value):
            return False
    return True if agreeing >= 2 else None


def _near_miss_confirms_equal(left, right, point, left_value, right_value) -> bool:
    """Rounding can separate two equal values slightly: re-evaluate small gaps with 30 digits."""
    if abs(left_value - right_value) > 1e-5 * max(abs(left_value), abs(right_value), 1e-300):
        return False
    exact_point = {symbol: sympy.Float(value.real, 30) for symbol, value in point.items()}
    difference = complex((left - right).xreplace(exact_point).evalf(30))
    return abs(difference) <= 1e-20 * max(abs(left_value), 1.0)


# --------------------------------------------------------------------------- decision


@contextmanager
def time_limit(seconds: float):
    """Raise DecisionTimeout after ``seconds`` (main thread only; elsewhere the sandbox limits)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def _time_up(signum, frame):
        raise DecisionTimeout()

    previous = signal.signal(signal.SIGALRM, _time_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@lru_cache(maxsize=4096)
def decide_equivalent(left, right, seconds: float = DEFAULT_TIME_LIMIT) -> bool | None:
    """True / False, or None when the exact decision did not finish in time."""
    if left == right:
        return True
    points = sample_points(left.free_symbols | right.free_symbols)
    screened = numeric_screen(left, right, points)
    if screened is False:
        return False
    try:
        with time_limit(seconds):
            return _exact_equal(left, right, screened)
    except (DecisionTimeout, RecursionError):
        return None


def _exact_equal(left, right, screened: bool | None) -> bool | None:
    difference = left - right
    if difference == 0 or sympy.expand(difference) == 0:
        return True
    if difference.has(sympy.sin, sympy.cos, sympy.tan) and _cancels_as_exponentials(difference):
        return True
    if sympy.simplify(difference) == 0:
        return True
    verdict = left.equals(right)
    if verdict is not None:
        return bool(verdict)
    return False if screened is None else None


def _cancels_as_exponentials(difference) -> bool:
    """Trigonometric identities are usually proved far faster by rewriting in exp than by simplify."""
    rewritten = sympy.expand(difference.rewrite(sympy.exp))
    return rewritten == 0 or sympy.cancel(rewritten) == 0


def screen_equal(left, right) -> bool:
    """Cheap numeric equality, used to recognise misconceptions and hints (never to award marks)."""
    if left == right:
        return True
    return numeric_screen(left, right, sample_points(left.free_symbols | right.free_symbols)) is True


# --------------------------------------------------------------------------- check


def check(expected, answer, options: dict) -> Grade:
    key = symbols_key(options)
    expected_checked, expected_expr = read_expected(expected, options, key)
    seconds = option_float(options, "time_limit", DEFAULT_TIME_LIMIT)
    try:
        checked, answer_expr = read_answer(answer, options, key)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    forbidden = sorted(checked.names & set(options.get("forbid_symbols") or ()))
    if forbidden:
        return wrong(f"Your answer must be written without {', '.join(forbidden)}.", forbidden=forbidden)
    verdict = decide_equivalent(expected_expr, answer_expr, seconds)
    if verdict is None:
        return could_not_grade(
            "Your answer could not be checked automatically in time; it has been passed on for review."
        )
    if not verdict:
        return _wrong_expression(expected_expr, answer_expr, options)
    form_problem = _form_problem(expected_checked, checked, answer_expr, options)
    if form_problem:
        return wrong(form_problem, score=_form_credit(options), equivalent=True)
    return right("Correct.")


def _form_credit(options: dict) -> float:
    credit = option_float(options, "form_credit", 0.5)
    return min(credit, 0.99)


def _form_problem(expected_checked, checked, answer_expr, options: dict) -> str | None:
    if options.get("product_of_powers") and _has_sum(checked.body):
        return "Your answer is equivalent, but it should be written as a single product of powers (no + or -)."
    if options.get("require_simplified") and _node_count(checked.body) > _node_count(expected_checked.body):
        return "Your answer is equivalent, but it is not fully simplified."
    return None


def _has_sum(node: ast.AST) -> bool:
    return any(isinstance(child, ast.BinOp) and isinstance(child.op, (ast.Add, ast.Sub)) for child in ast.walk(node))


def _node_count(node: ast.AST) -> int:
    return sum(1 for child in ast.walk(node) if not isinstance(child, (ast.expr_context, ast.operator, ast.unaryop)))


def _wrong_expression(expected_expr, answer_expr, options: dict) -> Grade:
    code = misconceptions.diagnose_symbolic(expected_expr, answer_expr)
    if code is not None:
        return wrong(f"Not equivalent to the correct expression. {misconceptions.MISCONCEPTIONS[code]}", misconception=code)
    return wrong(_hint(expected_expr, answer_expr))


def _hint(expected_expr, answer_expr) -> str:
    base = "Not equivalent to the correct expression."
    if expected_expr != 0 and screen_equal(answer_expr, -expected_expr):
        return base + " Check the sign."
    if screen_equal(answer_expr, expected_expr**2):
        return base + " You may have given the square (a variance) where the square root (a standard deviation) is asked for."
    if expected_expr != 0 and screen_equal(answer_expr**2, expected_expr):
        return base + " You may have taken a square root too many."
    if _constant_ratio(answer_expr, expected_expr):
        return base + " It differs from the correct expression by a constant factor."
    return base


def _constant_ratio(answer_expr, expected_expr) -> bool:
    """Numerically: is answer / expected the same number (not 0 or 1) at every sample point?"""
    ratios = []
    for point in sample_points(answer_expr.free_symbols | expected_expr.free_symbols):
        try:
            denominator = numeric_value(expected_expr, point)
            if denominator == 0:
                continue
            ratios.append(numeric_value(answer_expr, point) / denominator)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            continue
    if len(ratios) < 2 or not all(_usable(ratio) for ratio in ratios):
        return False
    first = ratios[0]
    return all(_values_close(ratio, first) for ratio in ratios) and not _values_close(first, 1) and abs(first) > 1e-12


def parse_answer(answer, options: dict) -> Parsed:
    try:
        checked, expression = read_answer(answer, options)
    except AnswerFormatError as problem:
        return Parsed(None, str(problem), None)
    # Typeset as read, not simplified: the preview says how the text was understood.
    return Parsed(str(expression), None, latex_as_read(checked.body, checked.literals))


def self_test(expected, options: dict) -> dict[str, list]:
    _, expected_expr = read_expected(expected, options)
    text = expected if isinstance(expected, str) else repr(expected)
    right_answers = [text, f"({text})"]
    if not (options.get("require_simplified") or options.get("product_of_powers")):
        right_answers += [str(expected_expr), f"1*({text})"]
    if expected_expr.is_Mul and not options.get("require_simplified"):
        right_answers.append("*".join(f"({arg})" for arg in reversed(expected_expr.args)))
    if not (options.get("require_simplified") or options.get("product_of_powers")):
        right_answers.append(f"({text}) + 0*2")
    wrong_answers = [f"({text}) + 1", f"2*({text})"]
    invalid_answers = ["", f"({text}", "__import__('os')", f"({text})**", "zz_not_declared" if not options.get("allow_any_symbols") else "1/0"]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
