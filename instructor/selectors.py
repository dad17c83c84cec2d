"""Reads for teaching staff: access checks, the gradebook, CSV rows, the manual grading
queue, regrade jobs and item analytics.

``access_*`` functions fetch *with* the permission check: anyone not enrolled gets 404,
a student 403. Teaching assistants read everything here and grade free-text answers;
only instructors change assignments or run regrades.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice

from django.contrib.auth import get_user_model
from django.db.models import Case, FloatField, IntegerField, Max, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils import timezone

from courses import pools
from courses.models import (
    Assignment, AssignmentItem, Course, Enrolment, EnrolmentStatus, ReleaseMoment, Role, SolutionPolicy,
)
from courses.selectors import access_course_staff, access_staff_assignment, require_instructor  # noqa: F401
from courses.time_text import zone_of
from exams.selectors_accommodations import (
    accommodation_summary,
    carried_accommodation,
    course_zone,
    with_accommodation_on,
)
from exercises import engine
from exercises.models import Variant
from exercises.specs import part_label, version_spec
from grading.answer_input import answer_shown
from grading.answer_input import answer_text  # noqa: F401  (views and CSV use it from here)
from grading.core.score_rounding import EXPORT_PERCENT_PLACES, score_number, score_text
from grading.models import Submission, SubmissionStatus

from .csv_response import formula_safe
from .models import ManualGrade, ManualGradeKind, RegradeJob

MANUAL_ANSWER_TYPES = ("free_text",)


def access_teaching(*, user, course_slug: str, instructor_only: bool = False) -> tuple[Course, str]:
    return access_course_staff(user=user, slug=course_slug, instructor_only=instructor_only)


def access_assignment_item_staff(
    *, user, course_slug: str, assignment_slug: str, item_id: int, instructor_only: bool = False
) -> tuple[AssignmentItem, str]:
    assignment, role = access_staff_assignment(
        user=user, course_slug=course_slug, assignment_slug=assignment_slug,
        instructor_only=instructor_only,
    )
    item = assignment.items.select_related("exercise_version__exercise").filter(pk=item_id).first()
    if item is None:
        raise Http404("No such exercise in this assignment.")
    return item, role


def access_course_submission(*, user, course_slug: str, submission_id: int) -> tuple[Submission, str]:
    """A submission to an assignment of this course, for its staff only."""
    course, role = access_teaching(user=user, course_slug=course_slug)
    submission = (
        Submission.objects.select_related(
            "student", "variant__exercise_version__exercise", "variant__assignment_item__assignment"
        )
        .filter(pk=submission_id, variant__assignment_item__assignment__course=course)
        .first()
    )
    if submission is None:
        raise Http404("No such submission.")
    return submission, role


def access_course_student(*, course: Course, user_id: int):
    enrolment = Enrolment.objects.select_related("user").filter(course=course, user_id=user_id).first()
    if enrolment is None:
        raise Http404("No such student in this course.")
    return enrolment.user


def access_regrade_job(*, user, course_slug: str, job_id: int) -> tuple[RegradeJob, str]:
    course, role = access_teaching(user=user, course_slug=course_slug, instructor_only=True)
    job = RegradeJob.objects.select_related("assignment", "created_by").filter(
        pk=job_id, assignment__course=course
    ).first()
    if job is None:
        raise Http404("No such regrade.")
    return job, role


# ---------------------------------------------------------------------------
# Exercise structure
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PartInfo:
    key: str
    type: str
    points: float


@dataclass(frozen=True)
class ItemInfo:
    item: AssignmentItem
    slug: str
    title: str
    parts: tuple[PartInfo, ...]

    @property
    def part_points(self) -> float:
        return sum(part.points for part in self.parts)

    def label(self) -> str:
        return f"{self.slug} (/{self.item.points:g})"


def assignment_items_info(*, assignment: Assignment) -> list[ItemInfo]:
    infos = []
    for item in assignment.items.select_related("exercise_version__exercise"):
        spec = version_spec(item.exercise_version)
        parts = tuple(PartInfo(p.key, p.type, float(p.points)) for p in spec.parts)
        infos.append(ItemInfo(item=item, slug=item.exercise_version.exercise.slug, title=spec.title, parts=parts))
    return infos


def part_keys_of(infos: list[ItemInfo], *, item_ids=()) -> list[str]:
    """The part keys of the items ``item_ids`` of ``infos`` (every item when none is
    given), in the order they first appear, each once: the parts a regrade may name."""
    chosen = set(item_ids)
    keys = (part.key for info in infos if not chosen or info.item.pk in chosen for part in info.parts)
    return list(dict.fromkeys(keys))


def unknown_parts_message(*, unknown: list[str], known: list[str], items_chosen: bool) -> str:
    """ "No part called 'x' or 'y' in this assignment. Its parts: product, total." Plain
    text: the page escapes it."""
    names = " or ".join(f"'{name}'" for name in unknown)
    where, whose = ("the exercises ticked", "Their") if items_chosen else ("this assignment", "Its")
    parts = f"{whose} parts: {', '.join(known)}." if known else f"{whose} exercises have no parts."
    return f"No part called {names} in {where}. {parts}"


def solutions_in_words(*, assignment: Assignment) -> str:
    """When students see worked solutions, in words: both the solution policy and the
    review policy's "show solutions" must allow it, so "never" when either says never."""
    policy, shown = assignment.solution_policy, assignment.show_solutions
    if policy == SolutionPolicy.NEVER or shown == ReleaseMoment.NEVER:
        return "solutions never shown"
    words = f"solutions: {assignment.get_solution_policy_display().lower()}"
    if shown != ReleaseMoment.DURING:
        words += f", and only {assignment.get_show_solutions_display().lower()}"
    return words


