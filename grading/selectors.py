"""Reads of submissions, with the permission check built in (``access_*``)."""

from __future__ import annotations

import time

from django.conf import settings
from django.db.models import F
from django.utils import timezone
from django.http import Http404

from attnquiz.prepared_reads import PreparedRead
from courses.selectors import STAFF_ROLES, course_role
from exams.selectors_accommodations import (
    accommodation_carry,
    carried_accommodation,
    with_own_accommodation,
)

from .grade_events import grade_wait
from .models import QueueHeartbeat, Submission, SubmissionStatus


def _submission_with_context(*, submission_id: int):
    return (
        with_own_accommodation(
            Submission.objects.select_related(
                "variant__exercise_version__exercise",
                "variant__assignment_item__assignment__course",
            ),
            assignment_path="variant__assignment_item__assignment",
            student=F("student"),
        )
        .filter(pk=submission_id)[:1]
    )


# Every result poll reads it: compiled once (``PreparedRead``).
_SUBMISSION_WITH_CONTEXT = PreparedRead(_submission_with_context, submission_id=int)


def access_submission(*, user, submission_id: int) -> Submission:
    """A submission its own student, or the course's staff, may read; 404 otherwise."""
    submission = _SUBMISSION_WITH_CONTEXT.first(submission_id=int(submission_id))
    if submission is None:
        raise Http404("No such submission.")
    # The student's own attempts (shown with the result) come with this one query.
    accommodation_carry(submission.variant, carried_accommodation(submission))
    if submission.student_id == user.pk:
        return submission
    item = submission.variant.assignment_item
    if item and course_role(user=user, course=item.assignment.course) in STAFF_ROLES:
        return submission
    raise Http404("No such submission.")


OUTCOME_FIELDS = ["status", "score", "awarded", "correct", "feedback", "misconception", "graded_at"]

# A long poll re-reads the grade on each wake-up: compiled once.
_OUTCOME_OF_SUBMISSION = PreparedRead(
    lambda *, submission_id: Submission.objects.filter(pk=submission_id).values_list(*OUTCOME_FIELDS)[:1],
    submission_id=int,
)


def submission_outcome_refresh(submission: Submission) -> None:
    """Re-read the grading outcome of ``submission`` (``OUTCOME_FIELDS``) into it, as
    ``refresh_from_db(fields=OUTCOME_FIELDS)`` does, with one compiled read."""
    row = _OUTCOME_OF_SUBMISSION.first(submission_id=submission.pk)
    if row is None:
        raise Submission.DoesNotExist(f"Submission {submission.pk} is gone.")
    for field, value in zip(OUTCOME_FIELDS, row):
        setattr(submission, field, value)


def submission_wait_finished(
    *, submission: Submission, timeout: float, interval: float = 0.02, slice_seconds: float = 0.5
) -> Submission:
    """The submission once graded, or as it is after ``timeout`` seconds (a bounded long poll).

    Lets the page show a grade the moment the worker stores it instead of on the next
    fixed polling tick; the bound keeps a web worker from being held for long. With Redis
    the wait blocks on the grade's announcement and reads the database once per wake-up
    or ``slice_seconds``; without it, every ``interval``.
    """
    if settings.GRADING_MODE == "inline" and not submission.is_finished:
        # Graded in this process as its answer's transaction committed: nothing to wait for.
        submission_outcome_refresh(submission)
        return submission
    deadline = time.monotonic() + timeout
    while not submission.is_finished:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        grade_wait(
            submission_id=submission.pk,
            timeout=min(remaining, slice_seconds),
            fallback_interval=interval,
        )
        submission_outcome_refresh(submission)
    return submission


# A graded answer's result reads its part's attempts: compiled once.
_ANSWERS_OF_PART = PreparedRead(
    lambda *, variant_id, part: Submission.objects.filter(variant_id=variant_id, part=part).order_by("attempt"),
    variant_id=int,
    part=str,
)


def part_progress(*, variant, part: str) -> dict:
    """Attempts used, whether solved, and the best awarded score for one part."""
    submissions = _ANSWERS_OF_PART.all(variant_id=variant.pk, part=part)
    for submission in submissions:
        submission.variant = variant  # the caller's row, not a query each
    return _progress_of(submissions)


