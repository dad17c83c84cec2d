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
    expression_feedback [{expression, feedback}]: known wrong expressions of this part, each
                       with why it is wrong, said to a student whose wrong answer matches one
                       ("Not quite: <feedback>"; see ``known_wrong_expressions``); an entry
                       may add ``misconception``, a code the matching answer's grade carries

Equivalence: a numeric screen at seeded random points that respect the assumptions
(exits early on any clear difference), then an exact SymPy decision
(structural equality, expansion, ``simplify``, ``equals``) under a time limit. Values too
large or too small to compute at the points (towers of exponentials) are bounded instead
(``grading.core.magnitude``): a difference the bounds prove is "not equivalent", one they
cannot decide is "too complex to check" (could not grade, no attempt used), never a CAS
run that ends in a time-out. An answer agreeing at the seeded points is checked once more at
points keyed by a secret (``unpredictable_points``; whole-number symbols there take values
from 10 to 1000), so one built to vanish at the seeded points is not marked right.

A wrong answer's feedback says the most specific thing that is true of it (first that holds):
an unbracketed fractional power (``d_k^1/2``, read (d_k^1)/2) that, bracketed, is the right
answer; the author's known wrong expression (``expression_feedback``, in the order listed); a built-in
misconception (``diagnose_symbolic``); the sign, a square, a square root or a constant factor
(``_hint``); else plain "Not equivalent to the correct expression.". None of them changes the
score, and none is said of a right answer, a partly right one (a form problem) or one that
could not be graded.
"""

from __future__ import annotations

import ast
import cmath
import hashlib
import hmac
import math
import random
import secrets
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import sympy

from grading.core import magnitude, misconceptions, safe_expr
from grading.core.grades import (
    AnswerFormatError,
    Grade,
    InvalidRequest,
    Parsed,
    could_not_grade,
    invalid,
    option_float,
    option_left_out,
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
    "complex": {"complex": True},
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
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            # a*b*c*... is built as one Mul: SymPy re-gathers powers at every binary step.
            return sympy.Mul(*(self.build(factor) for factor in _chain(node, ast.Mult)))
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
        hint = safe_expr.did_you_mean(name, set(self.symbols) | set(_CONSTANTS))
        raise AnswerFormatError(f"unknown symbol {name!r}{hint}; this answer may use {allowed}")

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


def _chain(node: ast.BinOp, operator: type) -> list:
    """The operands of a left-nested chain of one operator, in order."""
    operands = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, operator):
        operands.append(node.right)
        node = node.left
    operands.append(node)
    return operands[::-1]


def build_expression(checked: safe_expr.CheckedExpression, options: dict, key: tuple | None = None):
    key = symbols_key(options) if key is None else key
    builder = SympyBuilder(symbol_table(key), allow_any_symbols=bool(options.get("allow_any_symbols")), literals=checked.literals)
    expression = builder.build(checked.body)
    if expression.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise AnswerFormatError("the expression is undefined (it divides by zero)")
    _require_short_numbers(expression)
    return expression


MAX_NUMBER_BITS = 4_600  # about 1400 digits: 1e-999 times 1e300, the extremes safe_expr lets through


def _require_short_numbers(expression) -> None:
    """Refuse an exact number with more digits than any answer needs: 1/3^600 + 1/5^400 + ...
    adds up to a fraction with thousands of digits, which nothing can print or compare quickly."""
    for atom in expression.atoms(sympy.Rational):
        if max(int(atom.p).bit_length(), int(atom.q).bit_length()) > MAX_NUMBER_BITS:
            raise AnswerFormatError("a number in the expression has too many digits once its fractions are added up")


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
    substituted = expression.xreplace({symbol: _sympy_number(value, 20) for symbol, value in values.items()})
    return complex(substituted.evalf(20))


def _sympy_number(value, digits: int):
    """A SymPy number for a point's coordinate (complex only when it is off the real line)."""
    real, imaginary = sympy.Float(str(value.real), digits), value.imag
    return real if not imaginary else real + sympy.I * sympy.Float(str(imaginary), digits)


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


def is_complex_symbol(symbol) -> bool:
    """Declared complex (not known to be real): identities are checked off the real line,
    so sqrt(x^2) = abs(x) or log(exp(x)) = x, true only for real x, are not accepted."""
    return bool(symbol.is_complex) and symbol.is_real is None


def _off_the_real_line(magnitude: float, rng: random.Random) -> complex:
    angle = rng.uniform(0.6, 2.6) * (1 if rng.random() < 0.5 else -1)
    return cmath.rect(magnitude, angle)


def _sample_value(symbol, rng: random.Random) -> complex:
    if is_complex_symbol(symbol):
        return _off_the_real_line(rng.uniform(0.3, 3.0), rng)
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


# Magnitudes well outside the "typical" 0.3..3, and at the edges of the assumptions:
# an answer that differs only for sigma_q > 4, or by d_k^(1e-10), is caught here.
_WIDE_REAL = (1e-3, 0.05, 4.75, 7.25, 41.5, 250.0, 1234.5, 1e6)
_WIDE_INTEGER = (1, 2, 17, 100, 1000, 10**6)
WIDE_POINTS = 8


