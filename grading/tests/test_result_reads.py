"""The reads a result makes on every long-poll wake-up and every result poll, compiled once
(``PreparedRead``): each must give exactly what the ORM query it replaced gave."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from exercises.services import variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from grading.selectors import (
    OUTCOME_FIELDS,
    access_submission,
    part_progress,
    submission_outcome_refresh,
)

pytestmark = pytest.mark.django_db

GRADED, FAILED, QUEUED = SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE, SubmissionStatus.QUEUED


def _answer(variant, *, part="weights", attempt=1, **fields):
    return Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer="x", attempt=attempt, **fields
    )


def test_the_outcome_is_re_read_into_the_submission(variant):
    submission = _answer(variant, status=QUEUED)
    graded_at = timezone.now().replace(microsecond=0) - timedelta(seconds=3)
    Submission.objects.filter(pk=submission.pk).update(
        status=GRADED, score=0.5, awarded=0.4, correct=False, misconception="no_scaling",
        feedback={"message": "You did not divide by √d_k.", "details": {"entry_correct": [[True, False]]}},
        graded_at=graded_at,
    )
    submission_outcome_refresh(submission)
    assert [getattr(submission, field) for field in OUTCOME_FIELDS] == [
        GRADED, 0.5, 0.4, False,
        {"message": "You did not divide by √d_k.", "details": {"entry_correct": [[True, False]]}},
        "no_scaling", graded_at,
    ]
    assert submission.is_finished


def test_re_reading_a_deleted_submission_raises_as_the_orm_does(variant):
    submission = _answer(variant, status=QUEUED)
    Submission.objects.filter(pk=submission.pk).delete()
    with pytest.raises(Submission.DoesNotExist):
        submission_outcome_refresh(submission)


def test_the_re_read_is_one_query_that_leaves_other_fields_alone(variant):
    submission = _answer(variant, status=QUEUED)
    Submission.objects.filter(pk=submission.pk).update(raw_answer="changed", status=FAILED)
    with CaptureQueriesContext(connection) as captured:
        submission_outcome_refresh(submission)
    assert len(captured) == 1
    assert (submission.status, submission.raw_answer) == (FAILED, "x")


def test_a_parts_progress_is_its_own_answers_in_attempt_order(variant, django_user_model):
    _answer(variant, attempt=2, status=GRADED, correct=True, awarded=0.9, score=1.0)
    _answer(variant, attempt=1, status=GRADED, correct=False, awarded=0.0, score=0.0)
    _answer(variant, attempt=3, status=FAILED)
    _answer(variant, part="other", attempt=1, status=GRADED, correct=True, awarded=1.0, score=1.0)
    other = variant_get_or_create_for_item(
        item=variant.assignment_item, student=django_user_model.objects.get(username="student2")
    )
    _answer(other, attempt=1, status=GRADED, correct=True, awarded=1.0, score=1.0)

    progress = part_progress(variant=variant, part="weights")

    assert [s.attempt for s in progress["history"]] == [1, 2, 3]
    assert (progress["attempts_used"], progress["solved"], progress["best_awarded"]) == (2, True, 0.9)
    assert progress["latest"].attempt == 3
    # The caller's variant, not a query per attempt.
    assert all(s.variant is variant for s in progress["history"])
    assert part_progress(variant=variant, part="no-such-part")["history"] == []


def test_a_result_poll_reads_the_submission_with_its_context_in_one_query(variant, django_user_model):
    submission = _answer(variant, status=GRADED, correct=True, score=1.0, awarded=1.0)
    with CaptureQueriesContext(connection) as captured:
        read = access_submission(user=variant.student, submission_id=submission.pk)
        course = read.variant.assignment_item.assignment.course
        title = read.variant.exercise_version.exercise.title
    assert len(captured) == 1
    assert (read.pk, course.pk, title) == (submission.pk, variant.assignment_item.assignment.course_id,
                                           variant.exercise_version.exercise.title)
    stranger = django_user_model.objects.create_user(username="stranger", password="x")
    with pytest.raises(Http404):
        access_submission(user=stranger, submission_id=submission.pk)
    with pytest.raises(Http404):
        access_submission(user=variant.student, submission_id=submission.pk + 10_000)
    with pytest.raises(Http404):
        access_submission(user=variant.student, submission_id=2**70)  # typed into a URL
