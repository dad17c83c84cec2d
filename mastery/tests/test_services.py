"""Mastery from graded answers: evidence per skill, recompute from history (idempotent,
regrade-proof), the signal's receiver, the fit, and the backfill."""

from datetime import timedelta
from fractions import Fraction
from unittest import mock

import pytest
from django.utils import timezone

from exercises.engine import load_spec, spec_to_json
from grading import tasks as grading_tasks
from mastery import bkt, services, tasks
from mastery.models import Observation, SkillMastery, SkillParameters

pytestmark = pytest.mark.django_db

WORKED_EXAMPLE_SKILLS = ["dot-product-scores", "scaling", "softmax"]


def masteries(student):
    return {
        row.skill: (round(row.p_known, 12), row.attempts, row.recent_misconceptions)
        for row in SkillMastery.objects.filter(student=student)
    }


def observations(student):
    return sorted(
        Observation.objects.filter(student=student).values_list("submission_id", "skill", "correct", "misconception")
    )


# --------------------------------------------------------------------------- evidence


SPEC = spec_to_json(load_spec("""\
slug: tiny
title: Tiny
version: 1
skills: [scaling, softmax]
parameters:
  a: {generator: int_range, min: 1, max: 3}
prompt: "Give {{a}}."
parts:
  - {key: both, type: numeric, answer: a, solution: done}
  - {key: own, type: numeric, answer: a, solution: done, skills: [variance-derivation]}
  - {key: none, type: numeric, answer: a, solution: done, skills: []}
"""))


@pytest.mark.parametrize(
    ("part", "correct", "misconception", "expected"),
    [
        ("both", True, "", [("scaling", True, ""), ("softmax", True, "")]),
        ("both", False, "", [("scaling", False, ""), ("softmax", False, "")]),
        # a diagnosed slip is evidence against the skill it reveals, and that one only
        ("both", False, "no_scaling", [("scaling", False, "no_scaling")]),
        ("own", False, "no_scaling", [("scaling", False, "no_scaling")]),
        ("own", False, "forgot_sigma", [("variance-derivation", False, "forgot_sigma")]),
        # an unknown code is no diagnosis
        ("own", False, "future_code", [("variance-derivation", False, "")]),
        ("own", True, "", [("variance-derivation", True, "")]),
        ("none", True, "", []),
        ("both", None, "", []),  # waiting for a manual grade
        ("missing", True, "", []),
    ],
)
def test_evidence_of_one_answer(part, correct, misconception, expected):
    evidence = services.submission_evidence(spec_data=SPEC, part=part, correct=correct, misconception=misconception)
    assert [(e.skill, e.correct, e.misconception) for e in evidence] == expected


@pytest.mark.parametrize(
    ("credit", "correct", "expected"),
    [
        # a person's partial grade is partial evidence for every skill of the part
        (0.8, False, [("scaling", True, 0.8), ("softmax", True, 0.8)]),
        (0.3, False, [("scaling", False, 0.3), ("softmax", False, 0.3)]),
        (0.5, False, [("scaling", True, 0.5), ("softmax", True, 0.5)]),
        # full and no credit are plain right and wrong answers
        (1.0, True, [("scaling", True, None), ("softmax", True, None)]),
        (0.0, False, [("scaling", False, None), ("softmax", False, None)]),
        (None, False, [("scaling", False, None), ("softmax", False, None)]),
    ],
)
def test_evidence_of_a_manual_grade(credit, correct, expected):
    evidence = services.submission_evidence(
        spec_data=SPEC, part="both", correct=correct, misconception="", credit=credit
    )
    assert [(e.skill, e.correct, e.credit) for e in evidence] == expected


# --------------------------------------------------------------------------- from grades


