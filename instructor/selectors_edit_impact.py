"""Who an edit of an assignment reaches while students work on it: the students who have
started it (an exam's Start; homework's first opened exercise), working now or finished,
and what the edit does to them: which running attempts a shorter time limit or an earlier
close date ends now or cuts short, who a lower number of attempts leaves without one,
who a new kind, new pools or another version of an exercise touches (of an exam made
homework: what those it lets answer again were shown after their attempt ended, counted as
the proctor's reopening counts it, exams.selectors_reopen.review_seen), who a more generous
review or solution policy shows verdicts, scores, feedback or solutions now, and whose
open pages a new address breaks. Decided at save
time; the editing views ask for a confirmation whenever anyone is reached, and the
sentences below name the effect in numbers. ``impact_token`` ties a confirmation to the
sentence it answered: once the numbers differ, it no longer confirms."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace

from django.db.models import Count, F, Min, Q
from django.utils import timezone

from courses import pools
from courses.models import Assignment, AssignmentItem, AssignmentKind, ReleaseMoment, Role, SolutionPolicy
from courses.time_text import course_time_text
from exams.models import Accommodation, AssignmentAttempt, CourseAccommodation
from exams.selectors_accommodations import (
    accommodation_merge,
    carried_accommodation,
    course_zone,
    with_own_accommodation,
)
from exams.selectors_reopen import ReviewSeen, StoredAnswer, answered_specs, review_seen, specs_needed
from exams.window import POLICY_FIELDS, REVIEW_LATER_AFTER, end_due, limits_apply, shown_since_end, window_compute
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus

LIMIT_FIELDS = ("opens_at", "due_at", "closes_at", "time_limit_minutes", "attempts_per_part")
# What a student sees of a graded answer, and from when: the review policy's six moments,
# the solution policy that also bounds worked solutions, and the release they may wait for.
REVIEW_FIELDS = (*(name for _, name in POLICY_FIELDS), "solution_policy")
@dataclass(frozen=True)
class AttemptsReached:
    """The students an edit reaches: ``working`` (attempt running now; of homework, opened
    and still open to them), ``finished`` (attempt ended: by them, the clock, the close
    date or the instructor), and of the working ones, those a new time limit or close date
    ends at once (``ended_now``) or cuts short (``shortened``). ``noun`` names the
    assignment's kind in the sentences."""

    working: int = 0
    finished: int = 0
    ended_now: int = 0
    shortened: int = 0
    noun: str = "exam"

    @property
    def anyone(self) -> bool:
        return bool(self.working or self.finished)

    @property
    def cut(self) -> bool:
        return bool(self.ended_now or self.shortened)


@dataclass(frozen=True)
class Started:
    """One student who has started the assignment, as its stored settings see them."""

    student_id: int
    working: bool
    clock_started_at: datetime | None  # an exam's Start; homework's first opened exercise
    ends_at: datetime | None  # when their attempt must end (None: never, or ended)
    attempt: AssignmentAttempt | None
    accommodation: object | None


def kind_noun(kind: str) -> str:
    return "exam" if kind == AssignmentKind.EXAM else "homework"


# --- Who has started ---------------------------------------------------------------------


def _attempts_read(assignment: Assignment) -> list[AssignmentAttempt]:
    return list(
        with_own_accommodation(
            AssignmentAttempt.objects.filter(assignment=assignment),
            assignment_path="assignment", student=F("student"),
        )
    )


def _exam_starts(assignment: Assignment) -> list[tuple]:
    """(student id, clock start, attempt, accommodation) of each attempt: one query."""
    return [
        (attempt.student_id, attempt.started_at, attempt, carried_accommodation(attempt))
        for attempt in _attempts_read(assignment)
    ]


def _homework_starts(assignment: Assignment) -> list[tuple]:
    """(student id, clock start, attempt, accommodation) of each student who opened an
    exercise of the homework (the clock starts there) or holds an attempt of it (a
    one-session homework makes one). Staff opening it are not students."""
    opened = dict(
        Variant.objects.filter(
            assignment_item__assignment=assignment,
            student__enrolments__course_id=assignment.course_id,
            student__enrolments__role=Role.STUDENT,
        )
        .order_by()
        .values("student_id")
        .annotate(first=Min("created_at"))
        .values_list("student_id", "first")
    )
    attempts = {attempt.student_id: attempt for attempt in _attempts_read(assignment)}
    unread = sorted(set(opened) - set(attempts))
    own = course_wide = {}
    if unread:
        own = {row.student_id: row for row in Accommodation.objects.filter(assignment=assignment, student_id__in=unread)}
        course_wide = {
            row.student_id: row
            for row in CourseAccommodation.objects.filter(course_id=assignment.course_id, student_id__in=unread)
        }
    starts = []
    for student_id in sorted(set(opened) | set(attempts)):
        attempt = attempts.get(student_id)
        accommodation = (
            carried_accommodation(attempt) if attempt is not None
            else accommodation_merge(own=own.get(student_id), course_wide=course_wide.get(student_id))
        )
        starts.append((student_id, opened.get(student_id), attempt, accommodation))
    return starts


