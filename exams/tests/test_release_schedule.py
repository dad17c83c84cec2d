"""A release scheduled for a time: set on the release confirmation (or through the API),
done by the periodic task through the same release as the button, once, and cancellable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from courses.models import Course, Enrolment, Role
from exams import services, tasks
from exams.models import GradeRelease
from grading.events import grades_release_changed

from .conftest import START


@pytest.fixture
def instructor(exam):
    return exam.course.enrolments.get(user__username="instructor").user


@pytest.fixture
def berlin(exam):
    exam.course.time_zone = "Europe/Berlin"
    exam.course.save()
    return exam


@pytest.fixture
def announced():
    """The assignments the release event was sent for (what the LMS passback listens to)."""
    seen = []

    def receiver(sender, *, assignment, released, **kwargs):
        seen.append((assignment.pk, released))

    grades_release_changed.connect(receiver, weak=False)
    yield seen
    grades_release_changed.disconnect(receiver)


def log(exam):
    return list(GradeRelease.objects.filter(assignment=exam).values_list("action", "by__username", "via"))


# --- The service -----------------------------------------------------------------------------


def test_a_scheduled_release_waits_for_its_time_then_releases_once(exam, instructor, clock, announced):
    at = START + timedelta(hours=1)
    services.grades_release_schedule(assignment=exam, at=at, by=instructor)
    exam.refresh_from_db()
    assert (exam.grades_release_scheduled_at, exam.grades_release_scheduled_by) == (at, instructor)

    clock.advance(minutes=59, seconds=59)
    assert services.grades_release_scheduled_run() == 0  # before its time
    exam.refresh_from_db()
    assert exam.grades_released_at is None and announced == [] and log(exam) == []

    clock.advance(seconds=1)
    assert services.grades_release_scheduled_run() == 1  # at its time
    exam.refresh_from_db()
    assert exam.grades_released_at == at
    assert (exam.grades_release_scheduled_at, exam.grades_release_scheduled_by) == (None, None)
    assert announced == [(exam.pk, True)]
    assert log(exam) == [("release", "instructor", "schedule")]

    assert services.grades_release_scheduled_run() == 0  # run twice: nothing more
    clock.advance(hours=1)
    assert tasks.release_scheduled_grades.apply().get() == 0
    assert announced == [(exam.pk, True)] and len(log(exam)) == 1


def test_a_run_after_the_time_releases_with_the_time_it_ran(exam, instructor, clock):
    services.grades_release_schedule(assignment=exam, at=START + timedelta(minutes=10), by=instructor)
    clock.advance(hours=3)  # the beat was down for a while
    assert tasks.release_scheduled_grades.apply().get() == 1
    exam.refresh_from_db()
    assert exam.grades_released_at == START + timedelta(hours=3)


def test_a_cancelled_schedule_never_releases(exam, instructor, clock, announced):
    services.grades_release_schedule(assignment=exam, at=START + timedelta(minutes=10), by=instructor)
    services.grades_release_unschedule(assignment=exam)
    clock.advance(hours=1)
    assert services.grades_release_scheduled_run() == 0
    exam.refresh_from_db()
    assert (exam.grades_released_at, exam.grades_release_scheduled_at) == (None, None)
    assert announced == [] and log(exam) == []
    with pytest.raises(services.ExamRefused) as refused:
        services.grades_release_unschedule(assignment=exam)
    assert refused.value.code == "not_scheduled"


def test_a_release_by_the_button_takes_the_schedule_away(exam, instructor, clock):
    services.grades_release_schedule(assignment=exam, at=START + timedelta(minutes=10), by=instructor)
    services.grades_release(assignment=exam, by=instructor)
    services.grades_withdraw(assignment=exam, by=instructor)
    clock.advance(hours=1)
    assert services.grades_release_scheduled_run() == 0  # the withdrawal stands
    exam.refresh_from_db()
    assert exam.grades_released_at is None
    assert log(exam) == [("withdraw", "instructor", "page"), ("release", "instructor", "page")]


def test_a_moved_schedule_releases_at_the_new_time(exam, instructor, clock):
    services.grades_release_schedule(assignment=exam, at=START + timedelta(minutes=10), by=instructor)
    services.grades_release_schedule(assignment=exam, at=START + timedelta(minutes=30), by=instructor)
    clock.advance(minutes=20)
    assert services.grades_release_scheduled_run() == 0
    clock.advance(minutes=10)
    assert services.grades_release_scheduled_run() == 1


@pytest.mark.parametrize(
    "at, code",
    [
        (START, "past_time"),
        (START - timedelta(days=1), "past_time"),
        (START.replace(tzinfo=None) + timedelta(hours=1), "naive_time"),
    ],
    ids=["now", "yesterday", "no zone"],
)
def test_a_schedule_needs_a_future_time_with_its_zone(exam, instructor, clock, at, code):
    with pytest.raises(services.ExamRefused) as refused:
        services.grades_release_schedule(assignment=exam, at=at, by=instructor)
    assert refused.value.code == code
    exam.refresh_from_db()
    assert exam.grades_release_scheduled_at is None


def test_released_grades_cannot_be_scheduled(exam, instructor, clock):
    services.grades_release(assignment=exam, by=instructor)
    with pytest.raises(services.ExamRefused) as refused:
        services.grades_release_schedule(assignment=exam, at=START + timedelta(hours=1), by=instructor)
    assert refused.value.code == "released"


def test_one_failing_release_never_stops_the_others(exam, instructor, clock, monkeypatch):
    from courses.models import Assignment

    other = Assignment.objects.create(course=exam.course, slug="second", title="Second", kind="exam")
    for assignment in (exam, other):
        services.grades_release_schedule(assignment=assignment, at=START + timedelta(minutes=1), by=instructor)
    real = services._release_set

    def failing_for_the_first(*, assignment, **kwargs):
        if assignment.pk == exam.pk:
            raise RuntimeError("LMS outbox unavailable")
        return real(assignment=assignment, **kwargs)

    monkeypatch.setattr(services, "_release_set", failing_for_the_first)
    clock.advance(minutes=1)
    assert services.grades_release_scheduled_run() == 1
    exam.refresh_from_db()
    other.refresh_from_db()
    assert exam.grades_released_at is None and exam.grades_release_scheduled_at is not None  # retried next run
    assert other.grades_released_at is not None


def test_the_beat_runs_the_task():
    from django.conf import settings

    assert settings.CELERY_BEAT_SCHEDULE["release-scheduled-grades"]["task"] == "exams.tasks.release_scheduled_grades"


# --- The page --------------------------------------------------------------------------------


def release_url(exam):
    return reverse("exams:release", args=[exam.course.slug, exam.slug])


def test_the_page_schedules_in_the_course_zone_shows_it_labelled_and_cancels(client, berlin, instructor, clock):
    client.force_login(instructor)
    response = client.post(release_url(berlin), {"action": "schedule", "at": "2026-03-02T18:25"})
    assert response.status_code == 302
    berlin.refresh_from_db()
    assert berlin.grades_release_scheduled_at == START.replace(hour=17, minute=25)  # 18:25 CET is 17:25 UTC
    page = client.get(release_url(berlin)).content.decode()
    assert "Release scheduled for Mon 2 Mar 2026, 18:25 CET</strong>, set by instructor" in page
    assert "Cancel the scheduled release" in page and "Move the scheduled release" in page
    assignment_page = client.get(reverse("instructor:assignment", args=[berlin.course.slug, berlin.slug]))
    assert "Release scheduled for Mon 2 Mar 2026, 18:25 CET</strong>, set by instructor" in assignment_page.content.decode()

    assert client.post(release_url(berlin), {"action": "unschedule"}).status_code == 302
    berlin.refresh_from_db()
    assert berlin.grades_release_scheduled_at is None
    assert "Release scheduled for" not in client.get(release_url(berlin)).content.decode()


@pytest.mark.parametrize(
    "body, message",
    [
        ({"action": "schedule"}, "This field is required."),
        ({"action": "schedule", "at": "tomorrow"}, "Enter a valid date/time."),
        ({"action": "schedule", "at": "2026-03-02T09:59"}, "That time has passed"),  # 09:59 CET < now (10:00 CET)
    ],
    ids=["no time", "not a time", "past"],
)
def test_the_page_answers_a_bad_time_with_400_and_says_why(client, berlin, instructor, clock, body, message):
    client.force_login(instructor)
    response = client.post(release_url(berlin), body)
    assert response.status_code == 400
    assert message in response.content.decode()
    berlin.refresh_from_db()
    assert berlin.grades_release_scheduled_at is None


def test_an_unknown_action_is_400_and_cancelling_nothing_says_so(client, exam, instructor, clock):
    client.force_login(instructor)
    assert client.post(release_url(exam), {"action": "later"}).status_code == 400
    response = client.post(release_url(exam), {"action": "unschedule"}, follow=True)
    assert "No release of these grades is scheduled." in response.content.decode()


def test_students_get_403_and_another_courses_staff_404(client, exam, student, django_user_model, clock):
    other = Course.objects.create(slug="elsewhere", title="Elsewhere")
    outsider = django_user_model.objects.create_user(username="outsider", password="x")
    Enrolment.objects.create(course=other, user=outsider, role=Role.INSTRUCTOR)
    body = {"action": "schedule", "at": "2026-03-02T18:25"}
    for user, expected in ((student, 403), (outsider, 404)):
        client.force_login(user)
        assert client.post(release_url(exam), body).status_code == expected
        assert client.post(release_url(exam), {"action": "unschedule"}).status_code == expected
    exam.refresh_from_db()
    assert exam.grades_release_scheduled_at is None


# --- The API ---------------------------------------------------------------------------------


@pytest.fixture
def api(exam, instructor):
    from api.models import TokenScope
    from api.services import api_token_create
    from api.tests.conftest import api_client

    _, secret = api_token_create(user=instructor, name="t", scope=TokenScope.WRITE, lifetime_days=7)
    return api_client(secret)


def api_url(exam):
    return f"/api/v1/courses/{exam.course.slug}/assignments/{exam.slug}/release/"


# (body, status, a word of the answer, scheduled afterwards (UTC), released afterwards)
API_CASES = [
    ({}, 400, "action", None, False),
    ({"action": ""}, 400, "action", None, False),
    ({"action": "later"}, 400, "action", None, False),
    ({"action": "schedule"}, 400, "schedule needs at", None, False),
    ({"action": "schedule", "at": "soon"}, 400, "at", None, False),
    ({"action": "schedule", "at": "2026-03-02T08:00:00Z"}, 400, "That time has passed", None, False),
    ({"action": "release", "at": "2026-03-02T18:00:00Z"}, 400, "Only schedule takes a time", None, False),
    ({"action": "unschedule"}, 409, "No release of these grades is scheduled", None, False),
    ({"action": "withdraw"}, 409, "not released", None, False),
    ({"action": "schedule", "at": "2026-03-02T18:25:00+01:00"}, 200, "grades_release_scheduled_at",
     START.replace(hour=17, minute=25), False),
    ({"action": "schedule", "at": "2026-03-02T18:25"}, 200, "grades_release_scheduled_at",  # the course's zone
     START.replace(hour=17, minute=25), False),
    ({"action": "release"}, 200, "grades_released_at", None, True),
]


@pytest.mark.parametrize("body, status, word, scheduled, released", API_CASES,
                         ids=[f"{case[0]}" for case in API_CASES])
def test_the_api_release_actions(api, berlin, clock, body, status, word, scheduled, released):
    response = api.post(api_url(berlin), body, content_type="application/json")
    assert response.status_code == status, response.content
    assert word in response.content.decode()
    berlin.refresh_from_db()
    assert berlin.grades_release_scheduled_at == scheduled
    assert (berlin.grades_released_at is not None) is released


def test_the_api_schedules_says_who_and_unschedules(api, berlin, clock):
    scheduled = api.post(api_url(berlin), {"action": "schedule", "at": "2026-03-02T18:25:00+01:00"},
                         content_type="application/json").json()
    assert (scheduled["grades_release_scheduled_at"], scheduled["grades_release_scheduled_by"]) == (
        "2026-03-02T18:25:00+01:00", "instructor",
    )
    cancelled = api.post(api_url(berlin), {"action": "unschedule"}, content_type="application/json").json()
    assert (cancelled["grades_release_scheduled_at"], cancelled["grades_release_scheduled_by"]) == (None, None)
