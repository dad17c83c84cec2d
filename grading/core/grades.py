"""The result types every answer checker returns, and the two errors that separate
a malformed *answer* (the student's problem, costs no attempt) from a malformed
*request* (the exercise author's or caller's problem).

Kept free of checker logic so every answer-type module can import it without cycles.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field
from typing import Any


logger = logging.getLogger(__name__)


class AnswerFormatError(ValueError):
    """The answer cannot be read; the message tells the student what to fix."""


class InvalidRequest(ValueError):
    """The exercise side is wrong: unknown answer type, unreadable expected value or options."""


@dataclass(frozen=True)
class Grade:
    score: float  # in [0, 1]
    correct: bool  # score == 1 (full marks)
    feedback: str  # specific, plain words, student-facing
    misconception: str | None = None  # a code from grading.core.misconceptions when diagnosed
    error: str | None = None  # non-None exactly when the answer is INVALID (costs no attempt)
    details: dict = field(default_factory=dict)  # JSON-serialisable extras

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Parsed:
    """What the live preview needs: the read value, or why it cannot be read."""

    value: Any
    error: str | None = None
    preview_latex: str | None = None


def invalid(message: str, **details) -> Grade:
    return Grade(score=0.0, correct=False, feedback=message, error=message, details=details)


def right(feedback: str = "Correct.", **details) -> Grade:
    return Grade(score=1.0, correct=True, feedback=feedback, details=details)


def wrong(feedback: str, *, score: float = 0.0, misconception: str | None = None, **details) -> Grade:
    score = min(max(float(score), 0.0), 1.0)
    return Grade(
        score=score,
        correct=score >= 1.0,
        feedback=feedback,
        misconception=misconception,
        details=details,
    )


def could_not_grade(feedback: str, **details) -> Grade:
    """A valid answer the checker could not decide in time; it goes to a person."""
    return Grade(score=0.0, correct=False, feedback=feedback, details={"could_not_grade": True, **details})


def option_float(options: dict, name: str, default: float | None) -> float | None:
    """Read a numeric option, refusing anything that is not a finite non-negative number;
    an option given as null reads as ``default``, as a missing one does."""
    value = options.get(name)
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidRequest(f"option {name!r} must be a number, got {_shown(value)}") from None
    except OverflowError:  # a whole number too large for a float
        number = math.inf
    if not math.isfinite(number) or number < 0:
        raise InvalidRequest(f"option {name!r} must be a finite number >= 0, got {_shown(value)}")
    return number


def option_int(options: dict, name: str, default: int | None = None, *, maximum: int | None = None) -> int | None:
    """Read a whole-number option from 0 to ``maximum`` (None: no upper bound); an option given
    as null reads as ``default``, as a missing one does."""
    value = options.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (maximum is not None and value > maximum):
        bound = f"from 0 to {maximum}" if maximum is not None else ">= 0"
        raise InvalidRequest(f"option {name!r} must be a whole number {bound}, got {_shown(value)}")
    return value


def _shown(value) -> str:
    """An option's value in a message: a whole number too long to print is named by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a whole number of {len(str(abs(value)))} digits"
    return repr(value)


def require_options_dict(options) -> dict:
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InvalidRequest(f"options must be a JSON object, got {type(options).__name__}")
    return options


def option_left_out(message: str, *, strict: bool) -> list:
    """An optional list option that cannot be read (known wrong values or expressions): with
    ``strict`` (the author's check) InvalidRequest; at grading it is logged and left out, and
    the answer is graded without it (``[]``)."""
    if strict:
        raise InvalidRequest(message)
    logger.warning("%s; left out, the answer is graded without it", message)
    return []