def test_two_no_scaling_slips_leave_scaling_shaky_and_touch_nothing_else(answer, variant, student):
    first = answer(variant, student, "no_scaling")
    second = answer(variant, student, "no_scaling_retyped")
    assert (first.misconception, second.misconception) == ("no_scaling", "no_scaling")
    assert observations(student) == [
        (first.pk, "scaling", False, "no_scaling"),
        (second.pk, "scaling", False, "no_scaling"),
    ]
    # 0.3 -> 83/440 -> 11299/65920 (two wrong answers, worked out in test_bkt)
    assert masteries(student) == {
        "scaling": (round(float(Fraction(11299, 65920)), 12), 2, ["no_scaling", "no_scaling"])
    }


def test_a_right_answer_counts_for_every_skill_of_the_part(answer, variant, student):
    submission = answer(variant, student, "right")
    assert submission.correct is True
    assert observations(student) == [(submission.pk, skill, True, "") for skill in WORKED_EXAMPLE_SKILLS]
    assert masteries(student) == {skill: (0.825, 1, [""]) for skill in WORKED_EXAMPLE_SKILLS}


def test_slip_then_right_answer_is_replayed_in_order(answer, variant, student):
    answer(variant, student, "no_scaling")
    answer(variant, student, "right")
    # scaling: wrong then right = 5337/7360; the other two saw one right answer only
    assert masteries(student) == {
        "scaling": (round(float(Fraction(5337, 7360)), 12), 2, ["", "no_scaling"]),
        "dot-product-scores": (0.825, 1, [""]),
        "softmax": (0.825, 1, [""]),
    }


def test_an_undiagnosed_wrong_answer_counts_against_every_skill_of_the_part(answer, variant, student):
    submission = answer(variant, student, "wrong")
    assert (submission.correct, submission.misconception) == (False, "")
    assert masteries(student) == {skill: (round(float(Fraction(83, 440)), 12), 1, [""]) for skill in WORKED_EXAMPLE_SKILLS}


def test_recording_again_changes_nothing(answer, variant, student):
    submission = answer(variant, student, "no_scaling")
    before = (observations(student), masteries(student))
    assert services.mastery_record_submission(submission_id=submission.pk) == ["scaling"]
    assert services.mastery_record_submission(submission_id=submission.pk) == ["scaling"]
    assert (observations(student), masteries(student)) == before
    assert services.mastery_record_submission(submission_id=10**9) == []


def test_a_regrade_rewrites_the_evidence_and_recomputes_every_skill_it_touched(answer, variant, student):
    submission = answer(variant, student, "no_scaling")
    # as a regrade would store it (then send submission_scored): now right, no misconception
    type(submission).objects.filter(pk=submission.pk).update(correct=True, score=1.0, misconception="")
    assert services.mastery_record_submission(submission_id=submission.pk) == WORKED_EXAMPLE_SKILLS
    assert observations(student) == [(submission.pk, skill, True, "") for skill in WORKED_EXAMPLE_SKILLS]
    assert masteries(student) == {skill: (0.825, 1, [""]) for skill in WORKED_EXAMPLE_SKILLS}


def test_evidence_that_disappears_removes_the_mastery_it_made(answer, variant, student):
    submission = answer(variant, student, "no_scaling")
    type(submission).objects.filter(pk=submission.pk).update(correct=None, score=None)
    services.mastery_record_submission(submission_id=submission.pk)
    assert (observations(student), masteries(student)) == ([], {})


def test_practice_answers_count_and_are_marked(answer, student):
    from courses.models import AssignmentItem
    from exercises.services import variant_create_practice

    item = AssignmentItem.objects.get(exercise_version__exercise__slug="attention-weights-one-query")
    practice = variant_create_practice(item=item, student=student, named=None)
    answer(practice, student, "no_scaling")
    assert list(Observation.objects.values_list("skill", "is_practice")) == [("scaling", True)]
    assert masteries(student)["scaling"][1] == 1


