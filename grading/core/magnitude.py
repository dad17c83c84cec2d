"""Bounds on the size of values too large or too small to compute, so that an expression
with no computable value at any test point can still be shown to differ from another.

``exp(exp(exp(exp(exp(d_k))))) + d_k`` is, at d_k = 1.5, a number with about 10^38 digits
in its exponent: no program holds it, so comparing values at points cannot decide it, and
a computer algebra system runs out of time on it. Its size can still be bounded (it is
above 2^(2^1000)), and a sum in which one term is that large and the others are ordinary
numbers is not 0: the expression differs from every ordinary one there.

At a point every sub-expression is either an mpmath number of ordinary size, computed in
the working precision, or a ``Size``: bounds on log2 of its magnitude, and its sign when it
is real and known. Bounds are rounded outwards and clipped (a lower bound may always be
lowered, an upper one raised), so each node costs a few operations on small numbers
however tall the tower.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy


def mp_number(expression):
    """A SymPy number (integer, rational, float, pi, e, i) as an mpmath number at the
    working precision; None for anything else."""
    if expression.is_Integer:
        return mpmath.mpf(int(expression))
    if expression.is_Rational:
        return mpmath.mpf(expression.p) / expression.q
    if expression.is_Float:
        return mpmath.mpf(expression._mpf_)
    if expression is sympy.pi:
        return +mpmath.pi
    if expression is sympy.E:
        return +mpmath.e
    if expression is sympy.I:
        return mpmath.mpc(0, 1)
    return None


ORDINARY_BITS = 100_000  # beyond 2^±ORDINARY_BITS a value is only bounded, not computed
MAX_EXP_ARGUMENT = 70_000  # e^70000 is above 2^100000
MAX_TRIG_ARGUMENT_BITS = 4_000  # sin(10^300) is cheap; sin of a 10^4000-digit number is not
BOUND_LIMIT = mpmath.mpf(2) ** 1000  # |log2 of a magnitude| past this is clipped
GUARD_BITS = 30  # a sum within 2^-(precision - GUARD_BITS) of its largest term may be 0
_SLACK = mpmath.mpf(2) ** -30
_INF = mpmath.inf


_LIMIT_BITS = 1001  # |x| > 2^1001 makes |log2 e^x| = |x| / ln 2 > BOUND_LIMIT


@dataclass(frozen=True)
class Size:
    """A value known only by bounds: ``low <= log2|value| <= high``. ``low`` is -inf when
    the value may be 0 or is too small to bound, ``high`` +inf when unbounded; ``sign`` is
    +1 or -1 for a real value of known sign, else None; ``nonzero`` says it cannot be 0."""

    low: mpmath.mpf
    high: mpmath.mpf
    sign: int | None
    nonzero: bool

    @property
    def proved_nonzero(self) -> bool:
        return self.nonzero or self.low > -_INF


_HUGE = Size(BOUND_LIMIT, _INF, 1, True)  # above 2^(2^1000)
_TINY = Size(-_INF, -BOUND_LIMIT, 1, True)  # positive, below 2^-(2^1000)


class Unbounded(Exception):
    """An expression this module cannot bound (an unknown function)."""


def _down(value):
    return value if not mpmath.isfinite(value) else value - abs(value) * _SLACK - _SLACK


def _up(value):
    return value if not mpmath.isfinite(value) else value + abs(value) * _SLACK + _SLACK


def _clipped(low, high, sign: int | None, nonzero: bool) -> Size:
    low, high = _down(low), _up(high)
    if low > BOUND_LIMIT:
        low = BOUND_LIMIT
    if low < -BOUND_LIMIT:
        low = -_INF
    if high > BOUND_LIMIT:
        high = _INF
    if high < -BOUND_LIMIT:
        high = -BOUND_LIMIT
    return Size(low, high, sign, nonzero or low > -_INF)


def _times(left, right):
    """A product of interval ends, with 0 · inf = 0 (the ends bound finite values)."""
    if left == 0 or right == 0:
        return mpmath.mpf(0)
    return left * right


def _interval_product(first: tuple, second: tuple) -> tuple:
    corners = [_times(a, b) for a in first for b in second]
    return min(corners), max(corners)


def _power_of_two(exponent, *, upper: bool):
    """2^exponent rounded outwards, without computing logarithms of huge numbers."""
    if not mpmath.isfinite(exponent):
        return _INF if exponent > 0 else mpmath.mpf(0)
    whole = int(mpmath.ceil(exponent) if upper else mpmath.floor(exponent))
    return mpmath.ldexp(mpmath.mpf(1), whole)


def _real_range(size: Size) -> tuple | None:
    """Bounds on a real value of known sign, or None."""
    if size.sign is None:
        return None
    low, high = _power_of_two(size.low, upper=False), _power_of_two(size.high, upper=True)
    return (low, high) if size.sign > 0 else (-high, -low)


def _exponent_range(exponent) -> tuple | None:
    """Bounds on a real exponent, or None when it is not known to be real."""
    if isinstance(exponent, Size):
        return _real_range(exponent)
    if _sign_of(exponent) is None:
        return None
    real = mpmath.re(exponent)
    return real, real


def _sign_of(value) -> int | None:
    """1, -1 or 0 for a real number; None for one off the real line."""
    if isinstance(value, mpmath.mpc):
        if value.imag != 0:
            return None
        value = value.real
    return (value > 0) - (value < 0)


class _Evaluator:
    """Values at one point; ``grew`` records whether any value had to be bounded."""

    def __init__(self, point: dict):
        self.point = point
        self.grew = False
        self.guard = mpmath.mpf(2) ** -(mpmath.mp.prec - GUARD_BITS)

    # ------------------------------------------------------------------ conversions

    def exact_or_size(self, value):
        """An ordinary number as it is; one past 2^±ORDINARY_BITS as its Size."""
        if not mpmath.isfinite(value):
            raise ValueError("not finite")
        if value == 0:
            return value
        bits = mpmath.mag(value)
        if abs(bits) <= ORDINARY_BITS:
            return value
        self.grew = True
        return _clipped(mpmath.mpf(bits - 2), mpmath.mpf(bits + 1), _sign_of(value), True)

    def size(self, value) -> Size:
        if isinstance(value, Size):
            return value
        if value == 0:
            return Size(-_INF, -_INF, None, False)
        log_magnitude = mpmath.log(abs(value), 2)
        return _clipped(log_magnitude, log_magnitude, _sign_of(value), True)

    def unless_rounding(self, value, scale):
        """``value``, or a Size that may be 0 when it is within the rounding of a computation
        on numbers of size ``scale``: sin(3π) and log(1) come out as 1e-31, not 0, and a
        tower times them must not be taken for a huge number. (Sums are checked in ``add``;
        products, powers and exp are 0 only when a factor or base is.)"""
        if isinstance(value, Size) or value == 0 or abs(value) > scale * self.guard:
            return value
        return _clipped(-_INF, mpmath.log(scale * self.guard, 2), None, False)

    # ------------------------------------------------------------------ nodes

    def value(self, expression):
        if expression.is_Symbol:
            return self.point[expression]
        number = mp_number(expression)
        if number is not None:
            return number
        if expression.is_Add:
            return self.add([self.value(arg) for arg in expression.args])
        if expression.is_Mul:
            return self.multiply([self.value(arg) for arg in expression.args])
        if expression.is_Pow:
            base, exponent = expression.args
            if exponent.is_Integer:
                return self.integer_power(self.value(base), int(exponent))
            return self.power(self.value(base), self.value(exponent))
        function = expression.func
        if len(expression.args) == 1:
            argument = self.value(expression.args[0])
            if function is sympy.exp:
                return self.exp(argument)
            if function is sympy.log:
                return self.log(argument)
            if function in (sympy.sin, sympy.cos, sympy.tan):
                return self.trigonometric(function, argument)
            if function is sympy.Abs:
                if not isinstance(argument, Size):
                    return abs(argument)
                return Size(argument.low, argument.high, 1, argument.proved_nonzero)
        raise Unbounded(str(function))

    def add(self, terms: list):
        exact = [term for term in terms if not isinstance(term, Size)]
        sizes = [term for term in terms if isinstance(term, Size)]
        if exact:
            total = mpmath.fsum(exact)
            largest = max(abs(term) for term in exact)
            if largest and abs(total) <= largest * self.guard:
                # Cancellation down to the rounding: the sum may be exactly 0.
                sizes.append(_clipped(-_INF, mpmath.log(largest * self.guard, 2), None, False))
            elif not sizes:
                return self.exact_or_size(total)
            elif total != 0:
                sizes.append(self.size(total))
        sizes = [size for size in sizes if size.high > -_INF]
        if not sizes:
            return mpmath.mpf(0)
        if len(sizes) == 1:
            return sizes[0]
        return _sum_of_sizes(sizes)

    def multiply(self, factors: list):
        exact = [factor for factor in factors if not isinstance(factor, Size)]
        product = self.exact_or_size(mpmath.fprod(exact)) if exact else mpmath.mpf(1)
        if not isinstance(product, Size) and product == 0:
            return product
        sizes = [factor for factor in factors if isinstance(factor, Size)]
        if not sizes:
            return product
        sizes.append(self.size(product))
        low = high = mpmath.mpf(0)
        for size in sizes:
            low = -_INF if size.low == -_INF or low == -_INF else low + size.low
            high = _INF if size.high == _INF or high == _INF else high + size.high
        signs = [size.sign for size in sizes]
        sign = None if None in signs else (1 if signs.count(-1) % 2 == 0 else -1)
        return _clipped(low, high, sign, all(size.proved_nonzero for size in sizes))

    def integer_power(self, base, exponent: int):
        if exponent == 0:
            return mpmath.mpf(1)
        if not isinstance(base, Size):
            if base == 0:
                if exponent < 0:
                    raise ZeroDivisionError("0 to a negative power")
                return base
            if abs(exponent) * abs(mpmath.mag(base)) <= 2 * ORDINARY_BITS:
                return self.exact_or_size(mpmath.power(base, exponent))
            self.grew = True
            base = self.size(base)
        low, high = base.low * exponent, base.high * exponent
        if exponent < 0:
            low, high = base.high * exponent, base.low * exponent
            if base.low == -_INF:
                high = _INF
        sign = None if base.sign is None else (1 if exponent % 2 == 0 else base.sign)
        return _clipped(low, high, sign, True if exponent < 0 else base.proved_nonzero)

    def power(self, base, exponent):
        """A power with a non-integer exponent, on the principal branch."""
        if not isinstance(base, Size) and not isinstance(exponent, Size):
            if base == 0:
                return self.exact_or_size(mpmath.power(base, exponent))
            bits = mpmath.re(exponent * mpmath.log(mpmath.mpc(base))) / mpmath.ln2
            positive = _sign_of(base) == 1 and _sign_of(exponent) is not None
            if abs(bits) <= ORDINARY_BITS:
                return self.exact_or_size(mpmath.power(base if positive else mpmath.mpc(base), exponent))
            self.grew = True
            return _clipped(bits, bits, 1 if positive else None, True)
        base_size, exponent_range = self.size(base), _exponent_range(exponent)
        if exponent_range is None or base_size.sign is None:
            return Size(-_INF, _INF, None, base_size.proved_nonzero)
        # For a real base and a real exponent |b^e| = |b|^e, so log2|b^e| = e · log2|b|.
        low, high = _interval_product(exponent_range, (base_size.low, base_size.high))
        return _clipped(low, high, 1 if base_size.sign > 0 else None, base_size.proved_nonzero)

    def exp(self, argument):
        if not isinstance(argument, Size):
            real = mpmath.re(argument)
            if abs(real) <= MAX_EXP_ARGUMENT:
                return self.exact_or_size(mpmath.exp(argument))
            self.grew = True
            bits = real / mpmath.ln2
            return _clipped(bits, bits, 1 if _sign_of(argument) is not None else None, True)
        if argument.sign is not None and argument.low > _LIMIT_BITS:
            # e^x for |x| > 2^1000: its log2 is past the clip either way (the top of a tower).
            return _HUGE if argument.sign > 0 else _TINY
        real_range = _real_range(argument)
        if real_range is None:
            # |Re z| <= |z|, so e^Re z lies between these bounds.
            reach = _power_of_two(argument.high, upper=True) / mpmath.ln2
            return _clipped(-reach, reach, None, True)
        return _clipped(real_range[0] / mpmath.ln2, real_range[1] / mpmath.ln2, 1, True)

    def log(self, argument):
        if not isinstance(argument, Size):
            if argument == 0:
                raise ValueError("log(0)")
            return self.unless_rounding(mpmath.log(argument), mpmath.mpf(1))
        # log z = ln|z| + i arg z, ln|z| = ln 2 · log2|z|
        low, high = argument.low * mpmath.ln2, argument.high * mpmath.ln2
        if argument.sign == 1:
            if low > 0:
                return _clipped(mpmath.log(low, 2), mpmath.log(high, 2) if high < _INF else _INF, 1, True)
            if high < 0:
                return _clipped(mpmath.log(-high, 2), mpmath.log(-low, 2) if low > -_INF else _INF, -1, True)
            largest = max(abs(low), abs(high))
            return _clipped(-_INF, mpmath.log(largest, 2) if largest < _INF else _INF, None, False)
        smallest = low if low > 0 else (-high if high < 0 else mpmath.mpf(0))
        largest = max(abs(low), abs(high)) + mpmath.pi
        return _clipped(mpmath.log(smallest, 2) if smallest > 0 else -_INF,
                        mpmath.log(largest, 2) if largest < _INF else _INF, None, smallest > 0)

    def trigonometric(self, function, argument):
        too_big = isinstance(argument, Size) or (argument and mpmath.mag(argument) > MAX_TRIG_ARGUMENT_BITS)
        if not too_big:
            value = {sympy.sin: mpmath.sin, sympy.cos: mpmath.cos, sympy.tan: mpmath.tan}[function](argument)
            return self.unless_rounding(self.exact_or_size(value), 1 + abs(argument))
        self.grew = True
        real = _sign_of(argument) is not None if not isinstance(argument, Size) else argument.sign is not None
        if function is sympy.tan or not real:
            return Size(-_INF, _INF, None, False)
        return Size(-_INF, mpmath.mpf(0), None, False)  # |sin x|, |cos x| <= 1 for real x


def _sum_of_sizes(sizes: list[Size]) -> Size:
    """A sum of bounded terms: not 0 when one term outweighs all the others together."""
    count = len(sizes)
    spread = mpmath.log(count, 2) + 1
    largest = max(range(count), key=lambda index: sizes[index].low)
    leader = sizes[largest]
    others_high = max(size.high for index, size in enumerate(sizes) if index != largest)
    if leader.low > -_INF and others_high < _INF and leader.low > others_high + spread:
        signs = [size.sign for size in sizes]
        sign = leader.sign if None not in signs else None
        return _clipped(leader.low - 1, leader.high + 1, sign, True)
    high = max(size.high for size in sizes)
    high = high + spread if high < _INF else _INF
    signs = {size.sign for size in sizes}
    if len(signs) == 1 and None not in signs:
        return _clipped(max(size.low for size in sizes), high, signs.pop(), any(size.proved_nonzero for size in sizes))
    return _clipped(-_INF, high, None, False)


def difference_at(difference, point: dict, digits: int = 30) -> Size | None:
    """The Size of ``difference`` at ``point`` when some value there had to be bounded;
    None when every value is ordinary (the ordinary comparison applies) or the expression
    is undefined there or has a function this module does not bound."""
    with mpmath.workdps(digits):
        exact_point = {symbol: mpmath.mpc(value.real, value.imag) if value.imag else mpmath.mpf(value.real)
                       for symbol, value in point.items()}
        evaluator = _Evaluator(exact_point)
        try:
            value = evaluator.value(difference)
        except (Unbounded, ZeroDivisionError, ValueError, TypeError, KeyError, OverflowError):
            return None
        if not evaluator.grew:
            return None
        return value if isinstance(value, Size) else evaluator.size(value)
