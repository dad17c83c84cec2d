"""The grading pipeline's writes: create, queue, grade and re-queue submissions.

The database is the source of truth. A submission is stored as ``queued`` before
anything is sent to the broker, and grading moves it forward only through
conditional updates, so a task delivered twice (or re-queued by the sweeper while a
worker still holds it) stores exactly one grade.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import time
from dataclasses import dataclass
from datetime import timedelta

import redis
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q
from django.utils import timezone

from attnquiz.prepared_reads import PreparedRead, prepared_execute
from exams.locks import attempt_lock_for_answer
from exams.selectors import student_window
from exams.selectors_accommodations import carried_accommodation, with_own_accommodation
from exams.window import Window
from exercises.engine import ExpressionError
from exercises.models import Variant
from exercises.selectors import parts_solved_on_earlier_copies
from exercises.specs import variant_part_options, variant_references, version_spec
from grading.core import answers

from . import throttle
from .events import GradeChange, grade_changed_publish
from .grade_events import grade_announce
from .models import QueueHeartbeat, Submission, SubmissionStatus

logger = logging.getLogger(__name__)

MANUAL_TYPES = frozenset({"free_text"})


class SubmissionRefused(Exception):
    """The answer was not accepted; nothing was stored and no attempt was used."""

    def __init__(self, message: str, *, code: str, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.retry_after = retry_after  # seconds, when waiting is all it takes


@dataclass(frozen=True)
class PartContext:
    """What grading one part of one variant needs, all derived from stored data."""

    answer_type: str
    expected: object
    options: dict
    attempts_allowed: int


def part_context(*, variant: Variant, part: str) -> PartContext:
    spec = version_spec(variant.exercise_version)
    try:
        part_spec = spec.part(part)
    except KeyError:
        raise SubmissionRefused(f"This exercise has no part '{part}'.", code="unknown_part")
    item = variant.assignment_item
    attempts_allowed = item.assignment.attempts_per_part if item else 0
    return PartContext(
        answer_type=part_spec.type,
        expected=variant_references(variant)[part],
        options=_gradable_options(variant, part),
        attempts_allowed=attempts_allowed,
    )


def _gradable_options(variant: Variant, part: str) -> dict:
    """The part's checker options on this variant. A variant stored before its exercise's
    options were checked on every draw may hold one that does not fill in (``{{8 / w}}`` on
    w = 0): its answers are refused, using no attempt, rather than lost to an error page."""
    try:
        return variant_part_options(variant, part)
    except ExpressionError as error:
        logger.warning("variant %s part %s cannot be graded: %s", variant.pk, part, error)
        raise SubmissionRefused(
            f"This part cannot be graded on your variant: {error}. Nothing was stored and no attempt was "
            "used; please tell your instructor, who can give you another variant.",
            code="variant_ungradable",
        ) from None


# Every answer counts its part's attempts under the variant's lock: compiled once.
_ATTEMPTS_OF_PART = PreparedRead(
    lambda *, variant_id, part: Submission.objects.filter(variant_id=variant_id, part=part)
    .order_by()
    .values("variant_id")  # one group: the part's answers
    .annotate(
        used=Count("pk", filter=~Q(status=SubmissionStatus.COULD_NOT_GRADE)),
        latest=Max("attempt"),
        solved=Count("pk", filter=Q(status=SubmissionStatus.GRADED, correct=True)),
    )
    .values_list("used", "latest", "solved"),
    variant_id=int,
    part=str,
)


def _part_attempts(*, variant: Variant, part: str) -> dict:
    """One query: attempts that count, the highest attempt number, and whether solved.

    An answer we could not grade does not use an attempt up, but keeps its number.
    """
    used, latest, solved = _ATTEMPTS_OF_PART.first(variant_id=variant.pk, part=part) or (0, None, 0)
    return {"used": used, "latest": latest, "solved": solved}


CLIENT_KEY_MAX_LENGTH = 64


def submission_create(*, variant: Variant, student, part: str, raw_answer, client_key: str = "") -> Submission:
    """Check the answer's format, store it as ``queued`` and enqueue grading on commit.

    Raises SubmissionRefused (storing nothing) for answers sent too fast, a format error,
    a solved part, a closed assignment, a copy of an exercise its instructor switched to
    another version since (``version_changed``), no attempts left, or the same answer as
    the part's latest one that counts (``unchanged``, see ``_refuse_if_unchanged``).

    ``client_key`` (optional) names this answer on the sender's side: a retry with the key
    of an answer already stored (its response lost on the way) returns that submission and
    stores nothing, uses no attempt, whatever the window says now; decided under the
    variant's lock, so two copies racing each other store one.
    """
    _refuse_if_too_fast(student=student)
    context = part_context(variant=variant, part=part)
    format_error = answer_format_error(context=context, raw_answer=raw_answer)
    if format_error:
        raise SubmissionRefused(format_error, code="invalid")
    with transaction.atomic():
        # Everything that counts attempts or time is decided after the variant row is
        # locked, so concurrent posts for one variant are serialised: none can read a
        # count another is about to make stale, and a deadline passing while an answer
        # waits for the lock refuses it. (SQLite has no row locks; its transactions start
        # IMMEDIATE, see settings, which serialises writers the same way.)
        # The lock's query also reads the student's accommodation, so an extension saved
        # before it counts without a query of its own.
        locked = _lock_variant(variant)
        accommodation = carried_accommodation(locked)
        assignment = variant.assignment_item.assignment if variant.assignment_item_id else None
        # An exam's attempt row is locked too, so "Finish" or the closer cannot slip
        # between this check and the answer's commit; the window is read after both locks.
        attempt_lock_for_answer(assignment=assignment, student=student)
        attempts = _part_attempts(variant=variant, part=part)
        now = timezone.now()
        window = _window_in_lock(assignment=assignment, student=student, accommodation=accommodation, now=now)
        if client_key and (stored := _stored_for_key(variant=variant, part=part, raw_answer=raw_answer,
                                                     client_key=client_key)):
            stored.window = window
            return stored
        _refuse_if_window_closed(window)
        _refuse_if_version_switched(locked)
        _refuse_if_solved_on_earlier_copy(
            locked, part=part, solved_shown=window.visibility.correctness if window else True,
        )
        _refuse_if_no_attempt_left(
            attempts=attempts,
            allowed=window.attempts_per_part if window else 0,
            # "Already solved" would tell a student what the review policy hides.
            solved_shown=window.visibility.correctness if window else True,
        )
        _refuse_if_unchanged(variant=variant, part=part, raw_answer=raw_answer, attempts=attempts)
        submission = Submission.objects.create(
            variant=variant,
            student=student,
            part=part,
            raw_answer=raw_answer,
            attempt=(attempts["latest"] or 0) + 1,
            is_late=bool(window and window.limits.is_late(now)),
            queued_at=now,
            client_key=client_key,
        )
        submission.window = window  # what the student may see: the response reads it, no second read
        practice = variant.assignment_item_id is None
        transaction.on_commit(
            lambda: submission_enqueue(submission_id=submission.pk, practice=practice)
        )
    return submission


# Every keyed answer (API clients and the load's students send a key with each) looks for
# its earlier copy: compiled once. The key is unique per variant: one row at most.
_ANSWER_FOR_KEY = PreparedRead(
    lambda *, variant_id, client_key: Submission.objects.filter(
        variant_id=variant_id, client_key=client_key
    ).order_by()[:1],
    variant_id=int,
    client_key=str,
)


def _stored_for_key(*, variant: Variant, part: str, raw_answer, client_key: str) -> Submission | None:
    """The answer already stored under this key (a retry of it), or None; a key that
    names a different answer is refused. Call under the variant's lock."""
    stored = _ANSWER_FOR_KEY.first(variant_id=variant.pk, client_key=client_key)
    if stored is None:
        return None
    if stored.part != part or stored.raw_answer != raw_answer:
        raise SubmissionRefused(
            "This answer's key was already used for another answer; nothing was stored. "
            "Send it again under a new key (on the exercise page: reload the page, then send it).",
            code="key_reused",
        )
    stored.replayed = True
    return stored