def test_stored_fitted_parameters_are_used_instead_of_the_defaults(answer, variant, student):
    SkillParameters.objects.create(
        skill="scaling", prior=0.5, learn=0.2, guess=0.25, slip=0.05, log_likelihood=-1.0,
        observations=100, students=20, iterations=5, fitted_at=timezone.now(),
    )
    answer(variant, student, "no_scaling")
    assert masteries(student) == {"scaling": (0.25, 1, ["no_scaling"])}  # 0.5 wrong -> 1/4 (test_bkt)


# --------------------------------------------------------------------------- the receiver


def test_the_update_waits_for_the_commit_and_goes_through_the_one_followup_task(
    variant, student, settings, django_capture_on_commit_callbacks
):
    from grading import services as grading_services
    from grading.models import Submission
    from grading.tests.test_services import as_text, unscaled_weights

    settings.GRADING_MODE = "celery"
    settings.REDIS_URL = ""  # one task per grade (the batched path: grading/tests/test_followup_batch.py)
    submission = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer=as_text(unscaled_weights(variant))
    )
    with mock.patch("attnquiz.celery.task_publish") as publish:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            grading_services.submission_grade(submission_id=submission.pk)
        assert publish.call_count == 0  # nothing before the grade commits
        for callback in callbacks:
            callback()
    calls = [call for call in publish.call_args_list if call.args[0].name == "grading.tasks.run_followups"]
    assert [(call.kwargs["args"], call.kwargs["queue"]) for call in calls] == [([[submission.pk]], "followups")]
    assert SkillMastery.objects.count() == 0  # the worker does it, not this process


def test_a_failing_update_never_reaches_grading(answer, variant, student):
    with mock.patch.object(services, "mastery_record_submissions", side_effect=RuntimeError("database gone")):
        submission = answer(variant, student, "no_scaling")
    assert (submission.status, submission.misconception) == ("graded", "no_scaling")
    assert SkillMastery.objects.count() == 0


def test_the_task_records_the_submission(answer, variant, student):
    with mock.patch("grading.events.followups_enqueue"):  # as if sent to a worker
        submission = answer(variant, student, "no_scaling")
    assert SkillMastery.objects.count() == 0
    grading_tasks.run_followups.apply(args=[[submission.pk]])
    assert masteries(student) == {"scaling": (round(float(Fraction(83, 440)), 12), 1, ["no_scaling"])}


def test_backfill_records_grades_whose_update_was_lost(answer, variant, student, clock):
    with mock.patch("grading.events.followups_enqueue"):  # the update is lost
        answer(variant, student, "no_scaling")
    assert SkillMastery.objects.count() == 0
    clock.advance(days=1, hours=23)
    assert services.mastery_backfill(days=2) == 1
    assert masteries(student)["scaling"][1] == 1
    assert services.mastery_backfill(days=2) == 0  # recorded once


def test_backfill_leaves_grades_older_than_its_window(answer, variant, student, clock):
    with mock.patch("grading.events.followups_enqueue"):
        answer(variant, student, "no_scaling")
    clock.advance(days=2, seconds=1)
    assert services.mastery_backfill(days=2) == 0
    assert SkillMastery.objects.count() == 0


def test_history_is_replayed_in_the_order_the_answers_were_given(answer, variant, student, clock):
    first = answer(variant, student, "no_scaling")
    clock.advance(minutes=5)
    answer(variant, student, "right")
    # recording the first again (as a late redelivery would) still replays wrong, then right
    services.mastery_record_submission(submission_id=first.pk)
    assert masteries(student)["scaling"] == (round(float(Fraction(5337, 7360)), 12), 2, ["", "no_scaling"])


# --------------------------------------------------------------------------- the fit


def observations_make(*, skill: str, sequences: list[list[bool]], variant, django_user_model):
    """Observation rows as graded submissions would leave them, one student per sequence."""
    from grading.models import Submission

    start = timezone.now() - timedelta(days=1)
    students = []
    for index, sequence in enumerate(sequences):
        user = django_user_model.objects.create(username=f"fit{index}")
        students.append(user)
        for attempt, correct in enumerate(sequence, start=1):
            submission = Submission.objects.create(
                variant=variant, student=user, part="weights", raw_answer="[0]", attempt=attempt + 100 * index,
                status="graded", correct=correct, score=float(correct),
            )
            Observation.objects.create(
                submission=submission, student=user, course=variant.assignment_item.assignment.course,
                skill=skill, correct=correct,
                observed_at=start + timedelta(minutes=attempt),
            )
    return students