def wide_points(symbols, count: int = WIDE_POINTS, seed: int = 20240612) -> list[dict]:
    rng = random.Random(seed)
    ordered = sorted(symbols, key=lambda symbol: symbol.name)
    points = []
    for index in range(count):
        point = {}
        for symbol in ordered:
            choices = _WIDE_INTEGER if symbol.is_integer else _WIDE_REAL
            magnitude = choices[(index + rng.randrange(len(choices))) % len(choices)]
            if symbol.is_nonnegative and index == 0 and not symbol.is_positive:
                magnitude = 0  # the edge of a nonnegative symbol
            negative = symbol.is_negative or (not (symbol.is_positive or symbol.is_nonnegative) and index % 2 == 1)
            point[symbol] = complex(-magnitude if negative else magnitude)
            if is_complex_symbol(symbol):
                point[symbol] = _off_the_real_line(magnitude or 1.0, rng)
        points.append(point)
    return points


# The key of the points no answer can be written against. The seeded points are in the
# source, so a student could add a term that vanishes at each of them (a product of (d_k - c)
# over their coordinates); points drawn from a keyed hash of the two expressions cannot be
# known without the key, and the same answer to the same question is always decided at the
# same points (a regrade, or two students typing alike, get the same verdict). The
# deployment sets its own key at start-up (``unpredictable_points_key_set``); until then a
# process draws one of its own.
_UNPREDICTABLE_KEY = secrets.token_bytes(32)


def unpredictable_points_key_set(key: bytes) -> None:
    global _UNPREDICTABLE_KEY
    _UNPREDICTABLE_KEY = bytes(key)


def unpredictable_rng(left, right) -> random.Random:
    """A generator keyed by the secret and the two expressions. A true identity holds at
    every point, so the verdict on it does not depend on the draw. Texts (the matrix
    expressions' normalised answers) are keyed as they are."""
    message = _key_text(left).encode() + b"\x00" + _key_text(right).encode()
    digest = hmac.new(_UNPREDICTABLE_KEY, message, hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _key_text(value) -> str:
    return value if isinstance(value, str) else sympy.srepr(value)


UNPREDICTABLE_POINTS = 3


# A whole-number symbol takes few values at the seeded points (1..9 and the wide 17, 100, ...):
# a product of (n - c) over them vanishes at every one, so its keyed values are drawn from a
# range no answer can cover with such factors (an answer has at most MAX_TOKENS symbols).
KEYED_INTEGERS = (10, 1000)


def unpredictable_points(left, right, symbols, count: int = UNPREDICTABLE_POINTS) -> list[dict]:
    """Typical points (as ``sample_points``) of ``unpredictable_rng``; whole-number symbols
    take values in KEYED_INTEGERS (with the sign their assumptions allow)."""
    rng = random.Random(unpredictable_rng(left, right).randrange(2**63))
    ordered = sorted(symbols, key=lambda symbol: symbol.name)
    return [{symbol: complex(_keyed_value(symbol, rng)) for symbol in ordered} for _ in range(count)]


def _keyed_value(symbol, rng: random.Random) -> complex:
    if not symbol.is_integer or is_complex_symbol(symbol):
        return _sample_value(symbol, rng)
    magnitude = rng.randint(*KEYED_INTEGERS)
    if symbol.is_positive or symbol.is_nonnegative:
        return magnitude
    return -magnitude if symbol.is_negative or rng.random() < 0.5 else magnitude


def _values_close(left: complex, right: complex) -> bool:
    return abs(left - right) <= 1e-9 * max(abs(left), abs(right)) + 1e-13


def _usable(value: complex) -> bool:
    return cmath.isfinite(value) and abs(value) < 1e250


def _float_values(left, right, point):
    try:
        left_value, right_value = numeric_value(left, point), numeric_value(right, point)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):
        return None
    if not (_usable(left_value) and _usable(right_value)):
        return None
    return left_value, right_value


def numeric_screen(left, right, points: list[dict], confirm: bool = True) -> bool | None:
    """False on a confirmed difference at some point, True if equal at >= 2 points, else None.

    With ``confirm`` a float difference is confirmed in high precision before it counts:
    cancellation in large terms can separate two equal values in binary floating point.
    Without it (hints, diagnosis) floats alone decide."""
    agreeing = 0
    for point in points:
        values = _float_values(left, right, point)
        if not confirm and (values is None or values == (0, 0)):
            # Without confirmation a float 0 says nothing: exp(-1000 x) and -exp(-1000 x) both
            # underflow to 0 at x = 2, and agreeing there would name a sign slip that is not one.
            continue
        if values is None:
            verdict = _high_precision_equal(left, right, point)
            if verdict is None:
                continue
            if not verdict:
                return False
            agreeing += 1
            continue
        if abs(values[0] - values[1]) <= 1e-13 * max(abs(values[0]), abs(values[1])) + 1e-300:
            agreeing += 1
        elif not confirm:
            if not _values_close(*values):
                return False
            agreeing += 1
        elif _high_precision_equal(left, right, point):
            agreeing += 1
        else:
            return False
    return True if agreeing >= 2 else None