# An answer to a part answered before reads that part's latest answer that counts: compiled
# once. The first answer on a part (the exam load's hot path) never runs it.
_LATEST_COUNTED_ANSWER = PreparedRead(
    lambda *, variant_id, part: Submission.objects.filter(variant_id=variant_id, part=part)
    .exclude(status=SubmissionStatus.COULD_NOT_GRADE)
    .order_by("-attempt")
    .values_list("raw_answer", flat=True)[:1],
    variant_id=int,
    part=str,
)

UNCHANGED_ANSWER = (
    "This is the answer you sent last on this part; it was not stored again. "
    "Change it to try again."
)


def _refuse_if_unchanged(*, variant: Variant, part: str, raw_answer, attempts: dict) -> None:
    """Refuse the same answer as the part's latest one that counts: it would be graded the
    same and only use an attempt. An answer we could not grade does not count, so it may
    be sent again (a retry); one queued, being graded, graded or waiting for a person does.
    (The page's script holds the same answer back only once its grade, or "Answer saved",
    is shown; this is the rule for every client, the API and a page without script too.)

    Call under the variant's lock, after the key's replay (a retry of the stored answer
    under its own key is returned, not refused). Reads that answer only when the part has
    one (``attempts["used"]``): the first answer on a part costs no query here.
    """
    if not attempts["used"]:
        return
    key = answer_key(raw_answer)
    if key is None:
        return
    latest = _LATEST_COUNTED_ANSWER.first(variant_id=variant.pk, part=part)
    if answer_key(latest) == key:
        raise SubmissionRefused(UNCHANGED_ANSWER, code="unchanged")


