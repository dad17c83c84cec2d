"""Reads for spaced review: a course's settings, a student's due cards, with access checks."""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from courses.models import Course
from courses.selectors import access_course_staff
from exercises.specs import part_label, version_spec
from grading.models import Submission

from .models import ReviewCard, ReviewSettings

DUE_SHOWN = 20  # at most this many due parts on the dashboard at once


def review_settings_of(*, course: Course) -> ReviewSettings:
    """The course's settings; an unsaved default (on, practice only) if it has none."""
    return ReviewSettings.objects.filter(course=course).first() or ReviewSettings(course=course)


def review_feeds(*, course: Course, assignment_id: int | None) -> bool:
    """Whether an answer in this course (to ``assignment_id``, None for practice) schedules
    review: review must be on, and an assignment must be one the course chose."""
    settings = ReviewSettings.objects.filter(course=course).first()
    if settings is None:
        return assignment_id is None
    if not settings.enabled:
        return False
    if assignment_id is None:
        return True
    return settings.feeding_assignments.filter(pk=assignment_id).exists()


def review_feeding(*, pairs: set[tuple[int, int | None]]) -> set[tuple[int, int | None]]:
    """Those of the (course id, assignment id or None for practice) pairs whose answers
    schedule review: ``review_feeds`` for many at once, in two queries."""
    course_ids = {course_id for course_id, _ in pairs}
    if not course_ids:
        return set()
    enabled = dict(ReviewSettings.objects.filter(course_id__in=course_ids).values_list("course_id", "enabled"))
    chosen = set(
        ReviewSettings.feeding_assignments.through.objects.filter(
            reviewsettings__course_id__in=[course_id for course_id, on in enabled.items() if on]
        ).values_list("reviewsettings__course_id", "assignment_id")
    ) if any(enabled.values()) else set()
    return {
        (course_id, assignment_id)
        for course_id, assignment_id in pairs
        if (assignment_id is None if course_id not in enabled
            else enabled[course_id] and (assignment_id is None or (course_id, assignment_id) in chosen))
    }


def feeds_review_q() -> Q:
    """Submissions whose answer can schedule review: practice answers, and answers to an
    assignment a course with review on chose (review_feeds says the rest per course)."""
    feeding_assignments = ReviewSettings.feeding_assignments.through.objects.filter(
        reviewsettings__enabled=True
    ).values("assignment_id")
    return Q(variant__assignment_item__isnull=True) | Q(variant__assignment_item__assignment_id__in=feeding_assignments)


def submissions_review_may_count(submission_ids: list[int]) -> list[int]:
    """Of these ids, those a review may count or already counted (one query, id order): the
    rest (an exam that feeds no review, say) need no look at all."""
    return list(
        Submission.objects.filter(pk__in=submission_ids)
        .filter(feeds_review_q() | Q(review_entry__isnull=False))
        .order_by("pk")
        .values_list("pk", flat=True)
        .distinct()
    )


def access_review_settings(*, user, course_slug: str, change: bool) -> tuple[Course, str, ReviewSettings]:
    """The course's review settings for its staff (404 outsiders, 403 students; 403 TAs
    when ``change``)."""
    course, role = access_course_staff(user=user, slug=course_slug, instructor_only=change)
    return course, role, review_settings_of(course=course)


def due_cards_by_course(*, student, now=None) -> dict[int, list[ReviewCard]]:
    """The student's cards due now, per course id, in courses with review on; one query."""
    now = now or timezone.now()
    cards = (
        ReviewCard.objects.filter(
            student=student, due_at__lte=now, origin_item__assignment__is_published=True
        )
        .filter(Q(course__review_settings__isnull=True) | Q(course__review_settings__enabled=True))
        .select_related("exercise", "origin_item__exercise_version")
        .order_by("due_at", "pk")[: DUE_SHOWN * 5]
    )
    by_course: dict[int, list[ReviewCard]] = {}
    for card in cards:
        # "(b)", not the part's key: the page is for people.
        card.part_label = part_label(version_spec(card.origin_item.exercise_version), card.part)
        shown = by_course.setdefault(card.course_id, [])
        if len(shown) < DUE_SHOWN:
            shown.append(card)
    return by_course
