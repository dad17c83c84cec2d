"""The one rounding rule for every score people read: half up, on the decimal value.

A score is stored as a float, and the same score reaches a page by different sums (a part's
points times its fraction, a total over items, a weighted category percent). Python's
``round`` and ``format`` round the binary float half to even: 0.125 became 0.12 in one place
and Django's ``floatformat`` 0.13 in another, a total of 2.425 read 2.42 on one page and
2.43 on the next. Here a score is first taken as the decimal it stands for (its float's
digits, cleared of the noise of float sums past ``NOISE_PLACES`` decimals), then rounded half
up (away from zero): 0.125 -> "0.13", 2.425 -> "2.43", 0.0125 as a percent -> "1.3%".

Used by every page (the ``score`` and ``score_percent`` template filters), the gradebooks'
cells and the exports. The gradebook exports (CSV and XLSX) write numbers, not text, rounded
by this rule to ``EXPORT_POINT_PLACES`` places for points and ``EXPORT_PERCENT_PLACES`` for
percents, so a spreadsheet can sum them and shows the page's value once set to 2 places; the
submissions export writes each stored fraction unrounded, as the record of the grade.

Pure Python: no Django import.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

# Digits past this many decimals are the float's, not the score's (0.1 + 0.2 is 0.3).
NOISE_PLACES = 10
SHOWN_POINT_PLACES = 2
SHOWN_PERCENT_PLACES = 1
EXPORT_POINT_PLACES = 4
EXPORT_PERCENT_PLACES = 2


def score_decimal(value: float | int | Decimal, places: int) -> Decimal:
    """``value`` rounded half up to ``places`` decimals (a Decimal, trailing zeros kept).

    ValueError for a value that is not a finite number."""
    number = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    if not number.is_finite():
        raise ValueError(f"not a finite score: {value!r}")
    cleared = number.quantize(Decimal(1).scaleb(-NOISE_PLACES), rounding=ROUND_HALF_EVEN)
    return cleared.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP) + 0  # + 0: no "-0.00"


def score_text(value: float | int | Decimal, places: int = SHOWN_POINT_PLACES) -> str:
    """A score as people read it, with exactly ``places`` decimals: 0.125 -> "0.13"."""
    return f"{score_decimal(value, places):f}"


def score_number(value: float | int, places: int = EXPORT_POINT_PLACES) -> float:
    """A score for an export cell: a number (a float) rounded by the same rule."""
    return float(score_decimal(value, places))


def percent_text(fraction: float | int, places: int = SHOWN_PERCENT_PLACES) -> str:
    """A fraction (0..1) as a percent with at most ``places`` decimals and no trailing zeros:
    1 -> "100%", 0.9 -> "90%", 0.125 -> "12.5%", 0.0125 -> "1.3%"."""
    if not math.isfinite(float(fraction)):
        raise ValueError(f"not a finite score: {fraction!r}")
    percent = score_decimal(Decimal(repr(float(fraction))) * 100, places)
    text = f"{percent:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}%"
