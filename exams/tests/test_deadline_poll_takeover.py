"""The live-deadline poll of a one-session exam tells a page whose attempt another browser
session took over (a 403 with {"taken_over": true, "message": ...}), so the page can say so
and disable its forms instead of reloading into the gate's error page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from courses.models import SessionPolicy
from exams import access, selectors
from exams.models import AssignmentAttempt


@pytest.fixture
def one_session_exam(exam):
    exam.time_limit_minutes = 10
    exam.session_policy = SessionPolicy.SECOND_TAKES_OVER
    exam.save()
    return exam


def browser(user) -> Client:
    client = Client()
    client.force_login(user)  # a session of its own, as another browser has
    return client


def poll(client, exam):
    return client.get(reverse("exams:deadline", args=[exam.course.slug, exam.slug]))


def test_the_poll_of_a_page_taken_over_says_so_and_the_new_page_keeps_its_clock(one_session_exam, student, item, clock):
    first, second = browser(student), browser(student)
    assert first.post(reverse("exams:start", args=[one_session_exam.course.slug, one_session_exam.slug])).status_code == 302
    assert first.get(reverse("exercise", args=[item.pk])).status_code == 200  # the page is bound to it
    assert poll(first, one_session_exam).json()["seconds_left"] == 600
    assert second.get(reverse("exercise", args=[item.pk])).status_code == 200  # takes the attempt over
    assert AssignmentAttempt.objects.get().session_key == second.session.session_key

    refused = poll(first, one_session_exam)
    assert (refused.status_code, refused["Cache-Control"]) == (403, "no-store")
    assert refused.json() == {"taken_over": True, "message": selectors.SESSION_TAKEN_OVER}
    assert poll(second, one_session_exam).json()["seconds_left"] == 600


def test_a_session_freed_by_the_invigilator_is_not_taken_over(one_session_exam, student, item, clock):
    first = browser(student)
    first.post(reverse("exams:start", args=[one_session_exam.course.slug, one_session_exam.slug]))
    first.get(reverse("exercise", args=[item.pk]))
    assert AssignmentAttempt.objects.get().session_key == first.session.session_key
    access.attempt_sessions_release(session_key=first.session.session_key)
    assert poll(first, one_session_exam).status_code == 200


def test_a_page_under_any_session_policy_is_never_taken_over(exam, student, item, clock):
    exam.time_limit_minutes = 10
    exam.save()
    first, second = browser(student), browser(student)
    first.post(reverse("exams:start", args=[exam.course.slug, exam.slug]))
    first.get(reverse("exercise", args=[item.pk]))
    second.get(reverse("exercise", args=[item.pk]))
    assert (poll(first, exam).status_code, poll(second, exam).status_code) == (200, 200)
