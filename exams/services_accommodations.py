"""Writes of accommodations: set or remove one student's, import many from CSV (a dry run
first), and extend one student's time from the proctor view. Every change is logged
(AccommodationChange) with what changed, in words.

Values are checked here, once, for the page's form and the CSV alike: numbers within
bounds, dates in order (against the assignment's own where the accommodation keeps
them), an absolute time limit not mixed with extra time.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Min, Q
from django.utils import timezone

from accounts.identifiers import email_normalise
from attnquiz.confirmations import Confirmed, confirmation_require, confirmation_token, scope_of
from attnquiz.input_limits import unstorable_date_reason
from courses.import_report import ImportLine, LineReport
from courses.models import Assignment, AssignmentKind, EnrolmentStatus, Role
from courses.services import csv_lines, require_course_writable
from courses.time_text import course_time_text

from .models import (
    Accommodation,
    AccommodationAction,
    AccommodationChange,
    AssignmentAttempt,
    AttemptCloseReason,
    CourseAccommodation,
)
from .selectors_accommodations import (
    accommodation_merge,
    accommodation_summary,
    course_zone,
    limits_apply,
)
from .selectors_reopen import reopen_sentence
from .services import attempts_end_due
from .window import COURSE_WIDE_FIELDS, AttemptState, end_due, window_compute

LIMIT_FIELDS = (
    "opens_at", "due_at", "closes_at", "time_limit_minutes", "time_factor", "extra_minutes",
    "attempts_per_part",
)
FIELDS = LIMIT_FIELDS + ("note",)
DATE_FIELDS = ("opens_at", "due_at", "closes_at")
# (lowest, highest) accepted; a week of minutes is more than any sitting needs.
BOUNDS = {
    "time_factor": (1.0, 10.0),
    "extra_minutes": (0, 10_080),
    "time_limit_minutes": (1, 10_080),
    "attempts_per_part": (0, 1_000),
}
MAX_EXTEND_MINUTES = 600
MAX_CSV_BYTES = 1_000_000
MAX_CSV_ROWS = 2_000
COURSE_FIELDS = COURSE_WIDE_FIELDS + ("note",)
# ``scope``: empty or "assignment" for the assignment's own accommodation, "course" for
# the student's course-wide one (time factor, extra minutes, attempts per part, note).
CSV_COLUMNS = ("username", "email") + FIELDS + ("scope",)
SCOPE_ASSIGNMENT, SCOPE_COURSE = "assignment", "course"
# A cell a spreadsheet would run as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class AccommodationExists(Exception):
    """Nothing was changed: the student already has this accommodation (``current``), and
    the caller asked to add a new one. The page shows it for editing instead of replacing
    it with the values given."""

    def __init__(self, current):
        super().__init__(f"{current.student_id} already has an accommodation")
        self.current = current


class AccommodationRefused(Exception):
    """Nothing was changed. ``problems`` maps a field (or "" for the whole) to its message."""

    def __init__(self, message: str, *, problems: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.problems = problems or {}


def accommodation_problems(*, assignment: Assignment, values: dict) -> dict[str, str]:
    """What is wrong with these accommodation values (field -> message); empty if nothing.

    ``values`` holds typed values (None for "keep the assignment's")."""
    problems: dict[str, str] = {}
    for name, (low, high) in BOUNDS.items():
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            problems[name] = "Give a finite number."
        elif not low <= value <= high:
            problems[name] = {
                "time_factor": "Give a factor between 1 and 10 (1.5 is 50 % extra time).",
                "extra_minutes": f"Give between 0 and {high} minutes.",
                "time_limit_minutes": f"Give between 1 and {high} minutes.",
                "attempts_per_part": f"Give between 0 (unlimited) and {high} attempts.",
            }[name]
    if values.get("time_limit_minutes") is not None and (
        values.get("time_factor") is not None or values.get("extra_minutes") is not None
    ):
        problems.setdefault(
            "time_limit_minutes",
            "Give either the student's own time limit or extra time (a factor, minutes), not both.",
        )
    if not assignment.time_limit_minutes and (
        values.get("time_factor") is not None or values.get("extra_minutes")
    ):
        problems.setdefault(
            "time_factor" if values.get("time_factor") is not None else "extra_minutes",
            "This assignment has no time limit, so extra time changes nothing; "
            "give the student's own time limit instead.",
        )
    note = values.get("note") or ""
    if len(note) > 200:
        problems["note"] = "Keep the note to 200 characters."
    elif note.startswith(FORMULA_STARTS):
        problems["note"] = "A note may not start with = + - @ (a spreadsheet would run it as a formula)."
    opens, due, closes = (
        values.get(name) if values.get(name) is not None else getattr(assignment, name)
        for name in DATE_FIELDS
    )
    if opens and due and due < opens:
        problems.setdefault("due_at", "The student's due date is before their opening date.")
    if due and closes and closes < due:
        problems.setdefault("closes_at", "The student's close date is before their due date.")
    if opens and closes and closes < opens:
        problems.setdefault("closes_at", "The student's close date is before their opening date.")
    return problems


def _is_empty(values: dict, fields=FIELDS) -> bool:
    return all(values.get(name) in (None, "") for name in fields)


def _changes_text(*, before, values: dict, tz, fields=FIELDS) -> str:
    """What changes, in words: "time factor — → 1.5; closes Thu 5 Mar 2026, 09:00 CET → —"."""
    words = []
    for name in fields:
        old = getattr(before, name) if before is not None else None
        new = values.get(name)
        if name == "note":
            old, new = old or None, new or None
        if old != new:
            words.append(f"{_label(name)} {_shown(old, tz)} → {_shown(new, tz)}")
    return "; ".join(words)


def values_text(values: dict, *, tz, fields=FIELDS) -> str:
    """The values given, in words ("extra minutes 5; note DSO ref 12"); empty ones left out."""
    return "; ".join(
        f"{_label(name)} {_shown(values.get(name), tz)}" for name in fields if values.get(name) not in (None, "")
    )


def _label(name: str) -> str:
    return name.replace("_at", "").replace("_", " ")


def _shown(value, tz) -> str:
    if value is None:
        return "—"
    if isinstance(value, datetime):
        return course_time_text(value, tz)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _log(*, assignment=None, course=None, student_id, action, detail, actor) -> AccommodationChange:
    """One line of the log: of an assignment's accommodation, or (``course``, no
    ``assignment``) of a course-wide one."""
    return AccommodationChange.objects.create(
        assignment=assignment, course=course, student_id=student_id, action=action, detail=detail[:500], by=actor
    )


def _store(
    *, assignment: Assignment, student_id: int, values: dict, actor, action: str,
    confirmed: Confirmed = False, only_new: bool = False, questions: list[str] | None = None,
) -> tuple[str, str]:
    """Create, change or remove one accommodation; returns (what happened, in words).
    Call inside a transaction; the values are checked. ``confirmed`` (as
    attnquiz.confirmations.Confirmed): a change that ends or shortens the student's running
    attempt raises ConfirmationNeeded, saving nothing, unless it confirms the sentence
    computed here. ``questions``: the CSV import's list, which takes that sentence instead,
    to ask once for all its rows. ``only_new``: raise AccommodationExists if the student
    has one."""
    require_course_writable(course=assignment.course)
    attempts = AssignmentAttempt.objects.filter(assignment=assignment, student_id=student_id)
    # An attempt whose time is over is ended (at its deadline) before its limits change, so
    # more time given here never reopens it; the proctor's extension does, asking first
    # when the student has seen its review.
    attempts_end_due(attempts=attempts)
    tz = course_zone(assignment)
    rows = Accommodation.objects.filter(assignment=assignment, student_id=student_id)
    current = rows.select_for_update().first()
    if only_new and current is not None:
        raise AccommodationExists(current)
    question = ""
    if current is not None or not _is_empty(values):
        question = accommodation_cut_sentence(
            assignment=assignment, student_id=student_id, current=current, values=values, tz=tz,
        )
        _ask_or_collect(
            scope=scope_of("exams.accommodation", assignment.pk, student_id, change=_change_of(values)),
            question=question, confirmed=confirmed, questions=questions,
        )
    return _row_store(
        rows=rows, new=lambda: Accommodation(assignment=assignment, student_id=student_id), fields=FIELDS,
        values=values, tz=tz, scope="", actor=actor, action=action,
        log=lambda **line: _log(assignment=assignment, student_id=student_id, actor=actor, **line),
        note=_stays_finished_note(assignment=assignment, attempt=attempts.first(), values=values, tz=tz)
        + _question_note(question, confirmed),
    )


def _ask_or_collect(*, scope: str, question: str, confirmed: Confirmed, questions: list[str] | None) -> None:
    """Ask ``question`` now (ConfirmationNeeded unless ``confirmed`` answers it), or, for the
    CSV import, add it to ``questions``: the import asks once, for every row it cuts."""
    if questions is None:
        confirmation_require(scope=scope, message=question, confirmed=confirmed)
    elif question:
        questions.append(question)


def _question_note(question: str, confirmed: Confirmed) -> str:
    """What the log and the caller read of the question a change asked: the confirmed
    sentence (a page, the CSV import); said as it is where it was not answered by a token
    (a dry run, scripts that pass True)."""
    if not question:
        return ""
    return f" (confirmed: {question})" if isinstance(confirmed, str) else f"; {question}"


def _change_of(values: dict, fields=FIELDS) -> dict:
    return {name: values.get(name) for name in fields}


# ---------------------------------------------------------------------------
# What a change does to a running attempt (asked before it is saved)
# ---------------------------------------------------------------------------


def _end_under(*, assignment: Assignment, accommodation, started_at, now) -> datetime | None:
    due = end_due(limits_apply(assignment=assignment, accommodation=accommodation, started_at=started_at, now=now))
    return due[0] if due is not None else None


def _cut_phrase(
    *, assignment: Assignment, who: str, attempt, clock_started_at, before, after, now, tz, on: bool = False,
) -> str:
    """What ``after`` (an applied accommodation) does to the student's running attempt
    compared with ``before``: "ends sam's running attempt now (it was to end at 23:22 UTC)",
    "shortens sam's running attempt from 23:22 UTC to 23:17 UTC", or "" when it does not end
    or shorten one (not started, finished, over already, or as long or longer). ``on``:
    name the assignment ("… running attempt on Exam two …")."""
    exam = assignment.kind == AssignmentKind.EXAM
    if clock_started_at is None or (exam and attempt is None):
        return ""
    if attempt is not None and attempt.finished_at is not None:
        return ""
    ends_before = _end_under(assignment=assignment, accommodation=before, started_at=clock_started_at, now=now)
    if ends_before is not None and now >= ends_before:
        return ""  # over already: the closer ends it whatever the change
    ends_after = _end_under(assignment=assignment, accommodation=after, started_at=clock_started_at, now=now)
    if ends_after is None or (ends_before is not None and ends_after >= ends_before):
        return ""
    what = f"{who}'s running attempt" if exam else f"{who}'s working time"
    if on:
        what += f" on {assignment.title}"

    def shown(value):
        return course_time_text(value, tz, short=True, now=now)

    if now >= ends_after:
        was = f" (it was to end at {shown(ends_before)})" if ends_before is not None else ""
        return f"ends {what} now{was}"
    if ends_before is None:
        return f"makes {what}, which had no end, end at {shown(ends_after)}"
    return f"shortens {what} from {shown(ends_before)} to {shown(ends_after)}"


def _cut_sentence(phrases: list[str]) -> str:
    phrases = [phrase for phrase in phrases if phrase]
    if not phrases:
        return ""
    return "This " + "; it ".join(phrases) + "."


def _started_at(*, assignment: Assignment, student_id: int, attempt):
    """When the student's clock started (exercises.selectors.assignment_started_at, by id)."""
    from exercises.models import Variant

    if attempt is not None or assignment.kind == AssignmentKind.EXAM:
        return attempt.started_at if attempt is not None else None
    return (
        Variant.objects.filter(assignment_item__assignment=assignment, student_id=student_id)
        .order_by("created_at").values_list("created_at", flat=True).first()
    )


