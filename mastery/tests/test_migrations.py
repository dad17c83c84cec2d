"""The migrations to mastery per course on a database with stored rows: each observation
gets the course of its answer (practice: its origin item's course; none findable: removed)
and every mastery is replaced by the replay of one course's history."""

from fractions import Fraction

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from courses.models import Assignment, AssignmentItem, Course
from exercises.services import variant_create_practice
from grading.models import Submission
from mastery.models import Observation, SkillMastery

BEFORE = [("mastery", "0002_course_scope_fields")]
AFTER = [("mastery", "0004_course_scope_required")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    """Every later test of this process needs the newest schema, not AFTER's (migrations
    added since, e.g. partial credit, would stay unapplied)."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_stored_rows_move_to_the_course_of_their_answer(demo, variant, student):
    course_b = Course.objects.create(slug="second", title="Second course")
    item_b = AssignmentItem.objects.create(
        assignment=Assignment.objects.create(course=course_b, slug="week1", title="Week 1"),
        exercise_version=variant.exercise_version,
    )
    in_b = variant_create_practice(item=item_b, student=student)
    orphan = variant_create_practice(item=item_b, student=student)
    orphan.context = "practice:999999999:gone"
    orphan.save()
    submissions = [
        Submission.objects.create(variant=chosen, student=student, part="weights", raw_answer="[0]", attempt=1,
                                  status="graded", correct=correct, score=float(correct))
        for chosen, correct in ((variant, False), (in_b, True), (orphan, True))
    ]
    try:
        old = migrate(BEFORE)
        OldObservation, OldMastery = old.get_model("mastery", "Observation"), old.get_model("mastery", "SkillMastery")
        for submission, skill, misconception in zip(
            submissions, ("scaling", "softmax", "softmax"), ("no_scaling", "", "")
        ):
            OldObservation.objects.create(
                submission_id=submission.pk, student_id=student.pk, skill=skill, correct=submission.correct,
                misconception=misconception, observed_at=submission.created_at,
            )
        # the pooled rows of before: softmax from B's answer and the orphan's together
        OldMastery.objects.create(student_id=student.pk, skill="softmax", p_known=0.97, attempts=2)
        OldMastery.objects.create(student_id=student.pk, skill="scaling", p_known=0.19, attempts=1)
    finally:
        migrate(AFTER)
    assert sorted(Observation.objects.values_list("submission_id", "course__slug", "skill")) == [
        (submissions[0].pk, demo.course.slug, "scaling"), (submissions[1].pk, "second", "softmax"),
    ]
    assert sorted(
        (row.course.slug, row.skill, round(row.p_known, 12), row.attempts, row.recent_misconceptions)
        for row in SkillMastery.objects.select_related("course")
    ) == [
        (demo.course.slug, "scaling", round(float(Fraction(83, 440)), 12), 1, ["no_scaling"]),
        ("second", "softmax", 0.825, 1, [""]),
    ]
