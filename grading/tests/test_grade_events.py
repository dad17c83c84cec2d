"""A waiting result request wakes on Redis when the grade is stored, and copes without Redis."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from grading import grade_events, selectors
from grading.harness import free_port
from grading.models import Submission, SubmissionStatus


@pytest.fixture
def private_redis(redis_server, settings):
    settings.REDIS_URL = redis_server.url
    settings.GRADING_MODE = "celery"  # a worker grades elsewhere: the long poll waits for it
    return redis_server


def _later(seconds: float, action) -> threading.Thread:
    def run():
        time.sleep(seconds)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_an_announcement_wakes_the_waiter_at_once(private_redis):
    thread = _later(0.3, lambda: grade_events._push(41))
    started = time.monotonic()
    grade_events.grade_wait(submission_id=41, timeout=10, fallback_interval=0.02)
    waited = time.monotonic() - started
    thread.join()
    assert 0.25 < waited < 5


def test_an_announcement_before_the_wait_is_not_missed(private_redis):
    grade_events._push(42)
    started = time.monotonic()
    grade_events.grade_wait(submission_id=42, timeout=10, fallback_interval=0.02)
    assert time.monotonic() - started < 1
    assert redis.Redis.from_url(private_redis.url).ttl(grade_events.KEY.format(submission_id=42)) == -2  # taken


def test_announcements_expire(private_redis):
    grade_events._push(44)
    ttl = redis.Redis.from_url(private_redis.url).ttl(grade_events.KEY.format(submission_id=44))
    assert 0 < ttl <= grade_events.KEEP_SECONDS


@pytest.mark.parametrize("url", ["", "redis://127.0.0.1:{port}/0"])
def test_without_redis_waiting_falls_back_to_a_short_sleep(settings, url):
    settings.REDIS_URL = url.format(port=free_port())  # nothing listens on that port
    grade_events._push(45)  # must not raise
    started = time.monotonic()
    grade_events.grade_wait(submission_id=45, timeout=10, fallback_interval=0.05)
    assert 0.04 < time.monotonic() - started < 2


@pytest.mark.django_db(transaction=True)
def test_long_poll_reads_the_database_once_when_the_grade_is_announced(
    private_redis, variant, student, django_assert_num_queries
):
    submission = Submission.objects.create(variant=variant, student=student, part="weights", raw_answer="[1]")

    def grade_elsewhere():
        Submission.objects.filter(pk=submission.pk).update(status=SubmissionStatus.GRADED, score=1.0)
        grade_events._push(submission.pk)

    thread = _later(0.3, grade_elsewhere)
    with django_assert_num_queries(1):
        finished = selectors.submission_wait_finished(submission=submission, timeout=10)
    thread.join()
    assert (finished.status, finished.score) == (SubmissionStatus.GRADED, 1.0)


@pytest.mark.django_db(transaction=True)
def test_long_poll_still_ends_on_the_database_when_the_announcement_is_lost(
    private_redis, variant, student
):
    submission = Submission.objects.create(variant=variant, student=student, part="weights", raw_answer="[1]")
    thread = _later(
        0.1,
        lambda: Submission.objects.filter(pk=submission.pk).update(status=SubmissionStatus.GRADED),
    )
    started = time.monotonic()
    finished = selectors.submission_wait_finished(submission=submission, timeout=10, slice_seconds=0.4)
    thread.join()
    assert finished.status == SubmissionStatus.GRADED
    assert 0.35 < time.monotonic() - started < 3


@pytest.mark.django_db(transaction=True)
def test_in_inline_mode_the_wait_reads_the_grade_once_and_never_sleeps(
    settings, variant, student, django_assert_num_queries, monkeypatch
):
    """Inline mode (the embedded set-up) graded the answer as it committed: one read, no nap."""
    settings.GRADING_MODE = "inline"
    submission = Submission.objects.create(variant=variant, student=student, part="weights", raw_answer="[1]")
    Submission.objects.filter(pk=submission.pk).update(status=SubmissionStatus.GRADED, score=0.5)
    monkeypatch.setattr(time, "sleep", lambda seconds: pytest.fail(f"slept {seconds} s"))
    started = time.monotonic()
    with django_assert_num_queries(1):
        finished = selectors.submission_wait_finished(submission=submission, timeout=10)
    assert time.monotonic() - started < 0.2  # no blocking wait on Redis either
    assert (finished.status, finished.score) == (SubmissionStatus.GRADED, 0.5)