def _username(student_id: int) -> str:
    return get_user_model().objects.filter(pk=student_id).values_list("username", flat=True).first() or "the student"


def accommodation_cut_sentence(
    *, assignment: Assignment, student_id: int, current, values: dict, tz, now=None,
) -> str:
    """The question a change of one student's accommodation on ``assignment`` (from
    ``current``, the stored row or None, to ``values``) asks before it is saved, when it
    ends or shortens their running attempt: "This shortens sam's running attempt from
    23:22 UTC to 23:17 UTC."; "" when it does neither (a longer time saves at once)."""
    now = now or timezone.now()
    attempt = AssignmentAttempt.objects.filter(assignment=assignment, student_id=student_id).first()
    clock = _started_at(assignment=assignment, student_id=student_id, attempt=attempt)
    if clock is None:
        return ""
    course_wide = CourseAccommodation.objects.filter(course_id=assignment.course_id, student_id=student_id).first()
    own = None if _is_empty(values) else SimpleNamespace(**{name: values.get(name) for name in LIMIT_FIELDS})
    phrase = _cut_phrase(
        assignment=assignment, who=_username(student_id), attempt=attempt, clock_started_at=clock,
        before=accommodation_merge(own=current, course_wide=course_wide),
        after=accommodation_merge(own=own, course_wide=course_wide), now=now, tz=tz,
    )
    return _cut_sentence([phrase])


