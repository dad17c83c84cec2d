"""Numeric answers: read a number the way a student types it, compare within tolerance.

Accepted: ``2.5``, ``-0.3875``, ``.5``, ``5/2``, ``-5/2``, ``1.2e-3``, ``1.2×10^-3``, and in
LaTeX ``1.2 \\times 10^{-3}`` or ``1.2 \\cdot 10^{-3}``.
Numbers are read exactly (as fractions) so ``0.1`` is one tenth, and only converted to
float for the tolerance test. NaN, infinities and magnitudes outside ±1e300 are invalid.

Tolerance: ``decimals: d`` accepts half a unit of the d-th decimal either side, the boundary
included; at ``decimals: 0`` a whole-number correct value (a count, an index) accepts only
that integer (``whole_number_part``).

Option ``value_feedback`` ([{value, feedback}]): known wrong values of this part, each with
why it is wrong (an inverted ratio, a forgotten factor), said to a student whose answer
matches it within the part's tolerance ("Not quite: <feedback>"). A value that is itself
within tolerance of the right answer is never used, so a right answer is never labelled.
An entry that cannot be read is the exercise's fault: grading leaves it out (logging a
warning) rather than refuse the student's answer; the exercise check refuses it earlier.

A wrong answer's feedback says the most specific thing that is true of it (first that holds):
a known wrong value; the right size with the wrong sign; off by a factor of 10, 100 or 1000;
the correct value rounded to fewer decimals than the part asks for (see ``_rounded_too_early``);
close to the correct value (see ``is_close``), a precision problem; else plain "Not correct.",
which hints at no rounding problem the answer does not have (81 for 9, 3 for a key index 2).
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction

from grading.core import safe_expr

from grading.core.grades import (
    AnswerFormatError,
    Grade,
    InvalidRequest,
    Parsed,
    invalid,
    option_float,
    option_left_out,
    option_int,
    right,
    wrong,
)


DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 5e-5
# A wrong answer is "close" (a precision problem, not a wrong value) when it misses by at most
# this many times the part's tolerance or this fraction of the correct value, whichever is more.
CLOSE_TOLERANCES = 3
CLOSE_RELATIVE = Fraction(1, 100)
MAX_NUMBER_CHARS = 200
# Room for a number padded with spaces or invisible characters; longer text is refused unread.
MAX_TYPED_CHARS = 5 * MAX_NUMBER_CHARS
MAX_DECIMAL_EXPONENT = 308  # the float range: 1.5e300 is a number
MIN_DECIMAL_EXPONENT = -400  # 1e-310 is a number too (a subnormal float, exact as a fraction)
# Decimals or significant figures past the smallest number read ask for nothing more, and a
# million of them would take minutes to turn into a tolerance.
MAX_DIGITS = -MIN_DECIMAL_EXPONENT

_DECIMAL = r"(?:\d+(?:\.\d*)?|\.\d+)"
# An exponent of any length is read (the text is at most MAX_NUMBER_CHARS long), so 1e99999999
# is refused as out of range, not as "letters".
_DECIMAL_NUMBER = re.compile(rf"^(?P<sign>[+-]?)(?P<mantissa>{_DECIMAL})(?:[eE](?P<exponent>[+-]?\d+))?$")
# m×10^e, also as typed in LaTeX: 1.27 \times 10^{-14}, 1.27 \cdot 10^{-14}; the exponent may be
# bracketed by a matching pair of ( ) or { }, and is bounded like any other (``_scaled_by_power_of_ten``).
_TIMES_TEN = re.compile(
    r"^(?:(?P<mantissa>[+-]?" + _DECIMAL + r")\s*(?:[xX×*·]|\\times|\\cdot)\s*)?10\s*(?:\^|\*\*)\s*"
    r"(?P<open>[({]?)\s*(?P<exponent>[+-]?\d+)\s*(?P<close>[)}]?)$"
)
# A decimal in ASCII digits with at most a three-digit exponent, nothing around it.
_PLAIN_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")
_CLOSING_BRACKET = {"": "", "(": ")", "{": "}"}
# Minus as word processors and PDFs paste it: the minus sign, dashes, and the hyphens U+2010 and
# U+2012 (NFKC turns the non-breaking hyphen U+2011 into U+2010).
_UNICODE_SIGNS = str.maketrans({"−": "-", "–": "-", "—": "-", "‐": "-", "‒": "-", "＋": "+", "﹣": "-",
                                "⁄": "/", "∕": "/", "÷": "/"})
_NOT_A_NUMBER_WORDS = {"nan", "+nan", "-nan"}
_INFINITY_WORDS = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "∞", "-∞", "+∞"}


def parse_number(text) -> Fraction:
    """Read one number exactly; raise AnswerFormatError with a specific message."""
    if isinstance(text, bool):
        raise AnswerFormatError("expected a number, not true/false")
    if isinstance(text, int):
        return _within_range(Fraction(text), str(text))
    if isinstance(text, float):
        if not math.isfinite(text):
            raise AnswerFormatError("the answer must be a finite number (not NaN or infinity)")
        return _within_range(Fraction(repr(text)), repr(text))
    if not isinstance(text, str):
        raise AnswerFormatError(f"expected a number, got {type(text).__name__}")
    if len(text) <= MAX_NUMBER_CHARS and _PLAIN_DECIMAL.fullmatch(text):  # the usual case, read at once
        return _within_range(Fraction(text), text)
    if len(text) > MAX_TYPED_CHARS:  # refused before any normalising, which costs per character
        raise AnswerFormatError(f"the answer is too long for a number ({len(text)} characters)")
    cleaned = _mixed_number(text.strip())
    if isinstance(cleaned, Fraction):
        return cleaned
    cleaned = _typed_text(safe_expr.without_invisible_characters(cleaned))
    if len(cleaned) > MAX_NUMBER_CHARS:
        raise AnswerFormatError(f"the answer is too long for a number ({len(cleaned)} characters)")
    cleaned = _without_latex_markup(cleaned)
    cleaned = _without_outer_brackets(cleaned)  # ⅜ is read as (3/8), −⅜ as -(3/8), ((0.5)) as 0.5
    if not cleaned:
        raise AnswerFormatError("the answer is empty: type a number")
    lowered = cleaned.lower()
    if lowered in _NOT_A_NUMBER_WORDS:
        raise AnswerFormatError("NaN (not a number) is not an accepted answer: type a finite number")
    if lowered in _INFINITY_WORDS:
        raise AnswerFormatError("infinity is not an accepted answer: type a finite number")
    if "/" in cleaned:
        return _parse_fraction(cleaned)
    return _parse_decimal(cleaned)


# The sign is one of three characters (written [+-−] it would be the range from + to −, which
# holds every letter and digit: x1½ was read as 1.5).
_MIXED_NUMBER = re.compile(r"^([+\-−]?)(\d+)\s*([\u00bc-\u00be\u2150-\u215e])$")
_SPACED_SIGN = re.compile(r"^([+-])\s+(?=[\d.(])")


def _typed_text(text: str) -> str:
    """The text as a number is read from it: Unicode digits and signs as ASCII, trimmed, and a
    sign typed apart from its number joined to it ("- 0.5" is -0.5)."""
    text = safe_expr.normalise_unicode(text).translate(_UNICODE_SIGNS).strip()
    return _SPACED_SIGN.sub(r"\1", text)


_BRACKETED = re.compile(r"([+-]?)\((.*)\)", re.DOTALL)


def _without_outer_brackets(text: str) -> str:
    """(0.5), ((0.5)) and -(3/8) without the brackets that enclose the whole number."""
    while (match := _BRACKETED.fullmatch(text)) and _balanced(match.group(2)):
        text = _signs_combined(match.group(1), match.group(2).strip())
    return text


def _signs_combined(outer_sign: str, inner: str) -> str:
    """-(-0.25) is 0.25 and -(+0.25) is -0.25: a sign before the brackets and one just inside
    become one sign, so the number reads as it would in a calculator."""
    if not outer_sign or inner[:1] not in ("+", "-"):
        return outer_sign + inner
    negative = (outer_sign == "-") != (inner[0] == "-")
    return ("-" if negative else "+") + inner[1:]


# A number as an equation editor or a LaTeX source writes it: $0.25$, \\(0.25\\), \\left(0.25\\right),
# \\frac{1}{4}, \\dfrac14, {0.25}. Only the markup goes; what is left is read as typed.
_MATH_DELIMITERS = re.compile(r"^(?:\$\$(.*)\$\$|\$(.*)\$|\\\((.*)\\\)|\\\[(.*)\\\])$", re.DOTALL)
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\d))\s*(?:\{([^{}]*)\}|(\d))")
_BRACED = re.compile(r"\{([^{}]*)\}")
_LATEX_SIZED_BRACKET = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)\s*([()])")
# MathLive's spacing (\, \; \: \! and "\ ") is a space; its decimal or thousands comma {,} is a comma,
# so 0{,}25 is told to use a decimal point as 0,25 is, and 1\,000 to leave out the space as 1 000 is.
_LATEX_SPACE = re.compile(r"\\[,;:! ]")
# A number set in a text style (\mathrm{0.25}, \text{0.25}, \textbf{…}) is the number: the style goes.
_LATEX_TEXT_STYLE = re.compile(r"\\(?:mathrm|mathbf|mathit|mathsf|text|textrm|textbf|textit|operatorname)\s*\{([^{}]*)\}")


def _without_latex_markup(text: str) -> str:
    """The number inside LaTeX markup; text without a backslash, $ or brace is returned as it is."""
    if not any(mark in text for mark in "\\${}"):
        return text
    delimited = _MATH_DELIMITERS.match(text)
    if delimited:
        text = next(group for group in delimited.groups() if group is not None).strip()
    text = _LATEX_SIZED_BRACKET.sub(r"\1", text)
    text = _LATEX_TEXT_STYLE.sub(r"{\1}", text)
    text = _LATEX_SPACE.sub(" ", text.replace("{,}", ",")).strip()
    text = _LATEX_FRACTION.sub(_fraction_of_latex, text)
    while _BRACED.search(text):  # only matched pairs: 10^{-14) stays a typing error
        text = _BRACED.sub(r"(\1)", text)
    return text.strip()


def _fraction_of_latex(match: re.Match) -> str:
    numerator = match.group(1) if match.group(1) is not None else match.group(2)
    denominator = match.group(3) if match.group(3) is not None else match.group(4)
    return f"({numerator.strip()})/({denominator.strip()})"


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _mixed_number(text: str):
    """1⅜ is one and three eighths (NFKC alone would read 13/8)."""
    match = _MIXED_NUMBER.match(text)
    if not match:
        return text
    numerator, _, denominator = unicodedata.normalize("NFKC", match.group(3)).partition("\u2044")
    value = int(match.group(2)) + Fraction(int(numerator), int(denominator))
    return -value if match.group(1) in ("-", "−") else value


def _parse_fraction(text: str) -> Fraction:
    parts = text.split("/")
    if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
        raise AnswerFormatError(f"could not read {text!r} as a fraction: write it like 5/2")
    numerator = _parse_decimal(_without_outer_brackets(parts[0].strip()))  # (1)/(4) is 1/4
    denominator = _parse_decimal(_without_outer_brackets(parts[1].strip()))
    if denominator == 0:
        raise AnswerFormatError(f"{text!r} divides by zero")
    return _within_range(numerator / denominator, text)


def _parse_decimal(text: str) -> Fraction:
    match = _DECIMAL_NUMBER.match(text)
    if match:
        exponent = int(match["exponent"] or 0)
        value = Fraction(match["mantissa"])
        sign = -1 if match["sign"] == "-" else 1
        return _scaled_by_power_of_ten(sign * value, exponent, text)
    match = _TIMES_TEN.match(text)
    if match and _CLOSING_BRACKET[match["open"]] == match["close"]:
        return _scaled_by_power_of_ten(Fraction(match["mantissa"] or 1), int(match["exponent"]), text)
    raise AnswerFormatError(_why_not_a_number(text))


def _scaled_by_power_of_ten(value: Fraction, exponent: int, text: str) -> Fraction:
    # Refuse before building 10**exponent, which would be slow for absurd exponents.
    if value and not MIN_DECIMAL_EXPONENT - 50 <= exponent <= MAX_DECIMAL_EXPONENT + 50:
        raise AnswerFormatError(f"{text!r} is outside the range of accepted numbers (about 1e-400 to 1e308)")
    return _within_range(value * Fraction(10) ** exponent if exponent else value, text)


_SMALLEST = Fraction(10) ** MIN_DECIMAL_EXPONENT  # built once: each costs microseconds, per matrix entry
_LARGEST = Fraction(10) ** MAX_DECIMAL_EXPONENT


def _within_range(value: Fraction, text: str) -> Fraction:
    if value and not (_SMALLEST <= abs(value) <= _LARGEST):
        raise AnswerFormatError(f"{text!r} is outside the range of accepted numbers (about 1e-400 to 1e308)")
    return value


_APPROXIMATELY = ("≈", "~", "=", "≃", "≅", "∼")


def _why_not_a_number(text: str) -> str:
    if re.fullmatch(r"[+-]?\d+(_\d+)+(\.\d*)?", text):
        return f"could not read {text!r}: write the number without _ between the digits ({text.replace('_', '')})"
    if re.fullmatch(r"[+-]?\d{1,3}( \d{3})+(\.\d*)?", text):
        return f"could not read {text!r}: write the number without spaces between the digits ({text.replace(' ', '')})"
    if re.fullmatch(rf"[+-]?{_DECIMAL}[eE][+-]?", text):
        return f"could not read {text!r}: the exponent after 'e' is missing (write it like 1.5e3)"
    if re.fullmatch(r"[+-]?0[xXbBoO][0-9a-fA-F]*", text):
        return f"could not read {text!r}: write the number in decimal digits (0x, 0b and 0o numbers are not read)"
    if text[:1] in _APPROXIMATELY:
        return f"could not read {text!r}: type the number alone, without {text[0]!r} before it"
    if re.fullmatch(r"[+-]?\d+,\d+[eE][+-]?\d+", text):
        return f"could not read {text!r}: use a dot as the decimal point (e.g. {text.replace(',', '.')})"
    if re.fullmatch(r"[+-]?0,\d+", text):  # 0,147 can only be a decimal
        return f"could not read {text!r}: use a dot as the decimal point (e.g. {text.replace(',', '.')})"
    if re.fullmatch(r"[+-]?\d{1,3},\d{3}", text):
        # 1,000 is a thousand in English and one in much of Europe: name both readings.
        return (f"could not read {text!r}: write a decimal with a dot ({text.replace(',', '.')}) "
                f"and a whole number without separators ({text.replace(',', '')})")
    if re.fullmatch(r"[+-]?\d+,\d+", text):
        return f"could not read {text!r}: use a dot as the decimal point (e.g. {text.replace(',', '.')})"
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?", text):
        return f"could not read {text!r}: write the number without thousands separators"
    if text.endswith("%"):
        return f"could not read {text!r}: write the value as a plain number, without %"
    if re.search(r"[A-Za-z]", re.sub(r"\\(?:times|cdot)\b", "", text)):  # LaTeX's \times is no letter
        return f"could not read {text!r} as a number: it contains letters; type a number such as 0.25 or 1/4"
    if "^" in text or "**" in text:
        return (f"could not read {text!r}: type the value as a decimal number; a power is read only as a "
                "power of ten, like 2.5×10^-3 or 2.5e-3")
    return f"could not read {text!r} as a number; write it like 0.25, 1/4 or 2.5e-3"


def read_expected(expected) -> Fraction:
    try:
        return parse_number(expected)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"expected value is not a number: {problem}") from None


def tolerance_for(expected: float, options: dict) -> float:
    """The absolute distance from ``expected`` that still counts as right, as a float for
    comparisons made in binary (matrix entries); the margin absorbs the float rounding, and
    takes the boundary in or leaves it out as ``numbers_match`` does."""
    exact = _exact(expected)
    if whole_number_part(exact, options):
        return abs(float(expected) - round(exact)) * (1 + 1e-9)  # 0 for an integer: only it is right
    return float(exact_tolerance(exact, options)) * (1 + 1e-9)


def numbers_match(expected, answer, options: dict) -> bool:
    """Within tolerance, boundary included, decided in exact decimal arithmetic: 0.31 against
    0.3 ± 0.01 is right. A whole-number part (``whole_number_part``) has no tolerance."""
    expected, answer = _exact(expected), _exact(answer)
    return abs(answer - expected) <= exact_tolerance(expected, options)


def _exact(value) -> Fraction:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(repr(value))  # the decimal the float was written as, not its binary value
    return Fraction(value)


def exact_tolerance(expected: Fraction, options: dict) -> Fraction:
    """``tolerance_for`` as an exact fraction; options are read as the decimals they were written as.

    With ``decimals: d`` (or ``sigfigs``) it is half a unit of the last digit asked for,
    except for a whole-number answer (``whole_number_part``), where only that integer is right."""
    if whole_number_part(expected, options):
        return abs(expected - round(expected))  # 0 for an exact integer; a float's noise otherwise
    unit = _rounding_unit(expected, options)
    if unit is not None:
        return Fraction(1, 2) * unit
    rtol = _exact(option_float(options, "rtol", DEFAULT_RTOL))
    atol = _exact(option_float(options, "atol", DEFAULT_ATOL))
    return atol + rtol * abs(expected)


def _rounding_unit(expected: Fraction, options: dict) -> Fraction | None:
    """One unit of the last digit the part asks for (``sigfigs`` first, then ``decimals``),
    or None when the part declares its tolerance (``atol`` / ``rtol``) instead."""
    sigfigs = _sigfigs(options)
    if sigfigs is not None:
        if sigfigs < 1:
            raise InvalidRequest("option 'sigfigs' must be at least 1")
        if expected == 0:
            return Fraction(10) ** -sigfigs
        return Fraction(10) ** (_decimal_magnitude(abs(expected)) - sigfigs + 1)
    decimals = _decimals(options)
    if decimals is not None:
        return Fraction(10) ** -decimals
    return None


# A correct value this close (relative, at least absolute) to an integer is that integer
# computed in floating point (3 * 0.1 * 10 is 3.0000000000000004), not a quantity to round.
INTEGER_NOISE = Fraction(1, 10**9)


def _nearest_integer(value: Fraction) -> int | None:
    """The integer ``value`` is, up to floating-point noise; None when it is not one."""
    nearest = round(value)
    return nearest if abs(value - nearest) <= INTEGER_NOISE * max(1, abs(nearest)) else None


def _decimals(options: dict) -> int | None:
    return option_int(options, "decimals", maximum=MAX_DIGITS)


def _sigfigs(options: dict) -> int | None:
    return option_int(options, "sigfigs", maximum=MAX_DIGITS)


def whole_number_part(target, options: dict) -> bool:
    """Whether the answer is a whole number: the part asks for ``decimals: 0`` (and no
    significant figures) and its correct value is an integer (a count, an index, a size).
    Then only that integer is right (64, 64.0 and 6.4e1; not 63.6 or 64.4), and no other
    value is "close": a whole number is not rounded. A non-integer correct value at
    ``decimals: 0`` (a ratio of 2.6 answered 3) keeps the half-unit rule."""
    if _sigfigs(options) is not None or _decimals(options) != 0:
        return False
    return _nearest_integer(_exact(target)) is not None


def _decimal_magnitude(value: Fraction) -> int:
    """floor(log10(value)) exactly."""
    magnitude = math.floor(math.log10(value.numerator) - math.log10(value.denominator))
    while Fraction(10) ** magnitude > value:
        magnitude -= 1
    while Fraction(10) ** (magnitude + 1) <= value:
        magnitude += 1
    return magnitude


def check(expected, answer, options: dict) -> Grade:
    target = read_expected(expected)
    exact_tolerance(target, options)  # validate options before looking at the answer
    known_wrong = known_wrong_values(options)  # an unreadable one is left out, not the answer's fault
    try:
        value = parse_number(answer)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    if numbers_match(target, value, options):
        return right("Correct.", answer_value=float(value))
    feedback = _wrong_number_feedback(target, value, options, known_wrong, typed=answer)
    return wrong(feedback, answer_value=float(value))


def known_wrong_values(options: dict, *, strict: bool = False) -> list[tuple[Fraction, str]]:
    """Option ``value_feedback`` read as (value, feedback) pairs: a list of {value: a number,
    feedback: non-empty text}.

    A malformed option is the exercise's fault, never the student's, and the feedback it
    adds is extra: when grading, an entry that cannot be read (a value such as ``a+1``, a
    template written without braces) is left out with a warning and the answer is graded on
    its own. ``strict`` (the self-test, which exists to find such faults) raises
    InvalidRequest instead, naming the entry."""
    entries = options.get("value_feedback", [])
    shape = ("option 'value_feedback' must be a list of {value, feedback}: "
             "a known wrong value and why it is wrong")
    if not isinstance(entries, list):
        return option_left_out(shape, strict=strict)
    known = []
    for index, entry in enumerate(entries):
        try:
            known.append(_known_entry(entry, shape))
        except InvalidRequest as problem:
            option_left_out(f"{problem} (entry {index + 1})", strict=strict)
    return known



def _known_entry(entry, shape: str) -> tuple[Fraction, str]:
    if not isinstance(entry, dict) or set(entry) != {"value", "feedback"}:
        raise InvalidRequest(shape)
    feedback = entry["feedback"]
    if not isinstance(feedback, str) or not feedback.strip():
        raise InvalidRequest(f"{shape}; a feedback is empty")
    return _known_value(entry["value"]), feedback.strip()


def _known_value(value) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidRequest(f"option 'value_feedback': {value!r} is not a number")
    if isinstance(value, str):
        try:
            return parse_number(value)
        except AnswerFormatError as problem:
            raise InvalidRequest(f"option 'value_feedback': {problem}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidRequest(f"option 'value_feedback': {value!r} is not a finite number")
    return _exact(value)


NOT_CORRECT = "Not correct."
CLOSE_NOT_PRECISE = (
    "Not quite: your value is close to the correct answer but not within the required precision; "
    "keep more digits in the intermediate steps and round only at the end."
)
CLOSE_OUTSIDE_TOLERANCE = (
    "Not quite: your value is close to the correct answer but outside the accepted tolerance; "
    "keep more digits in the intermediate steps and round only at the end."
)


def _wrong_number_feedback(target: Fraction, value: Fraction, options: dict, known_wrong=(), *, typed=None) -> str:
    # A known wrong value says the most; one that is right on this variant says nothing.
    for wrong_value, feedback in known_wrong:
        if not numbers_match(target, wrong_value, options) and numbers_match(wrong_value, value, options):
            return f"Not quite: {feedback}"
    if target != 0 and numbers_match(target, -value, options):  # exact fractions throughout
        return "Not quite: the size is right but the sign is wrong."
    for factor in (10, 100, 1000):
        if target != 0 and (numbers_match(target, value / factor, options) or numbers_match(target, value * factor, options)):
            return f"Not quite: your value is off by a factor of {factor}; check the units or the decimal point."
    rounded_to = _rounded_too_early(target, value, typed, options)
    if rounded_to is not None:
        places = "place" if rounded_to == 1 else "places"
        return (f"Not quite: that is the correct value rounded to {rounded_to} decimal {places}; "
                f"give it to {_decimals(options)} decimal places.")
    if is_close(target, value, options):
        return CLOSE_NOT_PRECISE if "sigfigs" in options or "decimals" in options else CLOSE_OUTSIDE_TOLERANCE
    return NOT_CORRECT


def is_close(target, value, options: dict) -> bool:
    """Whether a wrong ``value`` misses ``target`` by no more than CLOSE_TOLERANCES times the
    tolerance or CLOSE_RELATIVE of |target|, whichever is more: what rounding on the way
    (an intermediate value, or the final one) can explain. An integer answer to an integer
    target is never close: no rounding turns one whole number into another (3 for a key
    index 2, 1 048 576 for a parameter count of 1 050 624); nor is any answer to a
    whole-number part (``whole_number_part``: 786432.9 for a count of 786432)."""
    target, value = _exact(target), _exact(value)
    if target.denominator == 1 and value.denominator == 1:
        return False
    if whole_number_part(target, options):
        return False  # 786432.9 for a count of 786432 is not a rounding of it
    window = max(CLOSE_TOLERANCES * exact_tolerance(target, options), CLOSE_RELATIVE * abs(target))
    return abs(value - target) <= window


def _rounded_too_early(target: Fraction, value: Fraction, typed, options: dict) -> int | None:
    """The decimals ``typed`` has when it is the correct value rounded to fewer decimals than
    the part's ``decimals`` (0.39 for 0.3875 at 4 decimals), else None. Only for a plain
    decimal typed with at least one decimal and two significant digits: "1" or "0.5" may be
    a belief (the textbook 1, uniform weights) rather than a rounding, and is not called one."""
    decimals = _decimals(options)
    if decimals is None or not isinstance(typed, str):
        return None
    match = _DECIMAL_NUMBER.match(_typed_text(typed))
    if not match or match["exponent"] is not None or "." not in match["mantissa"]:
        return None
    typed_decimals = len(match["mantissa"].partition(".")[2])
    significant = match["mantissa"].replace(".", "").lstrip("0")
    if not 1 <= typed_decimals < decimals or len(significant) < 2:
        return None
    # A number typed with k decimals is the target rounded to k decimals when it is within
    # half a unit of its last place (a tie may be rounded either way).
    half_step = Fraction(1, 2) * Fraction(10) ** -typed_decimals
    return typed_decimals if abs(value - target) <= half_step else None


def parse_answer(answer, options: dict) -> Parsed:
    try:
        value = parse_number(answer)
    except AnswerFormatError as problem:
        return Parsed(None, str(problem), None)
    return Parsed(float(value), None, _typed_decimal_latex(answer) or _latex_of(value))


_TYPED_DECIMAL = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?")


def _typed_decimal_latex(answer) -> str | None:
    """A decimal as the student typed it: 0.40 stays 0.40 (read exactly it is 2/5, which the
    preview and the attempt history showed), 4e-3 is 4 × 10⁻³. None for anything else."""
    if not isinstance(answer, str):
        return None
    if len(answer) > MAX_TYPED_CHARS:
        return None
    match = _TYPED_DECIMAL.fullmatch(_typed_text(answer))
    if match is None:
        return None
    sign, digits, exponent = match.groups()
    latex = f"{'-' if sign == '-' else ''}{digits}"
    if exponent is not None:
        latex += rf" \times 10^{{{int(exponent)}}}"
    return latex


def _latex_of(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if value.denominator <= 1000 and "/" in str(value):
        sign = "-" if value < 0 else ""
        return rf"{sign}\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"
    return f"{float(value):.6g}"


def self_test(expected, options: dict) -> dict[str, list]:
    exact = read_expected(expected)
    target = float(exact)
    tolerance = tolerance_for(target, options)
    right_answers = [str(expected) if isinstance(expected, str) else repr(target)]
    for digits in (4, 6, 10):
        text = f"{target:.{digits}g}"
        if numbers_match(target, float(text), options) and text not in right_answers:
            right_answers.append(text)
    if exact.denominator != 1 and exact.denominator <= 1000:
        right_answers.append(f"{exact.numerator}/{exact.denominator}")
    far = max(10 * tolerance, abs(target) * 0.1, 1.0)
    wrong_answers = [repr(target + far), repr(target - far)]
    if whole_number_part(exact, options):  # only the integer is right: not 64.4 for 64
        wrong_answers += [repr(round(target) + 0.4), repr(round(target) - 0.5)]
    if target != 0:
        wrong_answers.append(repr(-target))
    for wrong_value, _ in known_wrong_values(options, strict=True):  # each must be graded wrong
        if numbers_match(target, wrong_value, options):
            continue  # right on this variant (a ratio of equal weights): not a wrong answer here
        if repr(float(wrong_value)) not in wrong_answers:
            wrong_answers.append(repr(float(wrong_value)))
    invalid_answers = ["", "abc", "1/0", "nan", "inf", "1e999", "0,5,3"]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
