"""Writes of the exam side: starting and finishing a student's attempt, closing attempts
whose time or close date is over, and releasing (or withdrawing) an assignment's grades.

An attempt ends once: every end is a conditional update of an open row, so the student's
"Finish", the periodic closer and an instructor can race without ending it twice. The
answers stored before the end count; submission_create locks the attempt row while it
stores an answer, so an answer is either stored before the end or refused after it.
"""

from __future__ import annotations

import hashlib
import logging
import math
from datetime import timedelta

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from courses.models import Assignment, AssignmentKind
from courses.services import require_course_writable
from grading import throttle
from exercises.services import variant_draws_prepare
from grading.events import grades_release_changed_publish, grades_visible_publish

from .models import AssignmentAttempt, AttemptCloseReason, GradeRelease, GradeReleaseAction
from .selectors import (
    exam_student_ids,
    exams_opening_soon,
    is_exam,
    student_window,
    submissions_made_visible,
    submissions_of_assignment,
)
from .selectors_accommodations import carried_accommodation, with_own_accommodation
from .window import ARCHIVED_MESSAGE, AttemptState, window_compute

logger = logging.getLogger(__name__)

CLOSE_BATCH = 200
VISIBLE_BATCH = 500


class ExamRefused(Exception):
    """The exam action was not done; ``code`` says why (for the API's status)."""

    def __init__(self, message: str, *, code: str):
        super().__init__(message)
        self.message = message
        self.code = code


# --- The attempt ---------------------------------------------------------------------------


START_REFUSALS = {
    "archived": ARCHIVED_MESSAGE,
    "not_open": "This exam is not open yet.",
    "closed": "This exam is closed.",
}


def attempt_start(*, assignment: Assignment, student, session_key: str = "") -> AssignmentAttempt:
    """Start the student's attempt (their clock starts now); the existing one if started.

    Refused for homework, before the assignment opens for the student, after it closes
    for them and in an archived course (their window decides). ``session_key``: the
    browser session a one-session exam is bound to from its first moment
    (``exams.access.start_session_key``), so no other session can reach the new attempt
    before the one that started it."""
    if not is_exam(assignment):
        raise ExamRefused("This assignment has no attempt to start.", code="not_exam")
    now = timezone.now()
    window = student_window(assignment=assignment, student=student, now=now)
    if window.state != AttemptState.NOT_STARTED:
        return AssignmentAttempt.objects.get(assignment=assignment, student=student)
    if window.start_blocked:
        raise ExamRefused(START_REFUSALS[window.start_blocked], code=window.start_blocked)
    try:
        with transaction.atomic():
            return AssignmentAttempt.objects.create(
                assignment=assignment, student=student, started_at=now, last_seen_at=now,
                session_key=session_key,
            )
    except IntegrityError:  # a second tab pressed Start at the same moment
        return AssignmentAttempt.objects.get(assignment=assignment, student=student)


def attempt_deadline_seen(*, attempt: AssignmentAttempt, deadline) -> bool:
    """Record that the student's page learned ``deadline`` (None once the attempt ended);
    writes only when it changed. True if it did."""
    if attempt.deadline_seen == deadline and attempt.deadline_seen_at is not None:
        return False
    now = timezone.now()
    AssignmentAttempt.objects.filter(pk=attempt.pk).update(deadline_seen=deadline, deadline_seen_at=now)
    attempt.deadline_seen, attempt.deadline_seen_at = deadline, now
    return True


def deadline_poll_wait(*, student, course_slug: str, assignment_slug: str) -> int:
    """Whole seconds before this student's pages may ask for this exam's deadline again;
    0 when they may now (the ask is counted). Decided before any database read, so a
    script polling in a loop costs a Redis call per request and nothing more.

    Two buckets, per student and exam (one attempt each) and per student over all exams,
    each a burst (several tabs asking at zero or when shown again) and then a steady rate,
    an order of magnitude above what open pages ask. The bucket that refuses an ask takes
    no token from it. With Redis unreachable the ask is let through (each process keeps its
    own buckets then, ``grading.throttle``).
    """
    limits = (
        (f"exam-deadline:{student.pk}:{course_slug}:{assignment_slug}",
         settings.EXAM_DEADLINE_POLL_BURST, settings.EXAM_DEADLINE_POLL_PER_SECOND),
        (f"exam-deadline:{student.pk}", settings.EXAM_DEADLINE_POLL_USER_BURST,
         settings.EXAM_DEADLINE_POLL_USER_PER_SECOND),
    )
    for key, burst, per_second in limits:
        try:
            wait = throttle.token_take(key=key, burst=burst, per_second=per_second)
        except redis.RedisError:  # the poll must not fail because its limit cannot be asked
            logger.warning("deadline poll limit unavailable; poll of user %s let through", student.pk)
            return 0
        if wait:
            return max(1, math.ceil(wait))
    return 0