def _end_of(limits) -> datetime | None:
    due = end_due(limits)
    return due[0] if due is not None else None


def students_started(
    *, assignment: Assignment, kind: str | None = None, stored: dict | None = None, now: datetime | None = None,
) -> list[Started]:
    """The students who have started ``assignment`` (of ``kind``, the stored one when a
    form has already copied a new kind onto the instance), working or finished under the
    ``stored`` limit fields. An exam: one query."""
    now = now or timezone.now()
    kind = kind or assignment.kind
    limits = SimpleNamespace(**(stored or limit_fields_of(assignment)))
    read = _exam_starts if kind == AssignmentKind.EXAM else _homework_starts
    started = []
    for student_id, clock_started_at, attempt, accommodation in read(assignment):
        ends_at = _end_of(limits_apply(assignment=limits, accommodation=accommodation, started_at=clock_started_at, now=now))
        ended = (attempt is not None and attempt.finished_at is not None) or (ends_at is not None and now >= ends_at)
        started.append(Started(
            student_id=student_id, working=not ended, clock_started_at=clock_started_at,
            ends_at=None if ended else ends_at, attempt=attempt, accommodation=accommodation,
        ))
    return started


def reached_of(started: list[Started], *, kind: str) -> AttemptsReached:
    working = sum(1 for start in started if start.working)
    return AttemptsReached(working=working, finished=len(started) - working, noun=kind_noun(kind))


def attempts_reached(
    *, assignment: Assignment, stored: dict | None = None, new_limits: dict | None = None,
    now: datetime | None = None, kind: str | None = None, started: list[Started] | None = None,
    new_kind: str | None = None,
) -> AttemptsReached:
    """The attempts started on ``assignment``, and with ``new_limits`` (the limit fields an
    edit would set) how many running attempts those end now or shorten. ``stored``: the
    limit fields as saved, when a form has already copied new values onto the instance
    (``limit_fields_of`` read before); ``kind`` likewise; ``new_kind``: the kind the edit
    sets, whose clock the new limits count from; ``started``: students_started, when the
    caller has read it. An exam: one query."""
    now = now or timezone.now()
    kind = kind or assignment.kind
    stored = stored or limit_fields_of(assignment)
    changed = SimpleNamespace(**{**stored, **(new_limits or {})})
    if started is None:
        started = students_started(assignment=assignment, kind=kind, stored=stored, now=now)
    clocks = _clocks_under(assignment=assignment, kind=kind, new_kind=new_kind or kind, started=started)
    ended_now = shortened = 0
    for start in started:
        if not start.working or start.student_id not in clocks:
            continue
        after = _end_of(limits_apply(
            assignment=changed, accommodation=start.accommodation, started_at=clocks[start.student_id], now=now
        ))
        if after is not None and now >= after:
            ended_now += 1
        elif after is not None and (start.ends_at is None or after < start.ends_at):
            shortened += 1
    reached = reached_of(started, kind=kind)
    return AttemptsReached(
        working=reached.working, finished=reached.finished, ended_now=ended_now, shortened=shortened,
        noun=reached.noun,
    )


def _first_opened(*, assignment: Assignment, student_ids: list[int]) -> dict[int, datetime]:
    """When each student opened their first exercise of the assignment (homework's clock)."""
    if not student_ids:
        return {}
    return dict(
        Variant.objects.filter(assignment_item__assignment=assignment, student_id__in=student_ids)
        .order_by()
        .values("student_id")
        .annotate(first=Min("created_at"))
        .values_list("student_id", "first")
    )


def _clocks_under(
    *, assignment: Assignment, kind: str, new_kind: str, started: list[Started]
) -> dict[int, datetime | None]:
    """When each working student's clock started under ``new_kind``: an exam's from its
    Start (a student without an attempt has none running: left out), homework's from the
    first opened exercise. No query when the kind stays."""
    working = [start for start in started if start.working]
    if new_kind == kind:
        return {start.student_id: start.clock_started_at for start in working}
    if new_kind == AssignmentKind.EXAM:
        return {start.student_id: start.attempt.started_at for start in working if start.attempt is not None}
    opened = _first_opened(assignment=assignment, student_ids=[start.student_id for start in working])
    return {start.student_id: opened.get(start.student_id) for start in working}