def course_accommodation_cut_sentence(*, course, student_id: int, current, values: dict, now=None) -> str:
    """The same question for a change of the student's course-wide accommodation (from
    ``current`` to ``values``), over every assignment of the course with a time limit (the
    only ones its time factor and extra minutes change), each named."""
    from exercises.models import Variant

    now = now or timezone.now()
    assignments = list(
        Assignment.objects.filter(course=course, time_limit_minutes__isnull=False).select_related("course").order_by("pk")
    )
    if not assignments:
        return ""
    attempts = {
        attempt.assignment_id: attempt
        for attempt in AssignmentAttempt.objects.filter(assignment__in=assignments, student_id=student_id)
    }
    opened = dict(
        Variant.objects.filter(
            assignment_item__assignment__in=[a for a in assignments if a.kind != AssignmentKind.EXAM],
            student_id=student_id,
        )
        .order_by()
        .values("assignment_item__assignment_id")
        .annotate(first=Min("created_at"))
        .values_list("assignment_item__assignment_id", "first")
    )
    own = {row.assignment_id: row for row in Accommodation.objects.filter(assignment__in=assignments, student_id=student_id)}
    new = None if _is_empty(values, COURSE_FIELDS) else SimpleNamespace(**{name: values.get(name) for name in COURSE_WIDE_FIELDS})
    who = _username(student_id)
    phrases = []
    for assignment in assignments:
        attempt = attempts.get(assignment.pk)
        clock = attempt.started_at if attempt is not None else opened.get(assignment.pk)
        phrases.append(_cut_phrase(
            assignment=assignment, who=who, attempt=attempt, clock_started_at=clock,
            before=accommodation_merge(own=own.get(assignment.pk), course_wide=current),
            after=accommodation_merge(own=own.get(assignment.pk), course_wide=new),
            now=now, tz=course_zone(assignment), on=True,
        ))
    return _cut_sentence(phrases)


