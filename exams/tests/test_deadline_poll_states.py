"""The live-deadline poll's two replies besides a deadline: a course archived while the
page was open ({"archived": true}, no clock, nothing recorded) and no attempt of the
student's at these slugs (a JSON 404 {"not_started": true}, not Django's HTML page), and
what a 404 takes from the student's rate-limit buckets: a token of the slugs it asked for
and of the student, never of the exam they are running."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from courses.models import AssignmentKind
from courses.services import course_archive
from exams import services
from exams.models import AssignmentAttempt
from exams.window import ARCHIVED_MESSAGE
from grading.tests.test_query_counts import queries

from .conftest import START

NOT_STARTED = {"not_started": True, "message": "No attempt of yours on this exam."}


@pytest.fixture
def timed_exam(exam):
    exam.time_limit_minutes = 10
    exam.save()
    return exam


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def deadline_url(exam, slug: str | None = None) -> str:
    return reverse("exams:deadline", args=[exam.course.slug, slug or exam.slug])


# --- A course archived while the page is open ------------------------------------------------


def test_a_page_of_an_archived_course_is_told_so_with_no_clock_and_nothing_is_recorded(timed_exam, student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    url = deadline_url(timed_exam)
    assert client.get(url).json()["seconds_left"] == 600  # the page's poll before the archiving
    clock.advance(minutes=3)
    course_archive(course=timed_exam.course, confirmed=True)

    with queries(3):  # the user, the course's time zone (middleware), the window; no write
        reply = client.get(url)
    assert (reply.status_code, reply["Cache-Control"]) == (200, "no-store")
    assert reply.json() == {
        "archived": True, "message": ARCHIVED_MESSAGE, "ended": False,
        "seconds_left": None, "deadline": None, "deadline_text": "", "limit_text": "",
    }
    attempt = AssignmentAttempt.objects.get()
    # What the page learned before the archiving stays recorded: the course takes no writes.
    assert (attempt.deadline_seen, attempt.deadline_seen_at) == (START + timedelta(minutes=10), START)
    assert attempt.finished_at is None  # archiving ends no attempt; it stops answers


def test_an_ended_attempt_in_an_archived_course_is_told_both(timed_exam, student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    services.attempt_finish(assignment=timed_exam, student=student)
    course_archive(course=timed_exam.course, confirmed=True)
    reply = signed_in(student).get(deadline_url(timed_exam))
    assert reply.json() == {
        "archived": True, "message": ARCHIVED_MESSAGE, "ended": True,
        "seconds_left": None, "deadline": None, "deadline_text": "", "limit_text": "",
    }


def test_the_page_reloaded_after_the_archiving_has_no_clock_to_poll(timed_exam, student, item, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    before = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert f'data-deadline-url="{deadline_url(timed_exam)}"' in before
    course_archive(course=timed_exam.course, confirmed=True)
    after = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'id="archived-notice"' in after
    assert "data-deadline-url" not in after and "data-countdown" not in after
    assert 'class="answer-form"' not in after


# --- No attempt of the student's: a JSON 404 -------------------------------------------------


def test_an_attempt_removed_by_staff_is_a_json_404(timed_exam, student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    url = deadline_url(timed_exam)
    assert client.get(url).status_code == 200
    AssignmentAttempt.objects.filter(student=student).delete()
    reply = client.get(url)
    assert (reply.status_code, reply["Cache-Control"], reply["Content-Type"]) == (
        404, "no-store", "application/json",
    )
    assert reply.json() == NOT_STARTED


@pytest.mark.parametrize("case", ["never_started", "made_up_slug", "homework", "another_students_attempt"])
def test_every_poll_without_an_own_attempt_is_the_same_json_404(timed_exam, student, other_student, clock, case):
    url = deadline_url(timed_exam)
    if case == "made_up_slug":
        services.attempt_start(assignment=timed_exam, student=student)
        url = deadline_url(timed_exam, "no-such-exam")
    elif case == "homework":
        services.attempt_start(assignment=timed_exam, student=student)
        timed_exam.kind = AssignmentKind.HOMEWORK
        timed_exam.save()
    elif case == "another_students_attempt":
        services.attempt_start(assignment=timed_exam, student=other_student)
    reply = signed_in(student).get(url)
    assert (reply.status_code, reply["Cache-Control"], reply.json()) == (404, "no-store", NOT_STARTED)


def test_a_signed_out_poll_is_sent_to_sign_in(timed_exam):
    reply = Client().get(deadline_url(timed_exam))
    assert reply.status_code == 302 and reply["Location"].startswith(reverse("login"))


# --- What a 404 takes from the rate limit ---------------------------------------------------


@pytest.fixture
def limited(settings, timed_exam, student):
    settings.EXAM_DEADLINE_POLL_BURST = 3
    settings.EXAM_DEADLINE_POLL_PER_SECOND = 0.05  # one every 20 s: none comes back during a test
    settings.EXAM_DEADLINE_POLL_USER_BURST = 100
    settings.EXAM_DEADLINE_POLL_USER_PER_SECOND = 0.05
    course = timed_exam.course.slug
    keys = [
        f"token-bucket:exam-deadline:{student.pk}{suffix}"
        for suffix in ("", f":{course}:{timed_exam.slug}", f":{course}:no-such-exam",
                       *(f":{course}:made-up-{n}" for n in range(6)))
    ]
    cache = caches["default"]
    cache.delete_many(keys)
    yield settings
    cache.delete_many(keys)


def test_404s_leave_the_running_exams_own_bucket_whole(limited, timed_exam, student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    missing = deadline_url(timed_exam, "no-such-exam")
    # The made-up slugs' own bucket (burst 3) refuses the fourth: a loop on them is bounded.
    assert [client.get(missing).status_code for _ in range(4)] == [404, 404, 404, 429]
    # The running exam's bucket still has its whole burst of 3.
    url = deadline_url(timed_exam)
    assert [client.get(url).status_code for _ in range(4)] == [200, 200, 200, 429]


def test_a_flood_of_404s_over_made_up_slugs_is_bounded_by_the_students_bucket_before_any_read(
    limited, timed_exam, student, clock
):
    limited.EXAM_DEADLINE_POLL_USER_BURST = 5
    services.attempt_start(assignment=timed_exam, student=student)
    client = signed_in(student)
    # Each made-up slug has a fresh bucket of its own; the student's bucket counts them all.
    statuses = [client.get(deadline_url(timed_exam, f"made-up-{n}")).status_code for n in range(5)]
    assert statuses == [404] * 5
    with queries(2):  # the session's user and the course's time zone (middleware); no lookup
        refused = client.get(deadline_url(timed_exam, "made-up-5"))
    assert (refused.status_code, refused.json()["rate_limited"]) == (429, True)
    # Past the flood, the running exam's page is refused too until a token comes back: the
    # student's own session emptied the student's bucket (the page asks again after Retry-After).
    assert client.get(deadline_url(timed_exam)).status_code == 429