def assignment_submissions(*, assignment: Assignment) -> QuerySet[Submission]:
    return Submission.objects.filter(variant__assignment_item__assignment=assignment)


# An answer in these states has no score yet: a free-text part waiting for a person, or an
# answer the grader has not reached. It counts 0 until it is graded, so the gradebooks mark
# it pending instead of showing that 0 as if it were final.
AWAITING_GRADING = (SubmissionStatus.MANUAL, SubmissionStatus.QUEUED, SubmissionStatus.GRADING)
FULL_MARKS = 1.0


@dataclass(frozen=True)
class PartScores:
    """The best score of each part a student answered, and which of them may still change.

    ``best``: (student id, item id, part) -> best awarded score in [0, 1] over the attempts
    (an attempt not graded counts 0). ``pending``: the keys with an answer awaiting grading
    that could still raise that best (a part with full marks already cannot change)."""

    best: dict[tuple[int, int, str], float] = field(default_factory=dict)
    pending: frozenset[tuple[int, int, str]] = frozenset()


def item_score(*, info: ItemInfo, student_id: int, best: dict) -> float | None:
    """Points earned on one item: item points x the part-points-weighted best part scores.
    None when the student never submitted to the item."""
    keys = [(student_id, info.item.pk, part.key) for part in info.parts]
    if not any(key in best for key in keys):
        return None
    if info.part_points == 0:
        return 0.0
    earned = sum(best.get(key, 0.0) * part.points for key, part in zip(keys, info.parts))
    return info.item.points * earned / info.part_points


def item_pending(*, info: ItemInfo, student_id: int, pending: frozenset) -> bool:
    """Whether an answer to one of the item's parts awaits grading (see ``PartScores``)."""
    return bool(pending) and any((student_id, info.item.pk, part.key) in pending for part in info.parts)


def course_students(*, course: Course, include_dropped: bool = False):
    """The course's students; dropped ones (whose submissions are kept) only when asked for."""
    User = get_user_model()
    enrolments = Enrolment.objects.filter(course=course, role=Role.STUDENT)
    if not include_dropped:
        enrolments = enrolments.filter(status=EnrolmentStatus.ACTIVE)
    return User.objects.filter(pk__in=enrolments.values("user_id")).order_by("username")


@dataclass(frozen=True)
class ScoreCell:
    """One exercise of one student in the assignment gradebook: the points as shown ("—"
    never answered, "not given" another student's pool exercise), and whether an answer to
    it awaits grading (the points then count only what is graded so far)."""

    shown: str
    pending: bool = False