# JavaScript's white space (what String.prototype.trim removes and \s matches), so the
# server's rule is the page's to the character.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACE_RUN = re.compile(f"[{_JS_SPACE}]+")
_JS_LINE_BREAK = re.compile(r"\r\n?")


def _normal_text(text: str) -> str:
    """The page's ``normalText``: lines trimmed, inner runs of spaces made one space,
    blank lines dropped (``\\r\\n`` and ``\\r`` are line breaks)."""
    lines = (_JS_SPACE_RUN.sub(" ", line).strip(" ") for line in _JS_LINE_BREAK.sub("\n", text).split("\n"))
    return "\n".join(line for line in lines if line)


def answer_key(raw_answer):
    """What decides whether two stored answers are the same answer, or None for an answer
    with nothing in it (which is never "the same").

    Exactly the exercise page's rule (``answerKey`` in static/attnquiz/attnquiz.js, which
    keeps the page from sending an answer again): a text, each cell of a grid and each
    choice of a list compared after ``_normal_text`` (spaces around a line or a cell, runs
    of spaces and blank lines make no difference to grading); the shape (text, list,
    rows of cells) must match; nothing else is normalised. "1.0" and "1.00" differ, as
    does a text from the same text in a list: they are different answers as typed.
    """
    typed = False

    def normal(value):
        nonlocal typed
        if isinstance(value, list):
            return [normal(item) for item in value]
        if value is None:
            return ""
        if not isinstance(value, str):  # not stored by the form or the API; as JSON.stringify
            value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        text = _normal_text(value)
        typed = typed or text != ""
        return text

    normalised = normal(raw_answer)
    return normalised if typed else None


def _refuse_if_too_fast(*, student) -> None:
    """Every post takes a token from the student's bucket, graded and practice alike.

    With the bucket's store unreachable the answer is let through (logged): the attempt
    limit, decided in the database, still bounds what one student can store."""
    try:
        wait = throttle.token_take(
            key=f"submit:{student.pk}",
            burst=settings.SUBMIT_RATE_BURST,
            per_second=settings.SUBMIT_RATE_PER_SECOND,
        )
    except redis.RedisError:
        logger.warning("submission rate limit unavailable; answer of user %s let through", student.pk)
        return
    if wait:
        seconds = math.ceil(wait)
        raise SubmissionRefused(
            f"You are sending answers too quickly. Wait {seconds} second{'s' * (seconds != 1)} "
            "and send it again; this answer was not stored.",
            code="rate_limited",
            retry_after=seconds,
        )