def limit_fields_of(assignment: Assignment) -> dict:
    return {name: getattr(assignment, name) for name in LIMIT_FIELDS}


# --- What else an edit does to them ------------------------------------------------------


def attempts_cut(*, assignment: Assignment, started: list[Started], old: int, new: int) -> list[tuple[int, int]]:
    """Of the students still working, those ``new`` attempts per part (from ``old``; 0 is
    unlimited) leave without an attempt on a part where they had one left, as (attempts
    they used there, how many students), most used first; each student counted once, at
    their highest such part. A student whose accommodation sets their own attempts is not
    reached. One query (none when the number does not go down)."""
    if not new or (old and new >= old):
        return []
    ids = [
        start.student_id for start in started
        if start.working and getattr(start.accommodation, "attempts_per_part", None) is None
    ]
    if not ids:
        return []
    used_per_part = (
        Submission.objects.filter(variant__assignment_item__assignment=assignment, student_id__in=ids)
        # An answer that could not be graded uses no attempt (grading.selectors).
        .exclude(status=SubmissionStatus.COULD_NOT_GRADE)
        .order_by()
        .values("student_id", "variant_id", "part")
        .annotate(used=Count("id"))
    )
    highest: dict[int, int] = {}
    for row in used_per_part:
        used = row["used"]
        if used >= new and (not old or used < old):
            highest[row["student_id"]] = max(highest.get(row["student_id"], 0), used)
    return sorted(Counter(highest.values()).items(), reverse=True)


# What a student who has finished was shown after their attempt ended, by kind, in the
# order the sentence names them: every worked solution or those of some parts, the verdicts
# and scores of their answers, the diagnoses of their mistakes, the correct weights.
SEEN_KINDS = ("solutions", "some solutions", "verdicts", "scores", "diagnoses", "weights")


def seen_kinds(seen: ReviewSeen) -> tuple[str, ...]:
    """The SEEN_KINDS of one student's ReviewSeen (exams.selectors_reopen)."""
    answered = bool(seen.graded)
    shown = {
        "solutions": seen.all_solutions,
        "some solutions": bool(seen.solution_parts) and not seen.all_solutions,
        "verdicts": answered and seen.verdicts,
        "scores": answered and seen.scores,
        "diagnoses": bool(seen.diagnoses),
        "weights": bool(seen.weight_parts),
    }
    return tuple(kind for kind in SEEN_KINDS if shown[kind])


@dataclass(frozen=True)
class KindChange:
    """What a new kind does to those who started: ``count`` students reached (see
    kind_change_counts) and, of an exam made homework, what those it lets answer again
    were shown after their attempt ended: ``seen``, (SEEN_KINDS shown, how many students)
    for each different set of kinds, most students first, then most kinds. Nobody shown
    anything: empty."""

    count: int
    seen: tuple[tuple[tuple[str, ...], int], ...] = ()


def _opened_and_answers(
    *, assignment: Assignment, student_ids: list[int]
) -> tuple[dict[int, datetime], dict[int, list[StoredAnswer]]]:
    """_first_opened of each student and their stored answers to the assignment (practice
    left out), read together: one query, each variant with its answers."""
    if not student_ids:
        return {}, {}
    rows = (
        Variant.objects.filter(assignment_item__assignment=assignment, student_id__in=student_ids)
        .order_by()
        .values_list(
            "student_id", "created_at", "context", "pk", "exercise_version_id",
            "submissions__part", "submissions__status", "submissions__correct", "submissions__misconception",
        )
    )
    opened: dict[int, datetime] = {}
    answers: dict[int, list[StoredAnswer]] = {}
    for student_id, created_at, context, variant_id, version_id, part, status, correct, misconception in rows:
        if student_id not in opened or created_at < opened[student_id]:
            opened[student_id] = created_at
        if part is not None and context.startswith("assignment:"):
            answers.setdefault(student_id, []).append(
                StoredAnswer(variant_id, part, status, correct, misconception, version_id)
            )
    return opened, answers