def gradebook(
    *, assignment: Assignment, student_filter: str = "", item_filter: int | None = None,
    include_dropped: bool = False,
) -> dict:
    """Students x exercises with scores; filters narrow the rows (name) and columns (item).
    A row is ``provisional`` while an answer in its columns awaits grading."""
    infos = assignment_items_info(assignment=assignment)
    columns = [info for info in infos if item_filter in (None, info.item.pk)]
    students = course_students(course=assignment.course, include_dropped=include_dropped)
    if student_filter:
        students = students.filter(
            Q(username__icontains=student_filter)
            | Q(first_name__icontains=student_filter)
            | Q(last_name__icontains=student_filter)
        )
    # Each student's accommodation rides along with the students' query.
    students = with_accommodation_on(students, assignment=assignment)
    part_scores = part_best_scores(submissions=assignment_submissions(assignment=assignment))
    draws = items_draws(infos=infos, assignment=assignment)
    max_points = pools.slot_points(info.item for info in columns)
    tz = course_zone(assignment)
    rows = []
    for student in students:
        result = student_scores(
            infos=columns, student_id=student.pk, part_scores=part_scores, draws=draws.get(student.pk, {})
        )
        rows.append(
            {
                "student": student,
                "attempted": result.attempted,
                "scores": result.scores,
                "given": result.given,
                "pending": result.pending,
                "provisional": result.provisional,
                "cells": [
                    ScoreCell(score_shown(score, given=is_given), pending=is_pending)
                    for score, is_given, is_pending in zip(result.scores, result.given, result.pending)
                ],
                "total": result.total,
                "out_of": result.out_of,
                "percent": 100 * result.total / result.out_of if result.out_of else 0.0,
                "accommodation": accommodation_summary(carried_accommodation(student), tz=tz),
            }
        )
    return {"columns": columns, "all_items": infos, "rows": rows, "max_points": max_points}


def items_draws(*, infos: list[ItemInfo], assignment: Assignment) -> dict[int, dict[str, int]]:
    """Every student's pool draws (one query), or nothing (no query) without pools."""
    if not pools.has_pools(info.item for info in infos):
        return {}
    return pools.pool_draws(assignment=assignment)


@dataclass(frozen=True)
class StudentScores:
    """One student's points per item (None: never answered, or not given it), whether each
    item was given them, whether an answer to each awaits grading, and the points they are
    scored out of."""

    scores: list[float | None]
    given: list[bool]
    pending: list[bool]
    out_of: float

    @property
    def attempted(self) -> bool:
        return any(score is not None for score in self.scores)

    @property
    def total(self) -> float:
        return sum(score or 0.0 for score in self.scores)

    @property
    def provisional(self) -> bool:
        """True while an answer awaits grading: the total may still go up."""
        return any(self.pending)


def student_scores(
    *, infos: list[ItemInfo], student_id: int, part_scores: PartScores, draws: dict[str, int]
) -> StudentScores:
    """A student is scored only on the items they were given."""
    given = [pools.item_given(item=info.item, draws=draws) for info in infos]
    scores = [
        item_score(info=info, student_id=student_id, best=part_scores.best) if is_given else None
        for info, is_given in zip(infos, given)
    ]
    pending = [
        is_given and item_pending(info=info, student_id=student_id, pending=part_scores.pending)
        for info, is_given in zip(infos, given)
    ]
    return StudentScores(
        scores=scores, given=given, pending=pending,
        out_of=pools.points_out_of(items=[info.item for info in infos], draws=draws),
    )


NOT_GIVEN = "not given"
NOT_ATTEMPTED = "not attempted"


def score_shown(score: float | None, *, given: bool) -> str:
    """A gradebook cell: the points, "—" for never answered, "not given" for a pool item
    another student drew."""
    if not given:
        return NOT_GIVEN
    return "—" if score is None else score_text(score)


def student_submissions(*, assignment: Assignment, student) -> QuerySet[Submission]:
    return (
        assignment_submissions(assignment=assignment)
        .filter(student=student)
        .select_related("variant__assignment_item__exercise_version__exercise")
        .prefetch_related("manual_grades__grader")
        .order_by("variant__assignment_item__position", "part", "attempt")
    )


