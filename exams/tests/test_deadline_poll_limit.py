"""The live-deadline poll's rate limit: per student and exam, and per student over all exams,
a burst and then a steady rate; over it a 429 with Retry-After and a JSON body the page
reads, before any read of the window. With Redis unreachable the poll is answered."""

from __future__ import annotations

import time

import pytest
import redis
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from exams import services
from exams.models import AssignmentAttempt
from grading import throttle
from grading.tests.test_query_counts import queries


@pytest.fixture
def timed_exam(exam):
    exam.time_limit_minutes = 10
    exam.save()
    return exam


@pytest.fixture
def limited(settings, timed_exam, student, other_student):
    """The limit on (the suite switches it off), and no bucket left from an earlier run
    whose users had the same ids."""
    settings.EXAM_DEADLINE_POLL_BURST = 3
    settings.EXAM_DEADLINE_POLL_PER_SECOND = 0.05  # one every 20 s: none comes back during a test
    settings.EXAM_DEADLINE_POLL_USER_BURST = 100
    settings.EXAM_DEADLINE_POLL_USER_PER_SECOND = 0.05
    course = timed_exam.course.slug
    keys = [
        f"token-bucket:exam-deadline:{user.pk}{suffix}"
        for user in (student, other_student)
        for suffix in ("", f":{course}:{timed_exam.slug}", f":{course}:another-exam")
    ]
    cache = caches["default"]
    cache.delete_many(keys)
    yield settings
    cache.delete_many(keys)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def deadline_url(exam, slug: str | None = None) -> str:
    return reverse("exams:deadline", args=[exam.course.slug, slug or exam.slug])


def test_the_poll_past_the_burst_is_refused_with_retry_after_and_reads_nothing(limited, timed_exam, student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    url = deadline_url(timed_exam)
    assert [client.get(url).status_code for _ in range(3)] == [200, 200, 200]
    AssignmentAttempt.objects.update(deadline_seen=None, deadline_seen_at=None)

    with queries(2):  # the session's user and the course's time zone (middleware); no window
        refused = client.get(url)
    assert refused.status_code == 429
    retry_after = int(refused["Retry-After"])
    assert 19 <= retry_after <= 20  # the next token, one every 20 s, counted from the first poll
    assert refused["Cache-Control"] == "no-store"
    assert refused.json() == {
        "rate_limited": True, "retry_after": retry_after,
        "message": f"Asked too often. Ask again in {retry_after} seconds.",
    }
    # Nothing was read or recorded for the refused poll.
    assert AssignmentAttempt.objects.values_list("deadline_seen_at", flat=True).get() is None


def test_after_the_wait_the_poll_is_answered_again(limited, timed_exam, student, clock):
    limited.EXAM_DEADLINE_POLL_BURST = 2
    limited.EXAM_DEADLINE_POLL_PER_SECOND = 2.0  # a token every 0.5 s: a busy machine's requests come faster
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    url = deadline_url(timed_exam)
    statuses = [client.get(url).status_code for _ in range(2)]
    refused = client.get(url)
    assert statuses + [refused.status_code] == [200, 200, 429]
    assert refused["Retry-After"] == "1"  # less than a second, said in whole seconds
    time.sleep(0.55)
    assert client.get(url).json()["seconds_left"] == 600
    assert client.get(url).status_code == 429  # one token came back, and was used


def test_each_student_and_exam_has_its_own_bucket(limited, timed_exam, student, other_student, clock):
    for person in (student, other_student):
        services.attempt_start(assignment=timed_exam, student=person)
    first, second = signed_in(student), signed_in(other_student)
    url = deadline_url(timed_exam)
    assert [first.get(url).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert second.get(url).status_code == 200  # another student's own buckets
    assert first.get(deadline_url(timed_exam, "another-exam")).status_code == 404  # another exam's


def test_polls_of_all_exams_count_against_the_student_too(limited, timed_exam, student, clock):
    limited.EXAM_DEADLINE_POLL_USER_BURST = 2
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    assert client.get(deadline_url(timed_exam, "another-exam")).status_code == 404  # counted, then looked up
    assert client.get(deadline_url(timed_exam)).status_code == 200
    refused = client.get(deadline_url(timed_exam))  # this exam's own bucket still has a token
    assert (refused.status_code, refused.json()["rate_limited"]) == (429, True)


class UnreachableRedis:
    def eval(self, *args, **kwargs):
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def test_with_redis_unreachable_the_poll_is_answered(limited, timed_exam, student, clock, monkeypatch):
    limited.EXAM_DEADLINE_POLL_BURST = 1
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    url = deadline_url(timed_exam)
    assert [client.get(url).status_code for _ in range(2)] == [200, 429]

    # The bucket's store goes away: the poll is let through (each process counts on its own).
    monkeypatch.setattr(throttle, "_fallback_buckets", {})
    found = throttle._redis_client
    monkeypatch.setattr(throttle, "_redis_client", lambda cache, name: (UnreachableRedis(), found(cache, name)[1]))
    assert client.get(url).json()["seconds_left"] == 600

    # An error out of the take itself (the client could not even be made) lets it through too.
    def broken(**kwargs):
        raise redis.exceptions.ConnectionError("no connection")

    monkeypatch.setattr(throttle, "token_take", broken)
    assert [client.get(url).status_code for _ in range(3)] == [200, 200, 200]


def test_the_limit_is_on_outside_tests():
    from attnquiz import settings as production

    assert (production.EXAM_DEADLINE_POLL_BURST, production.EXAM_DEADLINE_POLL_PER_SECOND) == (10, 0.5)
    assert (production.EXAM_DEADLINE_POLL_USER_BURST, production.EXAM_DEADLINE_POLL_USER_PER_SECOND) == (20, 1.0)
