"""A batch of submissions is recorded as recording each alone would record it, in a fixed
number of queries: several students and several answers of one student, a regrade, an id
that is gone, duplicates, a practice answer whose item is gone, a failing batch."""

from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from courses.models import AssignmentItem
from exercises.services import variant_create_practice, variant_get_or_create_for_item
from grading.models import Submission, SubmissionStatus
from grading.tests.conftest import WORKED_EXAMPLE
from mastery import services
from mastery.models import Observation, SkillMastery

from .test_course_scope import TWO_SLIPS, p_known_after

pytestmark = pytest.mark.django_db

SKILLS = ["dot-product-scores", "scaling", "softmax"]


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE)


@pytest.fixture
def graded(item, django_user_model, clock):
    """graded(username, outcomes) stores graded answers of one student, half to the
    assignment's variant and half to practice, answered a minute apart in the given order
    but created (ids) in reverse: replay must follow the answers' times, not the ids.
    An outcome is "right", "wrong", "no_scaling" (a diagnosed slip) or a manual grade 0.8."""
    variants: dict[str, list] = {}

    def make(username: str, outcomes: list) -> list[Submission]:
        student, _ = django_user_model.objects.get_or_create(username=username)
        if username not in variants:
            variants[username] = [
                variant_get_or_create_for_item(item=item, student=student),
                variant_create_practice(item=item, student=student),
            ]
        start = clock.now
        rows = []
        for index, outcome in reversed(list(enumerate(outcomes))):
            variant = variants[username][index % 2]
            attempt = Submission.objects.filter(variant=variant, part="weights").count() + 1
            rows.append(Submission.objects.create(
                variant=variant, student=student, part="weights", raw_answer="[0]", attempt=attempt,
                status=SubmissionStatus.GRADED, graded_at=start,
                **_outcome_fields(outcome),
            ))
            Submission.objects.filter(pk=rows[-1].pk).update(created_at=start + timedelta(minutes=index))
        clock.advance(hours=1)
        return sorted(rows, key=lambda row: row.pk)

    return make


def _outcome_fields(outcome) -> dict:
    if outcome == 0.8:
        return {"correct": None, "score": 0.8, "awarded": 0.8, "misconception": "",
                "feedback": {"details": {"manual": True}}}
    correct = outcome == "right"
    return {"correct": correct, "score": float(correct), "awarded": float(correct),
            "misconception": "no_scaling" if outcome == "no_scaling" else ""}


def stored_rows():
    observations = sorted(Observation.objects.values_list(
        "submission_id", "student_id", "course_id", "skill", "correct", "credit", "misconception", "is_practice",
        "observed_at",
    ))
    masteries = sorted(SkillMastery.objects.values_list(
        "student_id", "course_id", "skill", "p_known", "attempts", "recent_misconceptions"
    ))
    return observations, masteries


def forget_everything():
    Observation.objects.all().delete()
    SkillMastery.objects.all().delete()


def recorded_one_at_a_time(ids) -> tuple:
    forget_everything()
    returned = {submission_id: services.mastery_record_submission(submission_id=submission_id) for submission_id in ids}
    return returned, stored_rows()


def recorded_as_a_batch(ids) -> tuple:
    forget_everything()
    return services.mastery_record_submissions(submission_ids=ids), stored_rows()


def test_a_batch_of_several_students_records_what_each_id_alone_records(graded, demo):
    ada = graded("ada", ["no_scaling", "right", "wrong", 0.8])
    bo = graded("bo", ["right", "right"])
    cy = graded("cy", ["no_scaling", "no_scaling"])
    ids = sorted(row.pk for row in ada + bo + cy)

    alone = recorded_one_at_a_time(ids)
    batch = recorded_as_a_batch(ids)
    assert batch == alone
    returned, (observations, masteries) = batch
    assert returned == {
        **{row.pk: SKILLS for row in ada if row.misconception != "no_scaling"},
        **{row.pk: ["scaling"] for row in ada + cy if row.misconception == "no_scaling"},
        **{row.pk: SKILLS for row in bo},
    }
    assert len(observations) == 3 * 3 + 1 + 3 * 2 + 2
    # every row is in the demo course; ada's history replays slip, right, wrong, then 0.8
    assert {row[2] for row in observations} == {row[1] for row in masteries} == {demo.course.pk}
    ada_id, bo_id, cy_id = ada[0].student_id, bo[0].student_id, cy[0].student_id
    summary = {(student_id, skill): (round(p_known, 12), attempts, recent)
               for student_id, _, skill, p_known, attempts, recent in masteries}
    two_right = round(p_known_after([True, True]), 12)
    assert {key: value for key, value in summary.items() if key[0] != ada_id} == {
        **{(bo_id, skill): (two_right, 2, ["", ""]) for skill in SKILLS},
        (cy_id, "scaling"): (round(TWO_SLIPS, 12), 2, ["no_scaling", "no_scaling"]),
    }
    assert [(skill, attempts, recent) for (student_id, skill), (_, attempts, recent) in sorted(summary.items())
            if student_id == ada_id] == [
        ("dot-product-scores", 3, ["", "", ""]),
        ("scaling", 4, ["", "", "", "no_scaling"]),
        ("softmax", 3, ["", "", ""]),
    ]