def student_pool_draws(*, assignment: Assignment, student) -> QuerySet:
    """Which item of each pool the student was given (for the staff's view of a student)."""
    return (
        assignment.pool_draws.filter(student=student)
        .select_related("item__exercise_version__exercise")
        .order_by("pool")
    )


def csv_safe(value) -> str | float | int:
    """Neutralise spreadsheet formulas, but leave plain (e.g. negative) numbers alone: the
    CSV writes such a text after a ``'``, the XLSX as a text cell (``csv_response.formula_safe``)."""
    return formula_safe(value)


WIDE_FIXED_COLUMNS = ["username", "student_id", "email", "first_name", "last_name"]
LONG_COLUMNS = [
    "submission_id", "username", "assignment", "exercise", "version", "part", "attempt",
    "status", "raw_answer", "score", "awarded", "correct", "is_late", "misconception",
    "created_at", "graded_at", "graded_by",
]


GRADEBOOK_STUDENTS_PER_QUERY = 200


def part_best_of_students(*, assignment: Assignment, student_ids: list[int]) -> PartScores:
    """The ``PartScores`` of these students, decided in the database."""
    return part_best_scores(submissions=assignment_submissions(assignment=assignment).filter(student_id__in=student_ids))


def part_best_scores(*, submissions) -> PartScores:
    """The ``PartScores`` of these submissions, in one aggregate: per part the best awarded
    score (ungraded attempts count 0) and whether an attempt awaits grading. An earlier
    attempt that waits under the course's rubric after the student answered again
    (``selectors_rubrics.superseded_by_course_rubric``) awaits nothing: the rubric's pages
    grade the newest answer."""
    from .selectors_rubrics import superseded_by_course_rubric  # it reads this module's queue

    rows = (
        submissions.values("student_id", "variant__assignment_item_id", "part")
        .annotate(
            best=Max(
                Case(
                    When(status=SubmissionStatus.GRADED, then=Coalesce("awarded", Value(0.0))),
                    default=Value(0.0),
                    output_field=FloatField(),
                )
            ),
            awaiting=Max(
                Case(
                    When(
                        status__in=AWAITING_GRADING,
                        then=Case(When(superseded_by_course_rubric(), then=Value(0)), default=Value(1)),
                    ),
                    default=Value(0),
                    output_field=IntegerField(),
                )
            ),
        )
        .order_by()
        .values_list("student_id", "variant__assignment_item_id", "part", "best", "awaiting")
    )
    best, pending = {}, set()
    for student_id, item_id, part, score, awaiting in rows:
        key = (student_id, item_id, part)
        best[key] = score
        if awaiting and score < FULL_MARKS:
            pending.add(key)
    return PartScores(best=best, pending=frozenset(pending))


PENDING_COLUMN = "pending"


def pending_words(names) -> str:
    """The export's "pending" cell: what awaits grading, by name; empty when nothing does."""
    return csv_safe("; ".join(names))