def _seen_groups(
    *, settings, shown: dict[int, tuple], answers: dict[int, list[StoredAnswer]]
) -> tuple[tuple[tuple[str, ...], int], ...]:
    """KindChange.seen of the students in ``shown`` (student id -> (window, kinds shown
    since the end)), counted by exams.selectors_reopen.review_seen over their ``answers``.
    One query for the exercises' specs when the correct weights are shown, else none."""
    own = {student_id: answers.get(student_id, []) for student_id in shown}
    needs_specs = any(specs_needed(kinds=kinds, answers=own[student_id]) for student_id, (_, kinds) in shown.items())
    specs = answered_specs([answer for rows in own.values() for answer in rows]) if needs_specs else None
    groups: Counter = Counter()
    for student_id, (window, kinds) in shown.items():
        seen = review_seen(assignment=settings, window=window, answers=own[student_id], specs=specs, kinds=kinds)
        if seen.anything:
            groups[seen_kinds(seen)] += 1
    order = {kind: position for position, kind in enumerate(SEEN_KINDS)}
    # Most students first; of as many, who was shown the most first.
    return tuple(sorted(
        groups.items(), key=lambda group: (-group[1], -len(group[0]), [order[kind] for kind in group[0]])
    ))


def kind_change_counts(
    *, assignment: Assignment, started: list[Started], new_kind: str, new_limits: dict, stored: dict,
    now: datetime | None = None,
) -> KindChange:
    """What a new kind does to those who started.

    Exam to homework: how many who have finished could answer again (homework takes
    answers until it closes for the student or their time, counted from the first
    exercise they opened, runs out; a finished attempt does not stop it), and what the
    exam's review policy has shown them since their attempt ended (``seen``: they would
    answer again with it in hand). Homework to exam: how many still working have no
    attempt yet, so must press Start before their next answer. ``stored``: the settings as
    saved (review_fields_of), which decide what they were shown. One query at most, and one
    more when the exam shows the correct attention weights only after an attempt ends."""
    now = now or timezone.now()
    if new_kind == AssignmentKind.EXAM:
        return KindChange(count=sum(1 for start in started if start.working and start.attempt is None))
    finished = [start for start in started if not start.working]
    # What each was shown since their attempt ended is decided by their window under the
    # stored exam settings (no query); their answers are read only when it shows anything.
    settings = SimpleNamespace(**stored)
    shown = {}
    for start in finished:
        window = window_compute(
            assignment=settings, accommodation=start.accommodation, attempt=start.attempt,
            clock_started_at=start.clock_started_at, archived=False, now=now,
        )
        kinds = shown_since_end(assignment=settings, window=window)
        if kinds:
            shown[start.student_id] = (window, kinds)
    ids = [start.student_id for start in finished]
    if shown:
        opened, answers = _opened_and_answers(assignment=assignment, student_ids=ids)
    else:
        opened, answers = _first_opened(assignment=assignment, student_ids=ids), {}
    limits = SimpleNamespace(**new_limits)
    reopened = []
    for start in finished:
        own = limits_apply(
            assignment=limits, accommodation=start.accommodation, started_at=opened.get(start.student_id), now=now
        )
        if not (own.is_closed(now) or own.is_not_open_yet(now) or own.is_time_up(now)):
            reopened.append(start.student_id)
    seen = _seen_groups(
        settings=settings, shown={student_id: shown[student_id] for student_id in reopened if student_id in shown},
        answers=answers,
    )
    return KindChange(count=len(reopened), seen=seen)


@dataclass(frozen=True)
class VersionSwitchReached:
    """Of a switch of one item to another version: the students still working who hold a
    copy of its current version (they get a new one), and those with answers to it."""

    opened: int
    answered: int


def version_switch_reached(*, item: AssignmentItem, started: list[Started]) -> VersionSwitchReached:
    """Two queries."""
    working = [start.student_id for start in started if start.working]
    opened = (
        Variant.objects.filter(assignment_item=item, exercise_version_id=item.exercise_version_id, student_id__in=working)
        .values("student_id").distinct().count()
    ) if working else 0
    answered = (
        Submission.objects.filter(variant__assignment_item=item, variant__exercise_version_id=item.exercise_version_id)
        .values("student_id").distinct().count()
    )
    return VersionSwitchReached(opened=opened, answered=answered)


@dataclass(frozen=True)
class PoolsReached:
    """Of new pools: how many who started keep exactly the exercises they were given,
    lose one (with its points), are given another (with its points), and of those given
    another, how many have finished (they cannot answer it)."""

    keep: int = 0
    lose: int = 0
    gain: int = 0
    finished_gain: int = 0

    @property
    def changes(self) -> bool:
        return bool(self.lose or self.gain)