def attempt_end(*, attempt: AssignmentAttempt, reason: str, at=None) -> bool:
    """End an open attempt (idempotent). True if this call ended it."""
    at = at or timezone.now()
    ended = AssignmentAttempt.objects.filter(pk=attempt.pk, finished_at__isnull=True).update(
        finished_at=at, close_reason=reason
    )
    attempt.refresh_from_db(fields=["finished_at", "close_reason"])
    return bool(ended)


def attempt_finish(*, assignment: Assignment, student) -> AssignmentAttempt:
    """The student's "Finish attempt": no more answers after it.

    Decided under the attempt row's lock, the one an answer takes while it is stored
    (grading.services.submission_create): the finish time is read after the lock is
    held, so no stored answer can carry a ``queued_at`` after ``finished_at``."""
    with transaction.atomic():
        attempt = (
            AssignmentAttempt.objects.select_for_update()
            .filter(assignment=assignment, student=student)
            .first()
        )
        if attempt is None:
            raise ExamRefused("You have not started this exam.", code="not_started")
        now = timezone.now()
        window = student_window(assignment=assignment, student=student, now=now, attempt=attempt)
        if window.state == AttemptState.TIMED_OUT and attempt.finished_at is None:
            # The clock ran out before the closer came by: the attempt ended then, not now.
            attempt_end(attempt=attempt, reason=window.end_reason, at=window.ended_at)
        finished = attempt_end(attempt=attempt, reason=AttemptCloseReason.FINISHED, at=now)
    if not finished and attempt.close_reason != AttemptCloseReason.FINISHED:
        # Raised after the commit: an end by the clock recorded above stands.
        raise ExamRefused(
            f"This attempt was already closed ({attempt.get_close_reason_display().lower()}).",
            code="attempt_finished",
        )
    return attempt


# An attempt ends by itself only under a time limit or a close date: the exam's own or the
# student's accommodation on it (a course-wide one has neither: its factor and extra minutes
# only stretch a limit). Attempts of an exam with neither stay open until Finish, and the
# closer never reads them, however many pile up.
_CAN_END_BY_ITSELF = (
    Q(assignment__time_limit_minutes__gt=0)
    | Q(assignment__closes_at__isnull=False)
    | Q(own_accommodation__time_limit_minutes__gt=0)
    | Q(own_accommodation__closes_at__isnull=False)
)
_ACCOMMODATED = Q(own_accommodation__isnull=False) | Q(own_course_accommodation__isnull=False)


def attempts_close_expired(*, batch_size: int = CLOSE_BATCH, max_batches: int = 50) -> dict:
    """Close every open exam attempt whose time or close date is over; their stored
    answers count. Idempotent; reads the attempts that may be over (``_closer_candidates``)
    in bounded batches by id, at most ``max_batches`` of them per call (the next call goes
    on). "checked" counts the attempts read."""
    now = timezone.now()
    counts = {"checked": 0, "time_up": 0, "closed": 0}
    batches = 0
    for exam in Assignment.objects.filter(pk__in=_exams_with_open_attempts()).order_by("pk"):
        last_id = 0
        while batches < max_batches:
            batches += 1
            attempts = list(_closer_candidates(exam=exam, now=now).filter(pk__gt=last_id).order_by("pk")[:batch_size])
            if not attempts:
                break
            last_id = attempts[-1].pk
            for attempt in attempts:
                counts["checked"] += 1
                _attempt_close_if_over(attempt, now=now, counts=counts)
    return counts


def _exams_with_open_attempts():
    """The exams with an open attempt, from the index of open attempts by assignment."""
    return (
        AssignmentAttempt.objects.filter(finished_at__isnull=True, assignment__kind="exam")
        .values("assignment_id").distinct()
    )


def _closer_candidates(*, exam: Assignment, now):
    """The open attempts of ``exam`` that may be over now, each with its student's
    accommodations joined in.

    Without an accommodation an attempt ends at its start plus the exam's limit or at the
    exam's close date, so one that started less than the limit ago, before the close
    date, is not over and is not read: in the exam hour the sweep reads the few attempts
    ending now and the accommodated ones (whose own limits ``window_compute`` works
    out), not every attempt still running."""
    attempts = with_own_accommodation(
        AssignmentAttempt.objects.select_related("assignment"),
        assignment_path="assignment", student=F("student"),
    ).filter(_CAN_END_BY_ITSELF, assignment=exam, finished_at__isnull=True)
    if exam.closes_at is not None and exam.closes_at <= now:
        return attempts
    may_be_over = _ACCOMMODATED
    if exam.time_limit_minutes:
        may_be_over |= Q(started_at__lte=now - timedelta(minutes=exam.time_limit_minutes))
    return attempts.filter(may_be_over)