def gradebook_csv_rows(*, assignment: Assignment) -> Iterator[list]:
    """Header then one row per student: username, student ID, e-mail, names, one score per
    exercise ("not attempted" when never answered, which is not a 0), total, percent, and
    "pending": the exercises with an answer awaiting grading (counted 0 until graded, so a
    row that names any has a provisional total). A generator: memory bounded by one batch
    of students, not the roster.

    Students are read in order, and the best scores of each batch of them with one
    aggregate over their ids. (One ordered aggregate over the whole course, merged with
    the students, let PostgreSQL's planner choose a students x submissions nested loop
    behind the server-side cursor: 9 s at 1,000 students x 13 exercises.)"""
    infos = assignment_items_info(assignment=assignment)
    max_points = pools.slot_points(info.item for info in infos)
    draws = items_draws(infos=infos, assignment=assignment)
    # Exercise titles are authored text: formula-safe like every other text cell.
    yield (
        WIDE_FIXED_COLUMNS + [csv_safe(info.label()) for info in infos]
        + [f"total (/{max_points:g})", "percent", PENDING_COLUMN]
    )
    students = (
        Enrolment.objects.filter(course=assignment.course, role=Role.STUDENT, status=EnrolmentStatus.ACTIVE)
        .order_by("user__username", "user_id")
        .values_list("user_id", "user__username", "student_id", "user__email", "user__first_name", "user__last_name")
        .iterator(chunk_size=GRADEBOOK_STUDENTS_PER_QUERY)
    )
    while batch := list(islice(students, GRADEBOOK_STUDENTS_PER_QUERY)):
        part_scores = None  # the last batch's scores go before this batch's arrive
        part_scores = part_best_of_students(assignment=assignment, student_ids=[row[0] for row in batch])
        for student_id, *person in batch:
            result = student_scores(
                infos=infos, student_id=student_id, part_scores=part_scores, draws=draws.get(student_id, {})
            )
            out_of, total = result.out_of, result.total
            yield (
                [csv_safe(value) for value in person]
                + [
                    NOT_GIVEN if not is_given else NOT_ATTEMPTED if score is None else score_number(score)
                    for score, is_given in zip(result.scores, result.given)
                ]
                + (
                    [score_number(total), score_number(100 * total / out_of if out_of else 0.0, EXPORT_PERCENT_PLACES)]
                    if result.attempted else [NOT_ATTEMPTED, ""]
                )
                + [pending_words(info.slug for info, is_pending in zip(infos, result.pending) if is_pending)]
            )


def submissions_csv_rows(*, assignment: Assignment) -> Iterator[list]:
    """Header then one row per submission (every attempt), oldest first. A generator that
    reads only the exported columns, in chunks: memory independent of rows."""
    yield LONG_COLUMNS
    # The person whose score stands; none once the answer was given back to the checker.
    latest_grader = {
        submission_id: username if kind == ManualGradeKind.BY_HAND else ""
        for submission_id, username, kind in ManualGrade.objects.filter(
            submission__variant__assignment_item__assignment=assignment
        ).order_by("created_at", "id").values_list("submission_id", "grader__username", "kind")
    }
    rows = (
        assignment_submissions(assignment=assignment)
        .order_by("created_at", "id")
        .values_list(
            "pk", "student__username", "variant__exercise_version__exercise__slug",
            "variant__exercise_version__number", "part", "attempt", "status", "raw_answer", "score",
            "awarded", "correct", "is_late", "misconception", "created_at", "graded_at",
        )
        .iterator(chunk_size=2000)
    )
    slug = assignment.slug
    zone = zone_of(assignment.course)  # times in the course's zone, with their offset
    for (pk, username, exercise, version, part, attempt, status, raw_answer, score, awarded,
         correct, is_late, misconception, created_at, graded_at) in rows:
        yield [
            pk,
            csv_safe(username),
            slug,
            exercise,
            version,
            part,
            attempt,
            status,
            csv_safe(answer_text(raw_answer)),
            "" if score is None else score,
            "" if awarded is None else awarded,
            "" if correct is None else ("true" if correct else "false"),
            "true" if is_late else "false",
            misconception,
            timezone.localtime(created_at, zone).isoformat(),
            timezone.localtime(graded_at, zone).isoformat() if graded_at else "",
            csv_safe(latest_grader.get(pk, "")),
        ]


# ---------------------------------------------------------------------------
# Manual grading
# ---------------------------------------------------------------------------


def newest_hand_grade_kind() -> Subquery:
    """The kind of each submission's newest ManualGrade, to annotate a ``Submission``
    queryset with (None where nobody graded it). A person's score stands while it reads
    ``ManualGradeKind.BY_HAND``; ``RETURNED`` gave the answer back to the checker."""
    return Subquery(
        ManualGrade.objects.filter(submission=OuterRef("pk")).order_by("-created_at", "-id").values("kind")[:1]
    )


