"""A process reads one answer of each sandboxed type when it starts (``answers.warm_up``), so
a student's first symbolic or derivation answer in a new web process or grading checker is
not the one that waits for SymPy's first use (1.0–1.7 s cold, ~5 ms warm)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import weakref

from celery import signals

from grading import services
from grading.core import answers

DERIVATION = {
    "symbols": {"d_k": "positive, integer", "sigma_q": "positive", "sigma_k": "positive"},
    "random_variables": {"q": {"mean": 0, "variance": "sigma_q**2"}, "k": {"mean": 0, "variance": "sigma_k**2"}},
    "start": "Var(Sum(q_m*k_m, m, 1, d_k))",
}
# Not one of the warm-up's own answers: a student's, read after it.
STUDENTS = "Var(Sum(q_m*k_m, m, 1, d_k))\nd_k Var(q_m k_m)\nsigma_q^2 sigma_k^2 d_k"

FIRST_READING = """
import json, sys, time
from grading.core import answers
if sys.argv[1] == "warm":
    answers.warm_up()
started = time.perf_counter()
parsed = answers.parse("derivation", sys.argv[2], json.loads(sys.argv[3]))
print(json.dumps([time.perf_counter() - started, parsed.error]))
"""


def test_each_warm_up_answer_is_a_right_answer_of_a_sandboxed_type():
    assert sorted(case[0] for case in answers.WARM_UP_CASES) == sorted(answers.SANDBOXED_TYPES)
    assert [(grade.correct, grade.score, grade.error) for grade in answers.warm_up()] == [(True, 1.0, None)] * 3


def _first_reading_seconds(mode: str) -> float:
    result = subprocess.run(
        [sys.executable, "-c", FIRST_READING, mode, STUDENTS, json.dumps(DERIVATION)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    seconds, error = json.loads(result.stdout.strip().splitlines()[-1])
    assert error is None
    return seconds


def test_after_the_warm_up_a_new_process_reads_its_first_derivation_at_least_five_times_faster():
    cold, warm = _first_reading_seconds("cold"), _first_reading_seconds("warm")
    assert warm * 5 < cold, (cold, warm)


def test_a_failing_warm_up_is_logged_and_never_stops_the_process(monkeypatch, caplog):
    def broken():
        raise RuntimeError("no SymPy today")

    monkeypatch.setattr(answers, "warm_up", broken)
    with caplog.at_level(logging.ERROR, logger="grading.services"):
        assert services.checkers_warm_up() is False
    assert "warming the checkers failed" in caplog.text


def test_a_warm_up_answer_graded_wrong_is_reported(monkeypatch, caplog):
    monkeypatch.setattr(answers, "warm_up", lambda: [answers.invalid("cannot read it")])
    with caplog.at_level(logging.WARNING, logger="grading.services"):
        assert services.checkers_warm_up() is False
    assert "cannot read it" in caplog.text


def _receivers(signal) -> list:
    """The functions connected to a Celery signal (weak references dereferenced)."""
    found = []
    for _key, receiver in signal.receivers:
        found.append(receiver() if isinstance(receiver, weakref.ReferenceType) else receiver)
    return found


def test_a_worker_warms_its_checkers_before_its_pool_forks(monkeypatch):
    from grading import tasks

    assert tasks.warm_checkers_before_the_pool_forks in _receivers(signals.worker_init)
    calls = []
    monkeypatch.setattr(answers, "warm_up", lambda: calls.append("warm") or [])
    tasks.warm_checkers_before_the_pool_forks()
    assert calls == ["warm"]