def _stays_finished_note(*, assignment: Assignment, attempt, values: dict, tz) -> str:
    """Said of a change that would give time to an attempt the clock or the close date has
    ended: it stays finished (an accommodation never reopens one)."""
    if attempt is None or attempt.finished_at is None or attempt.close_reason not in (
        AttemptCloseReason.TIME_UP, AttemptCloseReason.CLOSED,
    ):
        return ""
    course_wide = CourseAccommodation.objects.filter(course_id=assignment.course_id, student_id=attempt.student_id).first()
    own = SimpleNamespace(**{name: values.get(name) for name in LIMIT_FIELDS})
    now = timezone.now()
    limits = limits_apply(
        assignment=assignment, accommodation=accommodation_merge(own=own, course_wide=course_wide),
        started_at=attempt.started_at, now=now,
    )
    if limits.deadline is None or limits.deadline <= now:
        return ""
    return (
        f"; their attempt ended at {course_time_text(attempt.finished_at, tz, short=True, now=now)} and stays "
        "finished (extend their time on the proctor page to reopen it)"
    )


def _row_store(
    *, rows, new, fields, values: dict, tz, scope: str, actor, action: str, log, note: str = ""
) -> tuple[str, str]:
    """The one way an accommodation row (an assignment's or a course-wide one) is created,
    changed or removed, and logged: ``scope`` prefixes what the log and the caller read;
    ``note`` follows the change in both."""
    current = rows.select_for_update().first()
    detail = _changes_text(before=current, values=values, tz=tz, fields=fields)
    if not detail:
        return "skip", "no change"
    if _is_empty(values, fields):
        current.delete()
        removed = f"{scope} removed" if scope else "removed"
        log(action=AccommodationAction.REMOVE, detail=f"{removed} ({detail}){note}")
        return "remove", f"{removed}: {detail}{note}"
    outcome = "change" if current is not None else "add"
    row = current or new()
    for name in fields:
        setattr(row, name, values.get(name) if name != "note" else values.get("note") or "")
    row.updated_by = actor
    row.save()
    detail = (f"{scope}: {detail}" if scope else detail) + note
    log(action=action, detail=detail)
    return outcome, detail


def accommodation_set(
    *, assignment: Assignment, student, values: dict, actor, confirmed: Confirmed = False, only_new: bool = False,
) -> tuple[str, str]:
    """Set one student's accommodation to ``values`` (every field; None keeps the
    assignment's value; all None removes it). Returns (add|change|remove|skip, detail).
    Raises AccommodationRefused (changing nothing) for bad values; ConfirmationNeeded
    (changing nothing) when the change ends or shortens the student's running attempt and
    ``confirmed`` does not confirm that sentence (a page passes ``confirmed_of(POST)``;
    a script passes True to apply it; left out, it asks as False does, so no caller cuts
    a student's time without saying so); AccommodationExists (changing nothing) with
    ``only_new`` when the student already has one (the page's "add" form)."""
    problems = accommodation_problems(assignment=assignment, values=values)
    if problems:
        raise AccommodationRefused("Check the values marked.", problems=problems)
    with transaction.atomic():
        return _store(
            assignment=assignment, student_id=student.pk, values=values, actor=actor,
            action=AccommodationAction.SET, confirmed=confirmed, only_new=only_new,
        )


def accommodation_remove(*, assignment: Assignment, student, actor, confirmed: Confirmed = False) -> bool:
    """Remove one student's accommodation (logged); False when there was none. Asks first
    (ConfirmationNeeded) as accommodation_set when that ends or shortens a running attempt."""
    with transaction.atomic():
        outcome, _ = _store(
            assignment=assignment, student_id=student.pk, values={}, actor=actor,
            action=AccommodationAction.REMOVE, confirmed=confirmed,
        )
    return outcome == "remove"


# ---------------------------------------------------------------------------
# Course-wide accommodations
# ---------------------------------------------------------------------------


class _TimedAssignment:
    """Stands for "an assignment with a time limit and no dates" when course-wide values
    are checked by the assignment's rules."""

    time_limit_minutes = 1
    opens_at = due_at = closes_at = None


_TIMED = _TimedAssignment()


def course_accommodation_problems(*, values: dict) -> dict[str, str]:
    """What is wrong with these course-wide values (field -> message); empty if nothing.

    The same bounds as an assignment's; the dates and an own time limit belong to one
    assignment, so a course-wide accommodation refuses them. Extra time is not refused for
    want of a limit: it counts on each assignment that has one."""
    problems = accommodation_problems(
        assignment=_TIMED, values={name: values.get(name) for name in COURSE_FIELDS}
    )
    for name in LIMIT_FIELDS:
        if name not in COURSE_FIELDS and values.get(name) is not None:
            problems.setdefault(
                name,
                "A course-wide accommodation sets only a time factor, extra minutes and attempts "
                "per part; set dates and an own time limit on the assignment.",
            )
    return problems


