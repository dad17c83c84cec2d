"""A student's window on one assignment: what they may do and see now.

One frozen value, computed once per request from (student, assignment, now): their own
dates and limits (accommodation applied), the state of their attempt, why an answer
would be refused, the attempts they have per part and what of a graded answer the review
policy shows. ``window_compute`` is the one rule; it is pure (no ORM, no clock of its
own: everything it needs is passed in) and tested as tables. ``exams.selectors.
student_window`` loads its inputs in one query.

This module sits right above the records: it imports models' choices only (never a
service, a selector, grading's pipeline, lti or instructor), so every layer above may
read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from fractions import Fraction

from django.conf import settings

from courses.models import AssignmentKind, ReleaseMoment

from .models import AttemptCloseReason

# Moodle's "immediately after the attempt" lasts two minutes; "later, while the quiz is
# still open" begins then.
REVIEW_LATER_AFTER = timedelta(minutes=2)

POLICY_FIELDS = (
    ("correctness", "show_correctness"),
    ("score", "show_score"),
    ("misconception", "show_misconception"),
    ("hints", "show_hints"),
    ("heatmap", "show_heatmap"),
    ("solutions", "show_solutions"),
)


class AttemptState:
    """Where the student's attempt is. Homework has no attempt of its own (NONE)."""

    NONE = "none"
    NOT_STARTED = "not_started"
    RUNNING = "running"
    FINISHED = "finished"  # by the student's "Finish attempt"
    TIMED_OUT = "timed_out"  # by the clock, the close date or the instructor


# --- Limits -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudentLimits:
    """One student's limits on one assignment, accommodation applied."""

    opens_at: datetime | None
    due_at: datetime | None
    closes_at: datetime | None
    # The student's own time limit, in whole seconds (a factor may make it fractional
    # minutes: 25 min x 1.5 is 2250 s); None without a limit.
    time_limit_seconds: int | None
    attempts_per_part: int  # 0 means unlimited
    # When the student's clock started (None before it has, and without a time limit).
    started_at: datetime | None
    # When the student's time runs out: min(start + limit, closes_at); counted from now
    # while the clock has not started. None without a time limit.
    deadline: datetime | None
    accommodation: object | None

    @property
    def time_limit_minutes(self) -> int | float | None:
        if self.time_limit_seconds is None:
            return None
        minutes = Fraction(self.time_limit_seconds, 60)
        return int(minutes) if minutes.denominator == 1 else float(minutes)

    def is_late(self, now: datetime) -> bool:
        return bool(self.due_at and now > self.due_at)

    def is_closed(self, now: datetime) -> bool:
        return bool(self.closes_at and now > self.closes_at)

    def is_not_open_yet(self, now: datetime) -> bool:
        return bool(self.opens_at and now < self.opens_at)

    def is_time_up(self, now: datetime) -> bool:
        return bool(self.deadline and now >= self.deadline)


# The fields a course-wide accommodation may set (the dates and an own time limit belong
# to one assignment).
COURSE_WIDE_FIELDS = ("time_factor", "extra_minutes", "attempts_per_part")
ACCOMMODATION_FIELDS = (
    "opens_at", "due_at", "closes_at", "time_limit_minutes", "time_factor", "extra_minutes",
    "attempts_per_part",
)


@dataclass(frozen=True)
class EffectiveAccommodation:
    """A student's accommodation on one assignment as it applies: the assignment's own
    (``own``) merged over the course-wide one (``course_wide``), field by field. Empty
    fields (None) keep the assignment's value, as an Accommodation's do."""

    opens_at: datetime | None
    due_at: datetime | None
    closes_at: datetime | None
    time_limit_minutes: int | None
    time_factor: float | None
    extra_minutes: int | None
    attempts_per_part: int | None
    own: object | None = field(default=None, compare=False, repr=False)
    course_wide: object | None = field(default=None, compare=False, repr=False)

    @property
    def note(self) -> str:
        return getattr(self.own, "note", "") or getattr(self.course_wide, "note", "") or ""

    def source(self, name: str) -> str:
        """Where a field's value comes from: "assignment", "course" or "" (neither: the
        assignment's own limit applies)."""
        if self.own is not None and getattr(self.own, name, None) is not None:
            return "assignment"
        if name in COURSE_WIDE_FIELDS and self.course_wide is not None and getattr(self.course_wide, name) is not None:
            return "course"
        return ""

    @property
    def overridden(self) -> tuple[str, ...]:
        """The course-wide fields the assignment's own accommodation overrides."""
        if self.own is None or self.course_wide is None:
            return ()
        return tuple(
            name for name in COURSE_WIDE_FIELDS
            if getattr(self.course_wide, name) is not None and getattr(self.own, name) is not None
        )


