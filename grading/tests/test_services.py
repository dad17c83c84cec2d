"""The grading spine in-process: create → grade, idempotency, refusals and the sweeper."""

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from exercises import engine
from exercises.models import Variant
from grading import services
from grading.core.attention import attention
from grading.models import Submission, SubmissionStatus


@pytest.fixture
def submit(django_capture_on_commit_callbacks):
    """submission_create, then what runs after the commit (inline grading here)."""

    def create(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return services.submission_create(**kwargs)

    return create


def reference(variant, part):
    spec = engine.spec_from_json(variant.exercise_version.spec)
    return np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float)


def unscaled_weights(variant):
    params = variant.params
    result = attention(params["Q"], params["K"], params["V"], scale=1.0)
    return result.weights[params["q"]]


def as_text(row) -> str:
    return "[" + ", ".join(f"{value:.4f}" for value in row) + "]"


def test_correct_answer_is_graded_full_marks(submit, variant, student):
    submission = submit(
        variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
    )
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.GRADED
    assert submission.score == 1.0
    assert submission.awarded == 1.0
    assert submission.correct is True
    assert submission.misconception == ""
    assert submission.deliveries == 1
    assert submission.attempt == 1


def test_unscaled_weights_are_diagnosed_as_no_scaling(submit, variant, student):
    submission = submit(
        variant=variant, student=student, part="weights", raw_answer=as_text(unscaled_weights(variant))
    )
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.GRADED
    assert submission.correct is False
    assert submission.score == 0.0
    assert submission.misconception == "no_scaling"
    assert "√d_k" in submission.feedback["misconception_message"]


def test_format_error_is_refused_and_stores_nothing(submit, variant, student):
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(
            variant=variant, student=student, part="weights", raw_answer="[0.1, 0.2, 0.3]"
        )
    assert refused.value.code == "invalid"
    assert refused.value.message == "expected 4 entries, got 3 entries"
    assert Submission.objects.count() == 0


@pytest.mark.parametrize("raised, message", [
    (RecursionError("maximum recursion depth exceeded"), services.UNREADABLE_ANSWER),
    (OverflowError("int too large"), services.UNREADABLE_ANSWER),
    # A fault in the checker must not read as the student's input error.
    (AttributeError("'NoneType' object has no attribute 'shape'"), services.CHECK_FAILED),
    (KeyError("decimals"), services.CHECK_FAILED),
])
def test_a_parser_that_raises_costs_no_attempt_and_says_whose_fault(submit, variant, student, monkeypatch, raised, message):
    def failing(*args, **kwargs):
        raise raised

    monkeypatch.setattr(services.answers, "check", failing)
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(variant=variant, student=student, part="weights", raw_answer="[0.25, 0.25, 0.25, 0.25]")
    assert (refused.value.code, refused.value.message) == ("invalid", message)
    assert Submission.objects.count() == 0


def test_unknown_part_is_refused(submit, variant, student):
    with pytest.raises(services.SubmissionRefused, match="no part 'nope'"):
        submit(variant=variant, student=student, part="nope", raw_answer="1")


def test_attempts_run_out_and_penalties_apply(submit, variant, student):
    assignment = variant.assignment_item.assignment
    assignment.attempts_per_part = 2
    assignment.penalty_per_extra_attempt = 0.25
    assignment.save()
    wrong = as_text(reference(variant, "weights") + 0.1)
    submit(variant=variant, student=student, part="weights", raw_answer=wrong)
    right = submit(
        variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
    )
    right.refresh_from_db()
    assert (right.attempt, right.score, right.awarded) == (2, 1.0, 0.75)
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(variant=variant, student=student, part="weights", raw_answer=wrong)
    assert refused.value.code == "solved"


def test_no_attempts_left(submit, variant, student):
    assignment = variant.assignment_item.assignment
    assignment.attempts_per_part = 1
    assignment.save()
    wrong = as_text(reference(variant, "output") + 1)
    submit(variant=variant, student=student, part="output", raw_answer=wrong)
    with pytest.raises(services.SubmissionRefused, match="used all 1 attempts"):
        submit(variant=variant, student=student, part="output", raw_answer=wrong)
    assert Submission.objects.filter(part="output").count() == 1


def queued_submission(variant, student, raw_answer, *, attempt=1):
    return Submission.objects.create(
        variant=variant,
        student=student,
        part="weights",
        raw_answer=raw_answer,
        attempt=attempt,
        queued_at=timezone.now(),
    )