def _course_store(
    *, course, student_id: int, values: dict, actor, action: str, confirmed: Confirmed = False,
    only_new: bool = False, questions: list[str] | None = None,
) -> tuple[str, str]:
    """Create, change or remove one course-wide accommodation; returns (what happened, in
    words). Call inside a transaction; the values are checked. ``confirmed``, ``questions``
    and ``only_new`` as ``_store``'s, over every assignment of the course."""
    require_course_writable(course=course)
    # As for one assignment's (``_store``): on every exam of the course.
    attempts_end_due(attempts=AssignmentAttempt.objects.filter(assignment__course=course, student_id=student_id))
    rows = CourseAccommodation.objects.filter(course=course, student_id=student_id)
    current = rows.select_for_update().first()
    if only_new and current is not None:
        raise AccommodationExists(current)
    question = ""
    if current is not None or not _is_empty(values, COURSE_FIELDS):
        question = course_accommodation_cut_sentence(course=course, student_id=student_id, current=current, values=values)
        _ask_or_collect(
            scope=scope_of("exams.course_accommodation", course.pk, student_id, change=_change_of(values, COURSE_FIELDS)),
            question=question, confirmed=confirmed, questions=questions,
        )
    return _row_store(
        rows=rows, new=lambda: CourseAccommodation(course=course, student_id=student_id), fields=COURSE_FIELDS,
        values=values, tz=None, scope="course-wide", actor=actor, action=action,
        log=lambda **line: _log(course=course, student_id=student_id, actor=actor, **line),
        note=_question_note(question, confirmed),
    )


def course_accommodation_set(
    *, course, student, values: dict, actor, confirmed: Confirmed = False, only_new: bool = False,
) -> tuple[str, str]:
    """Set one student's course-wide accommodation to ``values`` (time factor, extra
    minutes, attempts per part, note; None keeps each assignment's value; all None removes
    it). Returns (add|change|remove|skip, detail). Raises AccommodationRefused (changing
    nothing) for bad values; ConfirmationNeeded and AccommodationExists as
    accommodation_set."""
    problems = course_accommodation_problems(values=values)
    if problems:
        raise AccommodationRefused("Check the values marked.", problems=problems)
    with transaction.atomic():
        return _course_store(
            course=course, student_id=student.pk, values=values, actor=actor, action=AccommodationAction.SET,
            confirmed=confirmed, only_new=only_new,
        )


def course_accommodation_remove(*, course, student, actor, confirmed: Confirmed = False) -> bool:
    """Remove one student's course-wide accommodation (logged); False when there was none.
    Asks first as course_accommodation_set."""
    with transaction.atomic():
        outcome, _ = _course_store(
            course=course, student_id=student.pk, values={}, actor=actor, action=AccommodationAction.REMOVE,
            confirmed=confirmed,
        )
    return outcome == "remove"


# ---------------------------------------------------------------------------
# Extending one student's time (the proctor view)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Extension:
    accommodation: Accommodation
    deadline: datetime | None
    reopened: bool
    started: bool  # the student's clock had started (an exam's attempt, homework's first exercise)


def _reopen_scope(*, assignment: Assignment, student, minutes: int) -> str:
    return f"exams.reopen:{assignment.pk}:{student.pk}:{minutes}"


def accommodation_extend(
    *, assignment: Assignment, student, minutes, actor, confirmed: Confirmed = False
) -> Extension:
    """Give one student ``minutes`` more, at once: added to their own time limit if they
    have one, else to their extra minutes. If their close date would cut the new time
    short, their own close date moves with it. Logged.

    A student whose time has run out (an exam's attempt the clock or the close date ended,
    recorded or not yet by the closer; homework's time or close date) is given their time
    again when the new deadline is still ahead: reopened. When the review policy has shown
    them verdicts, scores or worked solutions since it ended, the reopening needs a
    confirmation of that, in numbers (``ConfirmationNeeded``, nothing saved; ``confirmed``
    as attnquiz.confirmations.Confirmed), decided here under the locks of the attempt and
    the accommodation that store the extension. Refused (AccommodationRefused, nothing
    saved) with the reason: an extension too short to reopen (with the least that does),
    an attempt the student finished or an instructor closed, an exam closed for a student
    who never started it."""
    if not isinstance(minutes, int) or not 1 <= minutes <= MAX_EXTEND_MINUTES:
        raise AccommodationRefused(f"Give between 1 and {MAX_EXTEND_MINUTES} minutes.")
    require_course_writable(course=assignment.course)
    tz = course_zone(assignment)
    with transaction.atomic():
        now = timezone.now()
        attempt = (
            AssignmentAttempt.objects.select_for_update()
            .filter(assignment=assignment, student=student)
            .first()
        )
        accommodation = (
            Accommodation.objects.select_for_update()
            .filter(assignment=assignment, student=student)
            .first()
        ) or Accommodation(assignment=assignment, student=student)
        course_wide = CourseAccommodation.objects.filter(course_id=assignment.course_id, student=student).first()

        def applied():
            return accommodation_merge(own=accommodation, course_wide=course_wide)

        window = window_compute(
            assignment=assignment, accommodation=applied(), attempt=attempt,
            clock_started_at=_clock_start(assignment=assignment, student=student, attempt=attempt),
            archived=False, now=now,
        )
        before = window.limits
        if before.time_limit_seconds is None:
            raise AccommodationRefused("This assignment has no time limit to extend.")
        _refuse_if_no_time_counts(window=window, student=student, tz=tz)
        out_of_time = _out_of_time(window)
        if accommodation.time_limit_minutes:
            accommodation.time_limit_minutes += minutes
        else:
            # Added to the extra minutes in force, the course-wide ones included (the
            # assignment's own value replaces the course's, so it must carry them on).
            accommodation.extra_minutes = (applied().extra_minutes or 0) + minutes
        after = limits_apply(assignment=assignment, accommodation=applied(), started_at=before.started_at, now=now)
        detail = f"{minutes} minute{'s' * (minutes != 1)} more"
        if (
            before.started_at is not None
            and after.closes_at is not None
            and after.deadline == after.closes_at
        ):
            accommodation.closes_at = before.started_at + timedelta(seconds=after.time_limit_seconds)
            after = limits_apply(assignment=assignment, accommodation=applied(), started_at=before.started_at, now=now)
            detail += f"; closes {_shown(accommodation.closes_at, tz)} for them"
        reopened = out_of_time and after.deadline is not None and after.deadline > now
        if out_of_time and not reopened:
            raise AccommodationRefused(
                _too_short_text(window=window, student=student, minutes=minutes, deadline=after.deadline, tz=tz)
            )
        if reopened:
            question = reopen_sentence(assignment=assignment, student=student, window=window)
            confirmation_require(
                scope=_reopen_scope(assignment=assignment, student=student, minutes=minutes),
                message=question, confirmed=confirmed,
            )
        accommodation.updated_by = actor
        accommodation.save()
        if reopened and attempt is not None and attempt.finished_at is not None:
            attempt.finished_at = None
            attempt.close_reason = ""
            attempt.save(update_fields=["finished_at", "close_reason"])
        if reopened:
            detail += "; the attempt closed by the clock is open again" if window.is_exam else "; their time runs again"
            if question:
                detail += f" (confirmed: {question})"
        _log(assignment=assignment, student_id=student.pk, action=AccommodationAction.EXTEND,
             detail=detail, actor=actor)
    return Extension(
        accommodation=accommodation, deadline=after.deadline, reopened=reopened,
        started=before.started_at is not None,
    )