def test_fit_stores_parameters_and_recomputes_every_student_with_them(variant, django_user_model):
    from mastery.tests.test_bkt import simulate

    sequences = simulate(bkt.BKTParams(prior=0.4, learn=0.2, guess=0.15, slip=0.08), students=12, attempts=6, seed=3)
    students = observations_make(skill="softmax", sequences=sequences, variant=variant,
                                 django_user_model=django_user_model)
    fit = services.skill_parameters_fit(skill="softmax")
    expected = bkt.fit(sequences)
    assert (fit.fitted, fit.students, fit.observations) == (True, 12, 72)
    stored = SkillParameters.objects.get(skill="softmax")
    assert (stored.prior, stored.learn, stored.guess, stored.slip, stored.forget) == (
        expected.params.prior, expected.params.learn, expected.params.guess, expected.params.slip, 0.0
    )
    assert (stored.students, stored.observations, stored.iterations) == (12, 72, expected.iterations)
    for user, sequence in zip(students, sequences):
        row = SkillMastery.objects.get(student=user, skill="softmax")
        assert (row.p_known, row.attempts) == (pytest.approx(bkt.replay(sequence, expected.params), abs=1e-12), 6)


def test_fit_below_the_data_minimum_keeps_the_defaults(variant, django_user_model):
    observations_make(skill="softmax", sequences=[[True, False]] * 9, variant=variant,
                      django_user_model=django_user_model)
    fit = services.skill_parameters_fit(skill="softmax")
    assert (fit.fitted, fit.students, fit.observations, fit.params) == (False, 9, 18, bkt.DEFAULT_PARAMS)
    assert not SkillParameters.objects.exists()
    assert fit.summary() == (
        "softmax: 9 students, 18 attempts, too little data: defaults kept; "
        "prior 0.300 learn 0.150 guess 0.100 slip 0.100"
    )


def test_fit_command_prints_one_line_per_skill(variant, django_user_model):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("fit_mastery", "--skill", "softmax", "--skill", "scaling", stdout=out)
    assert out.getvalue().splitlines() == [
        "recorded 0 graded answers without evidence",
        "softmax: 0 students, 0 attempts, too little data: defaults kept; prior 0.300 learn 0.150 guess 0.100 slip 0.100",
        "scaling: 0 students, 0 attempts, too little data: defaults kept; prior 0.300 learn 0.150 guess 0.100 slip 0.100",
    ]


def test_fit_command_refuses_an_unknown_skill():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="^unknown skill 'scalling'; known: dot-product-scores, scaling"):
        call_command("fit_mastery", "--skill", "scalling")


def test_the_periodic_task_backfills_then_queues_one_refit_per_skill_on_the_practice_queue(answer, variant, student):
    from exercises.engine.skills import SKILL_SLUGS

    with mock.patch("grading.events.followups_enqueue"):  # an update lost with the broker
        answer(variant, student, "no_scaling")
    with mock.patch("attnquiz.celery.task_publish") as publish:
        assert tasks.fit_skill_parameters.apply().get() == 1
    assert [(call.args[0], call.kwargs) for call in publish.call_args_list] == [
        (tasks.fit_skill, {"args": [skill], "queue": "practice"}) for skill in SKILL_SLUGS
    ]
    assert masteries(student)["scaling"][1] == 1
    assert tasks.fit_skill.apply(args=["scaling"]).get() == (
        "scaling: 1 students, 1 attempts, too little data: defaults kept; prior 0.300 learn 0.150 guess 0.100 slip 0.100"
    )