def test_a_batch_with_a_regrade_a_gone_id_and_duplicates(graded):
    ada = graded("ada", ["no_scaling", "right"])
    bo = graded("bo", ["wrong"])
    services.mastery_record_submissions(submission_ids=[row.pk for row in ada + bo])
    slip = next(row for row in ada if row.misconception == "no_scaling")
    # a regrade stores it right: the evidence against scaling alone becomes evidence for all three
    Submission.objects.filter(pk=slip.pk).update(correct=True, score=1.0, misconception="")
    gone = Submission.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000
    batch_ids = [slip.pk, gone, bo[0].pk, slip.pk, bo[0].pk]

    returned = services.mastery_record_submissions(submission_ids=batch_ids)
    assert returned == {slip.pk: SKILLS, bo[0].pk: SKILLS}
    observations, masteries = stored_rows()
    assert [row[3:5] for row in observations if row[0] == slip.pk] == [(skill, True) for skill in SKILLS]
    assert sorted((row[2], round(row[3], 12), row[4]) for row in masteries if row[0] == slip.student_id) == [
        (skill, round(p_known_after([True, True]), 12), 2) for skill in SKILLS
    ]
    # the same as recording the distinct found ids one at a time, from nothing
    assert recorded_as_a_batch(batch_ids) == recorded_one_at_a_time(sorted({slip.pk, bo[0].pk}))
    assert services.mastery_record_submissions(submission_ids=[gone]) == {}


def test_a_regrade_to_awaiting_a_grade_removes_evidence_and_mastery_in_the_batch(graded):
    (only,) = graded("ada", ["no_scaling"])
    bo = graded("bo", ["right"])
    services.mastery_record_submissions(submission_ids=[only.pk, bo[0].pk])
    Submission.objects.filter(pk=only.pk).update(correct=None, score=None)
    assert services.mastery_record_submissions(submission_ids=[only.pk, bo[0].pk]) == {
        only.pk: ["scaling"], bo[0].pk: SKILLS
    }
    observations, masteries = stored_rows()
    assert {row[1] for row in observations} == {row[0] for row in masteries} == {bo[0].student_id}


def test_a_practice_answer_whose_item_is_gone_keeps_its_course(graded, item, demo):
    ada = graded("ada", ["no_scaling", "no_scaling"])
    practice = next(row for row in ada if row.variant.context.startswith("practice:"))
    services.mastery_record_submissions(submission_ids=[row.pk for row in ada])
    Submission.objects.filter(pk=practice.pk).update(correct=True, score=1.0, misconception="")
    with mock.patch.object(services, "_graded_courses", lambda rows: {row.id: None for row in rows}):
        # as if the practice's origin item (and the assignment's) were deleted since
        assert services.mastery_record_submissions(submission_ids=[practice.pk]) == {practice.pk: SKILLS}
    assert sorted(Observation.objects.filter(submission=practice).values_list("course_id", "skill", "correct")) == [
        (demo.course.pk, skill, True) for skill in SKILLS
    ]


def test_the_queries_of_a_batch_do_not_grow_with_its_size(graded):
    ids = sorted(row.pk for index in range(10) for row in graded(f"s{index}", ["no_scaling", "right"]))
    counts = []
    for size in (5, 20):
        forget_everything()
        with CaptureQueriesContext(connection) as queries:
            services.mastery_record_submissions(submission_ids=ids[:size])
        counts.append(len(queries.captured_queries))
        with CaptureQueriesContext(connection) as again:  # a redelivery: the same writes again
            services.mastery_record_submissions(submission_ids=ids[:size])
        counts.append(len(again.captured_queries))
    # submissions, practice courses, specs, savepoint, students' locks, stored evidence,
    # evidence upsert, histories, parameters, mastery upsert, release
    assert counts == [11, 11, 11, 11]


def test_a_batch_that_fails_records_each_submission_alone(graded, caplog):
    ada = graded("ada", ["right"])
    bo = graded("bo", ["right"])
    real = services.mastery_record_submissions

    def fails_for_bo(*, submission_ids):
        if bo[0].pk in submission_ids:
            raise ValueError("a spec nobody can read")
        return real(submission_ids=submission_ids)

    with mock.patch.object(services, "mastery_record_submissions", fails_for_bo):
        assert services.mastery_record_visible(submission_ids=[ada[0].pk, bo[0].pk]) == 2
    assert {row[1] for row in stored_rows()[0]} == {ada[0].student_id}
    assert "recording each alone" in caplog.text
    assert f"could not record the mastery evidence of submission {bo[0].pk}" in caplog.text


def test_a_lost_lock_race_is_left_to_the_followup_to_run_again(graded):
    from django.db import OperationalError

    ada = graded("ada", ["right"])
    with mock.patch.object(services, "mastery_record_submissions", side_effect=OperationalError("deadlock")):
        with pytest.raises(OperationalError):
            services.mastery_record_visible(submission_ids=[ada[0].pk])
    assert stored_rows() == ([], [])