def _out_of_time(window) -> bool:
    """Whether the student's clock started and their time is over: an exam's attempt ended
    by the clock or the close date (recorded, or due and not yet recorded by the closer);
    homework whose time ran out or that closed for them after they began."""
    if window.is_exam:
        return window.state == AttemptState.TIMED_OUT and window.end_reason in (
            AttemptCloseReason.TIME_UP, AttemptCloseReason.CLOSED,
        )
    limits = window.limits
    return limits.started_at is not None and (limits.is_time_up(window.now) or limits.is_closed(window.now))


def _refuse_if_no_time_counts(*, window, student, tz) -> None:
    """Refuse an extension that no time can make count: an attempt the student finished or
    an instructor closed (time does not reopen those), an exam that closed for a student who
    never started it (their close date, not their time limit, keeps them out)."""
    name = student.username
    attempt = window.attempt
    if window.is_exam and attempt is not None and attempt.finished_at is not None:
        at = course_time_text(attempt.finished_at, tz, short=True, now=window.now)
        if attempt.close_reason == AttemptCloseReason.FINISHED:
            raise AccommodationRefused(
                f"{name} finished their attempt at {at}: more time does not reopen it, so nothing was changed."
            )
        if attempt.close_reason == AttemptCloseReason.INSTRUCTOR:
            raise AccommodationRefused(
                f"An instructor closed {name}'s attempt at {at}: more time does not reopen it, "
                "so nothing was changed."
            )
    if window.is_exam and attempt is None and window.limits.is_closed(window.now):
        at = course_time_text(window.limits.closes_at, tz, short=True, now=window.now)
        raise AccommodationRefused(
            f"The exam closed for {name} at {at} before they started it: more time does not let them "
            "start, so nothing was changed. Give them a later close date on the accommodations page."
        )


def _too_short_text(*, window, student, minutes: int, deadline, tz) -> str:
    """Why an extension leaves the student's time over, and the least that reopens it: their
    deadline moves by exactly the minutes given (the close date moves with it), so it must
    pass now."""
    limits = window.limits
    base = limits.started_at + timedelta(seconds=limits.time_limit_seconds)
    least = max(1, math.floor((window.now - base).total_seconds() / 60) + 1)
    ends = course_time_text(deadline, tz, short=True, now=window.now)
    stays = "their attempt stays finished" if window.is_exam else "their time stays up"
    text = (
        f"With {minutes} minute{'s' * (minutes != 1)} more, {student.username}'s time would end at {ends}, "
        f"which has passed: {stays} and nothing was changed."
    )
    if least > MAX_EXTEND_MINUTES:
        return text + f" Reopening it takes at least {least} minutes, more than one extension gives ({MAX_EXTEND_MINUTES})."
    return text + f" Give at least {least} minutes to reopen it."


def extension_text(extension: Extension, *, student, minutes: int, assignment: Assignment) -> str:
    """What the proctor page says of an extension done: "sam has 5 minutes more. Their time
    now ends at 10:15 CET." ("Their attempt is open again until …" when it reopened)."""
    text = f"{student.username} has {minutes} minute{'s' * (minutes != 1)} more"
    if extension.reopened:
        ends = course_time_text(extension.deadline, course_zone(assignment), short=True)
        again = "Their attempt is open again" if assignment.kind == AssignmentKind.EXAM else "Their time runs again"
        return f"{text}. {again} until {ends}."
    if extension.started and extension.deadline is not None:
        ends = course_time_text(extension.deadline, course_zone(assignment), short=True)
        return f"{text}. Their time now ends at {ends}."
    return f"{text}."


