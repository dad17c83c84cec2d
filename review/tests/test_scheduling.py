"""One graded attempt = one FSRS review: the rating rule, and due dates against fsrs's own API."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

import fsrs
import pytest

from courses.models import AssignmentItem
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import SubmissionStatus
from review.models import ReviewCard, ReviewEntry
from review.scheduling import review_rating
from review.services import review_record, review_settings_update


@pytest.mark.parametrize(
    "correct,earlier_tries,hint_seen,expected",
    [
        (True, 0, False, fsrs.Rating.Good),   # right first try
        (True, 0, True, fsrs.Rating.Hard),    # right, but a hint was on the page
        (True, 1, False, fsrs.Rating.Hard),   # right on the second try
        (True, 4, True, fsrs.Rating.Hard),
        (False, 0, False, fsrs.Rating.Again),  # wrong (or only partly right)
        (False, 2, True, fsrs.Rating.Again),
        (None, 0, False, None),                # waiting for a manual grade: no review
    ],
)
def test_the_rating_rule(correct, earlier_tries, hint_seen, expected):
    assert review_rating(correct=correct, earlier_tries=earlier_tries, hint_seen=hint_seen) == expected


def library_due_dates(history):
    """The due dates fsrs's own Scheduler gives for (moment, rating) reviews, with the
    configuration the product documents (no learning steps, no fuzz, retention 0.9)."""
    scheduler = fsrs.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False, desired_retention=0.9)
    card = fsrs.Card(card_id=1)
    dues = []
    for moment, rating in history:
        card, _ = scheduler.review_card(card, rating, review_datetime=moment)
        dues.append(card.due)
    return dues


def at(day: int, hour: int = 9, minute: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=dt_timezone.utc)


def test_a_simulated_history_gives_fsrss_due_dates(clock, answer, demo, student, item):
    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])
    variant = variant_get_or_create_for_item(item=item, student=student)
    expected = library_due_dates(
        [
            (at(2), fsrs.Rating.Again),         # day 1: the no-scaling slip
            (at(2, 9, 5), fsrs.Rating.Hard),    # right on the second try
            (at(3, 10), fsrs.Rating.Good),      # day 2: a fresh practice variant, right first try
            (at(6, 18), fsrs.Rating.Again),     # day 5: wrong again on practice
            (at(6, 18, 1), fsrs.Rating.Hard),
        ]
    )
    dues = []

    def card_due():
        return ReviewCard.objects.get(student=student, part="weights").due_at

    answer(variant, "slip")
    dues.append(card_due())
    clock.advance(minutes=5)
    answer(variant, "right")
    dues.append(card_due())
    clock.now = at(3, 10)
    practice = variant_create_practice(item=item, student=student)
    answer(practice, "right")
    dues.append(card_due())
    clock.now = at(6, 18)
    practice = variant_create_practice(item=item, student=student)
    answer(practice, "wrong")
    dues.append(card_due())
    clock.advance(minutes=1)
    answer(practice, "right")
    dues.append(card_due())
    assert dues == expected
    # Whole days apart, as the product promises: the slip is due again the next morning.
    assert dues[0] == at(3)
    card = ReviewCard.objects.get(student=student, part="weights")
    assert card.reviews == 5
    assert fsrs.Card.from_dict(card.card).due == expected[-1]
    assert list(ReviewEntry.objects.filter(card=card).values_list("rating", flat=True)) == [1, 2, 3, 1, 2]


def test_the_same_submission_counts_once(clock, answer, demo, student, item):
    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])
    variant = variant_get_or_create_for_item(item=item, student=student)
    submission = answer(variant, "slip")
    card = ReviewCard.objects.get(student=student)
    before = (card.card, card.due_at, card.reviews)
    clock.advance(days=3)
    for _ in range(3):  # a redelivered task, a manual-grade signal, a regrade with the same outcome
        review_record(submission_id=submission.pk)
    card.refresh_from_db()
    assert (card.card, card.due_at, card.reviews) == before
    assert ReviewEntry.objects.count() == 1


def test_a_regrade_that_changes_the_outcome_replays_the_card(clock, answer, demo, student, item):
    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])
    variant = variant_get_or_create_for_item(item=item, student=student)
    first = answer(variant, "slip")
    clock.advance(days=1)
    answer(variant, "right")
    # An instructor decides the first answer was right after all.
    type(first).objects.filter(pk=first.pk).update(correct=True, score=1.0)
    review_record(submission_id=first.pk)
    card = ReviewCard.objects.get(student=student)
    assert card.due_at == library_due_dates([(at(2), fsrs.Rating.Good), (at(3), fsrs.Rating.Hard)])[-1]
    assert list(card.entries.values_list("rating", flat=True)) == [3, 2]


def test_could_not_grade_is_no_review(clock, answer, demo, student, item):
    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])
    variant = variant_get_or_create_for_item(item=item, student=student)
    submission = answer(variant, "slip")
    type(submission).objects.filter(pk=submission.pk).update(status=SubmissionStatus.COULD_NOT_GRADE)
    review_record(submission_id=submission.pk)
    assert not ReviewCard.objects.exists() and not ReviewEntry.objects.exists()


def test_review_off_schedules_nothing(clock, answer, demo, student, item):
    review_settings_update(course=demo.course, enabled=False, feeding_assignments=[demo.assignment])
    answer(variant_get_or_create_for_item(item=item, student=student), "slip")
    answer(variant_create_practice(item=item, student=student), "slip")
    assert not ReviewCard.objects.exists() and not ReviewEntry.objects.exists()


def test_an_assignment_that_does_not_feed_review_schedules_nothing(clock, answer, demo, student, item):
    # By default a course's review is on and fed by practice only.
    answer(variant_get_or_create_for_item(item=item, student=student), "slip")
    assert not ReviewCard.objects.exists()
    practice = variant_create_practice(item=item, student=student)
    answer(practice, "slip")
    card = ReviewCard.objects.get()
    assert (card.course_id, card.part, card.reviews, card.origin_item_id) == (demo.course.pk, "weights", 1, item.pk)
    assert card.due_at == at(3)


def test_the_grade_event_adds_no_query_for_review_and_waits_for_the_commit(
    variant, student, django_assert_num_queries, django_capture_on_commit_callbacks
):
    from grading.events import _followups_on_commit, followups_registered
    from grading.models import Submission
    from review.services import reviews_after_grades

    assert followups_registered()["review"] is reviews_after_grades
    submission = Submission.objects.create(variant=variant, student=student, part="weights", raw_answer="[1]")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        with django_assert_num_queries(0):
            _followups_on_commit([submission.pk])
    assert len(callbacks) == 1
    assert not ReviewEntry.objects.exists()  # nothing ran: the test transaction never commits


def test_a_broken_review_never_reaches_grading(monkeypatch, answer, demo, student, item, caplog):
    from review import services

    def broken(**kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(services, "reviews_record", broken)  # the batch, then each submission alone
    submission = answer(variant_create_practice(item=item, student=student), "right")
    assert submission.status == SubmissionStatus.GRADED
    assert "could not schedule the review of submission" in caplog.text


def test_the_sweeper_records_a_review_whose_task_was_lost(clock, answer, monkeypatch, item, student):
    from review import services

    monkeypatch.setattr("grading.events.followups_enqueue", lambda **kwargs: None)  # the broker was down
    submission = answer(variant_create_practice(item=item, student=student), "slip")
    assert not ReviewEntry.objects.exists()
    assert services.reviews_record_missing() == 0  # within a minute of the grade: the task's turn
    clock.advance(minutes=2)
    assert services.reviews_record_missing() == 1
    entry = ReviewEntry.objects.get()
    assert (entry.submission_id, entry.rating, entry.reviewed_at) == (submission.pk, 1, at(2))
    assert ReviewCard.objects.get().due_at == at(3)
    assert services.reviews_record_missing() == 0  # done once
    clock.advance(hours=2)
    assert services.reviews_record_missing() == 0


def test_the_sweeper_is_on_the_beat_schedule(settings):
    from review import tasks

    entry = settings.CELERY_BEAT_SCHEDULE["record-missing-reviews"]
    assert entry["task"] == tasks.record_missing_reviews.name == "review.tasks.record_missing_reviews"


def test_a_withheld_exam_grade_is_not_reviewed_even_by_the_sweeper(clock, answer, monkeypatch, demo, item, student):
    from review import services

    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])
    monkeypatch.setattr("grading.events.followups_enqueue", lambda **kwargs: None)
    answer(variant_get_or_create_for_item(item=item, student=student), "slip")
    clock.advance(minutes=2)
    monkeypatch.setattr(services, "submissions_not_withheld", lambda submission_ids: [])
    assert services.reviews_record_missing() == 0
    assert not ReviewEntry.objects.exists()
    monkeypatch.setattr(services, "submissions_not_withheld", list)  # released
    assert services.reviews_record_missing() == 1


def test_answers_that_feed_no_review_cost_the_followup_one_query(
    answer, monkeypatch, item, student, demo, django_assert_num_queries
):
    from review import services

    monkeypatch.setattr("grading.events.followups_enqueue", lambda **kwargs: None)
    graded = answer(variant_get_or_create_for_item(item=item, student=student), "slip")  # review is off for it
    practice = answer(variant_create_practice(item=item, student=student), "slip")
    with django_assert_num_queries(1):
        assert services.submissions_review_may_count([graded.pk, graded.pk + 10_000]) == []
    assert services.submissions_review_may_count([practice.pk, graded.pk]) == [practice.pk]
    assert services.reviews_after_grades(submission_ids=[graded.pk, practice.pk]) == 1
    assert list(ReviewEntry.objects.values_list("submission_id", flat=True)) == [practice.pk]
    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])
    assert services.submissions_review_may_count([practice.pk, graded.pk]) == sorted([practice.pk, graded.pk])
