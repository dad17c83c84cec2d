"""Matrix answers: layouts, shape messages, entry grid, partial credit, shape answers."""

import numpy as np
import pytest

from grading.core.grades import InvalidRequest
from grading.core.matrix import check, parse_matrix


def test_layouts_read_the_same_matrix():
    expected = np.array([[1.0, 0.5], [3.0, 4.0]])
    for text in ("[[1, 1/2], [3, 4]]", "1 1/2\n3 4", "1, 0.5; 3, 4", "[1 1/2; 3 4]"):
        assert np.array_equal(parse_matrix(text), expected), text
    assert np.array_equal(parse_matrix([["1", "0.5"], [3, 4]]), expected)


def test_shape_error_names_both_shapes():
    grade = check([[1, 2, 3]] * 4, "[[1,2],[1,2],[1,2],[1,2]]", {})
    assert grade.error == "expected 4×3, got 4×2"


def test_entry_grid_and_partial_credit():
    grade = check([[1, 2], [3, 4]], "[[1, 2], [3, 5]]", {"partial_credit": True})
    assert grade.details["entry_correct"] == [[True, True], [True, False]]
    assert (grade.score, grade.correct, grade.error) == (0.75, False, None)
    assert grade.feedback == "Not quite: 1 of the 4 entries is outside the accepted tolerance (see the highlighted cells)."


def test_without_partial_credit_a_wrong_entry_scores_zero():
    assert check([[1, 2], [3, 4]], "[[1, 2], [3, 5]]", {}).score == 0.0


def test_transpose_is_pointed_out():
    assert "transpose" in check([[1, 2], [3, 4]], "[[1, 3], [2, 4]]", {}).feedback


def test_entry_error_points_at_row_and_entry():
    assert check([[1, 2], [3, 4]], "[[1, 2], [3, q]]", {}).error.startswith("the second row's second entry:")
    assert check([[1, 2], [3, 4]], "[[1, 2], [3]]", {}).error.startswith("the second row has 1 entry but the first has 2")