UNREADABLE_ANSWER = (
    "We could not read that answer (it may be too large or too deeply nested). "
    "Check it and send it again."
)
CHECK_FAILED = (
    "We could not check that answer because of a fault on our side, not in your answer; "
    "it did not use an attempt. Send it again in a minute."
)
# What a parser may raise on an answer too big or too deep to read: the answer's fault.
# Anything else is a fault in the checker, which the student must not be told is theirs.
ANSWER_TOO_BIG_ERRORS = (RecursionError, OverflowError, MemoryError, ValueError, ArithmeticError, UnicodeError)


def checkers_warm_up() -> bool:
    """``answers.warm_up`` when a web or worker process starts; True when every case graded
    right. A failure is logged and never stops the process: it only starts cold."""
    try:
        grades = answers.warm_up()
    except Exception:
        logger.exception("warming the checkers failed; the first answers will be read cold")
        return False
    if not all(grade.correct for grade in grades):
        logger.warning("a warm-up answer did not grade right: %s", [grade.error for grade in grades])
        return False
    return True


def answer_format_error(*, context: PartContext, raw_answer) -> str | None:
    """Why the answer cannot be read (it then costs no attempt), or None.

    Cheap types are fully checked here, so a shape mismatch is caught at once; CAS types
    are only parsed in the request, their (possibly slow) check runs in the worker's sandbox.
    Whatever a parser raises (overflow, recursion, encoding, ...) means the answer cannot
    be read: the student gets a message, never a 500.
    """
    try:
        if context.answer_type in answers.SANDBOXED_TYPES:
            return answers.parse(context.answer_type, raw_answer, context.options).error
        return answers.check(
            context.answer_type, context.expected, raw_answer, context.options
        ).error
    except ANSWER_TOO_BIG_ERRORS:
        logger.warning("parser failed on a %s answer", context.answer_type, exc_info=True)
        return UNREADABLE_ANSWER
    except Exception:
        logger.exception("checker fault on a %s answer", context.answer_type)
        return CHECK_FAILED


# Every answer takes this lock: compiled once (inside a transaction, as select_for_update needs).
# The same query reads the student's accommodation, the version its item has now and whether
# the student has another copy of the item (one under a version switched away from since).
_VARIANT_LOCKED_WITH_ACCOMMODATION = PreparedRead(
    lambda *, variant_id: with_own_accommodation(
        Variant.objects.select_for_update(of=("self",)).filter(pk=variant_id),
        assignment_path="assignment_item__assignment",
        student=F("student"),
    ).annotate(
        item_version_id=F("assignment_item__exercise_version_id"),
        other_copies=Exists(
            Variant.objects.filter(
                assignment_item_id=OuterRef("assignment_item_id"), student_id=OuterRef("student_id"),
                context=OuterRef("context"),
            ).exclude(pk=OuterRef("pk"))
        ),
    ).order_by()[:1],
    variant_id=int,
)


def _lock_variant(variant: Variant) -> Variant | None:
    """Lock the variant's row; returns it as read in the lock, with the student's
    accommodation on its assignment (``carried_accommodation``), ``item_version_id``,
    the version its assignment item has now (None for practice), and ``other_copies``,
    whether the student has another copy of the item. Call inside a transaction."""
    return _VARIANT_LOCKED_WITH_ACCOMMODATION.first(variant_id=variant.pk)


VERSION_CHANGED = (
    "Your instructor changed this exercise to a new version, so this page's copy no longer "
    "takes answers; nothing was stored. Reload the page to see the new version. The answers "
    "you already saved are kept and still count."
)