def _given(*, assignment: Assignment, student, items, stored: dict[str, int]) -> set[int]:
    """The items a student with the ``stored`` draws is given from ``items`` (their pools
    as set there): a stored draw stays whatever its pool becomes (courses.pools), and a
    pool they have not drawn from is drawn on their next view, by the same keyed hash."""
    draws = dict(stored)
    for pool, members in pools.pool_items(items).items():
        if pool not in draws:
            draws[pool] = pools.pool_item_drawn(assignment=assignment, student=student, pool=pool, items=members).pk
    return {item.pk for item in pools.items_given(items=items, draws=draws)}


def pools_change_reached(
    *, assignment: Assignment, items: list[AssignmentItem], chosen: dict[int, str], started: list[Started],
) -> PoolsReached:
    """What giving ``items`` the pools ``chosen`` (item id -> pool name) does to each
    student who started: the items given them before and after, compared. One query."""
    if not started:
        return PoolsReached()
    draws = pools.pool_draws(assignment=assignment, student_ids=[start.student_id for start in started])
    after_items = [
        SimpleNamespace(pk=item.pk, pool=chosen.get(item.pk, item.pool), position=item.position, points=item.points)
        for item in items
    ]
    keep = lose = gain = finished_gain = 0
    for start in started:
        student = SimpleNamespace(pk=start.student_id)
        stored = draws.get(start.student_id, {})
        before = _given(assignment=assignment, student=student, items=items, stored=stored)
        after = _given(assignment=assignment, student=student, items=after_items, stored=stored)
        if before == after:
            keep += 1
            continue
        lose += bool(before - after)
        if after - before:
            gain += 1
            finished_gain += not start.working
    return PoolsReached(keep=keep, lose=lose, gain=gain, finished_gain=finished_gain)


# --- What a new review policy shows them now ---------------------------------------------

# The solution policy's reach, as a set of (variant id, part) whose worked solution shows;
# ALL_PARTS stands for every part of the assignment.
ALL_PARTS = None


@dataclass(frozen=True)
class ReviewGain:
    """Of one kind of feedback (a POLICY_FIELDS kind: "correctness", "score", ...,
    "solutions"), how many students still working and how many who have finished see it
    now under the new settings where the stored ones kept it from them."""

    kind: str
    working: int
    finished: int


def review_fields_of(assignment: Assignment, *also: str) -> dict:
    """The stored fields a student's window reads (limits, kind, review and solution
    policies, the release), and the fields named in ``also``, read from the row: a
    ModelForm has already copied new values onto the instance. One query."""
    names = ("kind", *LIMIT_FIELDS, *REVIEW_FIELDS, "grades_released_at", *also)
    return Assignment.objects.filter(pk=assignment.pk).values(*names).get()


def _parts_progress(*, assignment: Assignment, student_ids: list[int]) -> dict[int, dict[tuple[int, str], tuple]]:
    """student id -> (variant id, part) -> (solved, attempts used), as grading.selectors
    counts them (a graded correct answer solves; an answer that could not be graded uses
    no attempt). One query."""
    rows = (
        Submission.objects.filter(variant__assignment_item__assignment=assignment, student_id__in=student_ids)
        .order_by()
        .values("student_id", "variant_id", "part")
        .annotate(
            used=Count("id", filter=~Q(status=SubmissionStatus.COULD_NOT_GRADE)),
            solved=Count("id", filter=Q(status=SubmissionStatus.GRADED, correct=True)),
        )
    )
    progress: dict[int, dict] = {}
    for row in rows:
        progress.setdefault(row["student_id"], {})[(row["variant_id"], row["part"])] = (row["solved"] > 0, row["used"])
    return progress


def _solutions_shown(*, window, policy: str, progress: dict, now: datetime):
    """The parts whose worked solution the student reads now (exercises.selectors.
    part_extras): the review policy's moment for solutions must have come, and the solution
    policy allow it: always, after their own due date, or on a part they solved (while
    correctness shows) or used every attempt on. ALL_PARTS or a frozenset."""
    if not window.visibility.solutions or policy == SolutionPolicy.NEVER:
        return frozenset()
    if policy == SolutionPolicy.ALWAYS:
        return ALL_PARTS
    if policy == SolutionPolicy.AFTER_DUE:
        due = window.limits.due_at
        return ALL_PARTS if due is not None and now > due else frozenset()
    allowed = window.limits.attempts_per_part
    return frozenset(
        key for key, (solved, used) in progress.items()
        if (solved and window.visibility.correctness) or (allowed and used >= allowed)
    )


def _more_solutions(*, before, after) -> bool:
    if after is ALL_PARTS:
        return before is not ALL_PARTS
    return before is not ALL_PARTS and not after <= before


