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
    # The first decision, reading and derivation load SymPy's and mpmath's lazy parts.
    check("symbolic", "x", "x + 0*y", {"allow_any_symbols": True})
    check("symbolic", "sqrt(x)", "x^(1/2)", {"symbols": {"x": "positive"}})
    check("symbolic", "1/x", "(x-x)^-1", {"symbols": {"x": "positive"}})
    check("derivation", "1", ["Var(q)", "1"], {"random_variables": {"q": {"mean": 0, "variance": 1}}})
    check("matrix_expression", "Q", "Q^T^T", {"matrices": {"Q": [2, 3]}})
    check("symbolic", "x^17", "x" + " x" * 16, {"symbols": {"x": "real"}})  # SymPy imports more for big powers


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(row) for row in ROWS])
def test_answer_row(row):
    # CPU time of this process: the budget is the checker's own work, not the time the other
    # test worker or a grading worker on the same two cores held the CPU (526 ms of wall time once).
    started = time.process_time()
    grade = check(row["type"], row["expected"], row["answer"], row["options"])
    elapsed = time.process_time() - started
    if row["outcome"] == "right":
        assert (grade.correct, grade.score, grade.error) == (True, 1.0, None), grade
    elif row["outcome"] == "wrong":
        assert grade.correct is False and grade.error is None and grade.score < 1.0, grade
        assert not grade.details.get("could_not_grade"), grade
    else:
        assert grade.error, grade
        assert (grade.correct, grade.score) == (False, 0.0)
        assert grade.feedback == grade.error
    checks = row.get("checks") or {}
    if "misconception" in checks:
        assert grade.misconception == checks["misconception"], grade
    if "score" in checks:
        assert grade.score == checks["score"], grade
    if "feedback" in checks:
        assert checks["feedback"] in grade.feedback, grade
    if row["hostile"]:
        assert elapsed < 0.1, f"hostile input took {elapsed * 1000:.0f} ms"


def test_every_row_has_a_note_from_the_integrity_rows_on():
    start = next(index for index, row in enumerate(ROWS) if row["type"] == "matrix_expression" and row["options"].get("scalars", {}).get("d_k") == 32)
    assert all(row["note"] for row in ROWS[start:])
    assert len(ROWS) - start >= 150
