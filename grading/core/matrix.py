"""Vector and matrix answers: read a grid of numbers, check its shape, compare entries.

Accepted text forms: ``[[1,2],[3,4]]``, ``[1, 2, 3]``, ``[1 2; 3 4]``, one row per line,
rows separated by ``;``, entries by commas and/or spaces; entries may be fractions.
A list of lists from a grid widget is accepted too (entries as strings or numbers).
A wrong shape is a format problem (invalid), a wrong entry is a wrong answer.

Option ``shape: true`` marks a part whose answer *is* a shape, ``[rows, columns]`` (or one
size per dimension, e.g. ``[heads, tokens, width]``): sizes must be whole numbers of at
least 1 and there must be one per dimension (else a format error, no attempt used), and a
wrong answer is told its shape is wrong, which size is, or that rows and columns are the
wrong way round; never "outside the accepted tolerance", and never the expected shape.
"""

from __future__ import annotations

import math
import re

import numpy as np

from grading.core import misconceptions, numeric, safe_expr
from grading.core.misconceptions import ordinal_word
from grading.core.grades import (
    AnswerFormatError,
    Grade,
    InvalidRequest,
    Parsed,
    invalid,
    right,
    wrong,
)

MAX_ENTRIES = 10_000
# Room for every allowed entry typed in full (a sign, 20 digits, an exponent, a separator),
# so the text limit never refuses a matrix the entry limit accepts.
MAX_CHARS_PER_ENTRY = 32
MAX_TEXT_CHARS = MAX_ENTRIES * MAX_CHARS_PER_ENTRY
_ENTRY_SEPARATORS = re.compile(r"[,\s]+")


def parse_matrix(answer) -> np.ndarray:
    """Return a float array of ndim 1 or 2; raise AnswerFormatError pointing at the problem."""
    return _array_from_rows(answer_layout(answer))


def answer_layout(answer) -> tuple[list, bool]:
    """(rows of unread entries, whether it is two-dimensional): the answer's shape, checked
    (not empty, not too many entries, no ragged row) before any entry is read as a number."""
    if isinstance(answer, np.ndarray):
        answer = answer.tolist()
    if isinstance(answer, (list, tuple)):
        rows = _rows_from_lists(answer)
    elif isinstance(answer, str):
        rows = _rows_from_text(answer)
    else:
        raise AnswerFormatError(f"expected a vector or matrix, got {type(answer).__name__}")
    _require_rectangular(rows)
    return rows


# A small answer's entries are read before its shape is compared (an unreadable entry, or an
# empty extra row of a grid, is named); a larger one of the wrong shape is refused unread, so a
# pasted 10 000 numbers cost no more than a glance.
READ_BEFORE_SHAPE = 1000


def _entry_count(layout: tuple[list, bool]) -> int:
    return sum(len(row) for row in layout[0])


def layout_shape(layout: tuple[list, bool]) -> tuple[int, ...]:
    rows, is_2d = layout
    return (len(rows), len(rows[0])) if is_2d else (len(rows[0]),)


def _rows_from_lists(answer) -> tuple[list, bool]:
    if not answer:
        raise AnswerFormatError("the answer is empty: fill in the entries")
    if all(isinstance(item, (list, tuple)) for item in answer):
        return [list(row) for row in answer], True
    if any(isinstance(item, (list, tuple)) for item in answer):
        raise AnswerFormatError("mix of rows and single numbers: every row must be a list of entries")
    return [list(answer)], False


def _rows_from_text(text: str) -> tuple[list, bool]:
    if len(text) > MAX_TEXT_CHARS:
        raise AnswerFormatError(f"the answer is too long ({len(text)} characters)")
    if "\x00" in text:
        raise AnswerFormatError("the answer contains a NUL character")
    body = _plain_matrix_text(text).strip()
    if not body:
        raise AnswerFormatError("the answer is empty: type the entries, e.g. [[1, 2], [3, 4]]")
    body = _without_latex_wrapping(body)
    if body.startswith("\\begin"):
        return _rows_from_latex(body)
    body = _square_outer_brackets(body)
    if body.startswith("["):
        return _rows_from_brackets(body)
    if "[" in body or "]" in body:
        if (call := _CODE_CALL.match(body)) is not None:
            raise AnswerFormatError(
                f"write only the matrix, without {call.group(1)}( ): its entries in brackets, e.g. [[1, 2], [3, 4]]"
            )
        raise AnswerFormatError("unbalanced brackets: start the matrix with [ and end it with ]")
    lines = [line for line in re.split(r"[;\n]", body) if line.strip()]
    rows = [_split_entries(line) for line in lines]
    return rows, len(rows) > 1 or ";" in body or "\n" in body