def review_gains(
    *, assignment: Assignment, started: list[Started], stored: dict, new: dict, now: datetime | None = None,
) -> list[ReviewGain]:
    """What new settings show the students who started that the stored ones did not, now:
    for each kind of feedback (in POLICY_FIELDS order) that reaches anyone more, how many
    still working and how many finished see it now and did not before.

    Each student's window (exams.window.window_compute: their attempt, accommodation and
    the release) is decided under ``stored`` (review_fields_of) and under ``new`` (stored
    with the edit's values over it) at the same ``now``. Worked solutions count per part
    (``_solutions_shown``): a student is counted when any part's solution shows that did
    not. A kind that shows less, or only later (a moment yet to come, a release not yet
    made), reaches nobody now and is left out. No query, or one when the solution policy
    "once solved or used up" is involved (stored or new)."""
    now = now or timezone.now()
    if not started:
        return []
    before_settings, after_settings = SimpleNamespace(**stored), SimpleNamespace(**{**stored, **new})
    solved_rule = SolutionPolicy.AFTER_SOLVED in (before_settings.solution_policy, after_settings.solution_policy)
    progress = (
        _parts_progress(assignment=assignment, student_ids=[start.student_id for start in started])
        if solved_rule else {}
    )
    counts = {kind: [0, 0] for kind, _ in POLICY_FIELDS}
    for start in started:
        own = progress.get(start.student_id, {})
        windows = [
            window_compute(
                assignment=settings, accommodation=start.accommodation, attempt=start.attempt,
                clock_started_at=start.clock_started_at, archived=False, now=now,
            )
            for settings in (before_settings, after_settings)
        ]
        before, after = windows
        for kind, _ in POLICY_FIELDS:
            if kind == "solutions":
                more = _more_solutions(
                    before=_solutions_shown(
                        window=before, policy=before_settings.solution_policy, progress=own, now=now
                    ),
                    after=_solutions_shown(
                        window=after, policy=after_settings.solution_policy, progress=own, now=now
                    ),
                )
            else:
                more = getattr(after.visibility, kind) and not getattr(before.visibility, kind)
            if more:
                counts[kind][0 if start.working else 1] += 1
    return [
        ReviewGain(kind=kind, working=working, finished=finished)
        for kind, (working, finished) in counts.items() if working or finished
    ]


# --- The sentences ---------------------------------------------------------------------


def _students(count: int) -> str:
    return f"{count} student{'s' * (count != 1)}"


def _have(count: int) -> str:
    return "have" if count != 1 else "has"


def _verb(count: int, plural: str, singular: str) -> str:
    return plural if count != 1 else singular


def _joined(clauses: list[str]) -> str:
    return clauses[0] if len(clauses) == 1 else f"{', '.join(clauses[:-1])} and {clauses[-1]}"


def who_sentence(reached: AttemptsReached, *, noun: str | None = None) -> str:
    """ "3 students are working on this exam now and 12 have finished." Homework, which a
    student may have opened days ago, has students "still working on" it."""
    noun = noun or reached.noun
    working, finished = reached.working, reached.finished
    if working:
        verb = _verb(working, "are", "is")
        doing = f"working on this {noun} now" if noun == "exam" else f"still working on this {noun}"
        also = f" and {finished} {_have(finished)} finished" if finished else ""
        return f"{_students(working)} {verb} {doing}{also}."
    return f"{_students(finished)} {_have(finished)} finished this {noun}."


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


def item_points_phrase(*, title: str, before: float, after: float) -> str:
    return f"Changing '{title}' from {_points(before)} to {_points(after)} changes their totals."


def item_points_sentence(reached: AttemptsReached, *, title: str, before: float, after: float) -> str:
    return f"{who_sentence(reached)} {item_points_phrase(title=title, before=before, after=after)}"


def version_switch_phrase(*, title: str, before: int, after: int, reached: VersionSwitchReached) -> str:
    """ "Switching 'T' from v1 to v2 gives 2 students still working who have opened it a
    new copy under v2 …" """
    switching = f"Switching '{title}' from v{before} to v{after}"
    if reached.opened:
        text = (
            f"{switching} gives {_students(reached.opened)} still working who {_have(reached.opened)} opened it "
            f"a new copy under v{after} the next time they open it (numbers drawn again, attempts counted afresh)."
        )
    else:
        text = f"{switching}: nobody still working has opened it, so whoever opens it from now gets v{after}."
    if reached.answered:
        text += (
            f" The answers {_students(reached.answered)} saved stay graded under v{before} until you run a regrade."
        )
    return text


def item_update_sentence(reached: AttemptsReached, *, phrases: list[str]) -> str:
    return " ".join([who_sentence(reached), *phrases])


