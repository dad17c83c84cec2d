"""Matrix answers: a grid of plain decimals (or of floats from a grid widget) is read in one pass;
the value of every entry, and every grade and message, is what reading entry by entry gives."""

import numpy as np
import pytest

from grading.core import matrix
from grading.core.answers import check
from grading.core.grades import AnswerFormatError
from grading.core.misconceptions import MISCONCEPTIONS


def entry_by_entry(answer):
    rows, is_2d = matrix.answer_layout(answer)
    array = matrix._read_entry_by_entry(rows, is_2d)
    return array if is_2d else array[0]


def read(reader, answer):
    try:
        return reader(answer).tolist()
    except AnswerFormatError as problem:
        return str(problem)


@pytest.mark.parametrize("answer, one_pass", [
    ("[[0.1, -2.5e-3], [3, 4.]]", True),
    ("[[0.30000000000000004, 1e300], [.5, -7E+2]]", False),  # 1e300 is read entry by entry
    ("[[0, -0], [0.0e5, 1]]", True),  # zeros, and -0 read as 0
    ("[[1e-999, 1]]", False),  # 0 as a float: refused as out of range
    ("[[1e308, 1]]", False),
    ("[[1e309, 1]]", False),
    ("[[1/2, 1]]", False),
    ("[[1, x]]", False),
    ("[[1,, 2]]", False),
    ([[0.25, -1.0], [2, 3]], True),  # a grid widget's floats and ints
    ([[0.25, float("nan")]], False),
    ([[True, 1]], False),
    ([[10**400, 1]], False),  # too large for a float
    ([["0.5", 2.0], ["-0", "1e-3"]], True),
    ([[" 0.5", "1"]], False),
    ([["", "1"]], False),
    ("1 2; 3 4", True),
    ("[1, - 2, 3]", True),  # a sign typed apart is still joined to its number
    ("[[1 / 2, 2.5 × 10^-3]]", False),
])
def test_a_grid_read_in_one_pass_reads_as_entry_by_entry(answer, one_pass):
    assert read(matrix.parse_matrix, answer) == read(entry_by_entry, answer)
    try:
        rows, _ = matrix.answer_layout(answer)
    except AnswerFormatError:
        assert not one_pass
        return
    assert (matrix._plain_decimals(rows) is not None) is one_pass


def test_reading_in_one_pass_keeps_the_values_exactly():
    values = np.random.default_rng(3).standard_normal((64, 64)) * 10.0 ** np.random.default_rng(4).integers(-12, 12, (64, 64))
    text = "[" + ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in values) + "]"
    assert np.array_equal(matrix.parse_matrix(text), values)
    assert np.array_equal(matrix.parse_matrix(text), entry_by_entry(text))


@pytest.mark.parametrize("answer, expected", [
    ("[[1, 2], [3, 4]]", (True, None, "Correct: every entry matches.")),
    ("[[1, 2], [3, 5]]", (False, None, "Not quite: 1 of the 4 entries is outside the accepted tolerance (see the "
                                       "highlighted cells).")),
    ("[[1, 3], [2, 4]]", (False, None, f"Not quite. {MISCONCEPTIONS['matrix_transposed']}")),
    ("[[1, 2], [3, 1e-999]]", (False, "the second row's second entry: '1e-999' is outside the range of accepted numbers "
                                      "(about 1e-400 to 1e308)", None)),
])
def test_grades_of_small_grids(answer, expected):
    grade = check("matrix", "[[1, 2], [3, 4]]", answer, {})
    assert (grade.correct, grade.error, None if grade.error else grade.feedback) == expected