# --------------------------------------------------------------------------- high precision

_MP_FUNCTIONS = {
    sympy.exp: mpmath.exp,
    sympy.log: mpmath.log,
    sympy.sin: mpmath.sin,
    sympy.cos: mpmath.cos,
    sympy.tan: mpmath.tan,
    sympy.Abs: lambda value: mpmath.mpf(abs(value)),
}


# mpmath has no overflow: exp(exp(exp(3))) is a number with a 7·10⁸-bit exponent and exp of it
# asks for ln 2 to that many bits (minutes, or a MemoryError). Beyond these sizes a point is
# treated as undefined, like a float overflow: e^70000 is above 2^100000.
MAX_MP_BITS = magnitude.ORDINARY_BITS
MAX_EXP_ARGUMENT = magnitude.MAX_EXP_ARGUMENT
MAX_TRIG_ARGUMENT_BITS = magnitude.MAX_TRIG_ARGUMENT_BITS


def _mp_checked(value):
    """``value`` unless its magnitude is beyond MAX_MP_BITS (then OverflowError)."""
    if value and mpmath.isfinite(value) and abs(mpmath.mag(value)) > MAX_MP_BITS:
        raise OverflowError("a value at this point is too large to compare")
    return value


def _mp_function(function, argument):
    if function is mpmath.exp and mpmath.re(argument) > MAX_EXP_ARGUMENT:
        raise OverflowError("exp of a too large number")
    if function in (mpmath.sin, mpmath.cos, mpmath.tan) and argument and mpmath.mag(argument) > MAX_TRIG_ARGUMENT_BITS:
        raise OverflowError("a trigonometric function of a too large number")
    return function(argument)


def _mp_power(base, exponent):
    """base ** exponent, refused (OverflowError) when the result would pass MAX_MP_BITS."""
    if base and exponent and mpmath.isfinite(base) and mpmath.isfinite(exponent):
        size = abs(exponent) * abs(mpmath.log(abs(base), 2))
        if size > MAX_MP_BITS:
            raise OverflowError("a power too large to compare")
    return mpmath.power(base, exponent)


def mp_value(expression, values: dict):
    """Evaluate at a point in mpmath at the current working precision (no floats involved);
    OverflowError where a value passes MAX_MP_BITS."""
    return _mp_checked(_mp_value(expression, values))


def _mp_value(expression, values: dict):
    if expression.is_Symbol:
        return values[expression]
    number = magnitude.mp_number(expression)
    if number is not None:
        return number
    args = expression.args
    if expression.is_Add:
        return mpmath.fsum(mp_value(arg, values) for arg in args)
    if expression.is_Mul:
        return mpmath.fprod(mp_value(arg, values) for arg in args)
    if expression.is_Pow:
        base, exponent = args
        if exponent.is_Integer:
            return _mp_power(mp_value(base, values), int(exponent))
        return _mp_power(mpmath.mpc(mp_value(base, values)), mp_value(exponent, values))
    function = _MP_FUNCTIONS.get(expression.func)
    if function is not None and len(args) == 1:
        return _mp_function(function, mp_value(args[0], values))
    substituted = expression.xreplace({symbol: _sympy_number(mpmath.mpc(value), mpmath.mp.dps)
                                       for symbol, value in values.items()})
    return mpmath.mpmathify(complex(substituted.evalf(mpmath.mp.dps)))


def _mp_difference(left, right, point: dict, digits: int):
    with mpmath.workdps(digits):
        exact_point = {symbol: mpmath.mpc(value.real, value.imag) if value.imag else mpmath.mpf(value.real)
                       for symbol, value in point.items()}
        left_value, right_value = mp_value(left, exact_point), mp_value(right, exact_point)
        if not (mpmath.isfinite(left_value) and mpmath.isfinite(right_value)):
            return None
        return abs(left_value - right_value), max(abs(left_value), abs(right_value))


MAX_EXTRA_DIGITS = 1_400  # the numbers of an answer have at most about 1000 + 300 digits (safe_expr)


def literal_digits(*expressions) -> int:
    """The digits of the longest exact number in the expressions (1e-999 has 1000): a term
    that small is invisible at 60 digits, so the comparison works with this many more."""
    longest = 0
    for expression in expressions:
        for atom in expression.atoms(sympy.Rational):
            longest = max(longest, int(atom.p).bit_length(), int(atom.q).bit_length())
    return min(MAX_EXTRA_DIGITS, math.ceil(longest * math.log10(2)))


def _high_precision_equal(left, right, point: dict) -> bool | None:
    """Equal at the point? Decided in 60 digits (more when a number in them is longer); a gap
    there is compared with the gap at 30 digits fewer: a rounding difference shrinks with
    the precision, a real one does not. None when undefined there."""
    extra = literal_digits(left, right)
    try:
        fine = _mp_difference(left, right, point, 60 + extra)
        if fine is None:
            return None
        fine_gap, size = fine
        if fine_gap == 0 or fine_gap <= mpmath.mpf(10) ** -(50 + extra) * size:
            return True
        coarse = _mp_difference(left, right, point, 30 + extra)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError, KeyError):
        return None
    if coarse is None:
        return None
    return bool(fine_gap < coarse[0] * mpmath.mpf(10) ** -15)


