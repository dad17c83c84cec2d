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
    # A generous wall clock: on a loaded machine one CPU second can take many seconds,
    # and it is the CPU limit (not the wall clock) that must stop the loop.
    with pytest.raises(SandboxLimitExceeded, match="more than 1 s of CPU time"):
        run_limited(_spin_forever, cpu_seconds=1, wall_seconds=30)
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


def _decide_forever(left, right, seconds=None):
    while True:
        pass


def test_a_symbolic_check_past_its_cpu_allowance_is_stopped_and_the_next_check_works(monkeypatch):
    # No answer known today keeps the decision busy (towers are bounded, see below), so the
    # decision is replaced by a busy loop; a fresh pool forks its checker with the stand-in.
    from grading.core import sandbox, symbolic

    options = {"symbols": {"x": "real"}}
    monkeypatch.setattr(symbolic, "decide_equivalent", _decide_forever)
    busy_pool = sandbox.CheckerPool(size=1)
    monkeypatch.setattr(sandbox, "_pool", busy_pool)
    try:
        stopped = check_isolated("symbolic", "cos(2*x)", "1 - 2*sin(x)^2", options, cpu_seconds=1, wall_seconds=30)
    finally:
        busy_pool.close()
        monkeypatch.undo()
    assert (stopped.correct, stopped.error, stopped.details) == (
        False, None, {"could_not_grade": True, "reason": "the check used more than 1 s of CPU time and was stopped"})
    assert stopped.feedback == ("Your answer could not be checked automatically (the check used more than 1 s of CPU "
                                "time and was stopped); it has been passed on for review.")
    fine = check_isolated("symbolic", "x^2", "x*x", options)
    assert (fine.correct, fine.error) == (True, None)


def test_two_towers_too_large_to_compare_are_answered_at_once_as_too_complex():
    # Before: a CAS ran until the sandbox's CPU limit stopped it.
    options = {"symbols": {"d_k": "positive, integer", "sigma_q": "positive", "sigma_k": "positive"}}
    check_isolated("symbolic", "sigma_k", "sigma_k", options)  # a warm checker: time the check, not the fork
    started = time.monotonic()
    grade = check_isolated("symbolic", "exp(" * 39 + "sigma_k" + ")" * 39, "exp(" * 39 + "sigma_q" + ")" * 39, options,
                           cpu_seconds=1, wall_seconds=30)
    assert (grade.correct, grade.error, grade.details) == (
        False, None, {"could_not_grade": True, "reason": "too_complex"})
    assert grade.feedback.startswith("Your answer is too complex to check automatically")
    assert time.monotonic() - started < 1


def test_an_exponential_tower_against_an_ordinary_expression_is_graded_not_equivalent_at_once():
    options = {"symbols": {"d_k": "positive, integer", "sigma_q": "positive", "sigma_k": "positive"}}
    started = time.monotonic()
    grade = check_isolated("symbolic", "sqrt(d_k)*sigma_q*sigma_k", "exp(" * 39 + "sigma_q" + ")" * 39, options,
                           cpu_seconds=1, wall_seconds=30)
    assert (grade.correct, grade.error, grade.feedback, grade.details) == (
        False, None, "Not equivalent to the correct expression.", {})
    assert time.monotonic() - started < 1


def test_bad_request_is_still_a_value_error():
    with pytest.raises(ValueError, match="unknown assumption"):
        check_isolated("symbolic", "x", "x", {"symbols": {"x": "purple"}})


# --- the pool of pre-forked checkers ------------------------------------------------------

import os  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402

from grading.core.sandbox import CheckerPool  # noqa: E402

LIMITS = {"cpu_seconds": 1, "memory_mb": 200, "wall_seconds": 3}


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def pool():
    checkers = CheckerPool(size=1, checks_per_process=3)
    yield checkers
    checkers.close()


def test_checks_reuse_one_warm_process_until_its_quota(pool):
    pids = [pool.call(os.getpid, **LIMITS) for _ in range(4)]
    assert pids[0] == pids[1] == pids[2] != os.getpid()
    assert pids[3] != pids[0]
    assert _gone(pids[0])


def test_an_ordinary_exception_keeps_the_checker(pool):
    first = pool.call(os.getpid, **LIMITS)
    with pytest.raises(SandboxError, match="KeyError: 'boom'"):
        pool.call(_fail, **LIMITS)
    assert pool.call(os.getpid, **LIMITS) == first


@pytest.mark.parametrize(
    "runaway, limits, message",
    [
        (_spin_forever, {"cpu_seconds": 0.3, "wall_seconds": 5}, "more than 0.3 s of CPU time"),
        (_sleep_forever, {"wall_seconds": 0.3}, "longer than 0.3 s"),
        (_allocate_gigabytes, {"memory_mb": 100}, "memory limit"),
    ],
)
def test_any_limit_retires_the_checker_and_the_next_check_gets_a_fresh_one(pool, runaway, limits, message):
    first = pool.call(os.getpid, **LIMITS)
    with pytest.raises(SandboxLimitExceeded, match=message):
        pool.call(runaway, **{**LIMITS, **limits})
    assert _gone(first)
    second = pool.call(os.getpid, **LIMITS)
    assert second not in (first, os.getpid())
    assert pool.call(sum, [2, 3], **LIMITS) == 5


class _Interrupted(Exception):
    pass


def _interrupt(signum, frame):
    raise _Interrupted


def test_an_interrupted_wait_kills_the_busy_checker(pool):
    """A task time limit fires while the caller waits: the half-done check must not be reused."""
    first = pool.call(os.getpid, **LIMITS)
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(_Interrupted):
            pool.call(_sleep_forever, **LIMITS)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert _gone(first)
    assert pool.call(max, 4, 9, **LIMITS) == 9


def test_a_function_that_cannot_be_pickled_runs_in_a_one_off_child(pool):
    offset = 10
    assert pool.call(lambda value: value + offset, 5, **LIMITS) == 15


def test_a_forked_process_gets_its_own_checkers():
    """A Celery pool child forked after the parent warmed its pool must not share checkers."""
    parent_checker = run_limited(os.getpid)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.write(write_end, str(run_limited(os.getpid)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child_checker = int(os.read(read_end, 64))
    os.close(read_end)
    os.waitpid(pid, 0)
    assert child_checker not in (parent_checker, pid, os.getpid())
    assert run_limited(os.getpid) == parent_checker


def test_a_checker_holds_none_of_its_owners_descriptors(pool):
    # A browser driver or a broker connection waits for end-of-file on a pipe the owner
    # closes; a warm checker that kept a copy of the write end would make it wait for ever.
    read_end, write_end = os.pipe()
    checker_pid = pool.call(os.getpid, **LIMITS)
    assert checker_pid != os.getpid()
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], 5)
    assert ready == [read_end]
    assert os.read(read_end, 1) == b""
    os.close(read_end)