# A matrix pasted from code: np.array([[…]]), torch.tensor([…]), Matrix([…]).
_CODE_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\(\s*\[")


def _rows_from_brackets(body: str) -> tuple[list, bool]:
    if body.count("[") != body.count("]"):
        raise AnswerFormatError("unbalanced brackets: every [ needs a matching ]")
    if not body.endswith("]"):
        after = body[body.rindex("]") + 1:].strip()
        raise AnswerFormatError(f"found {after[:20]!r} after the closing ]: end the matrix with ]")
    inner = body[1:-1].strip()
    if not inner.lstrip(", \t\r\n").startswith("["):
        if "[" in inner or "]" in inner:
            raise AnswerFormatError("unbalanced brackets: write rows like [[1, 2], [3, 4]]")
        if ";" in inner:
            return [_split_entries(row) for row in inner.split(";") if row.strip()], True
        return [_split_entries(inner)], False
    _require_one_comma_between_rows(inner)
    rows = []
    for chunk in re.finditer(r"\[([^\[\]]*)\]|([^\[\]\s,]+)", inner):
        if chunk.group(2) is not None:
            raise AnswerFormatError(f"found {chunk.group(2)!r} outside the rows: write rows like [[1, 2], [3, 4]]")
        rows.append(_split_entries(chunk.group(1)))
    leftover = re.sub(r"\[[^\[\]]*\]", "", inner)
    if leftover.replace(",", " ").strip():  # any whitespace between rows, \r of a pasted line too
        raise AnswerFormatError("could not read the rows: write them like [[1, 2], [3, 4]] (matrices have two levels of brackets at most)")
    return rows, True


_ROW = re.compile(r"\[[^\[\]]*\]")


def _require_one_comma_between_rows(inner: str) -> None:
    """[[1, 2],, [3, 4]] has a row missing, as [[1,, 2]] has an entry missing: refused, not read
    as two rows. A comma before the first row is refused too; one after the last is harmless."""
    gaps = _ROW.split(inner)
    if gaps[0].count(","):
        raise AnswerFormatError("a row is missing: a comma stands before the first row")
    for number, gap in enumerate(gaps[1:], start=1):
        if gap.count(",") > 1:
            raise AnswerFormatError(
                f"a row is missing after the {ordinal_word(number)} row: two commas have no row between them"
            )


# Full-width brackets and separators (a Chinese or Japanese keyboard) as their ASCII forms.
_FULL_WIDTH_PUNCTUATION = str.maketrans({"［": "[", "］": "]", "，": ",", "；": ";", "（": "(", "）": ")", "、": ","})


def _plain_matrix_text(text: str) -> str:
    """The text without invisible format characters and with full-width punctuation as ASCII."""
    if text.isascii():
        return text
    return safe_expr.without_invisible_characters(text).translate(_FULL_WIDTH_PUNCTUATION)


# A LaTeX matrix as pasted from a document or SymPy's latex(): $...$, \\(...\\), and the brackets
# \\left[ \\begin{matrix} ... \\end{matrix} \\right] (or round ones) drawn around a plain matrix.
_MATH_DELIMITED = re.compile(r"^(?:\$\$(.*)\$\$|\$(.*)\$|\\\((.*)\\\)|\\\[(.*)\\\])$", re.DOTALL)
_SIZED_BRACKETS = re.compile(r"^\\left\s*(?:\[|\()\s*(\\begin\{.*\})\s*\\right\s*(?:\]|\))$", re.DOTALL)


def _without_latex_wrapping(body: str) -> str:
    """The LaTeX matrix inside math delimiters or \\left[ \\right] brackets; other text unchanged."""
    if "\\" not in body and "$" not in body:
        return body
    delimited = _MATH_DELIMITED.match(body)
    if delimited and "\\begin" in body:
        body = next(group for group in delimited.groups() if group is not None).strip()
    sized = _SIZED_BRACKETS.match(body)
    return sized.group(1).strip() if sized else body


_LATEX_MATRIX = re.compile(r"\\begin\{([a-zA-Z]*matrix)\*?\}(.*)\\end\{\1\*?\}", re.DOTALL)


def _rows_from_latex(body: str) -> tuple[list, bool]:
    """\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}: rows end with \\\\, entries are split by &."""
    match = _LATEX_MATRIX.fullmatch(body)
    if not match:
        raise AnswerFormatError("could not read the LaTeX matrix: write it as \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}")
    lines = [line for line in match.group(2).split("\\\\") if line.strip()]
    rows = [[entry.strip() for entry in line.split("&")] for line in lines]
    return rows, len(rows) > 1


_OPENING_PARTNER = {"(": ")", "{": "}", "⟨": "⟩"}


def _square_outer_brackets(body: str) -> str:
    """(0.25, 0.75), {0.25, 0.75}, ⟨0.25, 0.75⟩ and ((1, 2), (3, 4)) as square-bracketed lists,
    when every bracket of that kind in the text stands where a [ ] would (no entry like (1/2)
    is then bracketed on its own); anything else is left for the usual reading to judge."""
    opener = body[:1]
    closer = _OPENING_PARTNER.get(opener)
    if closer is None or not body.endswith(closer) or "[" in body or "]" in body:
        return body
    squared = body.replace(opener, "[").replace(closer, "]")
    try:
        rows, _ = _rows_from_brackets(squared)
    except AnswerFormatError:
        return body
    if any(mark in entry for row in rows for entry in row for mark in "()"):
        return body
    return squared


_EMPTY_BETWEEN_COMMAS = re.compile(r"(?:^|,)\s*,")
_SPACED_COMMA = re.compile(r",\s")
_SPACED_OPERATOR = re.compile(r"\s*(/|×|·|\*|\^|\\times|\\cdot)\s*")
_DECIMAL_COMMA = re.compile(r"\d,\d")
_UNSPACED_DECIMAL_COMMA = re.compile(r"\d+,\d+")  # the whole number, to name it: 0,25 not 0,2
# A sign typed apart from its number at the start of a row or after a comma: "[1, - 2]" is [1, -2].
_SPACED_SIGN = re.compile(r"(^|,)\s*([+\-−–‐‒])\s+(?=[\d.])")
_SIGN_THEN_SPACE = re.compile(r"[+\-−–‐‒]\s")  # found wherever _SPACED_SIGN would change the text
_OPERATOR_CHARACTERS = frozenset("/×·*^\\")  # one is in every text _SPACED_OPERATOR changes


def _split_entries(row_text: str) -> list[str]:
    """The entries of one row. Two commas with nothing between them are a missing entry, not
    one separator; and a row that separates with ', ' but also has '0,5' may be using a
    decimal comma, which would silently become two entries: both are refused."""
    text = row_text.strip()
    if _EMPTY_BETWEEN_COMMAS.search(text):
        raise AnswerFormatError(f"an entry is missing in {text!r}: a comma has no entry before it")
    if _SPACED_COMMA.search(text) and (comma := _UNSPACED_DECIMAL_COMMA.search(text)):
        raise AnswerFormatError(
            f"{text!r} separates entries with ', ' but also has {comma.group(0)!r}: write decimals with a point "
            f"({comma.group(0).replace(',', '.')}), and put a space after every comma between entries"
        )
    if "\t" in text and (comma := _UNSPACED_DECIMAL_COMMA.search(text)):
        raise AnswerFormatError(  # a spreadsheet's cells: tabs between them, so 0,25 is one decimal
            f"a row separates entries with tabs but has {comma.group(0)!r}: write decimals with a point "
            f"({comma.group(0).replace(',', '.')})"
        )
    # Fractions and powers of ten may be typed with spaces around the operator: "1 / 2", "2.5 × 10^-3".
    compact = text
    if _SIGN_THEN_SPACE.search(compact):  # most rows have neither: the substitutions are skipped
        compact = _SPACED_SIGN.sub(r"\1\2", compact)
    if _OPERATOR_CHARACTERS.intersection(compact):
        compact = _SPACED_OPERATOR.sub(r"\1", compact)
    return [entry for entry in _ENTRY_SEPARATORS.split(compact) if entry]


MAX_NAMED_ENTRIES = 5  # a message names this many unreadable entries, then says how many more


def _require_rectangular(rows_and_is_2d) -> None:
    rows, _ = rows_and_is_2d
    if not rows or not any(rows):
        raise AnswerFormatError("the answer is empty: fill in the entries")
    width = len(rows[0])
    if sum(len(row) for row in rows) > MAX_ENTRIES:
        raise AnswerFormatError(f"too many entries (more than {MAX_ENTRIES})")
    for row_number, row in enumerate(rows, start=1):
        if len(row) != width:
            raise AnswerFormatError(
                f"the {ordinal_word(row_number)} row has {_entries(len(row))} but the first has {width}: "
                "every row needs the same number of entries"
            )


def _array_from_rows(rows_and_is_2d) -> np.ndarray:
    rows, is_2d = rows_and_is_2d
    array = _plain_decimals(rows)
    if array is None:
        array = _read_entry_by_entry(rows, is_2d)
    return array if is_2d else array[0]


# Every entry a plain decimal (numeric.parse_number's usual case) or a finite float or int of the
# accepted range: read in one pass as float(entry), the value parse_number gives (it is correctly
# rounded, as float(Fraction(text)) is). Anything else is read entry by entry, with its messages.
_PLAIN_DECIMALS = re.compile(rf"(?:{numeric._PLAIN_DECIMAL.pattern}\n)*{numeric._PLAIN_DECIMAL.pattern}")
_PLAIN_ZERO = re.compile(r"[+-]?(?:0+(?:\.0*)?|\.0+)(?:[eE][+-]?[0-9]{1,3})?")
_FAST_SMALLEST, _FAST_LARGEST = 1e-300, 1e300  # well inside numeric's range (about 1e-400 to 1e308)


def _plain_decimals(rows: list) -> np.ndarray | None:
    """The grid as floats when every entry is read at once (see above); None otherwise."""
    entries = [entry for row in rows for entry in row]
    texts = [entry for entry in entries if type(entry) is str]
    if len(texts) != len(entries) and not all(type(entry) in (str, float, int) for entry in entries):
        return None  # bool, None, Fraction, nested lists ...: each is named by the slow path
    if texts and (max(map(len, texts)) > numeric.MAX_NUMBER_CHARS or not _PLAIN_DECIMALS.fullmatch("\n".join(texts))):
        return None
    try:
        values = np.array([float(entry) for entry in entries])
    except OverflowError:  # an int too large for a float
        return None
    magnitudes = np.abs(values)
    in_range = (magnitudes > _FAST_SMALLEST) & (magnitudes < _FAST_LARGEST)
    if not in_range.all():
        zeros = np.flatnonzero(values == 0)
        if zeros.size + in_range.sum() != values.size or not all(_is_zero(entries[index]) for index in zeros):
            return None  # out of range, not finite, or 1e-999 (0 as a float, refused by parse_number)
        values[zeros] = 0.0  # -0 is read as 0
    return values.reshape(len(rows), -1)


def _is_zero(entry) -> bool:
    return bool(_PLAIN_ZERO.fullmatch(entry)) if type(entry) is str else entry == 0


def _read_entry_by_entry(rows: list, is_2d: bool) -> np.ndarray:
    values, unreadable = [], []
    for row_number, row in enumerate(rows, start=1):
        values.append([])
        for column, entry in enumerate(row, start=1):
            try:
                values[-1].append(_entry_value(entry, row_number, column, is_2d))
            except UnreadableEntry as problem:
                unreadable.append(problem)
    if unreadable:
        raise AnswerFormatError(_unreadable_message(unreadable))
    return np.array(values, dtype=float)


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


class UnreadableEntry(AnswerFormatError):
    """One entry that is not a number: where it is (as the student counts), what was typed,
    and why it cannot be read (None: it is empty)."""

    def __init__(self, where: str, typed, reason: str | None):
        self.where, self.typed, self.reason = where, typed, reason
        super().__init__(f"{where}: {reason}" if reason else f"{where} is empty")

    def named(self) -> str:
        """``the second row's first entry ('q')``, or ``... (empty)``."""
        if self.reason is None:
            return f"{self.where} (empty)"
        if not isinstance(self.typed, str):
            return f"{self.where} ({repr(self.typed)[:20]})"
        typed = self.typed if len(self.typed) <= 20 else self.typed[:19] + "…"
        return f"{self.where} ({typed!r})"


def _unreadable_message(unreadable: list[UnreadableEntry]) -> str:
    """One entry: where and why, as before. Several: every one named by its place (the
    first MAX_NAMED_ENTRIES, then how many more), then why the first typed one cannot be read."""
    if len(unreadable) == 1:
        return str(unreadable[0])
    typed = next((problem for problem in unreadable if problem.reason is not None), None)
    shown = unreadable[:MAX_NAMED_ENTRIES]
    named = [problem.named() if typed else problem.where for problem in shown]
    more = len(unreadable) - len(shown)
    listed = f"{', '.join(named)} and {more} more" if more else f"{', '.join(named[:-1])} and {named[-1]}"
    if typed is None:
        return f"{len(unreadable)} entries are empty: {listed}"
    why = f"{typed.where[:1].upper()}{typed.where[1:]}: {typed.reason}"
    return f"{len(unreadable)} entries cannot be read: {listed}. {why}"


def _entry_value(entry, row_number: int, column: int, is_2d: bool) -> float:
    if isinstance(entry, str) and not entry.strip():
        raise UnreadableEntry(_entry_place(row_number, column, is_2d), entry, None)
    try:
        return float(numeric.parse_number(entry))
    except AnswerFormatError as problem:
        raise UnreadableEntry(_entry_place(row_number, column, is_2d), entry, str(problem)) from None


def _entry_place(row_number: int, column: int, is_2d: bool) -> str:
    # Ordinal words, not numbers: prompts number tokens from 0, so "row 1" was ambiguous.
    return (f"the {ordinal_word(row_number)} row's {ordinal_word(column)} entry" if is_2d
            else f"the {ordinal_word(column)} entry")


def read_expected(expected) -> np.ndarray:
    try:
        return parse_matrix(expected)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"expected value is not a matrix: {problem}") from None


def shape_words(shape: tuple) -> str:
    if len(shape) == 1:
        return _entries(shape[0])
    return "×".join(str(size) for size in shape)


def conform_shape(expected: np.ndarray, answer: np.ndarray) -> np.ndarray:
    """Accept a row or column for a vector; otherwise the shapes must agree exactly."""
    if answer.shape == expected.shape:
        return answer
    if expected.ndim == 1 and answer.ndim == 2 and 1 in answer.shape and answer.size == expected.size:
        return answer.reshape(expected.shape)
    if expected.ndim == 2 and 1 in expected.shape and answer.ndim == 1 and answer.size == expected.size:
        return answer.reshape(expected.shape)
    raise AnswerFormatError(f"expected {shape_words(expected.shape)}, got {shape_words(answer.shape)}")


def _conformed_or_explained(target: np.ndarray, values: np.ndarray, answer) -> np.ndarray:
    """``conform_shape``; a wrong shape from a text with a comma between digits (0,25 0,75 from a
    spreadsheet in a decimal-comma locale, read as the entries 0, 25, 0, 75) says so, since
    "expected 2×2, got 2×4" alone leaves the student counting entries that look right."""
    try:
        return conform_shape(target, values)
    except AnswerFormatError as problem:
        comma = _UNSPACED_DECIMAL_COMMA.search(answer) if isinstance(answer, str) else None
        if comma is None or not _fits_with_decimal_points(target, answer):
            raise
        raise AnswerFormatError(
            f"{problem}: a comma separates entries, so {comma.group(0)!r} is two of them; "
            f"write decimals with a point ({comma.group(0).replace(',', '.')})"
        ) from None


def _fits_with_decimal_points(target: np.ndarray, answer: str) -> bool:
    """Whether the answer has the expected shape once each comma between digits is a decimal
    point: only then is a decimal comma the likely reason for the wrong shape ([1,2,3] typed
    for a 2×2 matrix is not told to write 1.2)."""
    try:
        with_points = re.sub(r"(?<=\d),(?=\d)", ".", answer)
        if "\n" in with_points:  # a decimal-comma spreadsheet's CSV: 0,25;0,75 on each line
            with_points = with_points.replace(";", " ")
        conform_shape(target, np.empty(layout_shape(answer_layout(with_points))))
    except AnswerFormatError:
        return False
    return True


def entry_tolerances(expected: np.ndarray, options: dict) -> np.ndarray:
    """How far each entry may be from ``expected`` and still be accepted."""
    rtol = numeric.option_float(options, "rtol", numeric.DEFAULT_RTOL)
    atol = numeric.option_float(options, "atol", numeric.DEFAULT_ATOL)
    if "sigfigs" not in options and options.get("decimals") not in (None, 0):
        # half a unit of the last decimal, the same for every entry: computed once, not 4096 times
        return np.full(expected.shape, numeric.tolerance_for(0.0, options))
    if "sigfigs" in options or "decimals" in options:
        return np.vectorize(lambda value: numeric.tolerance_for(float(value), options), otypes=[float])(expected)
    return atol + rtol * np.abs(expected)


def entries_correct(expected: np.ndarray, answer: np.ndarray, options: dict) -> np.ndarray:
    return np.abs(answer - expected) <= entry_tolerances(expected, options)


def check(expected, answer, options: dict) -> Grade:
    target = read_expected(expected)
    entries_correct(target, target, options)  # validate tolerance options
    is_shape = _is_shape_part(target, options)
    try:
        layout = answer_layout(answer)
        if not is_shape and _entry_count(layout) > READ_BEFORE_SHAPE:
            conform_shape(target, np.empty(layout_shape(layout)))
        values = _array_from_rows(layout)
        if is_shape:
            values = shape_answer(target, values)
        values = _conformed_or_explained(target, values, answer)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    grid = entries_correct(target, values, options)
    details = {"entry_correct": grid.tolist()}
    if grid.all():
        return right("Correct: every entry matches.", **details)
    score = float(grid.mean()) if options.get("partial_credit") else 0.0
    if is_shape:
        return wrong(_wrong_shape_feedback(target, values, grid), score=score, **details)
    feedback = _wrong_matrix_feedback(target, values, grid, options)
    grade = _with_diagnosis(wrong(feedback, score=score, **details), values, options)
    if grade.misconception in (None, TRANSPOSED) and is_transpose_of(target, values, options):
        return wrong(f"Not quite. {misconceptions.MISCONCEPTIONS[TRANSPOSED]}", score=score,
                     misconception=TRANSPOSED, **details)
    return grade


TRANSPOSED = "matrix_transposed"


def is_transpose_of(target: np.ndarray, values: np.ndarray, options: dict) -> bool:
    """Whether ``values`` transposed is ``target`` within the part's tolerance, and ``target``
    is not symmetric (within it too): the transpose of a symmetric matrix is the matrix
    itself, right or wrong, and never "rows and columns swapped"."""
    if target.ndim != 2 or target.shape[0] != target.shape[1] or values.shape != target.shape:
        return False
    if entries_correct(target, target.T, options).all():
        return False
    return bool(entries_correct(target, values.T, options).all())


def _wrong_matrix_feedback(target, values, grid, options) -> str:
    wrong_count = int(grid.size - grid.sum())
    if target.ndim == 1 and target.size == 2 and np.allclose(values[::-1], target, rtol=1e-3, atol=5e-5):
        return ("Not quite: the two numbers are in the reverse order. If this is a shape, it is written "
                "[rows, columns]: the transposed shape is not the same matrix.")
    verb = "is" if wrong_count == 1 else "are"
    return f"Not quite: {wrong_count} of the {grid.size} entries {verb} outside the accepted tolerance (see the highlighted cells)."


# --- Shape answers (option ``shape``) ---

_DIMENSIONS_OF_TWO = ("rows", "columns")


def _is_shape_part(target: np.ndarray, options: dict) -> bool:
    """Whether the part's answer is a shape; InvalidRequest when the option is set on a part
    whose expected value is not one (whole numbers of at least 1, one row of them)."""
    if not options.get("shape"):
        return False
    sizes = target.reshape(-1)
    one_row = target.ndim == 1 or target.shape[0] == 1
    if not one_row or not np.all((sizes >= 1) & (sizes == np.round(sizes))):
        raise InvalidRequest(
            "option 'shape' needs an expected value of whole numbers of at least 1, e.g. [n, d_k]"
        )
    return True


def _shape_layout(count: int) -> str:
    return "two whole numbers, [rows, columns]" if count == 2 else "one whole number per dimension"


def shape_answer(target: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A shape answer as a row of sizes; AnswerFormatError (no attempt used) when it is not
    a shape of as many dimensions as the expected one."""
    count = target.size
    if (values.ndim == 2 and 1 not in values.shape) or values.size != count:
        typed = f"{values.size} number{'s' if values.size != 1 else ''}"
        raise AnswerFormatError(f"a shape here is {_shape_layout(count)}; yours has {typed}")
    sizes = values.reshape(-1)
    for size in sizes:
        if not (math.isfinite(size) and size >= 1 and size == round(size)):
            raise AnswerFormatError(
                f"a shape is made of whole numbers of at least 1 (how many rows, how many columns); "
                f"{size:g} is not one"
            )
    return sizes.reshape(target.shape)


def _wrong_shape_feedback(target: np.ndarray, values: np.ndarray, grid: np.ndarray) -> str:
    """What a wrong shape is told: which size is wrong, or that rows and columns are the
    wrong way round. It never names the expected shape (a solution policy may hide it)."""
    sizes, right_sizes = values.reshape(-1), grid.reshape(-1)
    yours = "×".join(f"{size:g}" for size in sizes)
    if sizes.size == 2 and np.array_equal(sizes[::-1], target.reshape(-1)):
        return (f"Not quite: your shape {yours} has the rows and columns the wrong way round: a shape is "
                "written [rows, columns], and the transposed shape is not the same matrix.")
    if sizes.size == 2:
        wrong_names = [name for name, ok in zip(_DIMENSIONS_OF_TWO, right_sizes) if not ok]
        which = " and ".join(f"the number of {name}" for name in wrong_names)
    else:
        wrong_names = [ordinal_word(index + 1) for index, ok in enumerate(right_sizes) if not ok]
        which = f"the {' and '.join(wrong_names)} size{'s' if len(wrong_names) > 1 else ''}"
    verb = "are" if len(wrong_names) > 1 else "is"
    cells = "cells" if len(wrong_names) > 1 else "cell"
    return (f"Not quite: a shape is {_shape_layout(sizes.size)}, and yours, {yours}, is not this one: "
            f"{which} {verb} wrong (see the highlighted {cells}).")


def _with_diagnosis(grade: Grade, values: np.ndarray, options: dict) -> Grade:
    spec = options.get("diagnose")
    if not spec:
        return grade
    code = misconceptions.diagnose_from_spec(spec, values, options)
    if code is None:
        return grade
    message = misconceptions.MISCONCEPTIONS[code]
    return Grade(
        score=grade.score,
        correct=grade.correct,
        feedback=f"{grade.feedback} {message}",
        misconception=code,
        details=grade.details,
    )


def parse_answer(answer, options: dict) -> Parsed:
    try:
        values = parse_matrix(answer)
    except AnswerFormatError as problem:
        return Parsed(None, str(problem), None)
    return Parsed(values.tolist(), None, _latex_of(values))


def _latex_of(values: np.ndarray) -> str:
    rows = values.reshape(1, -1) if values.ndim == 1 else values
    body = r" \\ ".join(" & ".join(f"{value:.6g}" for value in row) for row in rows)
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


def _as_text(values: np.ndarray) -> str:
    if values.ndim == 1:
        return "[" + ", ".join(repr(float(value)) for value in values) + "]"
    return "[" + ", ".join(_as_text(row) for row in values) + "]"


def self_test(expected, options: dict) -> dict[str, list]:
    target = read_expected(expected)
    perturbed = target.copy()
    perturbed.flat[0] += max(1.0, abs(perturbed.flat[0]))
    rows_text = "\n".join(" ".join(repr(float(value)) for value in row) for row in np.atleast_2d(target))
    right_answers = [_as_text(target), target.tolist(), [[str(v) for v in row] for row in np.atleast_2d(target).tolist()]]
    if target.ndim == 2:
        right_answers.append(rows_text)
    wrong_answers = [_as_text(perturbed), _as_text(target + 1.0)]
    too_small = target[:-1] if target.shape[0] > 1 else np.append(target, target[..., :1], axis=-1)
    invalid_answers = ["", "[[1, 2], [3", "abc", _as_text(too_small)]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