def accommodation_merge(*, own, course_wide) -> EffectiveAccommodation | None:
    """The accommodation that applies to a student on one assignment (pure).

    Field by field: the assignment's own accommodation (``own``), when it sets the field,
    wins; else the course-wide one (``course_wide``: time factor, extra minutes, attempts
    per part); else the field stays empty and the assignment's value applies. None when
    the student has neither. An already merged ``own`` is returned as it is."""
    if isinstance(own, EffectiveAccommodation):
        return own
    if own is None and course_wide is None:
        return None
    values = {}
    for name in ACCOMMODATION_FIELDS:
        value = getattr(own, name, None) if own is not None else None
        if value is None and name in COURSE_WIDE_FIELDS and course_wide is not None:
            value = getattr(course_wide, name)
        values[name] = value
    return EffectiveAccommodation(**values, own=own, course_wide=course_wide)


def accommodated_time_limit_seconds(*, limit_minutes: int | None, accommodation) -> int | None:
    """The student's time limit in whole seconds (rounded up), or None for none.

    An accommodation's own ``time_limit_minutes`` replaces the assignment's limit (even
    where the assignment has none); otherwise the limit is multiplied by ``time_factor``
    and ``extra_minutes`` are added. Extra time without a limit changes nothing.
    """
    if accommodation is not None and accommodation.time_limit_minutes:
        return accommodation.time_limit_minutes * 60
    if not limit_minutes:
        return None
    # Exact arithmetic: 25 min x 1.1 is 1650 s, not the 1651 a float would round up to.
    seconds = Fraction(limit_minutes * 60)
    if accommodation is not None and accommodation.time_factor:
        seconds *= Fraction(repr(accommodation.time_factor))
    if accommodation is not None and accommodation.extra_minutes:
        seconds += accommodation.extra_minutes * 60
    return math.ceil(seconds)


def limits_apply(*, assignment, accommodation, started_at: datetime | None, now: datetime | None = None) -> StudentLimits:
    """The assignment's limits with ``accommodation`` applied (each empty field keeps the
    assignment's value). ``started_at`` is when the student's clock started, if it has;
    before that a deadline is counted from ``now``."""

    def own(field: str):
        value = getattr(accommodation, field) if accommodation is not None else None
        return getattr(assignment, field) if value is None else value

    closes_at = own("closes_at")
    seconds = accommodated_time_limit_seconds(
        limit_minutes=assignment.time_limit_minutes, accommodation=accommodation
    )
    deadline = None
    if seconds is not None:
        if started_at is None and now is None:
            from django.utils import timezone  # only callers without a clock of their own

            now = timezone.now()
        deadline = (started_at or now) + timedelta(seconds=seconds)
        if closes_at is not None:
            deadline = min(deadline, closes_at)
    return StudentLimits(
        opens_at=own("opens_at"),
        due_at=own("due_at"),
        closes_at=closes_at,
        time_limit_seconds=seconds,
        attempts_per_part=own("attempts_per_part") or 0,
        started_at=started_at if seconds is not None else None,
        deadline=deadline,
        accommodation=accommodation,
    )


def duration_text(seconds: int) -> str:
    """A time limit in words: "1 minute", "37 minutes 30 seconds"."""
    minutes, rest = divmod(seconds, 60)
    words = [f"{minutes} minute{'s' * (minutes != 1)}"] if minutes else []
    if rest or not minutes:
        words.append(f"{rest} second{'s' * (rest != 1)}")
    return " ".join(words)


# --- Feedback visibility ------------------------------------------------------------------