# --------------------------------------------------------------------------- exact rationals

MAX_RATIONAL_DEGREE = 100_000
RATIONAL_POINTS = 6


def _is_rational_function(expression) -> bool:
    """Only +, *, whole powers, symbols and rational numbers (then exact evaluation decides)."""
    for node in sympy.preorder_traversal(expression):
        if node.is_Symbol or node.is_Rational or node.is_Add or node.is_Mul:
            continue
        if node.is_Pow and node.args[1].is_Integer and abs(int(node.args[1])) <= MAX_RATIONAL_DEGREE:
            continue
        return False
    return True


PRIME = 2**61 - 1  # a Mersenne prime: identities are tested in the integers modulo PRIME


def _modular_value(expression, values: dict) -> int:
    """The value modulo PRIME; raises ZeroDivisionError where a denominator vanishes."""
    if expression.is_Symbol:
        return values[expression]
    if expression.is_Rational:
        return int(expression.p) * _inverse(int(expression.q)) % PRIME
    if expression.is_Add:
        return sum(_modular_value(arg, values) for arg in expression.args) % PRIME
    if expression.is_Mul:
        product = 1
        for arg in expression.args:
            product = product * _modular_value(arg, values) % PRIME
        return product
    base, exponent = expression.args
    value, power = _modular_value(base, values), int(exponent)
    if power < 0:
        value, power = _inverse(value), -power
    return pow(value, power, PRIME)


def _inverse(value: int) -> int:
    if value % PRIME == 0:
        raise ZeroDivisionError("a denominator vanishes at this point")
    return pow(value, PRIME - 2, PRIME)


def exact_rational_decision(left, right) -> bool | None:
    """For rational functions: an exact identity test at random points modulo a large prime.

    A difference found there is a real difference; agreement at several random points
    means equality except with probability (degree / 2^61) per point (Schwartz-Zippel).
    It decides (x-a)^6000 against (a-x)^6000 in microseconds, without expanding.
    The points are keyed (``unpredictable_rng``): a product of (d_k - r) over known points
    would otherwise be "equal" to anything."""
    if not (_is_rational_function(left) and _is_rational_function(right)):
        return None
    rng = unpredictable_rng(left, right)
    symbols = sorted(left.free_symbols | right.free_symbols, key=lambda symbol: symbol.name)
    decided = 0
    for _ in range(RATIONAL_POINTS * 3):
        point = {symbol: rng.randrange(2, PRIME - 1) for symbol in symbols}
        try:
            if _modular_value(left, point) != _modular_value(right, point):
                return False
        except ZeroDivisionError:
            continue
        decided += 1
        if decided >= RATIONAL_POINTS or not symbols:
            return True
    return None


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


MIN_AGREEING_POINTS = 4
MAX_EXPANDED_TERMS = 200  # expanding costs about 0.3 ms a term


class TooComplexToCheck(Exception):
    """The values of the two expressions are too large or too small to compare at every
    point where they are defined, and neither a bound on their size nor cheap algebra
    decides whether they are equal. Raised at once, instead of a CAS running out of time."""


TOO_COMPLEX_FEEDBACK = ("Your answer is too complex to check automatically: its values are too large (or too small) "
                        "to compare with the correct expression at any test point. Simplify it and submit it again.")


@lru_cache(maxsize=4096)
def decide_equivalent(left, right, seconds: float = DEFAULT_TIME_LIMIT) -> bool | None:
    """True / False; None only when the decision ran out of time; TooComplexToCheck when
    the values have a size no point can compare and no cheap argument decides.

    Rational functions are decided exactly at random rational points. Everything else is
    compared at typical points and at points far outside the typical range and on the
    edges of the assumptions, each float difference confirmed in 30 and 60 digits. Where
    too few points are defined, values too large to compute (towers of exponentials) are
    bounded instead (``grading.core.magnitude``); an exact SymPy proof is tried only when
    no value was too large."""
    if left == right:
        return True
    try:
        with time_limit(seconds):
            exact = exact_rational_decision(left, right)
            if exact is not None:
                return exact
            symbols = left.free_symbols | right.free_symbols
            points = sample_points(symbols) + wide_points(symbols)
            agreeing, undecided = 0, []
            for point in points:
                verdict = _point_verdict(left, right, point)
                if verdict is False:
                    return False
                agreeing += verdict is True
                if verdict is None:
                    undecided.append(point)
            if agreeing >= MIN_AGREEING_POINTS or (not symbols and agreeing):
                if _proved_different(left - right, undecided) or _lone_term_nonzero(left - right, points):
                    return False
                return not _differs_at_unpredictable_points(left, right, symbols)
            sized = _sized_verdict(left, right, undecided)
            if sized is not None:
                return sized
            return _exact_equal(left, right, None)
    except (DecisionTimeout, RecursionError):
        return None


