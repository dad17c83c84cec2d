"""The count an answer is decided on, read under the variant's lock in one compiled query:
attempts that count (an answer we could not grade does not), the highest attempt number
(it keeps its number), and whether the part is solved."""

from __future__ import annotations

import pytest

from exercises.services import variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from grading.services import _part_attempts

pytestmark = pytest.mark.django_db

GRADED, FAILED, QUEUED = SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE, SubmissionStatus.QUEUED


@pytest.mark.parametrize(
    "answers, expected",
    [
        ([], {"used": 0, "latest": None, "solved": 0}),
        ([(QUEUED, None)], {"used": 1, "latest": 1, "solved": 0}),
        ([(GRADED, False), (GRADED, False)], {"used": 2, "latest": 2, "solved": 0}),
        ([(GRADED, False), (FAILED, None), (GRADED, True)], {"used": 2, "latest": 3, "solved": 1}),
        ([(FAILED, None), (FAILED, None)], {"used": 0, "latest": 2, "solved": 0}),
        ([(GRADED, True), (GRADED, True)], {"used": 2, "latest": 2, "solved": 2}),
        ([(FAILED, True)], {"used": 0, "latest": 1, "solved": 0}),  # only a graded answer solves
    ],
)
def test_the_parts_own_answers_decide(variant, answers, expected):
    for attempt, (status, correct) in enumerate(answers, start=1):
        Submission.objects.create(
            variant=variant, student=variant.student, part="weights", raw_answer="x",
            attempt=attempt, status=status, correct=correct,
        )
    # Answers that must not count: another part of the variant, another student's variant.
    Submission.objects.create(variant=variant, student=variant.student, part="other", raw_answer="x",
                              attempt=7, status=GRADED, correct=True)
    assert _part_attempts(variant=variant, part="weights") == expected


def test_another_students_answers_do_not_count(variant, demo, django_user_model):
    other = variant_get_or_create_for_item(item=variant.assignment_item, student=django_user_model.objects.get(username="student2"))
    Submission.objects.create(variant=other, student=other.student, part="weights", raw_answer="x",
                              attempt=1, status=GRADED, correct=True)
    assert _part_attempts(variant=variant, part="weights") == {"used": 0, "latest": None, "solved": 0}
