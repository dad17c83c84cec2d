"""A one-session exam is bound to the browser session that pressed Start from that moment:
another session signed in as the same student that asks before the first one's next page
(a friend's browser polling for the attempt) is refused, and the one that started keeps it."""

from __future__ import annotations

import pytest
from django.test import Client

from courses.models import SessionPolicy
from exams.models import AssignmentAttempt

ELSEWHERE = (
    "Your attempt is already open in another browser session; continue there. If that browser "
    "is gone, ask the invigilator."
)


@pytest.fixture(autouse=True)
def generous_rate_limits(settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}


@pytest.fixture
def one_session_exam(exam):
    exam.session_policy = SessionPolicy.REFUSE_SECOND
    exam.save()
    return exam


def browsers(student) -> tuple[Client, Client]:
    first, second = Client(), Client()
    first.force_login(student)
    second.force_login(student)
    return first, second


def test_the_start_page_binds_the_session_that_pressed_start(one_session_exam, item, student, clock):
    exam = one_session_exam
    first, second = browsers(student)
    assert first.post(f"/exam/{exam.course.slug}/a/{exam.slug}/start/").status_code == 302
    attempt = AssignmentAttempt.objects.get()
    assert attempt.session_key == first.session.session_key
    # The second browser asks before the first follows its redirect: it is refused.
    refused = second.get(f"/api/v1/exercises/{item.pk}/")
    assert (refused.status_code, refused.json()["detail"]) == (403, ELSEWHERE)
    assert first.get(f"/api/v1/exercises/{item.pk}/").status_code == 200
    assert AssignmentAttempt.objects.get().session_key == first.session.session_key


def test_the_api_start_in_a_browser_session_binds_it(one_session_exam, item, student, clock):
    exam = one_session_exam
    first, second = browsers(student)
    url = f"/api/v1/courses/{exam.course.slug}/assignments/{exam.slug}/attempt/"
    started = first.post(url, {"action": "start"}, content_type="application/json")
    assert (started.status_code, started.json()["state"]) == (200, "running")
    assert AssignmentAttempt.objects.get().session_key == first.session.session_key
    refused = second.post(f"/api/v1/exercises/{item.pk}/parts/weights/submissions/", {"answer": "[1, 2, 3, 4]"},
                          content_type="application/json")
    assert (refused.status_code, refused.json()["detail"]) == (403, ELSEWHERE)
    assert first.get(f"/api/v1/exercises/{item.pk}/").status_code == 200


def test_a_takeover_exam_started_here_tells_the_replaced_session_so(exam, item, student, clock):
    exam.session_policy = SessionPolicy.SECOND_TAKES_OVER
    exam.save()
    first, second = browsers(student)
    assert first.post(f"/exam/{exam.course.slug}/a/{exam.slug}/start/").status_code == 302
    assert second.get(f"/api/v1/exercises/{item.pk}/").status_code == 200
    replaced = first.get(f"/api/v1/exercises/{item.pk}/")
    assert (replaced.status_code, replaced.json()["detail"]) == (
        403, "Your attempt was opened in another browser session, which has taken it over; "
        "this one can no longer reach it.",
    )


def test_an_exam_open_to_any_session_binds_none(exam, item, student, clock):
    first, second = browsers(student)
    assert first.post(f"/exam/{exam.course.slug}/a/{exam.slug}/start/").status_code == 302
    assert AssignmentAttempt.objects.get().session_key == ""
    assert second.get(f"/api/v1/exercises/{item.pk}/").status_code == 200


def test_a_password_change_mid_exam_keeps_the_exam_bound_to_this_browser(one_session_exam, item, student, clock):
    """The change gives the session a new key; the attempt follows it, not the old key."""
    from django.urls import reverse

    student.set_password("old passphrase of the student 1")
    student.save()
    exam = one_session_exam
    first, second = browsers(student)
    assert first.post(f"/exam/{exam.course.slug}/a/{exam.slug}/start/").status_code == 302
    key_before = first.session.session_key
    changed = first.post(reverse("password_change"), {
        "old_password": "old passphrase of the student 1",
        "new_password1": "a new passphrase for the exam 2", "new_password2": "a new passphrase for the exam 2",
    })
    assert changed.status_code == 302
    assert first.session.session_key != key_before
    assert AssignmentAttempt.objects.get().session_key == first.session.session_key
    assert first.get(f"/api/v1/exercises/{item.pk}/").status_code == 200
    assert second.get(f"/api/v1/exercises/{item.pk}/").status_code == 401  # the other session is signed out
