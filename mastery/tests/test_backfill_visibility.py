"""The mastery backfill records exactly the grades their student may see now: the one
visibility rule (the student's window) decides, not the release date alone."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from courses.models import Enrolment, ReleaseMoment, Role
from exams import services as exam_services
from exams.selectors import submissions_not_withheld
from exams.tests.conftest import UNIFORM, exam_policy, item, student  # noqa: F401
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission
from grading.services import submission_create
from mastery import services
from mastery.models import Observation


def answer_with_update_lost(item, student, django_capture_on_commit_callbacks) -> Submission:
    variant = variant_get_or_create_for_item(item=item, student=student)
    with mock.patch("grading.events.followups_enqueue"), django_capture_on_commit_callbacks(execute=True):
        submission = submission_create(variant=variant, student=student, part="weights", raw_answer=UNIFORM)
    submission.refresh_from_db()
    assert submission.correct is False
    return submission


def homework(assignment):
    return assignment


def exam_unreleased(assignment):
    exam_policy(assignment)
    return assignment


def exam_after_finish(assignment):
    return exam_policy(assignment, show_correctness=ReleaseMoment.AFTER_FINISH)


# (name, policy, finish the attempt?, release after answering?, recorded?)
CASES = [
    ("homework", homework, False, False, True),
    ("exam, before release, attempt ended", exam_unreleased, True, False, False),
    ("exam, after release, attempt ended", exam_unreleased, True, True, True),
    ("exam, released while the attempt runs", exam_unreleased, False, True, False),
    ("exam, 'after attempt' moment, attempt ended", exam_after_finish, True, False, True),
    ("exam, 'after attempt' moment, attempt running", exam_after_finish, False, False, False),
]


@pytest.mark.parametrize(
    "policy, finish, release, recorded", [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_the_backfill_records_what_the_student_may_see_now(
    policy, finish, release, recorded, item, student, clock, django_capture_on_commit_callbacks
):
    assignment = policy(item.assignment)
    if assignment.kind == "exam":
        exam_services.attempt_start(assignment=assignment, student=student)
    submission = answer_with_update_lost(item, student, django_capture_on_commit_callbacks)
    clock.advance(minutes=1)
    if finish:
        exam_services.attempt_finish(assignment=assignment, student=student)
    if release:
        with mock.patch("exams.services.grades_visible_announce"):  # only the backfill may record
            exam_services.grades_release(assignment=assignment, by=None)
    assert not Observation.objects.filter(submission=submission).exists()

    assert services.mastery_backfill(days=1) == (1 if recorded else 0)
    assert Observation.objects.filter(submission=submission).exists() is recorded
    assert services.mastery_backfill(days=1) == 0  # recorded once, or still waiting


def test_a_withheld_grade_is_recorded_by_the_backfill_once_the_attempt_ends(
    item, student, clock, django_capture_on_commit_callbacks
):
    assignment = exam_after_finish(item.assignment)
    exam_services.attempt_start(assignment=assignment, student=student)
    submission = answer_with_update_lost(item, student, django_capture_on_commit_callbacks)
    assert services.mastery_backfill(days=1) == 0
    clock.advance(minutes=3)
    exam_services.attempt_finish(assignment=assignment, student=student)
    assert services.mastery_backfill(days=1) == 1
    assert Observation.objects.filter(submission=submission).count() >= 1


def test_deciding_a_batch_costs_the_same_queries_for_one_or_many_students(
    item, student, django_user_model, clock, django_capture_on_commit_callbacks
):
    assignment = exam_after_finish(item.assignment)
    students = [student] + [
        django_user_model.objects.create_user(username=f"extra{n}", password="x") for n in range(5)
    ]
    for extra in students[1:]:
        Enrolment.objects.create(course=assignment.course, user=extra, role=Role.STUDENT)
    submissions = []
    for person in students:
        exam_services.attempt_start(assignment=assignment, student=person)
        submissions.append(answer_with_update_lost(item, person, django_capture_on_commit_callbacks))
    for person in students[::2]:
        exam_services.attempt_finish(assignment=assignment, student=person)
    ids = [submission.pk for submission in submissions]

    with CaptureQueriesContext(connection) as one:
        assert submissions_not_withheld(ids[:1]) == ids[:1]
    with CaptureQueriesContext(connection) as many:
        assert submissions_not_withheld(ids) == ids[::2]
    assert len(many) == len(one) == 4  # submissions, assignments, attempts, accommodations


def test_the_batch_agrees_with_the_one_at_a_time_rule(item, student, clock, django_capture_on_commit_callbacks):
    from exams.selectors import grade_withheld

    assignment = exam_after_finish(item.assignment)
    exam_services.attempt_start(assignment=assignment, student=student)
    submission = answer_with_update_lost(item, student, django_capture_on_commit_callbacks)
    for finish in (False, True):
        if finish:
            clock.advance(minutes=2)
            exam_services.attempt_finish(assignment=assignment, student=student)
        loaded = Submission.objects.select_related("variant__assignment_item__assignment").get(pk=submission.pk)
        assert (submissions_not_withheld([submission.pk]) == []) is grade_withheld(loaded) is (not finish)