def _refuse_if_version_switched(locked: Variant | None) -> None:
    """Refuse an answer to a copy made under a version its item no longer has (a page opened
    before the instructor switched the version): the student's next view gives them a new
    copy under the new version, and the answers saved on this one stay as they are
    (docs/exams.md, "Changing an exam or homework students have started"). Call under the
    variant's lock, which read the item's version (``_lock_variant``)."""
    item_version_id = getattr(locked, "item_version_id", None)
    if item_version_id is not None and item_version_id != locked.exercise_version_id:
        raise SubmissionRefused(VERSION_CHANGED, code="version_changed")


SOLVED_ON_EARLIER_VERSION = (
    "You already solved this part on the earlier version of this exercise, and that answer "
    "still counts; nothing was stored."
)


def _refuse_if_solved_on_earlier_copy(locked: Variant | None, *, part: str, solved_shown: bool) -> None:
    """Refuse an answer to a part the student solved on another copy of the item (one made
    under a version the instructor has switched away from since): it counts as solved, and
    the page shows it so, with no form (``exercises.selectors.parts_solved_on_earlier_copies``).
    Not while the review policy hides correctness (``solved_shown``), as for a part solved on
    this copy. Call under the variant's lock; reads the other copies' answers only when the
    lock's row says there are other copies (``_lock_variant``)."""
    if locked is None or not solved_shown or not getattr(locked, "other_copies", False):
        return
    if parts_solved_on_earlier_copies(variant=locked, part_keys=[part]):
        raise SubmissionRefused(SOLVED_ON_EARLIER_VERSION, code="solved_earlier")


def _window_in_lock(*, assignment, student, accommodation, now) -> Window | None:
    """The student's window, read inside the answer's transaction after its locks (None
    for practice): the accommodation came with the variant's lock."""
    if assignment is None:
        return None
    return student_window(assignment=assignment, student=student, accommodation=accommodation, now=now)


def _refuse_if_window_closed(window: Window | None) -> None:
    """Call inside the transaction, after locking the variant (and the exam's attempt):
    a deadline or an attempt's end is decided in the lock that stores the answer."""
    if window is not None and window.refusal is not None:
        code, message = window.refusal
        raise SubmissionRefused(message, code=code)


def _refuse_if_no_attempt_left(*, attempts: dict, allowed: int, solved_shown: bool = True) -> None:
    """Call inside the transaction, after locking the variant row."""
    if attempts["solved"] and solved_shown:
        raise SubmissionRefused("You have already solved this part.", code="solved")
    if allowed and attempts["used"] >= allowed:
        raise SubmissionRefused(
            f"You have used all {allowed} attempts for this part.", code="no_attempts"
        )


def grading_queue(*, practice: bool) -> str:
    """Practice answers have their own queue (and workers): a flood of them cannot delay
    a graded assignment answer."""
    return settings.PRACTICE_QUEUE if practice else settings.CELERY_TASK_DEFAULT_QUEUE


def submission_enqueue(*, submission_id: int, practice: bool = False) -> bool:
    """Hand a stored submission to the worker (or grade it here in inline mode).

    Returns False when the broker could not be reached; the submission stays
    ``queued`` and the sweeper sends it again later, so nothing is lost.
    """
    if settings.GRADING_MODE == "inline":
        submission_grade(submission_id=submission_id)
        return True
    from attnquiz.enqueue import task_send

    try:
        task_send("grading.tasks.grade_submission", args=[submission_id], queue=grading_queue(practice=practice))
    except Exception:  # the broker being down must never fail the student's request
        logger.warning("broker unreachable; submission %s left queued", submission_id, exc_info=True)
        return False
    return True


def _quoted_table_and_columns(*names: str) -> list[str]:
    """The submissions table's name, then each field's column, quoted for this database."""
    quote = connection.ops.quote_name
    return [quote(Submission._meta.db_table)] + [quote(Submission._meta.get_field(name).column) for name in names]


@functools.cache
def _claim_statement() -> str:
    """The claim every grade starts with, written once (the ORM compiled it per answer)."""
    table, pk, status, deliveries = _quoted_table_and_columns("id", "status", "deliveries")
    return (
        f"UPDATE {table} SET {status} = %s, {deliveries} = {deliveries} + 1 "
        f"WHERE {pk} = %s AND {status} IN (%s, %s)"
    )


