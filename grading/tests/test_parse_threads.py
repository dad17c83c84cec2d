"""Expressions parsed in many threads at once (gunicorn's threads, the grading pool).

CPython 3.11's ``ast.parse`` shares one recursion counter between threads: a garbage
collection that runs a finaliser mid-parse hands the GIL to another parsing thread, and
the first parse fails with ``SystemError: AST constructor recursion depth mismatch``. The
scene below makes that happen within a few hundred parses without the shared lock.
"""

from __future__ import annotations

import gc
import sys
import threading

import pytest

from exercises.engine.expressions import compile_expression
from grading.core.safe_expr import SCALAR_GRAMMAR, read_expression

THREADS = 8
PARSES_PER_THREAD = 400
NESTED = "(" * 30 + "sqrt(d_k) * sigma_q + 2" + ")" * 30


class _FinaliserThatRunsBytecode:
    def __del__(self) -> None:
        sum(range(50))


def _parse_in_threads(parse) -> list[BaseException]:
    errors: list[BaseException] = []

    def work() -> None:
        for _ in range(PARSES_PER_THREAD):
            garbage = [_FinaliserThatRunsBytecode() for _ in range(5)]
            garbage.append(garbage)  # a cycle: only the collector frees it, mid-parse
            del garbage
            try:
                parse()
            except BaseException as error:  # reported by the test, not lost in the thread
                errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


@pytest.fixture
def eager_collector_and_switches():
    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.set_threshold(50)
    sys.setswitchinterval(1e-6)
    yield
    gc.set_threshold(*threshold)
    sys.setswitchinterval(interval)


@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda: compile_expression(NESTED, known_names={"d_k", "sigma_q"}), id="author-expression"),
        pytest.param(lambda: read_expression(NESTED, SCALAR_GRAMMAR, frozenset({"d_k", "sigma_q"})), id="student-answer"),
    ],
)
def test_parses_in_eight_threads_at_once_all_succeed(eager_collector_and_switches, parse):
    assert _parse_in_threads(parse) == []


def test_author_and_student_parses_side_by_side_all_succeed(eager_collector_and_switches):
    """The two parsers share one lock: two locks would still race on the shared counter."""
    errors: list[BaseException] = []
    author = threading.Thread(target=lambda: errors.extend(_parse_in_threads(lambda: compile_expression(NESTED))))
    student = threading.Thread(
        target=lambda: errors.extend(_parse_in_threads(lambda: read_expression(NESTED, SCALAR_GRAMMAR, frozenset({"d_k", "sigma_q"}))))
    )
    author.start(), student.start()
    author.join(timeout=240), student.join(timeout=240)
    assert errors == []