def manual_queue(*, course: Course, include_graded: bool = False) -> QuerySet[Submission]:
    statuses = [SubmissionStatus.MANUAL]
    queue = Submission.objects.filter(variant__assignment_item__assignment__course=course)
    if include_graded:
        queue = queue.filter(Q(status=SubmissionStatus.MANUAL) | Q(manual_grades__isnull=False)).distinct()
    else:
        queue = queue.filter(status__in=statuses)
    return queue.select_related(
        "student", "variant__assignment_item__assignment", "variant__exercise_version__exercise"
    ).order_by("created_at", "id")


@dataclass(frozen=True)
class Rubric:
    criteria: tuple[tuple[str, float], ...]  # (text, points)
    model_answer: str

    @property
    def total_points(self) -> float:
        return sum(points for _, points in self.criteria)


def rubric_for(*, submission: Submission) -> Rubric:
    """The grading guide of a free-text part: criteria with points, and/or a model answer.

    The spec's ``answer`` may be text (a model answer), a list of criteria (text, or
    {text|criterion, points}), or a mapping with ``criteria`` and ``model_answer``.
    """
    variant = submission.variant
    spec = version_spec(variant.exercise_version)
    try:
        answer = engine.reference_answers(spec, variant.params)[submission.part]
    except (KeyError, ValueError, engine.ExpressionError):
        return Rubric(criteria=(), model_answer="")
    return rubric_of_reference(answer)


def rubric_of_reference(answer) -> Rubric:
    """The grading guide written as a free-text part's reference ``answer`` (rubric_for)."""
    model, raw_criteria = "", []
    if isinstance(answer, str):
        model = answer
    elif isinstance(answer, list):
        raw_criteria = answer
    elif isinstance(answer, dict):
        raw_criteria = answer.get("criteria") or answer.get("rubric") or []
        model = str(answer.get("model_answer") or answer.get("model") or answer.get("answer") or "")
    criteria = []
    for entry in raw_criteria if isinstance(raw_criteria, list) else []:
        if isinstance(entry, dict):
            text = str(entry.get("text") or entry.get("criterion") or entry)
            try:
                points = float(entry.get("points", 1))
            except (TypeError, ValueError):
                points = 1.0
        else:
            text, points = str(entry), 1.0
        criteria.append((text, max(points, 0.0)))
    return Rubric(criteria=tuple(criteria), model_answer=model)


# ---------------------------------------------------------------------------
# Analytics
# ---------------------------------------------------------------------------