def _differs_at_unpredictable_points(left, right, symbols) -> bool:
    """Whether the two differ at a keyed point (``unpredictable_points``): the check that
    an answer built to agree only at the seeded points cannot pass. A point where either side
    is undefined or too large to compute says nothing; but when no keyed point says anything
    (sqrt(n) + exp(exp(n)) (n - 1) ... (n - 9): 0 at the seeded n, too large at every other)
    the answer is not known to be right: TooComplexToCheck."""
    points = unpredictable_points(left, right, symbols)
    verdicts = [_point_verdict(left, right, point) for point in points]
    if any(verdict is False for verdict in verdicts):
        return True
    if symbols and not any(verdicts):
        difference = left - right
        if _proved_different(difference, points):
            return True
        if expanded_terms(difference) <= MAX_EXPANDED_TERMS and sympy.expand(difference) == 0:
            return False  # exp(exp(n) + log(2)) against 2 exp(exp(n)): equal, if only too large
        raise TooComplexToCheck()
    return False


def _lone_term_nonzero(difference, points) -> bool:
    """Whether a difference that is a single product of powers and exponentials (no sum
    outside an exponent, where nothing can cancel) is nonzero at one of ``points``:
    sqrt(d_k) σ + exp(-10^6 d_k) agrees with sqrt(d_k) σ in any number of digits at every
    point, but the difference SymPy leaves, exp(-10^6 d_k), is never 0."""
    if difference == 0 or not _cannot_cancel(difference):
        return False
    for point in points[:2]:
        try:
            with mpmath.workdps(30):
                value = mp_value(difference, {symbol: mpmath.mpf(value.real) for symbol, value in point.items()})
        except (ZeroDivisionError, OverflowError, ValueError, TypeError, KeyError):
            continue
        if mpmath.isfinite(value) and value != 0:
            return True
    return False


def _cannot_cancel(expression) -> bool:
    """A number, a symbol, or products and whole or fractional powers of them, and exponentials
    of anything: nothing in it can be 0 by cancellation."""
    if expression.is_Atom:
        return True
    if expression.func is sympy.exp:
        return True
    if expression.is_Mul or expression.is_Pow:
        return all(_cannot_cancel(arg) for arg in expression.args)
    return False


def _proved_different(difference, points) -> bool:
    """Whether at one of ``points`` (where a value was too large to compute) the difference is
    bounded away from 0: d_k σ + 10^-1000 exp(exp(exp(d_k))) agrees with d_k σ in 60 digits
    wherever d_k < 2.3, and is too large to compute beyond, where it is not d_k σ at all."""
    for point in points:
        size = magnitude.difference_at(difference, point)
        if size is not None and size.proved_nonzero:
            return True
    return False


def _sized_verdict(left, right, points) -> bool | None:
    """For points where a value is too large or too small to compute: False when at one
    of them the difference is bounded away from 0, True when it cancels on expansion,
    TooComplexToCheck otherwise; None when no value at these points was too large (they
    are undefined for another reason, and the exact decision may run)."""
    difference = left - right
    grew = False
    for point in points:
        size = magnitude.difference_at(difference, point)
        if size is None:
            continue
        if size.proved_nonzero:
            return False
        grew = True
    if not grew:
        return None
    if difference == 0 or (expanded_terms(difference) <= MAX_EXPANDED_TERMS and sympy.expand(difference) == 0):
        return True
    raise TooComplexToCheck()


def expanded_terms(expression, other_terms=None) -> int:
    """A bound on the number of terms ``sympy.expand`` would produce anywhere in
    ``expression``, computed without expanding, so (a + b + c)^60 is never tried.
    ``other_terms(node, counts)`` may count a node that is not a sum, product or power (from
    the counts of its arguments); None leaves it at 1."""
    largest = 1

    def terms(node) -> int:
        nonlocal largest
        if node.is_Atom:
            return 1
        counts = [terms(arg) for arg in node.args]
        if node.is_Add:
            count = sum(counts)
        elif node.is_Mul:
            count = math.prod(counts)
        elif node.is_Pow and node.args[1].is_Integer and int(node.args[1]) > 1:
            count = power_terms(counts[0], int(node.args[1]))
        else:
            count = (other_terms(node, counts) if other_terms else None) or 1
        largest = max(largest, count)
        return count

    terms(expression)
    return largest


def power_terms(terms: int, exponent: int) -> int:
    """The terms of a sum of ``terms`` terms raised to ``exponent``, multiplied out."""
    return math.comb(exponent + terms - 1, terms - 1) if terms > 1 else 1


def _point_verdict(left, right, point) -> bool | None:
    # Floats can neither confirm (a 1e-20 difference is invisible) nor refute (cancellation)
    # equality, so every point is decided in high precision.
    return _high_precision_equal(left, right, point)


def _exact_equal(left, right, screened: bool | None) -> bool | None:
    difference = left - right
    if _has_big_power(difference):
        return None
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


def _has_big_power(expression) -> bool:
    return any(node.is_Pow and node.args[1].is_Integer and abs(int(node.args[1])) > 64
               for node in sympy.preorder_traversal(expression))


