"""Writes of the course gradebook's set-up: its weighted categories and which category each
assignment counts in (an assignment is in at most one)."""

from __future__ import annotations

from django.db import transaction

from courses.models import Assignment, Course

from .models import GradeCategory
from .services import InstructorRefused, _require_writable

MAX_CATEGORIES = 20


def _check(*, name: str, weight: float, drop_lowest: int) -> str:
    name = (name or "").strip()
    if not name:
        raise InstructorRefused("A category needs a name.")
    if len(name) > 100:
        raise InstructorRefused("A category's name has at most 100 characters.")
    if not 0 <= weight <= 100:
        raise InstructorRefused("A category's weight is a percent between 0 and 100.")
    if not 0 <= drop_lowest <= 50:
        raise InstructorRefused("Drop between 0 and 50 of the lowest results.")
    return name


@transaction.atomic
def grade_category_create(*, course: Course, name: str, weight: float, drop_lowest: int = 0) -> GradeCategory:
    _require_writable(course)
    name = _check(name=name, weight=weight, drop_lowest=drop_lowest)
    if course.grade_categories.count() >= MAX_CATEGORIES:
        raise InstructorRefused(f"A course has at most {MAX_CATEGORIES} categories.")
    if course.grade_categories.filter(name__iexact=name).exists():
        raise InstructorRefused(f"This course already has a category called “{name}”.")
    position = course.grade_categories.count()
    return GradeCategory.objects.create(
        course=course, name=name, weight=weight, drop_lowest=drop_lowest, position=position
    )


@transaction.atomic
def grade_category_update(*, category: GradeCategory, name: str, weight: float, drop_lowest: int) -> GradeCategory:
    _require_writable(category.course)
    name = _check(name=name, weight=weight, drop_lowest=drop_lowest)
    if category.course.grade_categories.filter(name__iexact=name).exclude(pk=category.pk).exists():
        raise InstructorRefused(f"This course already has a category called “{name}”.")
    category.name, category.weight, category.drop_lowest = name, weight, drop_lowest
    category.save(update_fields=["name", "weight", "drop_lowest"])
    return category


def grade_category_delete(*, category: GradeCategory) -> None:
    """Its assignments stay; they count in no category until put in another."""
    _require_writable(category.course)
    category.delete()


@transaction.atomic
def assignment_category_set(*, assignment: Assignment, category: GradeCategory | None) -> None:
    _require_writable(assignment.course)
    if category is not None and category.course_id != assignment.course_id:
        raise InstructorRefused("That category belongs to another course.")
    assignment.grade_categories.clear()
    if category is not None:
        category.assignments.add(assignment)
