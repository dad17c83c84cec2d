"""Course-wide accommodations on a frozen clock: a student's factor, extra minutes and
attempts set once for the course reach every reader of their limits — the start page
before Start, the window (in one query), the countdown, the attempts a submission may
use (decided in the lock), the closer, the proctor view and the release preview — and an
accommodation on one assignment overrides them field by field."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from exams import services
from exams.models import Accommodation, AssignmentAttempt, CourseAccommodation
from exams.selectors import release_preview, student_window
from exams.selectors_proctor import proctor_rows
from exams.services_accommodations import accommodation_extend
from exercises.selectors import student_attempts_allowed, student_limits
from exercises.services import variant_get_or_create_for_item
from grading import services as grading
from grading.tests.test_query_counts import queries

from .conftest import START, UNIFORM


@pytest.fixture
def timed_exam(exam):
    exam.time_limit_minutes = 10
    exam.save()
    return exam


def course_wide(assignment, student, **fields) -> CourseAccommodation:
    return CourseAccommodation.objects.create(course=assignment.course, student=student, **fields)


def start_page(client, assignment, student) -> str:
    client.force_login(student)
    return client.get(reverse("assignment", args=[assignment.course.slug, assignment.slug])).content.decode()


def test_the_start_page_shows_the_course_wide_limit_before_start(client, timed_exam, student, other_student, clock):
    course_wide(timed_exam, student, time_factor=1.5)
    assert 'your own time limit of <strong id="start-limit">15 minutes</strong>' in start_page(client, timed_exam, student)
    assert 'your own time limit of <strong id="start-limit">10 minutes</strong>' in start_page(
        client, timed_exam, other_student
    )


def test_the_assignments_own_accommodation_overrides_the_course_wide_one(client, timed_exam, student, clock):
    course_wide(timed_exam, student, time_factor=1.5, attempts_per_part=6)
    Accommodation.objects.create(assignment=timed_exam, student=student, time_factor=2.0)
    assert 'your own time limit of <strong id="start-limit">20 minutes</strong>' in start_page(client, timed_exam, student)
    limits = student_limits(assignment=timed_exam, student=student)
    # The factor is the assignment's own; the attempts still the course's.
    assert (limits.time_limit_seconds, limits.attempts_per_part) == (1200, 6)


def test_a_course_wide_accommodation_of_another_course_changes_nothing(timed_exam, student, clock):
    from courses.models import Course

    other = Course.objects.create(slug="elsewhere", title="Elsewhere")
    CourseAccommodation.objects.create(course=other, student=student, time_factor=3.0)
    assert student_limits(assignment=timed_exam, student=student).time_limit_seconds == 600


def test_the_window_reads_the_course_wide_row_in_its_one_query(timed_exam, student, clock):
    course_wide(timed_exam, student, time_factor=1.5, extra_minutes=1)
    services.attempt_start(assignment=timed_exam, student=student)
    with queries(1):
        window = student_window(assignment=timed_exam, student=student)
    assert (window.state, window.limits.time_limit_seconds, window.seconds_left) == ("running", 960, 960)
    with queries(0):
        again = student_window(
            assignment=timed_exam, student=student, accommodation=window.limits.accommodation, attempt=window.attempt
        )
    assert again == window


def test_the_countdown_counts_the_course_wide_time(client, timed_exam, item, student, clock):
    course_wide(timed_exam, student, extra_minutes=5)
    services.attempt_start(assignment=timed_exam, student=student)
    clock.advance(minutes=1)
    client.force_login(student)
    page = client.get(reverse("exercise", args=[item.pk])).content.decode()
    assert 'data-countdown data-seconds-left="840"' in page


def submit(item, student, answer=UNIFORM):
    variant = variant_get_or_create_for_item(item=item, student=student)
    return grading.submission_create(variant=variant, student=student, part="weights", raw_answer=answer)


@pytest.mark.parametrize(
    "course_attempts, own_attempts, accepted", [(2, None, 2), (0, None, 6), (5, 1, 1), (None, None, 3)]
)
def test_submit_counts_the_course_wide_attempts_in_its_lock(
    item, student, clock, course_attempts, own_attempts, accepted
):
    assignment = item.assignment
    assignment.kind, assignment.attempts_per_part = "homework", 3
    assignment.save()
    if course_attempts is not None:
        course_wide(assignment, student, attempts_per_part=course_attempts)
    if own_attempts is not None:
        Accommodation.objects.create(assignment=assignment, student=student, attempts_per_part=own_attempts)
    codes = []
    for n in range(6):
        try:  # each answer new: the same one again is refused as unchanged
            submit(item, student, answer=f"[0.25, 0.25, 0.25, {0.25 + n / 10_000:.4f}]")
            codes.append("stored")
        except grading.SubmissionRefused as refused:
            codes.append(refused.code)
    assert codes == ["stored"] * accepted + ["no_attempts"] * (6 - accepted)
    assert student_attempts_allowed(assignment=assignment, student=student) == (
        own_attempts if own_attempts is not None else course_attempts if course_attempts is not None else 3
    )


def test_the_closer_ends_each_attempt_at_its_course_wide_deadline(timed_exam, student, other_student, clock):
    course_wide(timed_exam, student, time_factor=1.5)
    services.attempt_start(assignment=timed_exam, student=student)
    services.attempt_start(assignment=timed_exam, student=other_student)
    clock.advance(minutes=12)
    assert services.attempts_close_expired() == {"checked": 2, "time_up": 1, "closed": 0}
    clock.advance(minutes=3)
    assert services.attempts_close_expired() == {"checked": 1, "time_up": 1, "closed": 0}
    ends = dict(AssignmentAttempt.objects.values_list("student__username", "finished_at"))
    assert ends == {"student1": START + timedelta(minutes=15), "student2": START + timedelta(minutes=10)}


def test_the_proctor_view_shows_the_course_wide_time_and_says_so(timed_exam, student, clock):
    course_wide(timed_exam, student, time_factor=1.5)
    services.attempt_start(assignment=timed_exam, student=student)
    row = next(row for row in proctor_rows(assignment=timed_exam) if row.student == student)
    assert (row.seconds_left, row.accommodation_summary) == (900, "course-wide: time ×1.5")


def test_the_release_preview_counts_a_course_wide_student_still_working(timed_exam, student, other_student, clock):
    course_wide(timed_exam, student, time_factor=1.5)
    services.attempt_start(assignment=timed_exam, student=student)
    services.attempt_start(assignment=timed_exam, student=other_student)
    clock.advance(minutes=12)  # student2's 10 minutes are up; student1 has 15
    with queries(3):
        preview = release_preview(assignment=timed_exam)
    assert (preview.working, preview.ended, preview.not_started) == (1, 1, 1)


def test_extending_keeps_the_course_wide_extra_minutes(timed_exam, student, clock, demo):
    course_wide(timed_exam, student, time_factor=1.5, extra_minutes=4)
    services.attempt_start(assignment=timed_exam, student=student)
    extension = accommodation_extend(assignment=timed_exam, student=student, minutes=5, actor=None)
    own = Accommodation.objects.get(assignment=timed_exam, student=student)
    # 10 × 1.5 + 4 course-wide + 5 more: the own extra minutes carry the course's 4 on.
    assert (own.time_factor, own.extra_minutes, extension.deadline) == (None, 9, START + timedelta(minutes=24))