def _cancels_as_exponentials(difference) -> bool:
    """Trigonometric identities are usually proved far faster by rewriting in exp than by simplify."""
    rewritten = sympy.expand(difference.rewrite(sympy.exp))
    return rewritten == 0 or sympy.cancel(rewritten) == 0


def screen_equal(left, right) -> bool:
    """Cheap numeric equality, used to recognise misconceptions and hints (never to award marks)."""
    if left == right:
        return True
    return numeric_screen(left, right, sample_points(left.free_symbols | right.free_symbols), confirm=False) is True


# --------------------------------------------------------------------------- check


def check(expected, answer, options: dict) -> Grade:
    key = symbols_key(options)
    expected_checked, expected_expr = read_expected(expected, options, key)
    seconds = option_float(options, "time_limit", DEFAULT_TIME_LIMIT)
    try:
        checked, answer_expr = read_answer(answer, options, key)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    forbidden = sorted(checked.names & _forbidden_symbols(options))
    if forbidden:
        return wrong(f"Your answer must be written without {', '.join(forbidden)}.", forbidden=forbidden)
    try:
        verdict = decide_equivalent(expected_expr, answer_expr, seconds)
    except TooComplexToCheck:
        # Not a wrong answer and not a reading problem: it costs no attempt (could not grade).
        return could_not_grade(TOO_COMPLEX_FEEDBACK, reason="too_complex")
    if verdict is None:
        return could_not_grade(
            "Checking your answer timed out, so it could not be checked automatically; it has been passed on for review.",
            reason="timeout",
        )
    if not verdict:
        if _bare_fraction_power_meant(checked, expected_expr, options, key):
            return wrong(BARE_FRACTION_POWER)
        return _wrong_expression(expected_expr, answer_expr, options, key)
    form_problem = _form_problem(expected_checked, checked, answer_expr, options)
    if form_problem:
        return wrong(form_problem, score=_form_credit(options), equivalent=True)
    return right("Correct.")


# d_k^1/2 is (d_k^1)/2 by the rules of precedence, as in every calculator; the student almost
# always meant d_k^(1/2). Said only when that reading is the right answer, so the slip is named.
BARE_FRACTION_POWER = f"Not equivalent to the correct expression. {safe_expr.BARE_FRACTION_POWER_ADVICE}"


def _bare_fraction_power_meant(checked, expected_expr, options: dict, key: tuple) -> bool:
    """Whether the answer, with its unbracketed fractional powers bracketed, is the right one."""
    bracketed = safe_expr.bracketed_fraction_powers(checked.text)
    if bracketed is None:
        return False
    try:
        _, meant = read_answer(bracketed, options, key)
    except AnswerFormatError:
        return False
    return screen_equal(meant, expected_expr)


def _forbidden_symbols(options: dict) -> set[str]:
    names = options.get("forbid_symbols") or []
    if isinstance(names, str):  # one name, not its letters
        names = [names]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise InvalidRequest("option 'forbid_symbols' must be a list of symbol names")
    return set(names)


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


# --------------------------------------------------------------------------- misconceptions
# The symbolic answer's known mistakes (their messages are in misconceptions.MISCONCEPTIONS).


def _sigma_free(expression):
    sigmas = {symbol: sympy.Integer(1) for symbol in expression.free_symbols if symbol.name.startswith("sigma")}
    return expression.xreplace(sigmas) if sigmas else None


def _sigma_squares_dropped(expression):
    """σ² -> σ for every σ symbol (the variance written with standard deviations)."""
    sigmas = [symbol for symbol in expression.free_symbols if symbol.name.startswith("sigma")]
    if not sigmas:
        return None
    replaced = expression.replace(
        lambda node: node.is_Pow and node.base in sigmas and node.exp.is_Integer and node.exp % 2 == 0,
        lambda node: sympy.Pow(node.base, node.exp / 2),
    )
    return None if replaced == expression else replaced


def _is_sigma_power(factor) -> bool:
    base, _ = factor.as_base_exp()
    return base.is_Symbol and base.name.startswith("sigma")


def _summed_sigmas(product):
    """One product with its σ factors added instead of multiplied: d_k σ_q² σ_k² ->
    d_k (σ_q² + σ_k²), and in a denominator 1/(σ_q σ_k) -> 1/(σ_q + σ_k); None when neither
    the numerator nor the denominator has two σ factors."""
    numerator = [factor for factor in product.args if _is_sigma_power(factor) and not factor.as_base_exp()[1].is_negative]
    denominator = [1 / factor for factor in product.args if _is_sigma_power(factor) and factor.as_base_exp()[1].is_negative]
    if len(numerator) < 2 and len(denominator) < 2:
        return None
    rest = [factor for factor in product.args if not _is_sigma_power(factor)]
    for group, exponent in ((numerator, 1), (denominator, -1)):
        rest += [sympy.Add(*group) ** exponent] if len(group) >= 2 else [factor ** exponent for factor in group]
    return sympy.Mul(*rest)


def _sigma_product_summed(expression):
    """Every product of two or more σ factors replaced by their sum (variances added)."""
    replaced = expression.replace(lambda node: node.is_Mul and _summed_sigmas(node) is not None, _summed_sigmas)
    return None if replaced == expression else replaced


