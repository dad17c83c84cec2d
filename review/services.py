"""Writes for spaced review: one graded attempt becomes one FSRS review of its part's card.

``review_record`` is idempotent per submission (a signal for a regrade or a manual grade
of the same submission updates its one review instead of adding another) and keeps a
card equal to the replay of its reviews in time order.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

import fsrs
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from courses.models import AssignmentItem, Course
from exams.selectors import grade_withheld
from exercises.selectors import practice_origin_item_id
from exercises.specs import version_spec
from grading.models import Submission, SubmissionStatus

from .models import ReviewCard, ReviewEntry, ReviewSettings
from .scheduling import review_rating, review_scheduler
from .selectors import feeds_review_q, review_feeds, submissions_review_may_count

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReviewSource:
    course: Course
    origin_item: AssignmentItem
    assignment_id: int | None  # None for practice


def review_source(submission: Submission) -> ReviewSource | None:
    """Where an answer belongs: its course, and the slot a review would practise from."""
    variant = submission.variant
    item = variant.assignment_item
    if item is not None:
        return ReviewSource(course=item.assignment.course, origin_item=item, assignment_id=item.assignment_id)
    if not variant.context.startswith("practice:"):
        return None
    origin = (
        AssignmentItem.objects.select_related("assignment__course")
        .filter(pk=practice_origin_item_id(variant))
        .first()
    )
    if origin is None:
        return None
    return ReviewSource(course=origin.assignment.course, origin_item=origin, assignment_id=None)


def submission_rating(submission: Submission) -> fsrs.Rating | None:
    """The FSRS rating of a stored outcome (rule: review.scheduling), None for no review."""
    if submission.status != SubmissionStatus.GRADED:
        return None
    earlier_tries = (
        Submission.objects.filter(
            variant_id=submission.variant_id, part=submission.part, attempt__lt=submission.attempt
        )
        .exclude(status=SubmissionStatus.COULD_NOT_GRADE)
        .count()
    )
    try:
        hints = version_spec(submission.variant.exercise_version).part(submission.part).hints
    except KeyError:
        hints = ()
    hint_seen = any(hint.after_tries <= earlier_tries for hint in hints)
    return review_rating(correct=submission.correct, earlier_tries=earlier_tries, hint_seen=hint_seen)


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(dt_timezone.utc)  # fsrs accepts datetime.timezone.utc only


def review_record(*, submission_id: int) -> ReviewEntry | None:
    """Count one submission's stored outcome as a review of its card (or undo it when the
    outcome no longer counts). Idempotent; safe to run twice or concurrently."""
    submission = (
        Submission.objects.select_related(
            "variant__exercise_version", "variant__assignment_item__assignment__course"
        )
        .filter(pk=submission_id)
        .first()
    )
    if submission is None:
        return None
    rating = submission_rating(submission)
    with transaction.atomic():
        entry = (
            ReviewEntry.objects.select_for_update().select_related("card")
            .filter(submission_id=submission.pk).first()
        )
        if entry is not None:
            return _entry_update(entry, rating=rating)
        if rating is None or grade_withheld(submission):
            return None  # (a withheld exam grade would show in the due list)
        source = review_source(submission)
        if source is None or not review_feeds(course=source.course, assignment_id=source.assignment_id):
            return None
        card = _card_locked(submission=submission, source=source)
        entry = ReviewEntry.objects.create(
            card=card, submission=submission, rating=int(rating), reviewed_at=_utc(submission.created_at)
        )
        last = card.card.get("last_review")
        if last is None or datetime.fromisoformat(last) <= entry.reviewed_at:
            _card_store(card, _review(_fsrs_card(card), entry), reviews=card.reviews + 1)
        else:  # an answer graded after a later one: replay in answer order
            _card_rebuild(card)
    return entry


def _entry_update(entry: ReviewEntry, *, rating: fsrs.Rating | None) -> ReviewEntry | None:
    """A regrade or manual grade of an already counted submission."""
    if rating is not None and int(rating) == entry.rating:
        return entry
    card = ReviewCard.objects.select_for_update().get(pk=entry.card_id)
    if rating is None:
        entry.delete()
        entry = None
    else:
        entry.rating = int(rating)
        entry.save(update_fields=["rating"])
    _card_rebuild(card)
    return entry


def _card_locked(*, submission: Submission, source: ReviewSource) -> ReviewCard:
    """The part's card, locked (created when this is the part's first review)."""
    key = {
        "course": source.course,
        "student_id": submission.student_id,
        "exercise_id": submission.variant.exercise_version.exercise_id,
        "part": submission.part,
    }
    card = ReviewCard.objects.select_for_update().filter(**key).first()
    if card is None:
        try:
            with transaction.atomic():
                card = ReviewCard.objects.create(
                    **key, origin_item=source.origin_item, due_at=submission.created_at
                )
        except IntegrityError:  # a concurrent first review made it: wait for its lock
            card = ReviewCard.objects.select_for_update().get(**key)
    card.origin_item = source.origin_item  # review practises from where the student last was
    return card


def _fsrs_card(card: ReviewCard) -> fsrs.Card:
    if not card.card:
        return fsrs.Card(card_id=card.pk)
    return fsrs.Card.from_dict(card.card)


def _review(fsrs_card: fsrs.Card, entry: ReviewEntry) -> fsrs.Card:
    reviewed, _ = review_scheduler(settings.REVIEW_DESIRED_RETENTION).review_card(
        fsrs_card, fsrs.Rating(entry.rating), review_datetime=_utc(entry.reviewed_at)
    )
    return reviewed


def _card_rebuild(card: ReviewCard) -> None:
    """Replay every review of the card from a new card, in answer order."""
    entries = list(card.entries.all())
    if not entries:
        card.delete()  # nothing practised any more: nothing to review
        return
    fsrs_card = fsrs.Card(card_id=card.pk)
    for entry in entries:
        fsrs_card = _review(fsrs_card, entry)
    _card_store(card, fsrs_card, reviews=len(entries))


def _card_store(card: ReviewCard, fsrs_card: fsrs.Card, *, reviews: int) -> None:
    card.card = fsrs_card.to_dict()
    card.due_at = fsrs_card.due
    card.reviews = reviews
    card.save(update_fields=["card", "due_at", "reviews", "origin_item", "updated_at"])


def reviews_after_grades(*, submission_ids: list[int]) -> int:
    """The follow-up of a grade change: count each outcome as a review (a withheld exam
    grade waits until it becomes visible). One failing submission never stops the others."""
    recorded = 0
    for submission_id in submissions_review_may_count(submission_ids):
        try:
            recorded += review_record(submission_id=submission_id) is not None
        except Exception:
            logger.exception("could not schedule the review of submission %s", submission_id)
    return recorded


def reviews_record_many(*, submission_ids: list[int]) -> int:
    """review_record for each id; returns how many became (or stayed) reviews."""
    return sum(review_record(submission_id=submission_id) is not None for submission_id in submission_ids)


def review_settings_update(*, course: Course, enabled: bool, feeding_assignments) -> ReviewSettings:
    """Store a course's review choices; ``feeding_assignments`` must be the course's own."""
    if any(assignment.course_id != course.pk for assignment in feeding_assignments):
        raise ValueError("an assignment of another course cannot feed this course's review")
    with transaction.atomic():
        review_settings, _ = ReviewSettings.objects.select_for_update().get_or_create(course=course)
        review_settings.enabled = enabled
        review_settings.save(update_fields=["enabled", "updated_at"])
        review_settings.feeding_assignments.set(feeding_assignments)
    return review_settings


def reviews_record_missing(*, window: timedelta | None = None, limit: int = 200) -> int:
    """Record the reviews a lost task left out (the broker was down when the grade was
    stored): submissions graded in the last ``window`` but more than a minute ago with no
    review yet, oldest first, at most ``limit``.

    Only answers that can feed review are read: practice answers, and answers to an
    assignment a course with review on chose. The read walks the index of graded answers
    by ``graded_at`` over the window alone, so its cost follows the answers of the last
    window that should have a review and have none (normally none), not the history nor
    the window's assignment answers that never feed review."""
    window = window or timedelta(seconds=settings.REVIEW_SWEEP_WINDOW_SECONDS)
    now = timezone.now()
    missing = list(
        Submission.objects.filter(
            status=SubmissionStatus.GRADED,
            graded_at__gte=now - window,
            graded_at__lt=now - timedelta(minutes=1),
            review_entry__isnull=True,
        )
        .filter(feeds_review_q())
        .order_by("graded_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    recorded = 0
    for submission_id in missing:
        if review_record(submission_id=submission_id) is not None:
            recorded += 1
    return recorded
