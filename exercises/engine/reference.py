"""Reference answers of a variant and the filling of ``{{ placeholders }}`` in text.

Placeholders hold expressions of the expression language, optionally followed by
``| decimals``. In Markdown (prompts, hints, solutions) a matrix becomes a LaTeX
``bmatrix``; in answer text (symbolic, derivation) numbers are written plainly.
"""

from __future__ import annotations

import numpy as np

from .errors import ExpressionError
from .expressions import evaluate, to_json_value
from .spec import NUMERIC_TYPES, PLACEHOLDER_PATTERN, ExerciseSpec, Part, parse_placeholder

MAX_SHOWN_ENTRIES = 1000  # numbers one placeholder may print (a 31 × 31 matrix fits)
MAX_FILLED_TEXT_CHARS = 100_000  # one text (prompt, hint, solution) once its placeholders are filled


def reference_answers(spec: ExerciseSpec, params: dict) -> dict[str, object]:
    """Part key -> expected value (JSON-able) for this variant."""
    return {part.key: part_reference(part, params) for part in spec.parts}


def part_reference(part: Part, params: dict):
    if part.type in NUMERIC_TYPES:
        value = to_json_value(evaluate(part.answer_expression, params))
        _numbers_not_truth_values(part, value)
        if part.type == "numeric" and isinstance(value, list):
            raise ExpressionError(f"part {part.key}: a numeric answer must be one number, got a list")
        if part.type == "matrix" and not isinstance(value, list):
            value = [value]
        return value
    if part.type == "choice":
        if part.answer_index is None:
            return part.answer_text
        index = evaluate(part.answer_index, params)
        if float(index) != int(index) or not 0 <= int(index) < len(part.choice_keys):
            raise ExpressionError(f"part {part.key}: answer_index {index} does not pick a choice")
        return part.choice_keys[int(index)]
    return fill_plain(part.answer_text, params)


def _numbers_not_truth_values(part: Part, value) -> None:
    """A numeric or matrix answer of true/false (``answer: "a > 1"``) would make every
    student's answer ungradable: the checkers grade numbers only."""
    entries = np.asarray(value, dtype=object).ravel() if isinstance(value, list) else [value]
    if any(isinstance(entry, bool) for entry in entries):
        detail = f"a {part.type} answer must be made of numbers, not true/false (a comparison)"
        raise ExpressionError(f"part {part.key}: {detail}", detail=detail)


def fill_plain(value, params: dict):
    """Fill placeholders in answer text (recursively in rubric lists/mappings), plain numbers."""
    if isinstance(value, str):
        whole = PLACEHOLDER_PATTERN.fullmatch(value.strip())
        if whole:  # "{{n}}" alone stands for the value itself, not its text
            return to_json_value(evaluate(parse_placeholder(whole.group(1), None).expression, params))
        return _fill(value, params, latex=False)
    if isinstance(value, list):
        return [fill_plain(item, params) for item in value]
    if isinstance(value, dict):
        return {key: fill_plain(item, params) for key, item in value.items()}
    return value


def fill_markdown(text: str, params: dict) -> str:
    return _fill(text, params, latex=True)


class FilledTextTooLong(ExpressionError):
    """Each placeholder fills in, but together they make the text too long to show."""


def _fill(text: str, params: dict, *, latex: bool) -> str:
    """``text`` with its placeholders filled; a value too large to print, or a text that
    would grow past MAX_FILLED_TEXT_CHARS (ten thousand copies of one matrix), is an
    ExpressionError, as any placeholder that cannot be filled in."""
    length = len(text)

    def replace(match):
        nonlocal length
        placeholder = parse_placeholder(match.group(1), None)
        value = evaluate(placeholder.expression, params)
        shown = format_value(_printable(value), decimals=placeholder.decimals, latex=latex)
        length += len(shown)
        if length > MAX_FILLED_TEXT_CHARS:
            raise FilledTextTooLong(f"the text would be longer than {MAX_FILLED_TEXT_CHARS} characters once filled in")
        return shown

    return PLACEHOLDER_PATTERN.sub(replace, text)


def _printable(value):
    """``value`` if it is small enough to print in text, else an ExpressionError."""
    entries = int(np.size(value)) if isinstance(value, (np.ndarray, list)) else 1
    if entries > MAX_SHOWN_ENTRIES:
        raise ExpressionError(f"a value shown in text has at most {MAX_SHOWN_ENTRIES} numbers; this one has {entries}")
    return value


def format_number(value, decimals: int | None = None) -> str:
    number = float(value)
    if decimals is not None:
        text = f"{number:.{decimals}f}"
        return "0" if decimals == 0 and text == "-0" else text
    if number.is_integer():
        return str(int(number))
    return f"{number:.4f}".rstrip("0").rstrip(".")


def format_value(value, *, decimals: int | None = None, latex: bool = True) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    array = np.asarray(to_json_value(value), dtype=float)
    if array.ndim == 0:
        return format_number(array, decimals)
    if array.ndim > 2:
        raise ExpressionError("only numbers, vectors and matrices can be shown")
    rows = np.atleast_2d(array)
    if not latex:
        cells = [[format_number(v, decimals) for v in row] for row in rows]
        inner = ", ".join("[" + ", ".join(row) + "]" for row in cells)
        return inner if array.ndim == 1 else f"[{inner}]"
    body = r" \\ ".join(" & ".join(format_number(v, decimals) for v in row) for row in rows)
    return r"\begin{bmatrix} " + body + r" \end{bmatrix}"