@dataclass(frozen=True)
class FeedbackVisibility:
    """Which kinds of feedback the student may see now (each on its own)."""

    correctness: bool
    score: bool
    misconception: bool
    hints: bool
    heatmap: bool
    solutions: bool  # still bounded by the assignment's solution policy

    @property
    def everything(self) -> bool:
        return all(getattr(self, field.name) for field in fields(self))

    @property
    def grade_hidden(self) -> bool:
        """Neither verdict nor score: the student sees only "Answer saved"."""
        return not (self.correctness or self.score)


EVERYTHING = FeedbackVisibility(True, True, True, True, True, True)
NOTHING = FeedbackVisibility(False, False, False, False, False, False)


def policy_all_during(assignment) -> bool:
    return all(getattr(assignment, name) == ReleaseMoment.DURING for _, name in POLICY_FIELDS)


def moment_reached(
    moment: str, *, exam: bool, ended_at: datetime | None, closes_at: datetime | None,
    released_at: datetime | None, now: datetime,
) -> bool:
    """Whether one ReleaseMoment has come for this student (Moodle's review options).

    ``ended_at``: when the student's attempt ended (by Finish, the clock, their close
    date or the instructor), None while it has not. Every moment after "during" needs an
    ended attempt in an exam: a release, or another student's end, never reaches an
    attempt still running or one not started yet. Homework ends with the student's own
    close date (or an attempt ended for them)."""
    if moment == ReleaseMoment.DURING:
        return True
    ended = ended_at is not None and ended_at <= now
    if not ended:
        return moment == ReleaseMoment.ON_RELEASE and not exam and _released(released_at, now)
    if moment == ReleaseMoment.AFTER_FINISH:
        return True
    if moment == ReleaseMoment.LATER:
        return now >= ended_at + REVIEW_LATER_AFTER
    if moment == ReleaseMoment.AFTER_CLOSE:
        return closes_at is not None and now >= closes_at
    if moment == ReleaseMoment.ON_RELEASE:
        return _released(released_at, now)
    return False  # never, or a value this code does not know


def _released(released_at, now) -> bool:
    return released_at is not None and released_at <= now


def visibility_decide(
    *, assignment, exam: bool, ended_at: datetime | None, closes_at: datetime | None, now: datetime
) -> FeedbackVisibility:
    """The review policy of ``assignment`` applied at ``now``, each field on its own."""
    if policy_all_during(assignment):
        return EVERYTHING
    return FeedbackVisibility(
        **{
            kind: moment_reached(
                getattr(assignment, name), exam=exam, ended_at=ended_at, closes_at=closes_at,
                released_at=assignment.grades_released_at, now=now,
            )
            for kind, name in POLICY_FIELDS
        }
    )


# --- The window ---------------------------------------------------------------------------

NOT_STARTED_MESSAGE = "Start the exam on its assignment page before answering."
FINISHED_MESSAGE = "Your attempt is finished: it takes no more answers. The answers you saved count."
ARCHIVED_MESSAGE = "This course was archived by its instructors; it takes no more answers."