def _claim_for_grading(submission_id: int) -> bool:
    """Mark the submission as being graded and count the delivery; False if already done."""
    claimed = prepared_execute(
        _claim_statement(),
        (SubmissionStatus.GRADING.value, submission_id, SubmissionStatus.QUEUED.value, SubmissionStatus.GRADING.value),
    )
    return claimed == 1


# The worker reads every answer it grades this way: compiled once.
_SUBMISSION_TO_GRADE = PreparedRead(
    lambda *, submission_id: Submission.objects.select_related(
        "variant__exercise_version", "variant__assignment_item__assignment"
    ).filter(pk=submission_id).order_by()[:1],
    submission_id=int,
)


def submission_grade(*, submission_id: int) -> Submission | None:
    """Grade one submission exactly once. Idempotent and safe to call concurrently.

    Returns the submission, or None if it does not exist.
    """
    if not _claim_for_grading(submission_id):
        return Submission.objects.filter(pk=submission_id).first()
    submission = _SUBMISSION_TO_GRADE.first(submission_id=submission_id)
    if submission is None:  # deleted since it was claimed
        return None
    if submission.deliveries > settings.GRADING_MAX_DELIVERIES:
        return _finish_could_not_grade(
            submission,
            message="We tried to grade this answer several times and could not finish.",
        )
    if settings.GRADING_FAULT_DELAY_SECONDS:
        time.sleep(settings.GRADING_FAULT_DELAY_SECONDS)
    context = part_context(variant=submission.variant, part=submission.part)
    grade = grade_answer(context=context, raw_answer=submission.raw_answer)
    if grade.details.get("could_not_grade"):
        return _finish_could_not_grade(submission, message=grade.feedback)
    return _finish_graded(submission, grade=grade, context=context)


def submission_give_up(*, submission_id: int, message: str) -> Submission | None:
    """Mark a submission being graded as could-not-grade (e.g. after a time limit)."""
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None or submission.status != SubmissionStatus.GRADING:
        return submission
    return _finish_could_not_grade(submission, message=message)


def grade_answer(*, context: PartContext, raw_answer) -> answers.Grade:
    """The pure grading step: the same result whether run in a worker or inline."""
    if context.answer_type in answers.SANDBOXED_TYPES:
        from grading.core import sandbox  # forks a limited child process; only these types

        return sandbox.check_isolated(
            context.answer_type, context.expected, raw_answer, context.options
        )
    return answers.check(context.answer_type, context.expected, raw_answer, context.options)


def awarded_score(*, score: float, attempt: int, is_late: bool, assignment) -> float:
    if assignment is None:
        return score
    penalty = assignment.penalty_per_extra_attempt * (attempt - 1)
    if is_late:
        penalty += assignment.late_penalty
    return max(0.0, score * (1.0 - penalty))


def feedback_payload(grade: answers.Grade, *, slip_count: int = 1) -> dict:
    """The stored feedback. ``slip_count`` is how many times (this one included) the
    student has made this grade's misconception: from the second time on, the
    misconception message says so, in the message too, so whatever shows or hides the
    misconception shows or hides the count with it."""
    from grading.core.misconceptions import MISCONCEPTIONS, repeat_note

    code = grade.misconception or ""
    misconception_message = MISCONCEPTIONS.get(code, "")
    message = grade.feedback
    note = repeat_note(code, slip_count) if misconception_message else ""
    if note:
        message = message.replace(misconception_message, f"{misconception_message} {note}")
        misconception_message = f"{misconception_message} {note}"
    return {
        "message": message,
        "misconception_message": misconception_message,
        "details": grade.details,
    }


def misconception_slip_count(submission: Submission, code: str) -> int:
    """This submission and the student's earlier ones diagnosed with ``code``.

    One indexed count, and only for a diagnosed wrong answer: right answers (the hot
    path the query-count tests pin) pay nothing."""
    if not code:
        return 1
    earlier = Submission.objects.filter(
        student_id=submission.student_id, misconception=code, pk__lt=submission.pk
    ).count()
    return earlier + 1