def test_grading_twice_stores_one_grade(variant, student):
    submission = queued_submission(variant, student, as_text(reference(variant, "weights")))
    first = services.submission_grade(submission_id=submission.pk)
    graded_at = first.graded_at
    second = services.submission_grade(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.GRADED
    assert submission.deliveries == 1
    assert second.graded_at == graded_at == submission.graded_at


def test_too_many_deliveries_marks_could_not_grade(variant, student, settings):
    settings.GRADING_MAX_DELIVERIES = 2
    submission = queued_submission(variant, student, as_text(reference(variant, "weights")))
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.GRADING, deliveries=2
    )
    services.submission_grade(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.COULD_NOT_GRADE
    assert submission.score is None
    assert submission.feedback["details"] == {"could_not_grade": True}


def test_grading_a_missing_submission_is_a_no_op(db):
    assert services.submission_grade(submission_id=987654) is None


def test_broker_down_at_submit_keeps_the_submission_queued(variant, student, settings, monkeypatch, django_capture_on_commit_callbacks):
    from grading import tasks

    settings.GRADING_MODE = "celery"

    def broker_down(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.grade_submission, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submission = services.submission_create(
            variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
        )
    assert len(callbacks) == 1
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.QUEUED
    assert submission.deliveries == 0


def test_enqueue_happens_only_after_commit(variant, student, settings, monkeypatch, django_capture_on_commit_callbacks):
    from grading import tasks

    settings.GRADING_MODE = "celery"
    sent = []
    monkeypatch.setattr(tasks.grade_submission, "apply_async", lambda args, **kw: sent.append(args))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission = services.submission_create(
            variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights"))
        )
        assert sent == []
    for callback in callbacks:
        callback()
    assert sent == [[submission.pk]]


def test_sweeper_requeues_only_stale_submissions(variant, student):
    stale = queued_submission(variant, student, as_text(reference(variant, "weights")))
    fresh = queued_submission(variant, student, as_text(reference(variant, "weights")), attempt=2)
    Submission.objects.filter(pk=stale.pk).update(queued_at=timezone.now() - timedelta(minutes=5))
    requeued = services.submissions_requeue_stale(older_than=timedelta(minutes=1))
    assert requeued == [stale.pk]
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.status == SubmissionStatus.GRADED
    assert fresh.status == SubmissionStatus.QUEUED


def test_task_over_its_time_limit_gives_up_instead_of_looping(variant, student, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    from grading import tasks

    submission = queued_submission(variant, student, as_text(reference(variant, "weights")))

    def slow(**kwargs):
        Submission.objects.filter(pk=submission.pk).update(status=SubmissionStatus.GRADING)
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(services, "grade_answer", slow)
    tasks.grade_submission(submission.pk)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.COULD_NOT_GRADE
    assert submission.feedback["message"].startswith("Grading this answer took longer")


def test_time_limit_counts_from_the_first_opened_exercise(submit, variant, student):
    assignment = variant.assignment_item.assignment
    assignment.time_limit_minutes = 30
    assignment.save()
    right = as_text(reference(variant, "weights"))
    Variant.objects.filter(pk=variant.pk).update(created_at=timezone.now() - timedelta(minutes=29))
    assert submit(variant=variant, student=student, part="weights", raw_answer=right).attempt == 1
    Variant.objects.filter(pk=variant.pk).update(created_at=timezone.now() - timedelta(minutes=31))
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(variant=variant, student=student, part="output", raw_answer=right)
    assert refused.value.code == "time_up"
    assert refused.value.message == "Your time on this assignment is up: its limit is 30 minutes."


def test_scored_signal_is_sent_once_per_stored_grade(submit, variant, student):
    from grading.events import grade_changed as submission_scored

    received = []

    def receiver(sender, submission, **kwargs):
        received.append((submission.pk, submission.status))

    submission_scored.connect(receiver)
    try:
        created = submit(variant=variant, student=student, part="weights", raw_answer=as_text(reference(variant, "weights")))
        services.submission_grade(submission_id=created.pk)  # a second delivery stores nothing
    finally:
        submission_scored.disconnect(receiver)
    assert received == [(created.pk, SubmissionStatus.GRADED)]


def test_the_stored_outcome_reads_back_as_the_orm_would_have_stored_it(variant, student):
    from django.db import connection

    queued = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer=as_text(unscaled_weights(variant)), attempt=1,
    )
    graded = services.submission_grade(submission_id=queued.pk)  # the values it wrote, in memory
    stored = Submission.objects.get(pk=queued.pk)
    assert (stored.status, stored.correct, stored.misconception, stored.deliveries) == ("graded", False, "no_scaling", 1)
    assert stored.feedback == graded.feedback and stored.feedback["misconception_message"]
    assert stored.graded_at == graded.graded_at and stored.graded_at.tzinfo is not None
    assert (stored.score, stored.awarded) == (graded.score, graded.awarded)
    with connection.cursor() as cursor:  # the column holds the choice's value, not its name
        cursor.execute("SELECT status FROM grading_submission WHERE id = %s", [queued.pk])
        assert cursor.fetchone() == ("graded",)


def test_a_finished_answer_is_not_claimed_or_stored_again(variant, student):
    submission = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer="[1]", attempt=1,
        status=SubmissionStatus.GRADED, score=0.5, deliveries=1,
    )
    assert services.submission_grade(submission_id=submission.pk).score == 0.5
    submission.refresh_from_db()
    assert (submission.status, submission.score, submission.deliveries) == (SubmissionStatus.GRADED, 0.5, 1)
