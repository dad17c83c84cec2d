"""Archiving a course while students sit one of its exams asks first, with how many and on
which exam; nothing changes until confirmed, and a confirmation of other numbers asks
again. With nobody sitting an exam it archives at once."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core import signing
from django.urls import reverse

from attnquiz.confirmations import ConfirmationNeeded, confirmation_token, scope_of
from attnquiz.testing import CLOCK_START
from authoring.tests.factories import assignment_create, product_yaml, published_version, user_create
from courses import services
from courses.models import AssignmentKind, Course, Enrolment, Role
from exams.models import AssignmentAttempt, AttemptCloseReason

START = CLOCK_START
ASKED = (
    "2 students are sitting an exam of this course now (Midterm: 2). Archiving makes the course read-only at "
    "once: their exam pages stop taking answers, and the answers they saved count."
)


@pytest.fixture
def midterm(people, clock):
    exam = assignment_create(
        people.course, [published_version(source=product_yaml())], slug="midterm", kind=AssignmentKind.EXAM,
        time_limit_minutes=30,
    )
    for student in (people.student, people.student2):
        AssignmentAttempt.objects.create(assignment=exam, student=student, started_at=START)
    clock.advance(minutes=10)
    return exam


def archived_at(people):
    return Course.objects.get(pk=people.course.pk).archived_at


def test_archiving_during_an_exam_asks_and_changes_nothing(people, midterm):
    with pytest.raises(ConfirmationNeeded) as asked:
        services.course_archive(course=people.course)
    assert (asked.value.message, asked.value.stale) == (ASKED, False)
    assert archived_at(people) is None


def test_a_confirmed_archiving_archives(people, midterm, clock):
    with pytest.raises(ConfirmationNeeded) as asked:
        services.course_archive(course=people.course)
    services.course_archive(course=people.course, confirmed=asked.value.token)
    assert archived_at(people) == clock.now


def test_a_confirmation_of_other_numbers_asks_again(people, midterm):
    with pytest.raises(ConfirmationNeeded) as asked:
        services.course_archive(course=people.course)
    third = user_create("sid")
    Enrolment.objects.create(course=people.course, user=third, role=Role.STUDENT)
    AssignmentAttempt.objects.create(assignment=midterm, student=third, started_at=START + timedelta(minutes=9))
    with pytest.raises(ConfirmationNeeded) as again:
        services.course_archive(course=people.course, confirmed=asked.value.token)
    assert again.value.stale is True
    assert again.value.message.startswith("3 students are sitting an exam of this course now (Midterm: 3).")
    assert archived_at(people) is None


def test_ended_attempts_and_attempts_out_of_time_are_not_counted(people, midterm, clock):
    AssignmentAttempt.objects.filter(student=people.student).update(
        finished_at=START + timedelta(minutes=5), close_reason=AttemptCloseReason.FINISHED
    )
    with pytest.raises(ConfirmationNeeded) as asked:
        services.course_archive(course=people.course)
    assert asked.value.message.startswith("1 student is sitting an exam of this course now (Midterm: 1).")
    clock.advance(minutes=25)  # 09:35: sue's 30 minutes are over, not recorded yet
    services.course_archive(course=people.course)
    assert archived_at(people) == clock.now


def test_the_settings_page_asks_then_archives_on_confirm(client, people, midterm):
    client.force_login(people.instructor)
    url = reverse("courses:archive", args=["attn"])
    response = client.post(url, {"archived": "1"})
    page = response.content.decode()
    assert response.status_code == 200
    assert f"<strong>Nothing is changed yet.</strong> {ASKED}</p>" in page
    assert '<button type="submit" name="confirm" value="yes" class="danger">Archive anyway</button>' in page
    assert archived_at(people) is None
    token = page.split('name="impact" value="')[1].split('"')[0]
    response = client.post(url, {"archived": "1", "confirm": "yes", "impact": token})
    assert response.status_code == 302
    assert archived_at(people) is not None
    # Bringing it back never asks.
    client.post(url, {"archived": "0"})
    assert archived_at(people) is None


def test_a_token_of_an_assignment_edit_is_asked_again_plainly(people, midterm):
    """A token we made for another change (an edit of the midterm), even for the very same
    sentence, confirms nothing here, and the page does not say "the numbers changed"."""
    edit = scope_of("instructor.edit", midterm.pk, change={"edit": "item_remove", "item": 1})
    with pytest.raises(ConfirmationNeeded) as again:
        services.course_archive(course=people.course, confirmed=confirmation_token(scope=edit, message=ASKED))
    assert (again.value.message, again.value.stale, again.value.expired) == (ASKED, False, False)
    assert archived_at(people) is None


def test_an_expired_confirmation_says_so_and_archives_nothing(people, midterm, settings, monkeypatch):
    settings.CONFIRMATION_MAX_AGE_SECONDS = 60
    with pytest.raises(ConfirmationNeeded) as asked:
        services.course_archive(course=people.course)
    later = time.time() + 61
    monkeypatch.setattr(signing.time, "time", lambda: later)
    with pytest.raises(ConfirmationNeeded) as again:
        services.course_archive(course=people.course, confirmed=asked.value.token)
    assert again.value.message == f"This confirmation expired; check the numbers again. {ASKED}"
    assert (again.value.stale, again.value.expired) == (False, True)
    assert archived_at(people) is None
    services.course_archive(course=people.course, confirmed=again.value.token)
    assert archived_at(people) is not None
