"""The sandbox stops runaway checks and stays usable afterwards."""

import time

import pytest

from grading.core.sandbox import SandboxError, SandboxLimitExceeded, check_isolated, run_limited


def _spin_forever():
    while True:
        pass


def _sleep_forever():
    time.sleep(60)


def _allocate_gigabytes():
    return len(bytearray(4 * 1024**3))


def _fail():
    raise KeyError("boom")


def test_result_comes_back():
    assert run_limited(sum, [1, 2, 3]) == 6


def test_cpu_limit_stops_a_busy_loop_and_the_next_call_works():
    started = time.monotonic()
    with pytest.raises(SandboxLimitExceeded, match="CPU time|longer than"):
        run_limited(_spin_forever, cpu_seconds=1, wall_seconds=5)
    assert time.monotonic() - started < 4
    assert run_limited(max, 3, 7) == 7


def test_wall_clock_limit_stops_a_sleeper():
    started = time.monotonic()
    with pytest.raises(SandboxLimitExceeded, match="longer than 0.5 s"):
        run_limited(_sleep_forever, wall_seconds=0.5)
    assert time.monotonic() - started < 2


def test_memory_limit():
    with pytest.raises(SandboxLimitExceeded, match="memory"):
        run_limited(_allocate_gigabytes, memory_mb=200)


def test_exception_is_reported():
    with pytest.raises(SandboxError, match="KeyError"):
        run_limited(_fail)


def test_pathological_symbolic_answer_is_stopped_and_next_check_works():
    options = {"symbols": {"x": "real"}}
    stopped = check_isolated("symbolic", "(x+1)**999*(x-1)**999", "(x**2-1)**999", options, cpu_seconds=1, wall_seconds=2)
    assert (stopped.correct, stopped.error, stopped.details["could_not_grade"]) == (False, None, True)
    assert "passed on for review" in stopped.feedback
    fine = check_isolated("symbolic", "x^2", "x*x", options)
    assert (fine.correct, fine.error) == (True, None)


def test_bad_request_is_still_a_value_error():
    with pytest.raises(ValueError, match="unknown assumption"):
        check_isolated("symbolic", "x", "x", {"symbols": {"x": "purple"}})
