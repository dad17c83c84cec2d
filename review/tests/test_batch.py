"""A batch of submissions is reviewed as reviewing each alone, in id order, would review
it, in a fixed number of queries: several students and several answers of one part, a
regrade, an id that is gone, duplicates, answers that feed no review."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from review import services
from review.models import ReviewCard, ReviewEntry
from review.services import review_settings_update

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(item, django_user_model, clock):
    """graded(username, outcomes): graded answers of one student to the assignment's
    variant and practice, alternately, a minute apart in the given order but stored (ids)
    in reverse, so a later answer is often counted before an earlier one."""

    def make(username: str, outcomes: list[bool | None]) -> list[Submission]:
        student, _ = django_user_model.objects.get_or_create(username=username)
        variants = [variant_get_or_create_for_item(item=item, student=student),
                    variant_create_practice(item=item, student=student)]
        start, rows = clock.now, []
        for index, correct in reversed(list(enumerate(outcomes))):
            variant = variants[index % 2]
            attempt = Submission.objects.filter(variant=variant, part="weights").count() + 1
            rows.append(Submission.objects.create(
                variant=variant, student=student, part="weights", raw_answer="[0]", attempt=attempt,
                status=SubmissionStatus.GRADED, correct=correct, score=None if correct is None else float(correct),
            ))
            Submission.objects.filter(pk=rows[-1].pk).update(created_at=start + timedelta(minutes=index))
        clock.advance(days=1)
        return sorted(rows, key=lambda row: row.pk)

    return make


def stored_reviews():
    entries = sorted(ReviewEntry.objects.values_list(
        "submission_id", "card__course_id", "card__student_id", "card__exercise_id", "card__part", "rating",
        "reviewed_at",
    ))
    cards = sorted(
        (card.course_id, card.student_id, card.exercise_id, card.part, card.origin_item_id, card.due_at, card.reviews,
         {key: value for key, value in card.card.items() if key != "card_id"})  # the card's own id differs
        for card in ReviewCard.objects.all()
    )
    return entries, cards


def forget_reviews():
    ReviewEntry.objects.all().delete()
    ReviewCard.objects.all().delete()


def reviewed_one_at_a_time(ids):
    forget_reviews()
    returned = {submission_id: services.review_record(submission_id=submission_id) for submission_id in ids}
    return {pk: entry and entry.rating for pk, entry in returned.items()}, stored_reviews()


def reviewed_as_a_batch(ids):
    forget_reviews()
    returned = services.reviews_record(submission_ids=ids)
    return {pk: entry and entry.rating for pk, entry in returned.items()}, stored_reviews()


@pytest.fixture
def fed(demo):
    review_settings_update(course=demo.course, enabled=True, feeding_assignments=[demo.assignment])


def test_a_batch_of_several_students_reviews_what_each_id_alone_reviews(graded, fed, demo, item):
    ada = graded("ada", [False, True, True, None])
    bo = graded("bo", [True, True])
    cy = graded("cy", [False])
    ids = sorted(row.pk for row in ada + bo + cy)

    alone = reviewed_one_at_a_time(ids)
    batch = reviewed_as_a_batch(ids)
    assert batch == alone
    ratings, (entries, cards) = batch
    by_student = {}
    for row in ada + bo + cy:
        by_student.setdefault(row.student_id, []).append(ratings[row.pk])
    # answer order per student: ada wrong (Again), right on the assignment's 2nd try (Hard),
    # right first try on practice (Good), awaiting a grade (no review); ids run backwards
    assert [by_student[ada[0].student_id], by_student[bo[0].student_id], by_student[cy[0].student_id]] == [
        [None, 3, 2, 1], [3, 3], [1],
    ]
    assert [(card[1], card[4], card[6]) for card in cards] == [
        (ada[0].student_id, item.pk, 3), (bo[0].student_id, item.pk, 2), (cy[0].student_id, item.pk, 1),
    ]
    assert len(entries) == 6 and {entry[1] for entry in entries} == {demo.course.pk}


def test_a_batch_with_a_regrade_a_gone_id_duplicates_and_no_review(graded, fed, demo):
    ada = graded("ada", [False, True])
    bo = graded("bo", [True])
    services.reviews_record(submission_ids=[row.pk for row in ada + bo])
    wrong = next(row for row in ada if row.correct is False)
    Submission.objects.filter(pk=wrong.pk).update(correct=True, score=1.0)  # a regrade: right after all
    could_not_grade = bo[0]
    Submission.objects.filter(pk=could_not_grade.pk).update(status=SubmissionStatus.COULD_NOT_GRADE)
    gone = Submission.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000
    batch_ids = [wrong.pk, gone, could_not_grade.pk, wrong.pk, could_not_grade.pk]

    returned = services.reviews_record(submission_ids=batch_ids)
    assert {pk: entry and entry.rating for pk, entry in returned.items()} == {wrong.pk: 3, could_not_grade.pk: None}
    entries, cards = stored_reviews()
    assert [(entry[0], entry[5]) for entry in entries] == [(ada[0].pk, 3), (ada[1].pk, 3)]  # both right first try now
    assert [(card[1], card[6]) for card in cards] == [(wrong.student_id, 2)]  # bo's card went with its review
    # a regrade's batch from nothing is the same as each of its found ids alone
    assert reviewed_as_a_batch(batch_ids + [ada[1].pk]) == reviewed_one_at_a_time(
        sorted({wrong.pk, could_not_grade.pk, ada[1].pk}))
    assert services.reviews_record(submission_ids=[gone]) == {}


def test_review_off_counts_nothing_but_the_batch_still_answers(graded, demo):
    review_settings_update(course=demo.course, enabled=False, feeding_assignments=[])
    ada = graded("ada", [True, False])
    assert services.reviews_record(submission_ids=[row.pk for row in ada]) == {row.pk: None for row in ada}
    assert stored_reviews() == ([], [])


def test_the_queries_of_a_batch_do_not_grow_with_its_size(graded, fed):
    ids = sorted(row.pk for index in range(10) for row in graded(f"s{index}", [False, True]))
    counts = []
    for size in (5, 20):
        forget_reviews()
        with CaptureQueriesContext(connection) as first:
            services.reviews_record(submission_ids=ids[:size])
        with CaptureQueriesContext(connection) as again:  # a redelivery: nothing to write
            services.reviews_record(submission_ids=ids[:size])
        counts += [len(first.captured_queries), len(again.captured_queries)]
    # submissions, versions, earlier tries, practice origins, visibility (2), settings,
    # feeding assignments, savepoint, card locks, card creation, the new cards' locks,
    # entries, entry insert, the replay's entries (answers counted out of order), card
    # update, release; a redelivery: no creation nor writes
    assert counts == [17, 12, 17, 12]


def test_a_batch_that_fails_reviews_each_submission_alone(graded, fed, monkeypatch, caplog):
    ada = graded("ada", [True])
    bo = graded("bo", [True])
    real = services.reviews_record

    def fails_with_bo(*, submission_ids):
        if bo[0].pk in submission_ids:
            raise ValueError("a card nobody can read")
        return real(submission_ids=submission_ids)

    monkeypatch.setattr(services, "reviews_record", fails_with_bo)
    assert services.reviews_after_grades(submission_ids=[ada[0].pk, bo[0].pk]) == 1
    assert list(ReviewEntry.objects.values_list("submission_id", flat=True)) == [ada[0].pk]
    assert "recording each alone" in caplog.text
    assert f"could not schedule the review of submission {bo[0].pk}" in caplog.text
