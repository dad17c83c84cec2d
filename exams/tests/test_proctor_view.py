"""The proctor view on a frozen clock: each student's state, time left (their own limit),
answers saved, last seen and finish; the fragment the page polls; extending one
student's time (at once, logged, re-opening an attempt the clock closed: more in
test_extend_reopen); and the
fragment's queries not growing with the students."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from attnquiz.testing import CLOCK_START
from authoring.tests.factories import (
    assignment_create, people_create, product_yaml, published_version, submission_add, user_create, variant_for,
)
from courses.models import AssignmentKind, Enrolment, Role
from exams import services_accommodations as services
from exams.models import Accommodation, AccommodationChange, AssignmentAttempt, AttemptCloseReason
from exams.selectors_proctor import FINISHED, IN_PROGRESS, NOT_STARTED, TIME_UP, proctor_rows
from exercises.selectors import student_limits

START = CLOCK_START


@pytest.fixture
def people(db):
    return people_create()


@pytest.fixture
def exam(people, clock):
    return assignment_create(
        people.course, [published_version(source=product_yaml())], time_limit_minutes=10,
        kind=AssignmentKind.EXAM,
    )


def start(exam, student, clock):
    return AssignmentAttempt.objects.create(assignment=exam, student=student, started_at=clock.now)


def answer(exam, student, raw="12"):
    item = exam.items.get()
    variant = item.variants.filter(student=student).first() or variant_for(item, student, params={"a": 3, "b": 4})
    return submission_add(variant, "product", raw, awarded=1.0)


def by_name(rows):
    return {row.student.username: row for row in rows}


def test_each_student_state_time_left_answers_and_finish(people, exam, clock):
    student3 = user_create("sid")
    Enrolment.objects.create(course=people.course, user=student3, role=Role.STUDENT)
    Accommodation.objects.create(assignment=exam, student=people.student2, time_factor=1.5)
    start(exam, people.student, clock)  # sam
    start(exam, people.student2, clock)  # sue, 15 minutes
    clock.advance(minutes=2)
    answer(exam, people.student)
    answer(exam, people.student, raw="13")
    clock.advance(minutes=1)
    answer(exam, people.student2)
    clock.advance(minutes=8)  # 11 minutes in: sam's time is up, sue has 4 left
    rows = by_name(proctor_rows(assignment=exam))
    assert list(rows) == ["sam", "sid", "sue"]
    sam, sid, sue = rows["sam"], rows["sid"], rows["sue"]
    assert (sid.state, sid.started_at, sid.seconds_left, sid.answers_saved, sid.last_seen_at) == (
        NOT_STARTED, None, None, 0, None
    )
    assert (sam.state, sam.seconds_left, sam.answers_saved, sam.last_seen_at) == (
        TIME_UP, None, 2, START + timedelta(minutes=2)
    )
    assert (sue.state, sue.seconds_left, sue.answers_saved, sue.last_seen_at) == (
        IN_PROGRESS, 240, 1, START + timedelta(minutes=3)
    )
    assert sue.accommodation_summary == "time ×1.5"
    AssignmentAttempt.objects.filter(student=people.student).update(
        finished_at=START + timedelta(minutes=10), close_reason=AttemptCloseReason.TIME_UP
    )
    AssignmentAttempt.objects.filter(student=people.student2).update(
        finished_at=clock.now, close_reason=AttemptCloseReason.FINISHED, last_seen_at=clock.now
    )
    rows = by_name(proctor_rows(assignment=exam))
    assert (rows["sam"].state, rows["sam"].finished_at, rows["sam"].finish_reason) == (
        FINISHED, START + timedelta(minutes=10), "Closed when the time limit ran out"
    )
    assert (rows["sue"].state, rows["sue"].finish_reason, rows["sue"].last_seen_at) == (
        FINISHED, "Finished by the student", clock.now
    )


def test_homework_clock_starts_at_the_first_exercise_opened(people, clock):
    homework = assignment_create(people.course, [published_version(source=product_yaml())], time_limit_minutes=20)
    variant_for(homework.items.get(), people.student, params={"a": 3, "b": 4})
    clock.advance(minutes=5)
    rows = by_name(proctor_rows(assignment=homework))
    assert (rows["sam"].state, rows["sam"].started_at, rows["sam"].seconds_left) == (IN_PROGRESS, START, 900)
    assert rows["sue"].state == NOT_STARTED


def test_the_page_and_its_fragment_show_the_table(client, people, exam, clock):
    Accommodation.objects.create(assignment=exam, student=people.student2, extra_minutes=5)
    start(exam, people.student2, clock)
    clock.advance(seconds=30)
    client.force_login(people.ta)
    page = client.get(reverse("proctor:view", args=["attn", exam.slug])).content.decode()
    fragment_url = reverse("proctor:rows", args=["attn", exam.slug])
    assert f'hx-get="{fragment_url}" hx-trigger="every 5s" hx-swap="outerHTML"' in page
    assert "Extend time" not in page  # a TA watches; only instructors extend
    fragment = client.get(fragment_url).content.decode()
    assert fragment.startswith('<div id="proctor-rows"')
    assert "not started: 1 · in progress: 1 · time up: 0 · finished: 0" in fragment
    assert '<td class="num" data-seconds-left="870">14:30</td>' in fragment
    assert 'title="Accommodation: +5 min"' in fragment
    assert "<script" not in fragment and "style=" not in fragment
    client.force_login(people.instructor)
    page = client.get(reverse("proctor:view", args=["attn", exam.slug])).content.decode()
    assert '<button type="submit">Extend time</button>' in page


@pytest.mark.parametrize("students", [1, 30])
def test_the_fragment_reads_the_same_number_of_queries_for_1_and_30_students(
    client, people, exam, clock, students
):
    Enrolment.objects.filter(course=people.course, role=Role.STUDENT).delete()
    for index in range(students):
        user = user_create(f"p{index:02d}")
        Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
        start(exam, user, clock)
        answer(exam, user)
        Accommodation.objects.create(assignment=exam, student=user, extra_minutes=index + 1)
    client.force_login(people.instructor)
    url = reverse("proctor:rows", args=["attn", exam.slug])
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    assert response.content.decode().count("<tr data-student=") == students
    # the course's time zone, user, course, role, assignment, the students with their
    # accommodations and attempts, the answers saved: 7 for 1 student and for 30
    statements = [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    assert len(statements) == 7, "\n".join(statements)


# ---------------------------------------------------------------------------
# Extending one student's time
# ---------------------------------------------------------------------------


def test_extending_counts_at_once_and_is_logged(client, people, exam, clock):
    start(exam, people.student, clock)
    clock.advance(minutes=9)
    client.force_login(people.instructor)
    response = client.post(
        reverse("proctor:extend", args=["attn", exam.slug]), {"student": people.student.pk, "minutes": "5"},
        follow=True,
    )
    assert "sam has 5 minutes more. Their time now ends at 09:15 UTC." in response.content.decode()
    limits = student_limits(assignment=exam, student=people.student)
    assert limits.deadline == START + timedelta(minutes=15)
    assert Accommodation.objects.get().extra_minutes == 5
    [change] = AccommodationChange.objects.all()
    assert (change.action, change.by, change.detail) == ("extend", people.instructor, "5 minutes more")
    services.accommodation_extend(assignment=exam, student=people.student, minutes=1, actor=people.instructor)
    assert Accommodation.objects.get().extra_minutes == 6


def test_extending_an_own_time_limit_adds_to_it(people, exam, clock):
    Accommodation.objects.create(assignment=exam, student=people.student, time_limit_minutes=30, note="DSO")
    services.accommodation_extend(assignment=exam, student=people.student, minutes=10, actor=people.instructor)
    accommodation = Accommodation.objects.get()
    assert (accommodation.time_limit_minutes, accommodation.extra_minutes, accommodation.note) == (40, None, "DSO")


def test_extending_re_opens_an_attempt_the_clock_closed(people, exam, clock):
    attempt = start(exam, people.student, clock)
    clock.advance(minutes=12)
    attempt.finished_at, attempt.close_reason = START + timedelta(minutes=10), AttemptCloseReason.TIME_UP
    attempt.save()
    extension = services.accommodation_extend(
        assignment=exam, student=people.student, minutes=5, actor=people.instructor
    )
    attempt.refresh_from_db()
    assert (extension.reopened, extension.deadline) == (True, START + timedelta(minutes=15))
    assert (attempt.finished_at, attempt.close_reason) == (None, "")
    assert AccommodationChange.objects.get().detail == (
        "5 minutes more; the attempt closed by the clock is open again"
    )


def test_extending_too_little_to_matter_leaves_the_attempt_closed(people, exam, clock):
    attempt = start(exam, people.student, clock)
    clock.advance(minutes=20)
    AssignmentAttempt.objects.filter(pk=attempt.pk).update(
        finished_at=START + timedelta(minutes=10), close_reason=AttemptCloseReason.TIME_UP
    )
    with pytest.raises(services.AccommodationRefused) as refused:
        services.accommodation_extend(assignment=exam, student=people.student, minutes=5, actor=people.instructor)
    assert refused.value.message == (
        "With 5 minutes more, sam's time would end at 09:15 UTC, which has passed: their attempt stays finished "
        "and nothing was changed. Give at least 11 minutes to reopen it."
    )
    attempt.refresh_from_db()
    assert attempt.close_reason == AttemptCloseReason.TIME_UP
    assert not Accommodation.objects.exists()


@pytest.mark.parametrize("reason", [AttemptCloseReason.FINISHED, AttemptCloseReason.INSTRUCTOR])
def test_an_attempt_the_student_or_an_instructor_ended_stays_closed(people, exam, clock, reason):
    attempt = start(exam, people.student, clock)
    AssignmentAttempt.objects.filter(pk=attempt.pk).update(finished_at=START + timedelta(minutes=3), close_reason=reason)
    clock.advance(minutes=4)
    with pytest.raises(services.AccommodationRefused):  # the exact messages: test_extend_reopen
        services.accommodation_extend(assignment=exam, student=people.student, minutes=30, actor=people.instructor)
    attempt.refresh_from_db()
    assert attempt.close_reason == reason
    assert not Accommodation.objects.exists()


def test_the_students_close_date_moves_when_it_would_cut_the_new_time(people, exam, clock):
    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    exam.closes_at = START + timedelta(minutes=12)
    exam.save()
    attempt = start(exam, people.student, clock)
    clock.advance(minutes=11)  # over at 10:10 CET, before the closer came by
    services.accommodation_extend(assignment=exam, student=people.student, minutes=10, actor=people.instructor)
    accommodation = Accommodation.objects.get()
    assert accommodation.closes_at == START + timedelta(minutes=20)
    assert student_limits(assignment=exam, student=people.student).deadline == START + timedelta(minutes=20)
    assert AccommodationChange.objects.get().detail == (
        "10 minutes more; closes Mon 2 Mar 2026, 10:20 CET for them; the attempt closed by the clock is open again"
    )
    assert student_limits(assignment=exam, student=people.student2).closes_at == START + timedelta(minutes=12)
    attempt.refresh_from_db()


@pytest.mark.parametrize("minutes, message", [("0", "greater than or equal to 1"), ("601", "less than or equal to 600"),
                                              ("ten", "Enter a whole number.")])
def test_bad_minutes_are_refused_with_a_message(client, people, exam, minutes, message):
    client.force_login(people.instructor)
    response = client.post(
        reverse("proctor:extend", args=["attn", exam.slug]), {"student": people.student.pk, "minutes": minutes},
        follow=True,
    )
    assert message in response.content.decode()
    assert not Accommodation.objects.exists()


def test_without_a_time_limit_there_is_nothing_to_extend(client, people, clock):
    homework = assignment_create(people.course, [published_version(source=product_yaml())])
    client.force_login(people.instructor)
    response = client.post(
        reverse("proctor:extend", args=["attn", homework.slug]), {"student": people.student.pk, "minutes": "5"},
        follow=True,
    )
    assert "This assignment has no time limit to extend." in response.content.decode()
    assert not Accommodation.objects.exists()
    assert not AccommodationChange.objects.exists()