def _shared_sigma(expression):
    """The one σ symbol of an expression written with a single shared σ, else None."""
    sigmas = [symbol for symbol in expression.free_symbols if symbol.name.startswith("sigma")]
    return sigmas[0] if len(sigmas) == 1 else None


def _is_split_power(node, sigma) -> bool:
    return node.is_Pow and node.base == sigma and node.exp.is_Integer and node.exp != 0 and node.exp % 2 == 0


def _shared_sigma_summed(expression):
    """With one shared σ the product σ_q² σ_k² is the single power σ⁴: the same slip reads
    it as σ² + σ² = 2σ² (and σ² of a standard deviation as σ + σ = 2σ, 1/σ² as 1/(2σ));
    None without exactly one σ or an even power of it."""
    sigma = _shared_sigma(expression)
    if sigma is None:
        return None
    replaced = expression.replace(
        lambda node: _is_split_power(node, sigma),
        lambda node: (2 * sigma ** (abs(node.exp) / 2)) ** sympy.sign(node.exp),
    )
    return None if replaced == expression else replaced


def _sigmas_summed(expression):
    """The expression with its σ factors added where they multiply, σ_q² σ_k² -> σ_q² + σ_k²
    or, with one shared σ, σ⁴ -> σ² + σ²; None when it has no such product."""
    summed = _sigma_product_summed(expression)
    return summed if summed is not None else _shared_sigma_summed(expression)


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sigma_power_text(name: str, exponent: int) -> str:
    letter = "σ" + name[len("sigma"):]
    return letter if exponent == 1 else letter + str(exponent).translate(_SUPERSCRIPTS)


