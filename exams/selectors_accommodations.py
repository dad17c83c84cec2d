"""A student's accommodation on an assignment, and the reads of the accommodations pages.

The rule that applies an accommodation to the assignment's limits (``limits_apply``) is
part of the student's window (``exams.window``); it is imported here for the callers that
know it by this module.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, FilteredRelation, Q, QuerySet, Value
from django.http import Http404
from django.utils import timezone

from courses.models import Assignment, EnrolmentStatus, Role
from courses.selectors import access_course_staff
from courses.time_text import course_time_text

from .models import Accommodation, AccommodationChange
from .window import StudentLimits, accommodated_time_limit_seconds, limits_apply  # noqa: F401

# "Not read yet": the caller has no accommodation at hand (None means "read: there is none").
UNREAD = object()


def accommodation_of(*, assignment: Assignment, student) -> Accommodation | None:
    return Accommodation.objects.filter(assignment=assignment, student=student).first()


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
    return queryset.annotate(
        own_accommodation=FilteredRelation(relation, condition=Q(**{f"{relation}__student": student})),
        # select_related leaves the attribute unset when no row joins: this says it was read.
        own_accommodation_read=Value(True, output_field=BooleanField()),
    ).select_related("own_accommodation")


def carried_accommodation(*rows):
    """The accommodation a row was read with (``with_own_accommodation``), from the first of
    ``rows`` read that way: an Accommodation or None; UNREAD when none was."""
    for row in rows:
        if row is not None and vars(row).get("own_accommodation_read"):
            return vars(row).get("own_accommodation")
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


def accommodation_summary(accommodation: Accommodation | None, *, tz) -> str:
    """An accommodation in words: "time ×1.5; +10 min; closes Thu 5 Mar 2026, 09:00 CET; 5 attempts
    per part". Empty for none."""
    if accommodation is None:
        return ""
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
        own_accommodation_read=Value(True, output_field=BooleanField()),
    ).select_related("own_accommodation")


def course_students(*, assignment: Assignment) -> QuerySet:
    """The active students of the assignment's course, by username."""
    return (
        get_user_model()
        .objects.filter(
            enrolments__course_id=assignment.course_id,
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