@dataclass(frozen=True)
class Window:
    """What one student may do and see on one assignment at ``now``."""

    now: datetime
    is_exam: bool
    limits: StudentLimits
    state: str  # an AttemptState
    started_at: datetime | None  # when the attempt (an exam's) started
    # When the attempt ended (for an exam: finished, or the clock or close date passed;
    # for homework: the close date passed), None while it has not.
    ended_at: datetime | None
    ended_by: str  # "you", "time", "close", "instructor" or "" while not ended
    end_reason: str  # the AttemptCloseReason it ended (or, past its deadline, must end) with
    refusal: tuple[str, str] | None  # why an answer is refused now: (code, message)
    visibility: FeedbackVisibility
    # The attempt record the window was computed from, for pages that link to it.
    attempt: object | None = field(default=None, compare=False, repr=False)
    archived: bool = False  # the course is archived: read-only, for its pages to say so

    @property
    def start_blocked(self) -> str:
        """Before an exam's Start, why it cannot be started now: "archived", "not_open" or
        "closed" (their own dates); "" when it can, and once started."""
        if self.state != AttemptState.NOT_STARTED:
            return ""
        if self.archived:
            return "archived"
        if self.limits.is_not_open_yet(self.now):
            return "not_open"
        if self.limits.closes_at is not None and self.now >= self.limits.closes_at:
            return "closed"
        return ""

    @property
    def running(self) -> bool:
        return self.state == AttemptState.RUNNING

    @property
    def ended(self) -> bool:
        return self.state in (AttemptState.FINISHED, AttemptState.TIMED_OUT)

    @property
    def takes_answers(self) -> bool:
        return self.refusal is None

    @property
    def attempts_per_part(self) -> int:
        return self.limits.attempts_per_part

    @property
    def deadline(self) -> datetime | None:
        """The moment the student's time runs out; None once the attempt has ended, before
        an exam's Start (its clock has not started) and without a limit."""
        if self.ended or self.state == AttemptState.NOT_STARTED:
            return None
        return self.limits.deadline

    @property
    def seconds_left(self) -> int | None:
        if self.deadline is None:
            return None
        return max(0, math.ceil((self.deadline - self.now).total_seconds()))

    def attempts_left(self, used: int) -> int | None:
        """Attempts left on a part with ``used`` attempts: None without a limit, and once
        the attempt has ended (no more answers at all, so none are "left")."""
        if self.ended or not self.attempts_per_part:
            return None
        return max(0, self.attempts_per_part - used)

    @property
    def latest_finish(self) -> datetime | None:
        """Before an exam's Start: the latest the student could finish if they started now
        (their own limit from now, at most their close date)."""
        if self.state != AttemptState.NOT_STARTED:
            return None
        if self.limits.time_limit_seconds is None:
            return self.limits.closes_at
        return self.limits.deadline  # counted from now, at most the close date


def window_compute(
    *, assignment, accommodation, attempt, clock_started_at: datetime | None, archived: bool, now: datetime,
    course_accommodation=None,
) -> Window:
    """The student's window (pure: every input is passed in).

    ``assignment``, ``accommodation`` and ``attempt`` are records or anything with their
    fields; ``course_accommodation``: the student's course-wide accommodation, which
    ``accommodation`` overrides field by field (``accommodation_merge``);
    ``clock_started_at``: when the student's clock started (an exam's attempt start;
    homework's first opened exercise), None before; ``archived``: the course is."""
    exam = assignment.kind == AssignmentKind.EXAM
    accommodation = accommodation_merge(own=accommodation, course_wide=course_accommodation)
    limits = limits_apply(
        assignment=assignment, accommodation=accommodation,
        started_at=attempt.started_at if exam and attempt is not None else clock_started_at, now=now,
    )
    state, ended_at, end_reason = _attempt_state(exam=exam, limits=limits, attempt=attempt, now=now)
    # For what the review policy shows, an exam the student never started ends for them
    # with their close date, as homework does.
    closes_at = limits.closes_at
    closed_at = closes_at if closes_at is not None and now >= closes_at else None
    shown_from = ended_at if exam and attempt is not None else (ended_at or closed_at)
    return Window(
        now=now,
        is_exam=exam,
        limits=limits,
        state=state,
        started_at=attempt.started_at if attempt is not None else None,
        ended_at=ended_at,
        ended_by=ENDED_BY.get(end_reason, "close") if end_reason else "",
        end_reason=end_reason,
        refusal=_refusal(exam=exam, attempt=attempt, limits=limits, archived=archived, now=now),
        visibility=visibility_decide(
            assignment=assignment, exam=exam, ended_at=shown_from, closes_at=closes_at, now=now
        ),
        attempt=attempt,
        archived=archived,
    )


# The feedback that tells a student answers (not hints, which help without telling).
REVEALING_KINDS = ("solutions", "correctness", "score", "misconception", "heatmap")


def shown_since_end(*, assignment, window: Window) -> tuple[str, ...]:
    """The revealing kinds of feedback (``REVEALING_KINDS``) the review policy shows the
    student now only because their attempt ended (or, of homework, their close date passed):
    shown at ``window.now`` and hidden from an attempt still running. Reopening it would let
    them answer with these in hand (pure)."""
    running = visibility_decide(
        assignment=assignment, exam=window.is_exam, ended_at=None, closes_at=window.limits.closes_at,
        now=window.now,
    )
    return tuple(
        kind for kind in REVEALING_KINDS if getattr(window.visibility, kind) and not getattr(running, kind)
    )