def shared_sigma_note(expected_expr) -> str:
    """For sigmas_added on a shared σ: the product and the sum written in the exercise's own
    σ ('σ² · σ² = σ⁴, not σ² + σ² = 2σ²'); empty when the exercise has other σ's."""
    sigma = _shared_sigma(expected_expr)
    if sigma is None:
        return ""
    exponents = {abs(int(node.exp)) for node in sympy.preorder_traversal(expected_expr) if _is_split_power(node, sigma)}
    if len(exponents) != 1:
        return ""
    whole = exponents.pop()
    half, full = _sigma_power_text(sigma.name, whole // 2), _sigma_power_text(sigma.name, whole)
    letter = _sigma_power_text(sigma.name, 1)
    return f"Here σ_q = σ_k = {letter}, so the product is {half} · {half} = {full}, not {half} + {half} = 2{half}."


def _rescaled_d_k(expression, exponent_factor):
    """Replace every d_k**(r) with half-integer r by d_k**(r * factor) (factor 2: √d_k -> d_k,
    factor 0: drop the √d_k)."""
    d_k = next((symbol for symbol in expression.free_symbols if symbol.name == "d_k"), None)
    if d_k is None:
        return None
    replaced = expression.replace(
        lambda node: node.is_Pow and node.base == d_k and node.exp.is_Rational and node.exp.q == 2,
        lambda node: sympy.Pow(d_k, node.exp * exponent_factor),
    )
    return None if replaced == expression else replaced


def _d_model_for_d_k(expression, answer_expression):
    d_k = next((symbol for symbol in expression.free_symbols if symbol.name == "d_k"), None)
    d_model = next((symbol for symbol in answer_expression.free_symbols if symbol.name == "d_model"), None)
    if d_k is None or d_model is None:
        return None
    return expression.xreplace({d_k: d_model})


def diagnose_symbolic(expected_expr, answer_expr) -> str | None:
    """forgot_sigma / forgot_squares / sigmas_added / divided_by_d_k / d_model_scale / no_scaling
    for symbolic answers."""
    if screen_equal(expected_expr, answer_expr):
        return None
    variants = (
        ("forgot_sigma", _sigma_free(expected_expr)),
        ("forgot_squares", _sigma_squares_dropped(expected_expr)),
        ("sigmas_added", _sigmas_summed(expected_expr)),
        ("divided_by_d_k", _rescaled_d_k(expected_expr, 2)),
        ("d_model_scale", _d_model_for_d_k(expected_expr, answer_expr)),
        ("no_scaling", _rescaled_d_k(expected_expr, 0)),
    )
    for code, variant in variants:
        if variant is None or screen_equal(variant, expected_expr):
            continue
        if screen_equal(variant, answer_expr):
            return code
    return None


def _wrong_expression(expected_expr, answer_expr, options: dict, key: tuple) -> Grade:
    # The author's known wrong expression names this part's own slip: it is said first, and
    # alone (a built-in misconception it also matches would only say the same less precisely),
    # with the misconception code the author gave it, if any, so mastery counts the slip.
    known = known_wrong_match(expected_expr, answer_expr, known_wrong_expressions(options, key))
    if known is not None:
        return wrong(f"Not quite: {known.feedback}", misconception=known.misconception)
    code = diagnose_symbolic(expected_expr, answer_expr)
    if code is not None:
        note = shared_sigma_note(expected_expr) if code == "sigmas_added" else ""
        message = f"Not equivalent to the correct expression. {misconceptions.MISCONCEPTIONS[code]}"
        return wrong(f"{message} {note}" if note else message, misconception=code)
    return wrong(_hint(expected_expr, answer_expr))


# --------------------------------------------------------------------------- known wrong expressions

MAX_EXPRESSION_FEEDBACK = 20  # exercises.engine.spec.MAX_EXPRESSION_FEEDBACK: the file is refused sooner
EXPRESSION_FEEDBACK_SHAPE = ("option 'expression_feedback' must be a list of {expression, feedback}: "
                             "a known wrong expression and why it is wrong")
KNOWN_EXPRESSION_FIELDS = {"expression", "feedback", "misconception"}  # misconception is optional


@dataclass(frozen=True)
class KnownWrongExpression:
    text: str  # as written (after the variant's placeholders are filled in)
    expression: object  # SymPy, read with the part's symbols as the expected answer is
    feedback: str
    misconception: str | None = None  # the slip's code in misconceptions.MISCONCEPTIONS, when the author names it


def known_wrong_expressions(options: dict, key: tuple | None = None, *,
                            strict: bool = False) -> list[KnownWrongExpression]:
    """Option ``expression_feedback`` read: a list of at most MAX_EXPRESSION_FEEDBACK
    {expression: an expression in the part's symbols, feedback: non-empty text}, each of which
    may name its slip with ``misconception``: a code of ``misconceptions.MISCONCEPTIONS``.

    As with a numeric part's ``value_feedback``, a malformed entry is the exercise's fault and
    its feedback is extra: when grading it is left out with a warning and the answer is graded
    on its own; ``strict`` (the self-test) raises InvalidRequest naming the entry instead."""
    entries = options.get("expression_feedback", [])
    if not isinstance(entries, list):
        return option_left_out(EXPRESSION_FEEDBACK_SHAPE, strict=strict)
    if len(entries) > MAX_EXPRESSION_FEEDBACK:
        return option_left_out(
            f"option 'expression_feedback' may list at most {MAX_EXPRESSION_FEEDBACK} known wrong expressions, "
            f"got {len(entries)}", strict=strict)
    key = symbols_key(options) if key is None else key
    known = []
    for index, entry in enumerate(entries):
        try:
            known.append(_known_expression_entry(entry, options, key))
        except InvalidRequest as problem:
            option_left_out(f"{problem} (entry {index + 1})", strict=strict)
    return known



def _known_expression_entry(entry, options: dict, key: tuple) -> KnownWrongExpression:
    if not isinstance(entry, dict) or not {"expression", "feedback"} <= set(entry) <= KNOWN_EXPRESSION_FIELDS:
        raise InvalidRequest(EXPRESSION_FEEDBACK_SHAPE)
    feedback = entry["feedback"]
    if not isinstance(feedback, str) or not feedback.strip():
        raise InvalidRequest(f"{EXPRESSION_FEEDBACK_SHAPE}; a feedback is empty")
    code = entry.get("misconception")
    if code is not None and (not isinstance(code, str) or code not in misconceptions.MISCONCEPTIONS):
        raise InvalidRequest(f"option 'expression_feedback': {code!r} is not a misconception code")
    text = _expression_text(entry["expression"])
    try:
        expression = read_known_wrong_expression(text, options, key)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"option 'expression_feedback': {text!r} cannot be read: {problem}") from None
    return KnownWrongExpression(text, expression, feedback.strip(), code)


def _expression_text(value) -> str:
    """A known wrong expression as text; a number stands for itself ("{{d_k}}" fills to 64)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    if not isinstance(value, str):
        raise InvalidRequest(f"option 'expression_feedback': {value!r} is not an expression")
    return value


def read_known_wrong_expression(text: str, options: dict, key: tuple | None = None):
    """The SymPy expression of a known wrong expression, read by the reader of expected
    answers (the part's symbols, the safe-expression rules); AnswerFormatError saying why not."""
    key = symbols_key(options) if key is None else key
    return _read_expected_cached(text, key, bool(options.get("allow_any_symbols")))[1]


def known_wrong_match(expected_expr, answer_expr,
                      known: list[KnownWrongExpression]) -> KnownWrongExpression | None:
    """The first known wrong expression a wrong answer is equal to.

    Equality is the cheap numeric screen of the misconceptions (``screen_equal``): bounded,
    a few points, no CAS, so twenty entries cost milliseconds, and an expression it cannot
    decide (undefined at the points) is simply not matched. An expression equal to the right
    answer (on this variant) is never said."""
    for entry in known:
        if screen_equal(entry.expression, expected_expr):
            continue
        if screen_equal(entry.expression, answer_expr):
            return entry
    return None


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
    for known in known_wrong_expressions(options, strict=True):  # each must be graded wrong
        if not screen_equal(known.expression, expected_expr) and known.text not in wrong_answers:
            wrong_answers.append(known.text)  # (one right on this variant is not a wrong answer here)
    invalid_answers = ["", f"({text}", "__import__('os')", f"({text})**", "zz_not_declared" if not options.get("allow_any_symbols") else "1/0"]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