def attempts_end_due(*, attempts, now=None) -> int:
    """End, at their deadline as the closer would, the open exam attempts of ``attempts``
    (an AssignmentAttempt queryset) whose time or close date is over, under their rows' lock;
    returns how many.

    Call inside the transaction that is about to change their limits (an accommodation, the
    assignment's dates or time limit): more time given after an attempt's end must not
    reopen it just because the closer had not come by yet. An ended attempt opens again only
    through the proctor's extension, which asks first when the student has seen its review
    (services_accommodations.accommodation_extend)."""
    now = now or timezone.now()
    locked = (
        with_own_accommodation(
            attempts.filter(finished_at__isnull=True, assignment__kind=AssignmentKind.EXAM)
            .select_related("assignment"),
            assignment_path="assignment", student=F("student"),
        )
        .select_for_update(of=("self",))
        .order_by("pk")
    )
    counts = {"time_up": 0, "closed": 0}
    for attempt in locked:
        _attempt_close_if_over(attempt, now=now, counts=counts)
    return sum(counts.values())


def _attempt_close_if_over(attempt: AssignmentAttempt, *, now, counts: dict) -> None:
    window = window_compute(
        assignment=attempt.assignment,
        accommodation=carried_accommodation(attempt),
        attempt=attempt,
        clock_started_at=attempt.started_at,
        archived=False,  # an archived course's attempts still end on time
        now=now,
    )
    if window.state != AttemptState.TIMED_OUT:
        return
    # The attempt ends at its deadline, not when this sweep happened to run.
    ended = AssignmentAttempt.objects.filter(pk=attempt.pk, finished_at__isnull=True).update(
        finished_at=window.ended_at, close_reason=window.end_reason
    )
    counts[window.end_reason] += ended


# --- Releasing grades ----------------------------------------------------------------------


def grades_release(*, assignment: Assignment, by, via: str = "page") -> Assignment:
    """Release the assignment's grades now: the on-release parts of the review policy show,
    the release is logged and every student's score is sent to the LMS."""
    return _release_set(assignment=assignment, by=by, via=via, release=True)


def grades_withdraw(*, assignment: Assignment, by, via: str = "page") -> Assignment:
    """Take a release back: on-release feedback is hidden again and the LMS is told the
    grades are pending."""
    return _release_set(assignment=assignment, by=by, via=via, release=False)


def _release_set(*, assignment: Assignment, by, via: str, release: bool) -> Assignment:
    require_course_writable(course=assignment.course)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if release and locked.grades_released_at is not None:
            raise ExamRefused("The grades of this assignment are already released.", code="released")
        if not release and locked.grades_released_at is None:
            raise ExamRefused("The grades of this assignment are not released.", code="not_released")
        locked.grades_released_at = timezone.now() if release else None
        # A release done (by the button, the API or the schedule) leaves nothing scheduled.
        locked.grades_release_scheduled_at = locked.grades_release_scheduled_by = None
        locked.save(update_fields=["grades_released_at", "grades_release_scheduled_at", "grades_release_scheduled_by"])
        GradeRelease.objects.create(
            assignment=locked,
            action=GradeReleaseAction.RELEASE if release else GradeReleaseAction.WITHDRAW,
            by=by,
            via=via,
        )
        grades_release_changed_publish(assignment=locked, released=release)
        if release:
            transaction.on_commit(lambda: grades_visible_announce(submission_ids=submissions_of_assignment(assignment=locked)))
    assignment.grades_released_at = locked.grades_released_at
    assignment.grades_release_scheduled_at = assignment.grades_release_scheduled_by = None
    return assignment


# --- A release scheduled for a time --------------------------------------------------------


def grades_release_schedule(*, assignment: Assignment, at, by) -> Assignment:
    """Have the grades released at ``at`` (an aware time after now) by the periodic task,
    through the same release as the button; replaces an earlier schedule. Refused once
    released, and for a time that has passed."""
    require_course_writable(course=assignment.course)
    if timezone.is_naive(at):
        raise ExamRefused("Give the time with its zone.", code="naive_time")
    if at <= timezone.now():
        raise ExamRefused(
            "That time has passed: pick a later one, or release the grades now.", code="past_time"
        )
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.grades_released_at is not None:
            raise ExamRefused("The grades of this assignment are already released.", code="released")
        locked.grades_release_scheduled_at, locked.grades_release_scheduled_by = at, by
        locked.save(update_fields=["grades_release_scheduled_at", "grades_release_scheduled_by"])
    assignment.grades_release_scheduled_at, assignment.grades_release_scheduled_by = at, by
    return assignment