ENDED_BY = {
    AttemptCloseReason.FINISHED: "you",
    AttemptCloseReason.TIME_UP: "time",
    AttemptCloseReason.CLOSED: "close",
    AttemptCloseReason.INSTRUCTOR: "instructor",
}


def _attempt_state(*, exam: bool, limits: StudentLimits, attempt, now) -> tuple[str, datetime | None, str]:
    if attempt is not None and attempt.finished_at is not None:
        reason = attempt.close_reason
        state = AttemptState.FINISHED if reason == AttemptCloseReason.FINISHED else AttemptState.TIMED_OUT
        return (state if exam else AttemptState.NONE), attempt.finished_at, reason or AttemptCloseReason.CLOSED
    if not exam:
        return AttemptState.NONE, None, ""
    if attempt is None:
        return AttemptState.NOT_STARTED, None, ""
    due = end_due(limits)
    if due is not None and now >= due[0]:
        # The clock ran out before the closer came by: the attempt ended then.
        return AttemptState.TIMED_OUT, due[0], due[1]
    return AttemptState.RUNNING, None, ""


def end_due(limits: StudentLimits) -> tuple[datetime, str] | None:
    """When a running attempt must end and why (an AttemptCloseReason): the student's own
    deadline (start + their limit, at most their close date) or, without a limit, their
    close date. None: never."""
    if limits.deadline is not None and limits.deadline != limits.closes_at:
        return limits.deadline, AttemptCloseReason.TIME_UP
    if limits.closes_at is not None:
        return limits.closes_at, AttemptCloseReason.CLOSED
    return None


def _refusal(*, exam: bool, attempt, limits: StudentLimits, archived: bool, now) -> tuple[str, str] | None:
    """Why an answer must be refused now, in the order the student needs to hear it."""
    if exam and attempt is None:
        return ("not_started", NOT_STARTED_MESSAGE)
    if exam and attempt.finished_at is not None:
        return ("attempt_finished", FINISHED_MESSAGE)
    if archived:
        return ("archived", ARCHIVED_MESSAGE)
    if limits.is_closed(now):
        return ("closed", "This assignment is closed.")
    if limits.is_not_open_yet(now):
        return ("not_open", "This assignment is not open yet.")
    if limits.is_time_up(now):
        if limits.deadline == limits.closes_at:
            return ("closed", "This assignment is closed.")
        return ("time_up", f"Your time on this assignment is up: its limit is {duration_text(limits.time_limit_seconds)}.")
    return None


def clock_sentence(*, exam: bool, has_limit: bool) -> str:
    """The one true sentence on when the student's clock starts, for this kind."""
    if not has_limit:
        return ""
    if exam:
        return "The clock starts when you press Start and keeps running if you leave."
    return "The clock starts when you open the first exercise of this assignment, and keeps running if you leave."


def clock_view(window: Window) -> dict | None:
    """What a page shows of the student's time limit (None without one): before an exam's
    Start their own limit and latest finish; while it runs the server's seconds left (the
    page only counts them down); once the attempt ended no clock at all (``ended``). An
    archived course takes no answers however much time is left: no clock (None)."""
    limits = window.limits
    if limits.time_limit_seconds is None or window.archived:
        return None
    view = {
        "limit_minutes": limits.time_limit_minutes,
        "limit_text": duration_text(limits.time_limit_seconds),
        "sentence": clock_sentence(exam=window.is_exam, has_limit=True),
        "ended": window.ended,
        "started": False,
        "is_up": False,
        "deadline": None,
        "latest_finish": window.latest_finish,
        "seconds_left": None,
        "minutes_left": None,
        "poll_seconds": settings.EXAM_DEADLINE_POLL_SECONDS,
    }
    if window.ended or window.state == AttemptState.NOT_STARTED:
        return view
    started_at = window.started_at if window.is_exam else limits.started_at
    if started_at is None:  # homework whose first exercise is not open yet
        view["latest_finish"] = limits.deadline
        return view
    seconds = window.seconds_left
    view.update(
        started=True,
        started_at=started_at,
        deadline=limits.deadline,
        seconds_left=seconds,
        # Rounded up: 59.5 s left reads "1 minute", so a fresh 1-minute limit never says
        # "time is up"; only no time at all is zero.
        minutes_left=math.ceil(seconds / 60) if seconds else 0,
        is_up=not seconds,
    )
    return view
