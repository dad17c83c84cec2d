"""Free-text answers (explanations): never scored automatically, only checked for
presence and length, then queued for a person to grade."""

from __future__ import annotations

from grading.core.grades import AnswerFormatError, Grade, InvalidRequest, Parsed, invalid, option_int
from grading.core.safe_expr import without_invisible_characters

MAX_TEXT_CHARS = 10_000
QUEUED_FEEDBACK = "Your answer was received and is queued for manual grading."


def read_text(answer, options: dict) -> str:
    if not isinstance(answer, str):
        raise AnswerFormatError(f"expected text, got {type(answer).__name__}")
    limit = option_int(options, "max_chars", MAX_TEXT_CHARS)
    if limit < 1:
        raise InvalidRequest("option 'max_chars' must be at least 1: no explanation fits in 0 characters")
    text = answer.strip()
    if not without_invisible_characters(text).strip():  # zero-width spaces only look like nothing
        raise AnswerFormatError("the answer is empty: write your explanation")
    if "\x00" in text:
        raise AnswerFormatError("the answer contains a NUL character")
    if len(text) > limit:
        raise AnswerFormatError(f"the answer is too long ({len(text)} characters; the limit is {limit})")
    return text


def check(expected, answer, options: dict) -> Grade:
    try:
        read_text(answer, options)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    return Grade(score=0.0, correct=False, feedback=QUEUED_FEEDBACK, details={"manual": True})


def parse_answer(answer, options: dict) -> Parsed:
    try:
        return Parsed(read_text(answer, options), None, None)
    except AnswerFormatError as problem:
        return Parsed(None, str(problem), None)


def self_test(expected, options: dict) -> dict[str, list]:
    return {"right": [], "wrong": [], "invalid": ["", "   ", "x" * (MAX_TEXT_CHARS + 1)]}
