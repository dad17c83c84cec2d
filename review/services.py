"""Writes for spaced review: one graded attempt becomes one FSRS review of its part's card.

``review_record`` is idempotent per submission (a signal for a regrade or a manual grade
of the same submission updates its one review instead of adding another) and keeps a
card equal to the replay of its reviews in time order.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone

import fsrs
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from courses.models import AssignmentItem, Course
from exams.selectors import submissions_not_withheld
from exercises.models import ExerciseVersion
from exercises.selectors import practice_origin_item_id
from exercises.specs import version_spec
from grading.models import Submission, SubmissionStatus

from .models import ReviewCard, ReviewEntry, ReviewSettings
from .scheduling import review_rating, review_scheduler
from .selectors import feeds_review_q, review_feeding, submissions_review_may_count

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReviewSource:
    course: Course
    origin_item: AssignmentItem
    assignment_id: int | None  # None for practice


def submission_rating(submission: Submission) -> fsrs.Rating | None:
    """The FSRS rating of a stored outcome (rule: review.scheduling), None for no review."""
    return _ratings([submission])[submission.pk]


def _rating(submission: Submission, *, earlier_tries: int) -> fsrs.Rating | None:
    if submission.status != SubmissionStatus.GRADED:
        return None
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
    return reviews_record(submission_ids=[submission_id]).get(submission_id)


def reviews_record(*, submission_ids: list[int]) -> dict[int, ReviewEntry | None]:
    """``review_record`` for a batch, with the same entries and cards as recording each id
    alone in id order: the batch's submissions, earlier tries, visibility, sources and
    course settings are read once for all, every card it touches is locked in one
    statement (id order: two batches never wait on each other in a circle), and the
    entries and cards are written in one statement each. Ids that no longer exist are
    skipped, duplicates count once. Returns each found submission's review (None: none)."""
    submissions = _submissions_read(sorted(set(submission_ids)))
    if not submissions:
        return {}
    ratings = _ratings(submissions)
    rated = [submission for submission in submissions if ratings[submission.pk] is not None]
    sources = _sources(rated)
    # Only an assignment's grade can be withheld (grade_withheld): practice needs no look.
    visible = set(submissions_not_withheld(
        [submission.pk for submission in rated if submission.variant.assignment_item_id is not None]
    )) | {submission.pk for submission in rated if submission.variant.assignment_item_id is None}
    feeding = review_feeding(pairs={(source.course.pk, source.assignment_id) for source in sources.values()})
    new_keys = {
        submission.pk: _card_key(submission, sources[submission.pk])
        for submission in rated
        if submission.pk in visible and submission.pk in sources
        and (sources[submission.pk].course.pk, sources[submission.pk].assignment_id) in feeding
    }
    found_ids = [submission.pk for submission in submissions]
    with transaction.atomic():
        cards = _cards_lock(keys=set(new_keys.values()), counting=found_ids)
        first_reviews = _first_reviews(submissions, new_keys=new_keys, sources=sources)
        if missing := set(first_reviews) - {_key_of(card) for card in cards.values()}:
            _cards_create({key: first_reviews[key] for key in missing})
            cards |= _cards_lock(keys=missing, counting=[])
        card_of_key = {_key_of(card): card.pk for card in cards.values()}
        entries = {entry.submission_id: entry for entry in ReviewEntry.objects.filter(submission_id__in=found_ids)}
        if moved := {entry.card_id for entry in entries.values()} - set(cards):
            cards |= _cards_lock(keys=set(), counting=[], card_ids=moved)  # counted meanwhile by another batch
        work = _CardsWork(cards)
        recorded: dict[int, ReviewEntry | None] = {}
        for submission in submissions:
            recorded[submission.pk] = work.record(
                submission, rating=ratings[submission.pk], entry=entries.get(submission.pk),
                card=cards.get(card_of_key.get(new_keys.get(submission.pk))),
                origin_item=sources[submission.pk].origin_item if submission.pk in sources else None,
            )
        work.store()
    return recorded


def _first_reviews(submissions, *, new_keys: dict, sources: dict) -> dict[tuple, tuple[AssignmentItem, datetime]]:
    """The origin and time of each card key's first answer in the batch: what a card made
    for it starts from (the batch's reviews then bring it up to date)."""
    first = {}
    for submission in reversed(submissions):
        if submission.pk in new_keys:
            first[new_keys[submission.pk]] = (sources[submission.pk].origin_item, submission.created_at)
    return first