def pools_change_sentence(reached: AttemptsReached, *, change: PoolsReached) -> str:
    """ "… Exercises already drawn for them stay theirs; with the new pools 2 of them keep
    the exercises they were given and 3 lose an exercise they were given, with its points." """
    text = f"{who_sentence(reached)} Exercises already drawn for them stay theirs; with the new pools "
    if not change.changes:
        everyone = reached.working + reached.finished
        return text + (f"all {everyone} keep" if everyone != 1 else "they keep") + " the exercises they were given."
    clauses = []
    if change.keep:
        clauses.append(f"{change.keep} {_verb(change.keep, 'keep', 'keeps')} the exercises they were given")
    if change.lose:
        clauses.append(f"{change.lose} {_verb(change.lose, 'lose', 'loses')} an exercise they were given, with its points")
    if change.gain:
        clauses.append(f"{change.gain} {_verb(change.gain, 'are', 'is')} given another exercise, with its points")
    clauses[0] = clauses[0].replace(" ", " of them ", 1)
    finished = " Those who have finished cannot answer it and score 0 on it." if change.finished_gain else ""
    return f"{text}{_joined(clauses)}.{finished}"


def _seen_words(kinds: tuple[str, ...]) -> str:
    """SEEN_KINDS in words: "the worked solutions, verdicts and scores of their answers"."""
    items = [{"solutions": "worked solutions", "some solutions": "worked solutions of some parts"}[kind]
             for kind in kinds if kind in ("solutions", "some solutions")]
    answered = [kind for kind in kinds if kind in ("verdicts", "scores")]
    if answered:
        items += answered
        items[-1] += " of their answers"
    if "diagnoses" in kinds:
        items.append("diagnoses of their mistakes")
    if "weights" in kinds:
        items.append("correct attention weights")
    return f"the {_joined(items)}"


def _seen_clause(seen: tuple[tuple[tuple[str, ...], int], ...], *, count: int) -> str:
    """ "; 1 of them has been shown the worked solutions, verdicts and scores of their
    answers" ("" when nobody was shown anything). ``count``: the students it is about."""
    clauses = []
    for position, (kinds, students) in enumerate(seen):
        if position:
            who = f"{students} {_have(students)}"
        elif students == count:
            who = {1: "they have", 2: "both have"}.get(count, f"all {count} have")
        else:
            who = f"{students} of them {_have(students)}"
        clauses.append(f"{who} been shown {_seen_words(kinds)}")
    return f"; {_joined(clauses)}" if clauses else ""


def kind_change_sentence(
    reached: AttemptsReached, *, new_kind: str, count: int, timed: bool,
    seen: tuple[tuple[tuple[str, ...], int], ...] = (),
) -> str:
    """ "… Making it homework keeps every saved answer and lets 2 students who have
    finished answer again while it is open to them; 1 of them has been shown the worked
    solutions, verdicts and scores of their answers." ``count``, ``seen``: KindChange
    (kind_change_counts)."""
    if new_kind == AssignmentKind.EXAM:
        text = "Making it an exam keeps every saved answer"
        if count:
            text += f" and asks {_students(count)} still working to press Start before they answer again"
            if timed:
                text += " (their time limit then counts from that Start)"
    else:
        text = "Making it homework keeps every saved answer"
        if count:
            text += f" and lets {_students(count)} who {_have(count)} finished answer again while it is open to them"
            text += _seen_clause(seen, count=count)
    return f"{who_sentence(reached)} {text}."


def attempts_cut_sentence(groups: list[tuple[int, int]], *, allowed: int) -> str:
    """ "2 students have already used 3 attempts on a part and 1 has used 2; with 2 allowed
    they can make no more there." ``groups``: attempts_cut."""
    (used, count), rest = groups[0], groups[1:]
    clauses = [f"{_students(count)} {_have(count)} already used {used} attempt{'s' * (used != 1)} on a part"]
    clauses += [f"{count} {_have(count)} used {used}" for used, count in rest]
    return f"{_joined(clauses)}; with {allowed} allowed they can make no more there."


def limits_change_phrase(*, assignment: Assignment, stored: dict, new_limits: dict) -> str:
    """What the edit does to the clock, in words: "Shortening the time limit to 10 min"."""
    parts = []
    old_limit, new_limit = stored.get("time_limit_minutes"), new_limits.get("time_limit_minutes")
    if new_limit and (not old_limit or new_limit < old_limit):
        parts.append(f"shortening the time limit to {new_limit} min" if old_limit else f"setting a time limit of {new_limit} min")
    old_close, new_close = stored.get("closes_at"), new_limits.get("closes_at")
    if new_close is not None and (old_close is None or new_close < old_close):
        parts.append(f"moving the close date to {course_time_text(new_close, course_zone(assignment))}")
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


