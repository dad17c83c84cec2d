"""A student's accommodation on an assignment, and the reads of the accommodations pages.

The rule that applies an accommodation to the assignment's limits (``limits_apply``) is
part of the student's window (``exams.window``); it is imported here for the callers that
know it by this module.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import datetime
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, FilteredRelation, Q, QuerySet, Value
from django.http import Http404
from django.utils import timezone

from courses.models import Assignment, EnrolmentStatus, Role
from courses.selectors import access_course_staff
from courses.time_text import course_time_text

from .models import Accommodation, AccommodationChange, CourseAccommodation
from .window import (  # noqa: F401
    EffectiveAccommodation,
    StudentLimits,
    accommodated_time_limit_seconds,
    accommodation_merge,
    limits_apply,
)

# "Not read yet": the caller has no accommodation at hand (None means "read: there is none").
UNREAD = object()


def accommodation_of(*, assignment: Assignment, student) -> EffectiveAccommodation | None:
    """The accommodation that applies to the student on the assignment: their own on it
    merged over their course-wide one (one query); None for neither."""
    row = with_own_accommodation(
        Assignment.objects.filter(pk=assignment.pk), assignment_path="", student=student
    ).first()
    return carried_accommodation(row) if row is not None else None


def accommodation_carry(row, accommodation: Accommodation | None) -> None:
    """Remember on ``row`` the accommodation read for it, as ``with_own_accommodation``
    would have, so later reads of the same row make no query."""
    vars(row).update(own_accommodation=accommodation, own_accommodation_read=True)


def with_own_accommodation(queryset: QuerySet, *, assignment_path: str, student) -> QuerySet:
    """``queryset`` with each row's student's accommodation joined in, so the query that
    already fetches the row leading to the assignment reads it too (``assignment_path``
    names the assignment from that row, "" for an Assignment queryset; ``student`` is a user
    or an ``F()`` to the row's student). Read it back with ``carried_accommodation``."""
    relation = f"{assignment_path}__accommodations" if assignment_path else "accommodations"
    course_relation = f"{assignment_path}__course__course_accommodations" if assignment_path else "course__course_accommodations"
    return queryset.annotate(
        own_accommodation=FilteredRelation(relation, condition=Q(**{f"{relation}__student": student})),
        # The course-wide one, which the assignment's own overrides field by field.
        own_course_accommodation=FilteredRelation(
            course_relation, condition=Q(**{f"{course_relation}__student": student})
        ),
        # select_related leaves the attribute unset when no row joins: this says it was read.
        own_accommodation_read=Value(True, output_field=BooleanField()),
    ).select_related("own_accommodation", "own_course_accommodation")


def carried_accommodation(*rows):
    """The accommodation a row was read with (``with_own_accommodation``), from the first of
    ``rows`` read that way: the assignment's own merged over the course-wide one
    (``accommodation_merge``) or None; UNREAD when none was."""
    for row in rows:
        if row is not None and vars(row).get("own_accommodation_read"):
            return accommodation_merge(
                own=vars(row).get("own_accommodation"), course_wide=vars(row).get("own_course_accommodation")
            )
    return UNREAD


# ---------------------------------------------------------------------------
# The staff's pages
# ---------------------------------------------------------------------------


def access_accommodations(*, user, course_slug: str, assignment_slug: str, change: bool = False):
    """The assignment and the user's role, for its course's staff: teaching assistants see
    the accommodations (they invigilate), only instructors change them (``change``).
    404 for anyone outside the course, 403 for its students (and TAs changing)."""
    course, role = access_course_staff(user=user, slug=course_slug, instructor_only=change)
    assignment = course.assignments.filter(slug=assignment_slug).first()
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment, role


def course_zone(assignment: Assignment):
    """The course's time zone (the site's when the stored name is unknown)."""
    try:
        return zoneinfo.ZoneInfo(assignment.course.time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return timezone.get_default_timezone()


def accommodation_summary(accommodation, *, tz) -> str:
    """An accommodation in words: "time ×1.5; +10 min; closes Thu 5 Mar 2026, 09:00 CET; 5
    attempts per part". Empty for none. Of a merged accommodation, the values that come from
    the course-wide one say so ("time ×1.5 (course-wide)")."""
    if accommodation is None:
        return ""
    if isinstance(accommodation, EffectiveAccommodation):
        return _effective_summary(accommodation, tz=tz)
    words = []
    if accommodation.time_limit_minutes:
        words.append(f"time limit {accommodation.time_limit_minutes} min")
    if accommodation.time_factor:
        words.append(f"time ×{accommodation.time_factor:g}")
    if accommodation.extra_minutes:
        words.append(f"+{accommodation.extra_minutes} min")
    for name, label in (("opens_at", "opens"), ("due_at", "due"), ("closes_at", "closes")):
        value = getattr(accommodation, name)
        if value is not None:
            words.append(f"{label} {course_time_text(value, tz)}")
    if accommodation.attempts_per_part is not None:
        attempts = accommodation.attempts_per_part
        words.append(f"{attempts} attempt{'s' * (attempts != 1)} per part" if attempts else "unlimited attempts")
    if accommodation.note:
        words.append(f"note: {accommodation.note}")
    return "; ".join(words)


def _effective_summary(accommodation: EffectiveAccommodation, *, tz) -> str:
    own = accommodation_summary(accommodation.own, tz=tz) if accommodation.own is not None else ""
    course_wide = accommodation.course_wide
    if course_wide is None:
        return own
    applied = [
        name for name in ("time_factor", "extra_minutes", "attempts_per_part")
        if accommodation.source(name) == "course"
    ]
    shown = SimpleNamespace(
        time_limit_minutes=None, opens_at=None, due_at=None, closes_at=None, note="",
        **{name: getattr(course_wide, name) if name in applied else None
           for name in ("time_factor", "extra_minutes", "attempts_per_part")},
    )
    inherited = accommodation_summary(shown, tz=tz)
    words = [part for part in (own, f"course-wide: {inherited}" if inherited else "") if part]
    return "; ".join(words)


def course_accommodation_summary(accommodation: CourseAccommodation | None) -> str:
    """A course-wide accommodation in words: "time ×1.5; +10 min; 3 attempts per part"."""
    if accommodation is None:
        return ""
    shown = SimpleNamespace(
        time_limit_minutes=None, opens_at=None, due_at=None, closes_at=None, note=accommodation.note,
        time_factor=accommodation.time_factor, extra_minutes=accommodation.extra_minutes,
        attempts_per_part=accommodation.attempts_per_part,
    )
    return accommodation_summary(shown, tz=None)


def accommodations_of_assignment(*, assignment: Assignment) -> list[Accommodation]:
    """Every accommodation on the assignment with its student, by username (one query)."""
    return list(
        Accommodation.objects.filter(assignment=assignment)
        .select_related("student", "updated_by")
        .order_by("student__username")
    )


def accommodation_history(*, assignment: Assignment, limit: int = 50) -> list[AccommodationChange]:
    """The latest changes, each with ``detail_shown``: its words with every time labelled
    in the course's zone (entries written before times were labelled read "2026-03-05
    09:00", a wall-clock time of the course's zone)."""
    changes = list(
        AccommodationChange.objects.filter(assignment=assignment)
        .select_related("student", "by")[:limit]
    )
    zone = course_zone(assignment)
    for change in changes:
        change.detail_shown = _unlabelled_times_labelled(change.detail, zone)
    return changes


UNLABELLED_LOG_TIME = re.compile(r"\b(\d{4}-\d\d-\d\d \d\d:\d\d)\b")


def _unlabelled_times_labelled(detail: str, zone) -> str:
    def labelled(match) -> str:
        wall_clock = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M")
        return course_time_text(timezone.make_aware(wall_clock, zone), zone)

    return UNLABELLED_LOG_TIME.sub(labelled, detail)


def with_accommodation_on(students: QuerySet, *, assignment: Assignment) -> QuerySet:
    """A queryset of users with each one's accommodation on ``assignment`` joined in (read
    it back with ``carried_accommodation``): the gradebook's students in one query."""
    return students.annotate(
        own_accommodation=FilteredRelation(
            "accommodations", condition=Q(accommodations__assignment=assignment)
        ),
        **with_course_accommodation_in(course_id=assignment.course_id),
        own_accommodation_read=Value(True, output_field=BooleanField()),
    ).select_related("own_accommodation", "own_course_accommodation")


def with_course_accommodation_in(*, course_id: int) -> dict:
    """The annotation that joins a user's course-wide accommodation in the course to a
    queryset of users (``own_course_accommodation``; select_related it)."""
    return {
        "own_course_accommodation": FilteredRelation(
            "course_accommodations", condition=Q(course_accommodations__course=course_id)
        )
    }


def course_students(*, assignment: Assignment) -> QuerySet:
    """The active students of the assignment's course, by username."""
    return students_of_course(course_id=assignment.course_id)


def students_of_course(*, course_id: int) -> QuerySet:
    """The active students of a course, by username."""
    return (
        get_user_model()
        .objects.filter(
            enrolments__course_id=course_id,
            enrolments__role=Role.STUDENT,
            enrolments__status=EnrolmentStatus.ACTIVE,
        )
        .order_by("username")
    )


def access_accommodation_student(*, assignment: Assignment, user_id: int):
    """An active student of the assignment's course; 404 for anyone else."""
    student = course_students(assignment=assignment).filter(pk=user_id).first()
    if student is None:
        raise Http404("No such student in this course.")
    return student


# ---------------------------------------------------------------------------
# Course-wide accommodations
# ---------------------------------------------------------------------------


def access_course_accommodations(*, user, course_slug: str, change: bool = False):
    """The course and the user's role, for its staff: TAs see the course-wide
    accommodations, only instructors change them (``change``). 404 for anyone outside the
    course, 403 for its students (and TAs changing)."""
    return access_course_staff(user=user, slug=course_slug, instructor_only=change)


def access_course_student(*, course, user_id: int):
    """An active student of the course; 404 for anyone else."""
    student = students_of_course(course_id=course.pk).filter(pk=user_id).first()
    if student is None:
        raise Http404("No such student in this course.")
    return student


def course_accommodations_of(*, course) -> list[CourseAccommodation]:
    """Every course-wide accommodation of the course with its student, by username."""
    return list(
        CourseAccommodation.objects.filter(course=course)
        .select_related("student", "updated_by")
        .order_by("student__username")
    )


def course_accommodation_history(*, course, limit: int = 50) -> list[AccommodationChange]:
    """The log of the course's course-wide accommodations, newest first."""
    return list(
        AccommodationChange.objects.filter(course=course, assignment__isnull=True)
        .select_related("student", "by")[:limit]
    )


def accommodation_rows(*, assignment: Assignment) -> list[dict]:
    """The assignment's accommodations page, one row per student with an accommodation
    here or course-wide (two queries): the assignment's own (``own``, None when only the
    course-wide one applies), the course-wide one (``course_wide``), what applies in words
    and the course-wide fields the assignment's own overrides."""
    tz = course_zone(assignment)
    own = {row.student_id: row for row in accommodations_of_assignment(assignment=assignment)}
    wide = {row.student_id: row for row in course_accommodations_of(course=assignment.course)}
    students = {row.student_id: row.student for row in [*wide.values(), *own.values()]}
    rows = []
    for student_id, student in sorted(students.items(), key=lambda pair: pair[1].username):
        applied = accommodation_merge(own=own.get(student_id), course_wide=wide.get(student_id))
        rows.append({
            "student": student,
            "own": own.get(student_id),
            "course_wide": wide.get(student_id),
            "summary": accommodation_summary(applied, tz=tz),
            "overridden": [name.replace("_", " ") for name in applied.overridden],
        })
    return rows


def accommodated_student_ids(*, assignment: Assignment) -> set[int]:
    """The students with their own accommodation on ``assignment`` (the "add" form marks
    them: choosing one opens theirs for editing)."""
    return set(Accommodation.objects.filter(assignment=assignment).values_list("student_id", flat=True))


def course_accommodated_student_ids(*, course) -> set[int]:
    """The students with a course-wide accommodation in ``course``."""
    return set(CourseAccommodation.objects.filter(course=course).values_list("student_id", flat=True))