def test_a_100_by_100_matrix_typed_as_text_is_inside_the_limits():
    import time

    from grading.core.matrix import MAX_ENTRIES, MAX_TEXT_CHARS

    text = "\n".join(" ".join(f"{-0.123456789 * (row + 1) * (column + 1):.9f}" for column in range(100)) for row in range(100))
    assert len(text) > 120_000 and 100 * 100 == MAX_ENTRIES
    started = time.perf_counter()
    grade = check([[-0.123456789 * (row + 1) * (column + 1) for column in range(100)] for row in range(100)],
                  text, {"decimals": 6})
    assert (grade.error, grade.correct) == (None, True)
    assert time.perf_counter() - started < 10.0  # no quadratic reading
    assert check([[1]], "1 " * (MAX_TEXT_CHARS // 2 + 1), {}).error.startswith("the answer is too long")


# --- Shape answers (option ``shape``) -------------------------------------------------

SHAPE = {"decimals": 0, "shape": True}
TWO_NUMBERS = "a shape here is two whole numbers, [rows, columns]; "
WHOLE = "a shape is made of whole numbers of at least 1 (how many rows, how many columns); "


@pytest.mark.parametrize(
    "answer, correct, feedback",
    [
        ("[7, 128]", True, "Correct: every entry matches."),
        ([["7", "128"]], True, "Correct: every entry matches."),  # the grid's one row
        ("7 128", True, "Correct: every entry matches."),
        ("[7, 16]", False, "Not quite: a shape is two whole numbers, [rows, columns], and yours, 7×16, is not this "
                           "one: the number of columns is wrong (see the highlighted cell)."),
        ("[16, 128]", False, "Not quite: a shape is two whole numbers, [rows, columns], and yours, 16×128, is not "
                             "this one: the number of rows is wrong (see the highlighted cell)."),
        ("[16, 7]", False, "Not quite: a shape is two whole numbers, [rows, columns], and yours, 16×7, is not this "
                           "one: the number of rows and the number of columns are wrong (see the highlighted cells)."),
        ("[128, 7]", False, "Not quite: your shape 128×7 has the rows and columns the wrong way round: a shape is "
                            "written [rows, columns], and the transposed shape is not the same matrix."),
    ],
)
def test_a_shape_answer_is_told_about_its_shape_never_a_tolerance(answer, correct, feedback):
    grade = check([7, 128], answer, SHAPE)
    assert (grade.error, grade.correct, grade.feedback) == (None, correct, feedback)
    assert "tolerance" not in grade.feedback
    if "128" not in str(answer):
        assert "128" not in grade.feedback  # the expected shape is never given away


@pytest.mark.parametrize(
    "answer, error",
    [
        ("[7]", TWO_NUMBERS + "yours has 1 number"),
        ("[7, 16, 3]", TWO_NUMBERS + "yours has 3 numbers"),
        ("[[7, 128], [1, 2]]", TWO_NUMBERS + "yours has 4 numbers"),
        ("[7.5, 128]", WHOLE + "7.5 is not one"),
        ("[7, 0]", WHOLE + "0 is not one"),
        ("[-7, 128]", WHOLE + "-7 is not one"),
        ("[7, 1e400]", "the second entry: '1e400' is outside the range of accepted numbers (about 1e-400 to 1e308)"),
        ("[7, x]", "the second entry: could not read 'x' as a number: it contains letters; type a number such as "
                   "0.25 or 1/4"),
    ],
)
def test_what_is_not_a_shape_is_a_format_error_that_uses_no_attempt(answer, error):
    grade = check([7, 128], answer, SHAPE)
    assert (grade.error, grade.correct, grade.score) == (error, False, 0.0)


@pytest.mark.parametrize(
    "answer, feedback",
    [
        ("[2, 7, 16]", "Not quite: a shape is one whole number per dimension, and yours, 2×7×16, is not this one: "
                       "the third size is wrong (see the highlighted cell)."),
        ("[2, 16, 7]", "Not quite: a shape is one whole number per dimension, and yours, 2×16×7, is not this one: "
                       "the second and third sizes are wrong (see the highlighted cells)."),
    ],
)
def test_a_shape_of_three_dimensions_names_the_wrong_sizes(answer, feedback):
    grade = check([2, 7, 32], answer, SHAPE)
    assert (grade.error, grade.correct, grade.feedback) == (None, False, feedback)
    assert check([2, 7, 32], "[2, 7]", SHAPE).error == "a shape here is one whole number per dimension; yours has 2 numbers"


@pytest.mark.parametrize("expected", [[7.5, 2], [0, 3], [[1, 2], [3, 4]]])
def test_the_shape_option_on_an_answer_that_is_not_a_shape_is_the_authors_error(expected):
    with pytest.raises(InvalidRequest, match="option 'shape' needs an expected value of whole numbers"):
        check(expected, "[1, 2]", SHAPE)


def test_the_bank_marks_every_shape_part_and_its_message_says_shape():
    """Every bank part whose answer is a list of sizes is marked a shape, and the tester's
    answer [7, 16] to "the shape of X" (7 tokens of width 128 here) is told its columns are wrong."""
    from pathlib import Path

    from exercises import engine

    bank = Path(__file__).resolve().parents[2] / "exercises" / "bank"
    marked = {
        (path.stem, part.key)
        for path in sorted(bank.glob("*.yaml"))
        for part in engine.load_spec(path.read_text()).parts
        if part.options.get("shape")
    }
    assert len(marked) == 18 and all("shape" in key for _slug, key in marked)
    spec = engine.load_spec((bank / "qkv-shapes.yaml").read_text())
    params = {"n": 7, "d_model": 128, "d_k": 8, "d_v": 10}
    grade = engine.grade_part(spec, params, "shape_X", "[7, 16]")
    assert grade.feedback == ("Not quite: a shape is two whole numbers, [rows, columns], and yours, 7×16, is not this "
                              "one: the number of columns is wrong (see the highlighted cell).")
