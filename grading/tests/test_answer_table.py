"""Runs the answer-test table through answers.check: every row must come out as stated."""

import time

import pytest

from grading.core.answers import check, checker_module
from grading.tests.fixtures.answer_tests import ROWS


def _row_id(row: dict) -> str:
    answer = repr(row["answer"])
    return f"{row['type']}-{row['outcome']}-{answer[:40]}"


def test_table_is_large_enough():
    assert len(ROWS) >= 300
    assert sum(row["hostile"] for row in ROWS) >= 40
    assert {row["outcome"] for row in ROWS} == {"right", "wrong", "invalid"}


@pytest.fixture(scope="module", autouse=True)
def checkers_loaded():
    """Import every checker (SymPy takes a while) so the 100 ms budget times only the check."""
    for answer_type in ("numeric", "matrix", "symbolic", "matrix_expression", "derivation", "choice"):
        checker_module(answer_type)
    check("symbolic", "x", "x", {"allow_any_symbols": True})


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(row) for row in ROWS])
def test_answer_row(row):
    started = time.perf_counter()
    grade = check(row["type"], row["expected"], row["answer"], row["options"])
    elapsed = time.perf_counter() - started
    if row["outcome"] == "right":
        assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade
    elif row["outcome"] == "wrong":
        assert grade.correct is False and grade.error is None and grade.score < 1.0, grade
        assert not grade.details.get("could_not_grade"), grade
    else:
        assert grade.error, grade
        assert (grade.correct, grade.score) == (False, 0.0)
        assert grade.feedback == grade.error
    if row["hostile"]:
        assert elapsed < 0.1, f"hostile input took {elapsed * 1000:.0f} ms"
