"""Writes for courses: the demo course, enrolments, assignments."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from exercises.models import ExerciseVersion, VersionStatus

from .models import (
    Assignment, AssignmentItem, Course, Enrolment, EnrolmentSource, EnrolmentStatus, Role,
)

DEMO_PASSWORD = "attention-demo"
DEMO_COURSE_SLUG = "attention-101"
DEMO_INSTRUCTORS = ("instructor", "reviewer")
DEMO_TEACHING_ASSISTANTS = ("ta",)
DEMO_STUDENTS = ("student1", "student2", "student3")
# The worked example comes first: it is the exercise a newcomer should open.
DEMO_FIRST_EXERCISE = "attention-weights-one-query"


@dataclass(frozen=True)
class DemoCourse:
    course: Course
    assignment: Assignment
    logins: list[tuple[str, str, str]]  # (username, password, role)


def user_get_or_create(*, username: str, password: str):
    """A user with a known password; an existing one keeps its password."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user


def enrolment_ensure(
    *, course: Course, user, role: str, source: str = EnrolmentSource.MANUAL
) -> Enrolment:
    """Enrol the user with this role, active again if they had been dropped.

    ``source`` is recorded only when the enrolment is new: how someone first came in."""
    enrolment, _ = Enrolment.objects.update_or_create(
        course=course,
        user=user,
        defaults={"role": role, "status": EnrolmentStatus.ACTIVE, "dropped_at": None},
        create_defaults={
            "role": role, "status": EnrolmentStatus.ACTIVE, "dropped_at": None, "source": source,
        },
    )
    return enrolment


def assignment_item_ensure(
    *, assignment: Assignment, version: ExerciseVersion, position: int, points: float = 1.0
) -> AssignmentItem:
    item, _ = AssignmentItem.objects.get_or_create(
        assignment=assignment,
        exercise_version=version,
        defaults={"position": position, "points": points},
    )
    return item


def latest_published_versions() -> list[ExerciseVersion]:
    versions = {}
    for version in ExerciseVersion.objects.filter(status=VersionStatus.PUBLISHED).select_related(
        "exercise"
    ).order_by("exercise__slug", "-number"):
        versions.setdefault(version.exercise.slug, version)
    ordered = sorted(versions.values(), key=lambda v: (v.exercise.slug != DEMO_FIRST_EXERCISE, v.exercise.slug))
    return ordered


@transaction.atomic
def demo_course_ensure() -> DemoCourse:
    """The demo course with its accounts and one assignment holding the bank. Idempotent."""
    course, _ = Course.objects.get_or_create(
        slug=DEMO_COURSE_SLUG, defaults={"title": "Attention, from scratch"}
    )
    logins = []
    for usernames, role in (
        (DEMO_INSTRUCTORS, Role.INSTRUCTOR),
        (DEMO_TEACHING_ASSISTANTS, Role.TEACHING_ASSISTANT),
        (DEMO_STUDENTS, Role.STUDENT),
    ):
        for username in usernames:
            user = user_get_or_create(username=username, password=DEMO_PASSWORD)
            enrolment_ensure(course=course, user=user, role=role)
            logins.append((username, DEMO_PASSWORD, role.label))
    assignment, _ = Assignment.objects.get_or_create(
        course=course,
        slug="scaled-dot-product",
        defaults={"title": "Scaled dot-product attention", "attempts_per_part": 5},
    )
    for position, version in enumerate(latest_published_versions()):
        if not assignment.items.filter(exercise_version__exercise=version.exercise).exists():
            assignment_item_ensure(assignment=assignment, version=version, position=position)
    return DemoCourse(course=course, assignment=assignment, logins=logins)
