"""Who an edit of an assignment reaches while students sit it: the attempts started on it
(working now, finished), and which running attempts a shorter time limit or an earlier
close date would end now or cut short. One query (the attempts with each student's
accommodations joined in), decided at save time; the editing views ask for a confirmation
whenever anyone is reached, and the sentences below name the effect in numbers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace

from django.db.models import F
from django.utils import timezone

from courses.models import Assignment
from exams.models import AssignmentAttempt
from exams.selectors_accommodations import carried_accommodation, course_zone, with_own_accommodation
from exams.window import end_due, limits_apply

LIMIT_FIELDS = ("opens_at", "due_at", "closes_at", "time_limit_minutes", "attempts_per_part")


@dataclass(frozen=True)
class AttemptsReached:
    """The students an edit reaches: ``working`` (attempt running now), ``finished``
    (attempt ended: by them, the clock, the close date or the instructor), and of the
    working ones, those a new time limit or close date ends at once (``ended_now``) or
    cuts short (``shortened``)."""

    working: int = 0
    finished: int = 0
    ended_now: int = 0
    shortened: int = 0

    @property
    def anyone(self) -> bool:
        return bool(self.working or self.finished)

    @property
    def cut(self) -> bool:
        return bool(self.ended_now or self.shortened)


def _attempts_read(assignment: Assignment) -> list[AssignmentAttempt]:
    return list(
        with_own_accommodation(
            AssignmentAttempt.objects.filter(assignment=assignment),
            assignment_path="assignment", student=F("student"),
        )
    )


def _end_of(limits) -> datetime | None:
    due = end_due(limits)
    return due[0] if due is not None else None


def attempts_reached(
    *, assignment: Assignment, stored: dict | None = None, new_limits: dict | None = None,
    now: datetime | None = None,
) -> AttemptsReached:
    """The attempts started on ``assignment``, and with ``new_limits`` (the limit fields an
    edit would set) how many running attempts those end now or shorten. ``stored``: the
    limit fields as saved, when a form has already copied new values onto the instance
    (``limit_fields_of`` read before). One query."""
    now = now or timezone.now()
    stored = SimpleNamespace(**(stored or limit_fields_of(assignment)))
    changed = SimpleNamespace(**{**vars(stored), **(new_limits or {})})
    working = finished = ended_now = shortened = 0
    for attempt in _attempts_read(assignment):
        accommodation = carried_accommodation(attempt)
        before = _end_of(limits_apply(assignment=stored, accommodation=accommodation, started_at=attempt.started_at, now=now))
        if attempt.finished_at is not None or (before is not None and now >= before):
            finished += 1
            continue
        working += 1
        after = _end_of(limits_apply(assignment=changed, accommodation=accommodation, started_at=attempt.started_at, now=now))
        if after is not None and now >= after:
            ended_now += 1
        elif after is not None and (before is None or after < before):
            shortened += 1
    return AttemptsReached(working=working, finished=finished, ended_now=ended_now, shortened=shortened)


def limit_fields_of(assignment: Assignment) -> dict:
    return {name: getattr(assignment, name) for name in LIMIT_FIELDS}


# --- The sentences ---------------------------------------------------------------------


def _students(count: int) -> str:
    return f"{count} student{'s' * (count != 1)}"


def who_sentence(reached: AttemptsReached, *, noun: str = "exam") -> str:
    """ "3 students are working on this exam now and 12 have finished." """
    working, finished = reached.working, reached.finished
    if working and finished:
        verb = "are" if working != 1 else "is"
        return f"{_students(working)} {verb} working on this {noun} now and {finished} {'have' if finished != 1 else 'has'} finished."
    if working:
        return f"{_students(working)} {'are' if working != 1 else 'is'} working on this {noun} now."
    return f"{_students(finished)} {'have' if finished != 1 else 'has'} finished this {noun}."


def _points(value: float) -> str:
    text = f"{value:g}"
    return f"{text} point{'s' * (value != 1)}"


def _finished_score_nothing(reached: AttemptsReached) -> str:
    return " Those who have finished cannot answer it and score 0 on it." if reached.finished else ""


def item_add_sentence(reached: AttemptsReached, *, titles: list[str], points: float) -> str:
    names = ", ".join(f"'{title}'" for title in titles)
    each = " each" if len(titles) != 1 else ""
    return (
        f"{who_sentence(reached)} Adding {names} adds {_points(points)}{each} to their totals."
        f"{_finished_score_nothing(reached)}"
    )


def pool_add_sentence(reached: AttemptsReached, *, pool: str, count: int, points: float) -> str:
    return (
        f"{who_sentence(reached)} Adding the pool '{pool}' ({count} exercises, one given to each "
        f"student) adds {_points(points)} to their totals.{_finished_score_nothing(reached)}"
    )


def item_remove_sentence(reached: AttemptsReached, *, title: str) -> str:
    return f"{who_sentence(reached)} Removing '{title}' takes its points out of their totals."


def item_points_sentence(reached: AttemptsReached, *, title: str, before: float, after: float) -> str:
    return (
        f"{who_sentence(reached)} Changing '{title}' from {_points(before)} to {_points(after)} "
        "changes their totals."
    )


def limits_change_phrase(*, assignment: Assignment, stored: dict, new_limits: dict) -> str:
    """What the edit does to the clock, in words: "Shortening the time limit to 10 min"."""
    parts = []
    old_limit, new_limit = stored.get("time_limit_minutes"), new_limits.get("time_limit_minutes")
    if new_limit and (not old_limit or new_limit < old_limit):
        parts.append(f"shortening the time limit to {new_limit} min" if old_limit else f"setting a time limit of {new_limit} min")
    old_close, new_close = stored.get("closes_at"), new_limits.get("closes_at")
    if new_close is not None and (old_close is None or new_close < old_close):
        local = timezone.localtime(new_close, course_zone(assignment))
        parts.append(f"moving the close date to {local:%d %b %Y %H:%M}")
    text = " and ".join(parts) or "this change"
    return text[0].upper() + text[1:]


def limits_cut_sentence(reached: AttemptsReached, *, phrase: str) -> str:
    """ "Shortening the time limit to 10 min ends 1 running attempt now and shortens 2 others." """
    effects = []
    if reached.ended_now:
        effects.append(f"ends {reached.ended_now} running attempt{'s' * (reached.ended_now != 1)} now")
    if reached.shortened:
        if reached.ended_now:
            effects.append(f"shortens {reached.shortened} other{'s' * (reached.shortened != 1)}")
        else:
            effects.append(f"shortens {reached.shortened} running attempt{'s' * (reached.shortened != 1)}")
    return f"{phrase} {' and '.join(effects)}."
