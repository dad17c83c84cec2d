"""The assignment page reads the student's answers by (assignment, student) in one compiled
query: their own assignment answers, never a practice answer, another student's, or
another assignment's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model

from courses.models import AssignmentItem
from courses.services import assignment_create
from exercises.selectors import assignment_item_statuses
from exercises.specs import version_spec
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from grading.selectors import assignment_variants_progress, variants_progress

pytestmark = pytest.mark.django_db


def _answer(variant, part: str, attempt: int, *, correct: bool, awarded: float) -> Submission:
    return Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer="x", attempt=attempt,
        status=SubmissionStatus.GRADED, score=awarded, awarded=awarded, correct=correct,
    )


@dataclass
class Scene:
    demo: object
    student: object
    variants: tuple
    parts: tuple

    def __iter__(self):
        return iter((self.demo, self.student, self.variants))


@pytest.fixture
def scene(demo):
    users = get_user_model().objects
    student, other = users.get(username="student1"), users.get(username="student2")
    items = list(AssignmentItem.objects.filter(assignment=demo.assignment).order_by("position", "pk")[:2])
    first_part, second_part = (version_spec(item.exercise_version).parts[0].key for item in items)
    first, second = (variant_get_or_create_for_item(item=item, student=student) for item in items)
    _answer(first, first_part, 1, correct=False, awarded=0.0)
    _answer(first, first_part, 2, correct=True, awarded=0.8)
    _answer(second, second_part, 1, correct=False, awarded=0.25)
    # What the read must leave out: a practice answer on the same item, another student's.
    _answer(variant_create_practice(item=items[0], student=student), first_part, 1, correct=True, awarded=1.0)
    _answer(variant_get_or_create_for_item(item=items[1], student=other), second_part, 1, correct=True, awarded=1.0)
    return Scene(demo, student, (first, second), (first_part, second_part))


def _summary(progress: dict) -> dict:
    return {
        key: (value["attempts_used"], value["solved"], value["best_awarded"], [s.pk for s in value["history"]])
        for key, value in progress.items()
    }


def test_by_assignment_and_student_it_gives_what_the_variants_own_read_gives(scene, django_assert_num_queries):
    demo, student, variants = scene
    with django_assert_num_queries(1):
        progress = assignment_variants_progress(
            assignment_id=demo.assignment.pk, student_id=student.pk, variants=list(variants)
        )
    assert _summary(progress) == _summary(variants_progress(variants=list(variants)))
    (first, second), (first_part, second_part) = variants, scene.parts
    assert progress[(first.pk, first_part)]["attempts_used"] == 2
    assert progress[(first.pk, first_part)]["solved"] is True
    assert progress[(first.pk, first_part)]["best_awarded"] == 0.8
    assert progress[(second.pk, second_part)]["attempts_used"] == 1
    assert progress[(second.pk, second_part)]["best_awarded"] == 0.25
    assert set(progress) == {(first.pk, first_part), (second.pk, second_part)}


def test_a_variant_not_passed_in_is_left_out(scene):
    demo, student, (first, second) = scene
    progress = assignment_variants_progress(assignment_id=demo.assignment.pk, student_id=student.pk, variants=[first])
    assert set(progress) == {(first.pk, scene.parts[0])}
    assert progress[(first.pk, scene.parts[0])]["history"][0].variant is first  # the caller's row: no query


def test_another_assignment_of_the_course_gives_nothing(scene):
    demo, student, variants = scene
    other = assignment_create(course=demo.course, slug="second-week", title="Second week")
    AssignmentItem.objects.create(
        assignment=other, exercise_version=variants[0].exercise_version, position=1, points=1.0
    )
    assert assignment_variants_progress(assignment_id=other.pk, student_id=student.pk, variants=list(variants)) == {}


def test_the_assignment_page_statuses_count_only_assignment_answers(scene):
    demo, student, (first, second) = scene
    rows = {row["item"].pk: row["status"] for row in assignment_item_statuses(assignment=demo.assignment, student=student)}
    assert rows[first.assignment_item_id]["solved_parts"] == 1  # the practice answer's 1.0 does not count
    assert rows[second.assignment_item_id]["solved_parts"] == 0  # student2's right answer does not count
    assert rows[second.assignment_item_id]["state"] == "in progress"