def _clock_start(*, assignment: Assignment, student, attempt):
    from exercises.selectors import assignment_started_at

    if attempt is not None:
        return attempt.started_at
    return assignment_started_at(assignment=assignment, student=student)


# ---------------------------------------------------------------------------
# CSV import
# ---------------------------------------------------------------------------

IMPORT_ACTIONS = ("add", "change", "remove", "skip", "error")


@dataclass(frozen=True)
class TimeCut:
    """A row of the import that ends or shortens its student's running attempt (or working
    time): ``sentence`` is the question the form would ask of it."""

    line: int
    who: str
    sentence: str


@dataclass
class ImportReport(LineReport):
    """The import's lines, and the rows that cut a student's time short: ``question`` puts
    them in words, and a dry run's ``token`` confirms exactly them for the same file."""

    ACTIONS = IMPORT_ACTIONS
    cuts: list[TimeCut] = field(default_factory=list)
    question: str = ""
    token: str = ""


def _import_question(cuts: list[TimeCut]) -> str:
    """"Importing this file cuts the time of 2 students short. Line 3: This shortens sam's
    running attempt from 10:35 CET to 10:30 CET. Line 5: …"; "" when no row cuts."""
    if not cuts:
        return ""
    students = len({cut.who for cut in cuts})
    each = " ".join(f"Line {cut.line}: {cut.sentence}" for cut in cuts)
    return f"Importing this file cuts the time of {students} student{'s' * (students != 1)} short. {each}"


def _import_scope(*, assignment: Assignment, rows: list[dict]) -> str:
    """A confirmation of one file's import: its rows, on this assignment."""
    return scope_of("exams.accommodations_import", assignment.pk, change=[dict(row) for row in rows])


