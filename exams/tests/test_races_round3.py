"""Racing requests through the API on PostgreSQL (threads, committed transactions): eight
Starts at once make one attempt, eight answers at once to a part with one attempt store
one, and two browser sessions pressing Start of a one-session exam at once leave the
attempt bound to exactly one of them."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client
from courses.models import AssignmentItem, SessionPolicy
from exams.models import AssignmentAttempt
from exams.tests.conftest import exam_policy
from grading.models import Submission

pytestmark = pytest.mark.django_db(transaction=True)
RACERS = 8


@pytest.fixture(autouse=True)
def setup(settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}
    settings.GRADING_MODE = "inline"


def race(call) -> list:
    """``call(i)`` for i in 0..RACERS-1, all released at once; their results in order."""
    barrier = threading.Barrier(RACERS)
    results = [None] * RACERS

    def run(i):
        try:
            barrier.wait()
            results[i] = call(i)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture
def racing_exam(demo, django_user_model):
    exam = exam_policy(demo.assignment)
    exam.attempts_per_part = 1
    exam.save()
    student = django_user_model.objects.get(username="student1")
    item = AssignmentItem.objects.filter(assignment=exam).order_by("pk").first()
    secret = api_token_create(user=student, name="t", scope=TokenScope.WRITE, lifetime_days=7)[1]
    return exam, student, item, secret


def attempt_url(exam) -> str:
    return f"/api/v1/courses/{exam.course.slug}/assignments/{exam.slug}/attempt/"


def test_eight_starts_and_eight_answers_at_once(racing_exam):
    exam, student, item, secret = racing_exam
    starts = race(lambda i: api_client(secret).post(attempt_url(exam), {"action": "start"}, content_type="application/json"))
    assert [r.status_code for r in starts] == [200] * RACERS
    attempt = AssignmentAttempt.objects.get()
    assert {r.json()["started_at"] for r in starts} == {attempt.started_at.isoformat().replace("+00:00", "Z")}

    url = f"/api/v1/exercises/{item.pk}/parts/weights/submissions/"
    answers = race(lambda i: api_client(secret).post(url, {"answer": f"[0.1, 0.2, 0.3, 0.{i}]"}, content_type="application/json"))
    assert sorted(r.status_code for r in answers) == [202] + [409] * (RACERS - 1)
    assert {r.json()["detail"] for r in answers if r.status_code == 409} == {"You have used all 1 attempts for this part."}
    assert Submission.objects.filter(student=student, part="weights").count() == 1


def test_two_sessions_pressing_start_at_once_bind_one(racing_exam):
    exam, student, item, _ = racing_exam
    exam.session_policy = SessionPolicy.REFUSE_SECOND
    exam.save()
    sessions = [Client() for _ in range(RACERS)]
    for session in sessions:
        session.force_login(student)
    race(lambda i: sessions[i].post(f"/exam/{exam.course.slug}/a/{exam.slug}/start/"))
    attempt = AssignmentAttempt.objects.get()
    holders = [s for s in sessions if s.session.session_key == attempt.session_key]
    assert len(holders) == 1
    reached = [s.get(f"/api/v1/exercises/{item.pk}/").status_code for s in sessions]
    assert sorted(reached) == [200] + [403] * (RACERS - 1)
    assert holders[0].get(f"/api/v1/exercises/{item.pk}/").status_code == 200
