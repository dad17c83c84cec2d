"""What the student's window costs: one query to load it, none when the caller carries
its inputs; the live-deadline poll a fixed handful, plus one write only when the deadline
its page learns has changed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from exams import services
from exams.models import Accommodation, AssignmentAttempt
from exams.selectors import student_window
from exams.services_accommodations import accommodation_extend
from grading.tests.test_query_counts import queries

from .conftest import START


@pytest.fixture
def timed_exam(exam):
    exam.time_limit_minutes = 10
    exam.save()
    return exam


def test_the_window_is_one_query_and_none_with_its_inputs(timed_exam, student, clock):
    Accommodation.objects.create(assignment=timed_exam, student=student, time_factor=1.5)
    services.attempt_start(assignment=timed_exam, student=student)
    with queries(1):
        window = student_window(assignment=timed_exam, student=student)
    assert (window.state, window.limits.time_limit_seconds, window.seconds_left) == ("running", 900, 900)
    with queries(0):
        again = student_window(
            assignment=timed_exam, student=student, accommodation=window.limits.accommodation,
            attempt=window.attempt,
        )
    assert again == window


def test_the_deadline_poll_learns_an_extension(timed_exam, student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = Client()
    client.force_login(student)
    url = reverse("exams:deadline", args=[timed_exam.course.slug, timed_exam.slug])
    client.get(url)  # the page's first poll records the deadline it learned
    clock.advance(minutes=2)
    # the user, the course's time zone (middleware), the window (the session is cached)
    with queries(3):
        same = client.get(url).json()
    assert same == {
        "ended": False, "seconds_left": 480, "deadline": (START + timedelta(minutes=10)).isoformat(),
        "deadline_text": "09:10 UTC", "limit_text": "10 minutes",
    }
    accommodation_extend(assignment=timed_exam, student=student, minutes=5, actor=None)
    with queries(4):  # ... and the one write: the page has the new deadline
        moved = client.get(url).json()
    assert (moved["seconds_left"], moved["deadline_text"], moved["limit_text"]) == (780, "09:15 UTC", "15 minutes")
    attempt = AssignmentAttempt.objects.get()
    assert (attempt.deadline_seen, attempt.deadline_seen_at) == (START + timedelta(minutes=15), clock.now)


def test_the_deadline_poll_says_an_ended_attempt_has_no_clock(timed_exam, student, other_student, clock):
    services.attempt_start(assignment=timed_exam, student=student)
    client = Client()
    client.force_login(student)
    url = reverse("exams:deadline", args=[timed_exam.course.slug, timed_exam.slug])
    services.attempt_finish(assignment=timed_exam, student=student)
    assert client.get(url).json() == {
        "ended": True, "seconds_left": None, "deadline": None, "deadline_text": "", "limit_text": "",
    }
    stranger = Client()
    stranger.force_login(other_student)  # no attempt of their own
    assert stranger.get(url).status_code == 404


@pytest.mark.parametrize("poll_seconds", [30, 7])
def test_an_open_exam_page_asks_for_its_deadline_as_often_as_configured(timed_exam, student, item, clock, settings, poll_seconds):
    """Each open page polls at this interval (1,000 pages at 5 s were 200 requests a second)."""
    settings.EXAM_DEADLINE_POLL_SECONDS = poll_seconds
    services.attempt_start(assignment=timed_exam, student=student)
    client = Client()
    client.force_login(student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    url = reverse("exams:deadline", args=[timed_exam.course.slug, timed_exam.slug])
    assert f'data-deadline-url="{url}" data-deadline-poll-seconds="{poll_seconds}"' in page


def test_the_deadline_poll_defaults_to_thirty_seconds_outside_tests():
    from attnquiz import settings as production

    assert production.EXAM_DEADLINE_POLL_SECONDS == 30