def accommodation_rows_from_csv(text: str) -> list[dict]:
    """The rows of an accommodations CSV, each a dict of its known columns and its ``line``.

    Raises AccommodationRefused for a file that is not one at all (too large, too many
    rows, no username or email column, an unknown column, unreadable CSV); a bad row is
    left for ``accommodations_import`` to report."""
    if len(text) > MAX_CSV_BYTES:
        raise AccommodationRefused(f"The file is larger than {MAX_CSV_BYTES // 1000} kB; split it.")
    if "\x00" in text:
        # Python's csv reads NUL characters since 3.11, and the database refuses them.
        raise AccommodationRefused("The file contains NUL characters: it is not a text CSV.")
    reader = csv.reader(csv_lines(text), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise AccommodationRefused("The file is empty.")
        columns = [name.strip().lower().replace(" ", "_") for name in header]
        unknown = [name for name in columns if name and name not in CSV_COLUMNS]
        if unknown:
            raise AccommodationRefused(
                f"Unknown column '{unknown[0][:40]}'. The columns are: {', '.join(CSV_COLUMNS)}."
            )
        if "username" not in columns and "email" not in columns:
            raise AccommodationRefused(
                "The first line must name the columns, with a 'username' or 'email' column."
            )
        rows = []
        for values in reader:
            if not any(value.strip() for value in values):
                continue
            if len(rows) >= MAX_CSV_ROWS:
                raise AccommodationRefused(f"The file has more than {MAX_CSV_ROWS} rows; split it.")
            row = {"line": reader.line_num}
            for column, value in zip(columns, values):
                if column:
                    row[column] = value
            rows.append(row)
    except csv.Error as problem:
        raise AccommodationRefused(f"Line {reader.line_num} is not valid CSV: {problem}.") from None
    return rows


def _parse_number(name: str, text: str):
    kind = float if name == "time_factor" else int
    try:
        value = kind(text)
    except (ValueError, OverflowError):
        what = "a number" if kind is float else "a whole number"
        raise ValueError(f"{_label(name)}: '{text[:20]}' is not {what}") from None
    if kind is float and not math.isfinite(value):
        raise ValueError(f"{_label(name)}: '{text[:20]}' is not a finite number")
    return value


def _parse_date(name: str, text: str, tz) -> datetime:
    """An ISO date and time; without an offset it is the course's local time."""
    if len(text) < 16:
        raise ValueError(f"{_label(name)}: '{text[:30]}' needs a date and a time, e.g. 2026-03-05 09:00")
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{_label(name)}: '{text[:30]}' is not a date and time like 2026-03-05 09:00"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz)
    if unstorable_date_reason(value):
        raise ValueError(f"{_label(name)}: '{text[:30]}' is not between 1 January 1900 and 31 December 2999")
    return value


def _row_values(row: dict, tz) -> tuple[dict, list[str]]:
    values, errors = {}, []
    for name in FIELDS:
        text = str(row.get(name) or "").strip()
        if not text:
            values[name] = None
            continue
        if name == "note":
            values[name] = text
            continue
        try:
            values[name] = (
                _parse_date(name, text, tz) if name in DATE_FIELDS else _parse_number(name, text)
            )
        except ValueError as problem:
            errors.append(str(problem))
    return values, errors


def _course_students(*, assignment: Assignment, rows: list[dict]) -> tuple[dict, dict]:
    """The course's active students named by the rows, by username and by e-mail: one
    query. An e-mail finds a student only through the address their account has confirmed
    (accounts.models.TrustedEmail, while it is still the account's e-mail): anyone can type
    a classmate's address into their profile, and must not receive the classmate's
    accommodation by it."""
    usernames = {str(row.get("username") or "").strip() for row in rows} - {""}
    emails = {email_normalise(str(row.get("email") or "")) for row in rows} - {""}
    User = get_user_model()
    students = User.objects.annotate(trusted=F("trusted_email__email")).filter(
        Q(username__in=usernames) | Q(trusted_email__email__in=emails),
        enrolments__course=assignment.course,
        enrolments__role=Role.STUDENT,
        enrolments__status=EnrolmentStatus.ACTIVE,
    ) if (usernames or emails) else User.objects.none()
    by_username, by_email = {}, {}
    for student in students.only("pk", "username", "email"):
        by_username[student.username] = student
        if student.trusted and student.trusted == email_normalise(student.email or ""):
            by_email[student.trusted] = student
    return by_username, by_email


def _row_student(row: dict, by_username: dict, by_email: dict):
    username = str(row.get("username") or "").strip()
    email = email_normalise(str(row.get("email") or ""))
    if not username and not email:
        raise ValueError("needs a username or an e-mail")
    if username:
        student = by_username.get(username)
        if student is None:
            raise ValueError(f"'{username[:40]}' is not a student of this course")
        if email and email_normalise(student.email or "") != email:
            raise ValueError(f"'{username[:40]}' has another e-mail address")
        return student
    student = by_email.get(email)
    if student is None:
        raise ValueError(
            f"no student of this course has confirmed the e-mail '{email[:60]}'; give the username instead"
        )
    return student


def accommodations_import(
    *, assignment: Assignment, rows: list[dict], dry_run: bool, actor, confirmed: Confirmed = False,
) -> ImportReport:
    """Set the accommodations the rows give: one report line per row, in order.

    A row sets the student's whole accommodation: an empty cell keeps the assignment's
    value, a row of empty cells removes it. A row whose ``scope`` is "course" sets the
    student's course-wide accommodation instead (its time factor, extra minutes, attempts
    per part and note; any other value is an error of that row). A bad row is reported and changes nothing;
    the good rows are applied together. A dry run computes the same report and rolls
    it all back; importing the same file again changes nothing (every line "skip").

    Rows that end or shorten a student's running attempt (or working time) ask first, as
    the form does, once for the whole file: the dry run lists them (``cuts``, ``question``)
    with the ``token`` that confirms them; the import raises ConfirmationNeeded, changing
    nothing, unless ``confirmed`` is that token, for these rows and the same numbers now
    (True, for scripts, applies them)."""
    report = ImportReport(dry_run=dry_run)
    tz = course_zone(assignment)
    by_username, by_email = _course_students(assignment=assignment, rows=rows)
    seen: dict[tuple[str, int], int] = {}
    with transaction.atomic():
        for index, row in enumerate(rows):
            line = row.get("line") if isinstance(row.get("line"), int) else index + 2
            who = str(row.get("username") or row.get("email") or "").strip()[:254]
            try:
                student = _row_student(row, by_username, by_email)
            except ValueError as problem:
                report.lines.append(ImportLine(line, who, "error", str(problem)))
                continue
            scope = str(row.get("scope") or "").strip().lower() or SCOPE_ASSIGNMENT
            if scope not in (SCOPE_ASSIGNMENT, SCOPE_COURSE):
                report.lines.append(ImportLine(
                    line, who, "error", f"scope: '{scope[:20]}' is neither 'assignment' nor 'course' (empty is 'assignment')"
                ))
                continue
            if (scope, student.pk) in seen:
                report.lines.append(ImportLine(line, who, "error", f"the same student as line {seen[scope, student.pk]}"))
                continue
            seen[scope, student.pk] = line
            values, errors = _row_values(row, tz)
            if not errors:
                problems = (
                    course_accommodation_problems(values=values) if scope == SCOPE_COURSE
                    else accommodation_problems(assignment=assignment, values=values)
                )
                errors = [f"{_label(name)}: {message}" for name, message in problems.items()]
            if errors:
                report.lines.append(ImportLine(line, who, "error", "; ".join(errors)))
                continue
            asked: list[str] = []
            store = _course_store if scope == SCOPE_COURSE else _store
            where = {"course": assignment.course} if scope == SCOPE_COURSE else {"assignment": assignment}
            action, detail = store(
                **where, student_id=student.pk, values=values, actor=actor, action=AccommodationAction.IMPORT,
                confirmed=True if dry_run else confirmed, questions=asked,
            )
            report.cuts.extend(TimeCut(line, student.username, question) for question in asked)
            report.lines.append(ImportLine(line, student.username, action, detail))
        report.question = _import_question(report.cuts)
        scope = _import_scope(assignment=assignment, rows=rows)
        if dry_run:
            report.token = confirmation_token(scope=scope, message=report.question) if report.question else ""
            transaction.set_rollback(True)
        else:
            # Raised inside the transaction: nothing of the file is kept.
            confirmation_require(scope=scope, message=report.question, confirmed=confirmed)
    return report


def accommodation_text(accommodation: Accommodation | None, assignment: Assignment) -> str:
    """The accommodation in words, in the course's zone (for the log and the pages)."""
    return accommodation_summary(accommodation, tz=course_zone(assignment))