def grades_release_unschedule(*, assignment: Assignment) -> Assignment:
    """Cancel the scheduled release (refused when none is scheduled)."""
    require_course_writable(course=assignment.course)
    cancelled = Assignment.objects.filter(
        pk=assignment.pk, grades_release_scheduled_at__isnull=False
    ).update(grades_release_scheduled_at=None, grades_release_scheduled_by=None)
    if not cancelled:
        raise ExamRefused("No release of these grades is scheduled.", code="not_scheduled")
    assignment.grades_release_scheduled_at = assignment.grades_release_scheduled_by = None
    return assignment


def grades_release_scheduled_run(*, now=None) -> int:
    """Periodic (beat): release the grades whose scheduled time has come, each as the
    button would (logged as by whoever scheduled it, via "schedule"; the LMS passback and
    the follow-ups fire). Safe to run twice or at once with another run: each assignment
    is released under its row's lock, and only while its schedule is still due; returns
    how many were released."""
    now = now or timezone.now()
    due = list(
        Assignment.objects.filter(grades_release_scheduled_at__lte=now).order_by("grades_release_scheduled_at", "pk")
        .values_list("pk", flat=True)
    )
    released = 0
    for assignment_id in due:
        try:
            released += _scheduled_release(assignment_id=assignment_id, now=now)
        except Exception:  # one failing release (a listener, say) never stops the others
            logger.exception("Scheduled release of assignment %s failed; retried on the next run", assignment_id)
    return released


def _scheduled_release(*, assignment_id: int, now) -> int:
    with transaction.atomic():
        locked = (
            Assignment.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("course", "grades_release_scheduled_by")
            .filter(pk=assignment_id, grades_release_scheduled_at__lte=now)
            .first()
        )
        if locked is None:  # cancelled, moved later, or another run holds it
            return 0
        if locked.grades_released_at is not None or locked.course.archived_at is not None:
            Assignment.objects.filter(pk=assignment_id).update(
                grades_release_scheduled_at=None, grades_release_scheduled_by=None
            )
            return 0
        _release_set(assignment=locked, by=locked.grades_release_scheduled_by, via="schedule", release=True)
    return 1


# --- Grades the student may now see -------------------------------------------------------


def grades_visible_announce(*, submission_ids) -> int:
    """Tell mastery and spaced review, in batches, that these submissions' grades may now
    be visible to their students; returns how many ids were sent."""
    sent = 0
    batch: list[int] = []
    for submission_id in submission_ids.iterator(chunk_size=VISIBLE_BATCH):
        batch.append(submission_id)
        if len(batch) == VISIBLE_BATCH:
            sent += _announce(batch)
            batch = []
    if batch:
        sent += _announce(batch)
    return sent


def _announce(batch: list[int]) -> int:
    grades_visible_publish(submission_ids=batch)
    return len(batch)


def grades_visible_sweep(*, window_seconds: float) -> int:
    """Periodic (beat): announce the grades that became visible by an attempt's end or a
    close date in the last ``window_seconds`` (a release announces its own at once). The
    window overlaps the previous sweep; receivers are idempotent."""
    now = timezone.now()
    return grades_visible_announce(
        submission_ids=submissions_made_visible(since=now - timedelta(seconds=window_seconds), until=now)
    )


# --- Variants drawn before an exam opens ---------------------------------------------------


def exam_variant_draws_prepare_due(*, now=None) -> int:
    """Draws ahead of time the variants of every exam opening within
    ``EXAM_DRAWS_AHEAD_SECONDS`` (exercises.services.variant_draws_prepare), once per exam,
    opening time and set of items; the number of draws kept. A Redis that cannot be reached
    prepares nothing: the pages draw, as without this."""
    now = now or timezone.now()
    kept = 0
    for exam in exams_opening_soon(now=now, within_seconds=settings.EXAM_DRAWS_AHEAD_SECONDS):
        keep_seconds = (exam.opens_at - now).total_seconds() + settings.EXAM_DRAWS_KEEP_SECONDS
        if not cache.add(_draws_prepared_key(exam), True, timeout=keep_seconds):
            continue
        kept += variant_draws_prepare(
            assignment=exam, student_ids=exam_student_ids(assignment=exam), timeout=keep_seconds
        )
    return kept


def _draws_prepared_key(exam: Assignment) -> str:
    items = exam.items.order_by("pk").values_list("pk", "exercise_version_id", "points", "pool")
    signature = hashlib.sha256(repr(list(items)).encode()).hexdigest()[:16]
    return f"attnquiz:exam-draws-prepared:{exam.pk}:{exam.opens_at.timestamp()}:{signature}"
