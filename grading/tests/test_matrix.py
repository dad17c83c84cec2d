"""Matrix answers: layouts, shape messages, entry grid, partial credit."""

import numpy as np

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