def variants_progress(*, variants) -> dict[tuple[int, str], dict]:
    """``part_progress`` for every (variant id, part) of ``variants``, from one query.

    A part without submissions is absent: look it up with ``progress_of_part``."""
    variants = list(variants)
    answers = Submission.objects.filter(variant__in=variants).order_by("variant_id", "part", "attempt")
    return _progress_by_variant_and_part(answers, variants)


# The assignment page's read of answers, on every student's way into an exam: compiled once.
_ANSWERS_OF_ASSIGNMENT = PreparedRead(
    lambda *, assignment_id, student_id: Submission.objects.filter(
        variant__assignment_item__assignment_id=assignment_id,
        variant__student_id=student_id,
        variant__context__startswith="assignment:",  # a constant: practice answers stay out
    ).order_by("variant_id", "part", "attempt"),
    assignment_id=int,
    student_id=int,
)


def assignment_variants_progress(*, assignment_id: int, student_id: int, variants) -> dict[tuple[int, str], dict]:
    """``variants_progress`` of ``variants``, the student's own variants of one assignment,
    read by (assignment, student) with one compiled query."""
    answers = _ANSWERS_OF_ASSIGNMENT.all(assignment_id=assignment_id, student_id=student_id)
    return _progress_by_variant_and_part(answers, variants)


def _progress_by_variant_and_part(answers, variants) -> dict[tuple[int, str], dict]:
    """``_progress_of`` each (variant, part) of ``answers`` (in attempt order) that belong to
    one of ``variants``; the others (an item the student is no longer given) are left out."""
    by_id = {variant.pk: variant for variant in variants}
    grouped: dict[tuple[int, str], list] = {}
    for submission in answers:
        variant = by_id.get(submission.variant_id)
        if variant is None:
            continue
        submission.variant = variant  # the caller's row, not a query each
        grouped.setdefault((submission.variant_id, submission.part), []).append(submission)
    return {key: _progress_of(submissions) for key, submissions in grouped.items()}


def progress_of_part(progress: dict, *, variant_id: int, part: str) -> dict:
    return progress.get((variant_id, part)) or no_progress()


def no_progress() -> dict:
    """``part_progress`` of a part with no answer."""
    return _progress_of([])


# The exercise page's one read of answers: compiled once (``PreparedRead``).
_ANSWERS_OF_VARIANT = PreparedRead(
    lambda *, variant_id: Submission.objects.filter(variant_id=variant_id).order_by("part", "attempt"),
    variant_id=int,
)


def variant_progress(*, variant, parts) -> dict[str, dict]:
    """``part_progress`` of each of ``parts``, from one query."""
    grouped: dict[str, list] = {}
    for submission in _ANSWERS_OF_VARIANT.all(variant_id=variant.pk):
        submission.variant = variant  # the caller's row, not a query each
        grouped.setdefault(submission.part, []).append(submission)
    return {part: _progress_of(grouped.get(part, [])) for part in parts}


def _progress_of(submissions: list) -> dict:
    graded = [s for s in submissions if s.status == SubmissionStatus.GRADED]
    # An answer that could not be graded does not use up an attempt.
    attempts_used = sum(1 for s in submissions if s.status != SubmissionStatus.COULD_NOT_GRADE)
    for submission in submissions:
        submission.part_attempts_used = attempts_used  # for templates: no query per attempt
    return {
        "attempts_used": attempts_used,
        "solved": any(s.correct for s in graded),
        "best_awarded": max((s.awarded or 0.0 for s in graded), default=None),
        "latest": submissions[-1] if submissions else None,
        "history": submissions,
    }


def queue_heartbeat_ages(*, queues: list[str]) -> dict[str, float | None]:
    """Seconds since a worker last consumed the heartbeat ping of each queue (None: never)."""
    now = timezone.now()
    seen = dict(QueueHeartbeat.objects.filter(queue__in=queues).values_list("queue", "consumed_at"))
    return {queue: (now - seen[queue]).total_seconds() if queue in seen else None for queue in queues}