def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Pearson correlation; None when either side has no spread (or fewer than 2 values)."""
    n = len(xs)
    if n < 2:
        return None
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx <= 1e-15 or syy <= 1e-15:
        return None
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    return sxy / math.sqrt(sxx * syy)


# Below this many answering students a correlation moves a lot with each one of them: the
# page says so rather than show -1.000 from two students as if it were a measure.
DISCRIMINATION_MIN_STUDENTS = 20


def assignment_analytics(*, assignment: Assignment, top_wrong: int = 5) -> dict:
    """Per exercise and part: attempts, mean score, facility, discrimination, common wrong
    answers, misconception counts, and difficulty per variant.

    A part's maximum (``points``) is its share of the exercise's points exactly as the
    gradebook counts it and the exercise page labels it (``engine.part_points``: the
    exercise's points x the part's weight / all weights), so a student's part scores add up
    to their gradebook points on the exercise. A part's score for a student is their best
    awarded score (0 if never graded) times that maximum.

    Mean score and facility are over the part's ``graded`` students: those with a graded
    answer to it (the usual item facility, the mean score of those who attempted the item).
    A student who never answered the part is not a 0 there, and one whose answer still
    awaits grading (``awaiting``) is left out until it is graded. Facility = the mean of
    their best awarded scores (= mean part score / maximum); with no graded answer, mean
    score and facility are None.

    Discrimination is over every student with a submission to the assignment (of a pool's
    item, those given it), a part they never answered counting 0: the corrected item-total
    (point-biserial when the part is scored 0/1) correlation, Pearson r between the part
    score and the student's rest-of-assignment score (every other part, in points).
    """
    infos = assignment_items_info(assignment=assignment)
    submissions = list(
        assignment_submissions(assignment=assignment).values(
            "student_id", "variant_id", "variant__seed", "variant__assignment_item_id", "part",
            "status", "awarded", "correct", "raw_answer", "misconception",
        )
    )
    students = sorted({s["student_id"] for s in submissions})
    draws = items_draws(infos=infos, assignment=assignment)
    # Of a pool, each item counts only the students who were given it.
    takers = {
        info.item.pk: [
            student for student in students if pools.item_given(item=info.item, draws=draws.get(student, {}))
        ]
        for info in infos
    }
    best: dict[tuple[int, int, str], float] = {}
    graded: set[tuple[int, int, str]] = set()
    awaiting: set[tuple[int, int, str]] = set()
    for s in submissions:
        key = (s["student_id"], s["variant__assignment_item_id"], s["part"])
        value = (s["awarded"] or 0.0) if s["status"] == SubmissionStatus.GRADED else 0.0
        best[key] = max(best.get(key, 0.0), value)
        if s["status"] == SubmissionStatus.GRADED:
            graded.add(key)
        elif s["status"] in AWAITING_GRADING:
            awaiting.add(key)
    all_parts = [(info, part) for info in infos for part in info.parts]
    items_by_pk = {info.item.pk: info.item for info in infos}
    maximum = {info.item.pk: gradebook_part_points(info) for info in infos}
    points = {
        (student, info.item.pk, part.key): best.get((student, info.item.pk, part.key), 0.0)
        * maximum[info.item.pk][part.key]
        for info, part in all_parts
        for student in takers[info.item.pk]
    }
    totals = {
        student: sum(points.get((student, info.item.pk, part.key), 0.0) for info, part in all_parts)
        for student in students
    }
    by_part: dict[tuple[int, str], list[dict]] = defaultdict(list)
    for s in submissions:
        item = items_by_pk.get(s["variant__assignment_item_id"])
        if item is not None and pools.item_given(item=item, draws=draws.get(s["student_id"], {})):
            by_part[(item.pk, s["part"])].append(s)
    exercises = []
    for info in infos:
        parts = []
        spec = version_spec(info.item.exercise_version)
        for part in info.parts:
            rows = by_part.get((info.item.pk, part.key), [])
            seen_by = takers[info.item.pk]
            part_scores = [points[(student, info.item.pk, part.key)] for student in seen_by]
            rest = [totals[student] - score for student, score in zip(seen_by, part_scores)]
            graded_students = [student for student in seen_by if (student, info.item.pk, part.key) in graded]
            graded_scores = [points[(student, info.item.pk, part.key)] for student in graded_students]
            graded_fractions = [best[(student, info.item.pk, part.key)] for student in graded_students]
            mean = sum(graded_scores) / len(graded_scores) if graded_scores else None
            # Not yet in the mean: an answer awaits grading and none is graded.
            waiting = [
                student for student in seen_by
                if (student, info.item.pk, part.key) in awaiting and (student, info.item.pk, part.key) not in graded
            ]
            wrong_rows = [s for s in rows if s["status"] == SubmissionStatus.GRADED and not s["correct"]]
            wrong = Counter(answer_text(s["raw_answer"]) for s in wrong_rows)
            parts.append(
                {
                    "key": part.key,
                    "label": part_label(spec, part.key),
                    "type": part.type,
                    "points": maximum[info.item.pk][part.key],
                    "attempts": len(rows),
                    "students": len({s["student_id"] for s in rows}),
                    "graded": len(graded_scores),
                    "awaiting": len(waiting),
                    "mean_score": mean,
                    "facility": sum(graded_fractions) / len(graded_fractions) if graded_fractions else None,
                    "discrimination": pearson(part_scores, rest),
                    "common_wrong": wrong.most_common(top_wrong),
                    "common_wrong_typeset": _typeset_wrong_answers(
                        wrong.most_common(top_wrong), rows=wrong_rows, part=part
                    ),
                    "misconceptions": Counter(
                        s["misconception"] for s in rows if s["misconception"]
                    ).most_common(),
                    "variants": _variant_difficulty(rows),
                }
            )
        exercises.append({"info": info, "parts": parts, "students": len(takers[info.item.pk])})
    return {"students": len(students), "exercises": exercises,
            "small_sample": len(students) < DISCRIMINATION_MIN_STUDENTS,
            "discrimination_min_students": DISCRIMINATION_MIN_STUDENTS}



def gradebook_part_points(info: ItemInfo) -> dict[str, float]:
    """Part key -> the points the part is worth in the gradebook: the exercise's points
    split over its parts in proportion to their weights (``item_score`` sums the best part
    scores x these; the exercise page labels each part with them)."""
    return engine.part_points(version_spec(info.item.exercise_version), info.item.points)


def _typeset_wrong_answers(common: list[tuple[str, int]], *, rows: list[dict], part) -> list[dict]:
    """The most common wrong answers with their count and LaTeX (read with the options of
    the first variant that gave each), for the analytics page."""
    first_row = {}
    for row in rows:
        first_row.setdefault(answer_text(row["raw_answer"]), row)
    variants = Variant.objects.select_related("exercise_version").in_bulk(
        {first_row[text]["variant_id"] for text, _ in common}
    )
    shown = []
    for text, count in common:
        row = first_row[text]
        variant = variants[row["variant_id"]]
        answer = answer_shown(variant=variant, part_key=part.key, raw_answer=row["raw_answer"])
        shown.append({"text": answer["text"], "count": count, "latex": answer["latex"]})
    return shown


def submission_answer_shown(*, submission: Submission) -> dict:
    """A stored answer for the staff pages: the text in full (a choice in its own words)
    and, for maths, typeset."""
    return answer_shown(variant=submission.variant, part_key=submission.part, raw_answer=submission.raw_answer)


def _variant_difficulty(rows: list[dict]) -> list[dict]:
    """Per variant of one part: attempts, best score, solved; hardest first."""
    grouped: dict[int, list[dict]] = defaultdict(list)
    for s in rows:
        grouped[s["variant_id"]].append(s)
    variants = []
    for variant_id, attempts in grouped.items():
        graded = [a for a in attempts if a["status"] == SubmissionStatus.GRADED]
        variants.append(
            {
                "variant_id": variant_id,
                "seed": attempts[0]["variant__seed"],
                "attempts": len(attempts),
                "best": max(((a["awarded"] or 0.0) for a in graded), default=0.0),
                "solved": any(a["correct"] for a in graded),
            }
        )
    variants.sort(key=lambda v: (v["best"], -v["attempts"], v["variant_id"]))
    return variants


NO_ANSWERS = "no answers"
NONE_GRADED_YET = "none graded yet"


def facility_chart(parts: list[dict]) -> dict:
    """The facility of each part of an exercise (``assignment_analytics``) as bars out of 1;
    a part with no facility gets no bar but the words why: nobody answered it, or no answer
    to it is graded yet (as the table's "—")."""
    values = []
    for part in parts:
        if part["facility"] is not None:
            value = part["facility"]
        else:
            value = NONE_GRADED_YET if part["awaiting"] else NO_ANSWERS
        values.append((f"part {part['label']}", value))
    return bar_chart(values, maximum=1.0)


def bar_chart(values: list[tuple[str, float | str]], *, maximum: float | None = None, width: int = 420,
              bar_height: int = 18, label_width: int = 150) -> dict:
    """Geometry for a horizontal SVG bar chart, rendered by the template. A value that is
    text (e.g. "no answers") draws no bar: the text is written where the bar would start."""
    numbers = [value for _, value in values if not isinstance(value, str)]
    top = maximum if maximum is not None else max(numbers, default=0.0)
    top = top or 1.0
    span = width - label_width - 60
    bars = []
    for index, (label, value) in enumerate(values):
        note = value if isinstance(value, str) else ""
        length = 0.0 if note else max(0.0, min(1.0, (value or 0.0) / top)) * span
        bars.append(
            {
                "label": label,
                "value": None if note else value,
                "note": note,
                "y": index * (bar_height + 6),
                "text_y": index * (bar_height + 6) + bar_height * 0.75,
                "length": round(length, 1),
                "value_x": round(label_width + length + 6, 1),
            }
        )
    return {
        "bars": bars,
        "width": width,
        "height": max(1, len(values)) * (bar_height + 6),
        "bar_height": bar_height,
        "label_width": label_width,
    }