# What each kind of feedback is called in the sentences, and the pronoun that stands for it.
REVIEW_KIND_WORDS = {
    "correctness": ("right or wrong", "it"),
    "score": ("the score", "it"),
    "misconception": ("misconception feedback", "it"),
    "hints": ("hints", "them"),
    "heatmap": ("their heatmap", "it"),
    "solutions": ("worked solutions", "them"),
}
SOLUTION_POLICY_WORDS = {
    SolutionPolicy.ALWAYS: "always",
    SolutionPolicy.AFTER_SOLVED: "once a part is solved or its attempts are used up",
    SolutionPolicy.AFTER_DUE: "after the due date",
    SolutionPolicy.NEVER: "never",
}


def moment_words(moment: str, *, noun: str, released: bool) -> str:
    """A ReleaseMoment as the sentences say it: "during the attempt"."""
    later = int(REVIEW_LATER_AFTER.total_seconds() // 60)
    return {
        ReleaseMoment.DURING: "during the attempt",
        ReleaseMoment.AFTER_FINISH: "as soon as the attempt ends",
        ReleaseMoment.LATER: f"from {later} minutes after the attempt ends",
        ReleaseMoment.AFTER_CLOSE: f"after the {noun} closes",
        ReleaseMoment.ON_RELEASE: "once the grades are released" + (" (they are)" if released else ""),
    }.get(moment, "never")


def _review_when(kind: str, *, settings: dict, noun: str) -> str:
    """When the new settings show one kind of feedback; worked solutions under both the
    solution policy and the review policy's moment ("always", "always, as soon as …")."""
    field = dict(POLICY_FIELDS)[kind]
    moment = moment_words(settings[field], noun=noun, released=bool(settings.get("grades_released_at")))
    if kind != "solutions":
        return moment
    policy = SOLUTION_POLICY_WORDS.get(settings["solution_policy"], "never")
    if settings[field] == ReleaseMoment.DURING:
        return policy
    if settings["solution_policy"] == SolutionPolicy.ALWAYS:
        return moment
    return f"{policy}, {moment}"


def _gain_whom(gain: ReviewGain, reached: AttemptsReached) -> str:
    """ "the 3 still working", "2 of the 3 still working and the 2 who have finished",
    "all 5" (everyone, working and finished)."""
    working, finished = gain.working, gain.finished
    if working == reached.working and finished == reached.finished and working and finished:
        return f"all {working + finished}"
    whom = []
    if working:
        if working == reached.working:
            whom.append("the student still working" if working == 1 else f"the {working} still working")
        else:
            whom.append(f"{working} of the {reached.working} still working")
    if finished:
        if finished == reached.finished:
            whom.append("the student who has finished" if finished == 1 else f"the {finished} who have finished")
        else:
            whom.append(f"{finished} of the {reached.finished} who have finished")
    return " and ".join(whom)


def review_change_phrase(gains: list[ReviewGain], *, reached: AttemptsReached, settings: dict) -> str:
    """ "Showing right or wrong during the attempt shows it to the 3 still working now;
    showing worked solutions always shows them to all 5 now." ``settings``: the review and
    solution policies (and the release) as the edit sets them; ``gains``: review_gains."""
    clauses = []
    for gain in gains:
        label, pronoun = REVIEW_KIND_WORDS[gain.kind]
        when = _review_when(gain.kind, settings=settings, noun=reached.noun)
        clauses.append(f"showing {label} {when} shows {pronoun} to {_gain_whom(gain, reached)} now")
    text = "; ".join(clauses)
    return f"{text[0].upper()}{text[1:]}." if text else ""


def slug_change_phrase(reached: AttemptsReached, *, before: str, after: str, lms_link: bool) -> str:
    """ "Changing its address from 'midterm' to 'midterm-b' makes the old address answer
    'not found': the 3 still working lose the page they have open …" No redirect is kept
    from an old address, so the sentence says what breaks."""
    text = f"Changing its address from '{before}' to '{after}' makes the old address answer 'not found'"
    if reached.working:
        whom = (
            "the student still working loses" if reached.working == 1
            else f"the {reached.working} still working lose"
        )
        text += (
            f": {whom} the page they have open (their saved answers stay; they open the {reached.noun} "
            "again from the course page), and links to the old address stop working."
        )
    else:
        text += ": links to it stop working."
    if lms_link:
        text += f" An LMS link that names it '{before}' stops opening it until it names '{after}'."
    return text