def _submissions_read(submission_ids: list[int]) -> list[Submission]:
    """The batch's submissions with their variants, items, assignments and courses (one
    query, id order); each exercise version read once, however many answers share it."""
    submissions = list(
        Submission.objects.select_related("variant__assignment_item__assignment__course")
        .filter(pk__in=submission_ids).order_by("pk")
    )
    versions = ExerciseVersion.objects.in_bulk({submission.variant.exercise_version_id for submission in submissions})
    for submission in submissions:
        submission.variant.exercise_version = versions[submission.variant.exercise_version_id]
    return submissions


def _ratings(submissions: list[Submission]) -> dict[int, fsrs.Rating | None]:
    """``submission_rating`` of each, with the earlier tries of all read in one query."""
    tries: dict[tuple[int, str], list[int]] = defaultdict(list)
    for variant_id, part, attempt in (
        Submission.objects.filter(variant_id__in={submission.variant_id for submission in submissions})
        .exclude(status=SubmissionStatus.COULD_NOT_GRADE)
        .values_list("variant_id", "part", "attempt")
    ):
        tries[(variant_id, part)].append(attempt)
    return {
        submission.pk: _rating(
            submission,
            earlier_tries=sum(attempt < submission.attempt for attempt in tries[(submission.variant_id, submission.part)]),
        )
        for submission in submissions
    }


def _sources(submissions: list[Submission]) -> dict[int, ReviewSource]:
    """``review_source`` of each that has one, the practice answers' origins in one query."""
    origin_ids = {
        submission.pk: practice_origin_item_id(submission.variant)
        for submission in submissions
        if submission.variant.assignment_item is None and submission.variant.context.startswith("practice:")
    }
    origins = AssignmentItem.objects.select_related("assignment__course").in_bulk(set(origin_ids.values()))
    sources = {}
    for submission in submissions:
        item = submission.variant.assignment_item
        if item is not None:
            sources[submission.pk] = ReviewSource(item.assignment.course, item, item.assignment_id)
        elif (origin := origins.get(origin_ids.get(submission.pk))) is not None:
            sources[submission.pk] = ReviewSource(origin.assignment.course, origin, None)
    return sources


CardKey = tuple[int, int, int, str]  # course id, student id, exercise id, part


def _card_key(submission: Submission, source: ReviewSource) -> CardKey:
    return (source.course.pk, submission.student_id, submission.variant.exercise_version.exercise_id, submission.part)


def _key_of(card: ReviewCard) -> CardKey:
    return (card.course_id, card.student_id, card.exercise_id, card.part)


def _cards_create(first_review_of: dict[CardKey, tuple[AssignmentItem, datetime]]) -> None:
    """Create the cards of parts reviewed for the first time, from the first answer's
    origin and time (in key order; a concurrent first review's card is kept)."""
    ReviewCard.objects.bulk_create(
        [ReviewCard(course_id=course_id, student_id=student_id, exercise_id=exercise_id, part=part,
                    origin_item=origin_item, due_at=answered_at)
         for (course_id, student_id, exercise_id, part), (origin_item, answered_at) in sorted(first_review_of.items())],
        ignore_conflicts=True,
    )


def _cards_lock(*, keys: set[CardKey], counting: list[int], card_ids: set[int] = frozenset()) -> dict[int, ReviewCard]:
    """Lock, in one statement and id order, the cards of these keys (with any other card of
    the same courses, students, exercises and parts: one batch's are nearly always the
    same), those that already count these submissions, and these ids."""
    wanted = Q(pk__in=sorted(card_ids))
    if keys:
        wanted |= Q(
            course_id__in={key[0] for key in keys}, student_id__in={key[1] for key in keys},
            exercise_id__in={key[2] for key in keys}, part__in={key[3] for key in keys},
        )
    if counting:
        wanted |= Q(pk__in=ReviewEntry.objects.filter(submission_id__in=counting).values("card_id"))
    return {card.pk: card for card in ReviewCard.objects.select_for_update().filter(wanted).order_by("pk")}


