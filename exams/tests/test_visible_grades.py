"""An exam's grades that the review policy withheld reach mastery and spaced review once
the student may see them: at once on release, and by the periodic sweep when an attempt
ends or a close date passes — never while they are still withheld."""

from __future__ import annotations

from datetime import timedelta

import pytest

from exams import services
from exams.selectors import submissions_made_visible
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission
from grading.services import submission_create
from mastery.models import Observation
from review.models import ReviewEntry
from review.services import review_settings_update

from .conftest import correct, exam_policy

SWEEP = 300.0


@pytest.fixture
def inline(settings):
    settings.GRADING_MODE = "inline"
    settings.EXAM_VISIBLE_SWEEP_SECONDS = SWEEP


def answer_right(*, exam, item, student, capture) -> Submission:
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with capture(execute=True):
        submission_create(variant=variant, student=student, part="weights", raw_answer=correct(variant, "weights"))
    submission = Submission.objects.get(variant=variant, part="weights")
    assert submission.correct is True
    return submission


def learned(student) -> tuple[int, int]:
    return (
        Observation.objects.filter(student=student).values("submission").distinct().count(),
        ReviewEntry.objects.filter(submission__student=student).count(),
    )


def test_a_release_feeds_mastery_and_review_at_once(
    exam, item, student, clock, inline, django_capture_on_commit_callbacks
):
    review_settings_update(course=exam.course, enabled=True, feeding_assignments=[exam])
    answer_right(exam=exam, item=item, student=student, capture=django_capture_on_commit_callbacks)
    assert learned(student) == (0, 0)
    clock.advance(days=3)
    services.attempt_finish(assignment=exam, student=student)  # a release reaches ended attempts
    with django_capture_on_commit_callbacks(execute=True):
        services.grades_release(assignment=exam, by=None)
    assert learned(student) == (1, 1)


def test_an_attempt_ending_is_announced_by_the_sweep_for_its_own_student_only(
    exam, item, student, other_student, clock, inline, django_capture_on_commit_callbacks
):
    exam_policy(exam, show_correctness="after_finish")
    review_settings_update(course=exam.course, enabled=True, feeding_assignments=[exam])
    mine = answer_right(exam=exam, item=item, student=student, capture=django_capture_on_commit_callbacks)
    theirs = answer_right(exam=exam, item=item, student=other_student, capture=django_capture_on_commit_callbacks)
    assert services.grades_visible_sweep(window_seconds=2 * SWEEP) == 0
    clock.advance(minutes=20)
    services.attempt_finish(assignment=exam, student=student)
    clock.advance(minutes=1)
    window = {"since": clock.now - timedelta(seconds=2 * SWEEP), "until": clock.now}
    assert list(submissions_made_visible(**window)) == [mine.pk]
    assert services.grades_visible_sweep(window_seconds=2 * SWEEP) == 1
    assert learned(student) == (1, 1)
    assert learned(other_student) == (0, 0)
    assert theirs.pk not in list(submissions_made_visible(**window))
    # The next sweep's window has moved past the finish: nothing is announced twice.
    clock.advance(minutes=15)
    assert services.grades_visible_sweep(window_seconds=2 * SWEEP) == 0


def test_a_close_date_passing_announces_but_a_grade_still_withheld_is_not_learned(
    exam, item, student, clock, inline, django_capture_on_commit_callbacks
):
    review_settings_update(course=exam.course, enabled=True, feeding_assignments=[exam])
    submission = answer_right(exam=exam, item=item, student=student, capture=django_capture_on_commit_callbacks)
    exam.closes_at = clock.now + timedelta(minutes=30)
    exam.save(update_fields=["closes_at"])
    clock.advance(minutes=31)
    # The preset shows correctness on release only: the close is a candidate, not a release.
    assert services.grades_visible_sweep(window_seconds=2 * SWEEP) == 1
    assert learned(student) == (0, 0)
    exam_policy(exam, show_correctness="after_close")
    assert list(submissions_made_visible(since=clock.now - timedelta(minutes=5), until=clock.now)) == [submission.pk]
    assert services.grades_visible_sweep(window_seconds=2 * SWEEP) == 1
    assert learned(student) == (1, 1)


def test_homework_answers_are_never_candidates(demo, item, student, clock, inline, django_capture_on_commit_callbacks):
    assignment = demo.assignment
    assignment.closes_at = clock.now + timedelta(minutes=5)
    assignment.save(update_fields=["closes_at"])
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submission_create(variant=variant, student=student, part="weights", raw_answer=correct(variant, "weights"))
    clock.advance(minutes=6)
    assert list(submissions_made_visible(since=clock.now - timedelta(hours=1), until=clock.now)) == []