def _finish_graded(submission: Submission, *, grade, context: PartContext) -> Submission:
    is_manual = context.answer_type in MANUAL_TYPES
    item = submission.variant.assignment_item
    values = {
        "status": SubmissionStatus.MANUAL if is_manual else SubmissionStatus.GRADED,
        "score": None if is_manual else grade.score,
        "awarded": None
        if is_manual
        else awarded_score(
            score=grade.score,
            attempt=submission.attempt,
            is_late=submission.is_late,
            assignment=item.assignment if item else None,
        ),
        "correct": None if is_manual else grade.correct,
        "feedback": feedback_payload(
            grade, slip_count=misconception_slip_count(submission, grade.misconception or "")
        ),
        "misconception": grade.misconception or "",
        "graded_at": timezone.now(),
    }
    _store_outcome(submission, values)
    return submission


def _finish_could_not_grade(submission: Submission, *, message: str) -> Submission:
    values = {
        "status": SubmissionStatus.COULD_NOT_GRADE,
        "feedback": {
            "message": f"{message} This did not use up an attempt, and your instructor can "
            "see the answer.",
            "details": {"could_not_grade": True},
        },
        "graded_at": timezone.now(),
    }
    _store_outcome(submission, values)
    return submission


@functools.cache
def _outcome_statement(fields: tuple[str, ...]) -> str:
    """Storing an outcome with these fields, written once per set of fields (the ORM
    compiled it per answer): only while the submission is still being graded."""
    table, pk, status, *columns = _quoted_table_and_columns("id", "status", *fields)
    assignments = ", ".join(f"{column} = %s" for column in columns)
    return f"UPDATE {table} SET {assignments} WHERE {pk} = %s AND {status} = %s"


def _outcome_params(submission_id: int, values: dict) -> list:
    """The values as the ORM would store them (JSON adapted, times converted)."""
    prepared = [
        Submission._meta.get_field(name).get_db_prep_save(value, connection) for name, value in values.items()
    ]
    return prepared + [submission_id, SubmissionStatus.GRADING.value]


def _store_outcome(submission: Submission, values: dict) -> None:
    # Only the delivery that still sees "grading" may write; a concurrent one is a no-op.
    # One transaction with the receivers' writes (the LMS passback outbox row).
    with transaction.atomic():
        stored = prepared_execute(_outcome_statement(tuple(values)), _outcome_params(submission.pk, values))
        if stored:
            for field, value in values.items():
                setattr(submission, field, value)
            grade_announce(submission_id=submission.pk)  # sent once this commits
            grade_changed_publish(submission=submission, change=GradeChange.GRADED)
    if not stored:
        submission.refresh_from_db()


def submissions_requeue_stale(*, older_than: timedelta | None = None) -> list[int]:
    """Send again every submission still queued (or stuck grading) after ``older_than``."""
    if older_than is None:
        older_than = timedelta(seconds=settings.GRADING_STALE_AFTER_SECONDS)
    cutoff = timezone.now() - older_than
    stale = list(
        Submission.objects.filter(
            status__in=(SubmissionStatus.QUEUED, SubmissionStatus.GRADING),
            queued_at__lt=cutoff,
        )
        .order_by("queued_at")
        .values_list("pk", "variant__assignment_item_id")
    )
    requeued = []
    for submission_id, item_id in stale:
        Submission.objects.filter(pk=submission_id).update(queued_at=timezone.now())
        if submission_enqueue(submission_id=submission_id, practice=item_id is None):
            requeued.append(submission_id)
    return requeued


def queue_heartbeat_record(*, queue: str, worker: str) -> None:
    """A worker consumed the heartbeat ping from ``queue`` now (idempotent: two beats may ping)."""
    QueueHeartbeat.objects.update_or_create(
        queue=queue, defaults={"consumed_at": timezone.now(), "worker": worker[:200]}
    )