class _CardsWork:
    """The batch's changes to its locked cards, made in memory one submission at a time as
    ``review_record`` would make them, then written at once (``store``)."""

    def __init__(self, cards: dict[int, ReviewCard]):
        self.cards = cards
        self.states: dict[int, fsrs.Card] = {}
        self.replayed: set[int] = set()  # cards whose state is the replay of their entries
        self.touched: set[int] = set()
        self.created: list[ReviewEntry] = []
        self.rated: list[ReviewEntry] = []
        self.removed: list[int] = []

    def record(self, submission, *, rating, entry, card, origin_item) -> ReviewEntry | None:
        if entry is not None:
            if rating is not None and int(rating) == entry.rating:
                return entry
            # a regrade or manual grade of an already counted submission
            self.touched.add(entry.card_id)
            self.replayed.add(entry.card_id)
            if rating is None:
                self.removed.append(entry.pk)
                return None
            entry.rating = int(rating)
            self.rated.append(entry)
            return entry
        if card is None:
            return None  # no rating, withheld (it would show in the due list), no source, or not fed
        card.origin_item = origin_item  # review practises from where the student last was
        entry = ReviewEntry(card=card, submission=submission, rating=int(rating), reviewed_at=_utc(submission.created_at))
        self.created.append(entry)
        self.touched.add(card.pk)
        card.reviews += 1
        if card.pk not in self.replayed:
            state = self.states.get(card.pk) or _fsrs_card(card)
            if state.last_review is None or state.last_review <= entry.reviewed_at:
                self.states[card.pk] = _review(state, entry)
            else:  # an answer graded after a later one: replay in answer order
                self.replayed.add(card.pk)
        return entry

    def store(self) -> None:
        if self.removed:
            ReviewEntry.objects.filter(pk__in=self.removed).delete()
        if self.rated:
            ReviewEntry.objects.bulk_update(self.rated, ["rating"])
        if self.created:
            ReviewEntry.objects.bulk_create(self.created)
        for card_id, (state, reviews) in self._replays().items():
            self.states[card_id], self.cards[card_id].reviews = state, reviews
        emptied = [card_id for card_id in self.touched if self.cards[card_id].reviews == 0]
        if emptied:
            ReviewCard.objects.filter(pk__in=emptied).delete()  # nothing practised any more: nothing to review
        kept = [self.cards[card_id] for card_id in sorted(self.touched) if card_id not in emptied]
        now = timezone.now()
        for card in kept:  # bulk_update does not run auto_now
            card.card, card.due_at, card.updated_at = self.states[card.pk].to_dict(), self.states[card.pk].due, now
        if kept:
            ReviewCard.objects.bulk_update(kept, ["card", "due_at", "reviews", "origin_item", "updated_at"])

    def _replays(self) -> dict[int, tuple[fsrs.Card, int]]:
        """Each replayed card's state from a new card over its entries in answer order, and
        how many there are (after this batch's writes)."""
        if not self.replayed:
            return {}
        history: dict[int, list[ReviewEntry]] = defaultdict(list)
        for entry in ReviewEntry.objects.filter(card_id__in=sorted(self.replayed)).only("card_id", "rating", "reviewed_at"):
            history[entry.card_id].append(entry)  # Meta.ordering: answer order
        replays = {}
        for card_id in self.replayed:
            state = fsrs.Card(card_id=card_id)
            for entry in history[card_id]:
                state = _review(state, entry)
            replays[card_id] = (state, len(history[card_id]))
        return replays


def _fsrs_card(card: ReviewCard) -> fsrs.Card:
    if not card.card:
        return fsrs.Card(card_id=card.pk)
    return fsrs.Card.from_dict(card.card)


def _review(fsrs_card: fsrs.Card, entry: ReviewEntry) -> fsrs.Card:
    reviewed, _ = review_scheduler(settings.REVIEW_DESIRED_RETENTION).review_card(
        fsrs_card, fsrs.Rating(entry.rating), review_datetime=_utc(entry.reviewed_at)
    )
    return reviewed


def reviews_after_grades(*, submission_ids: list[int]) -> int:
    """The follow-up of a grade change: count each outcome as a review (a withheld exam
    grade waits until it becomes visible), for the whole batch at once. If the batch fails,
    each submission is recorded alone: one failing never stops the others."""
    may_count = submissions_review_may_count(submission_ids)
    if not may_count:
        return 0
    try:
        return sum(entry is not None for entry in reviews_record(submission_ids=may_count).values())
    except Exception:
        logger.exception("the reviews of a batch of %d submissions failed; recording each alone", len(may_count))
    recorded = 0
    for submission_id in may_count:
        try:
            recorded += review_record(submission_id=submission_id) is not None
        except Exception:
            logger.exception("could not schedule the review of submission %s", submission_id)
    return recorded


def reviews_record_many(*, submission_ids: list[int]) -> int:
    """``reviews_record`` of these ids; returns how many became (or stayed) reviews."""
    return sum(entry is not None for entry in reviews_record(submission_ids=submission_ids).values())


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
    return reviews_record_many(submission_ids=missing)
