"""Grade events: one publication per change, follow-ups batched on their own queue (the
batch itself: test_followup_batch.py), and the listeners (mastery, spaced review) still
learn from every grade."""

from unittest import mock

import pytest

from exercises.services import variant_create_practice
from grading import events, services, tasks
from grading.models import Submission, SubmissionStatus
from grading.tests.test_services import as_text, unscaled_weights
from mastery.models import Observation
from review.models import ReviewEntry


@pytest.fixture
def practice(variant):
    """A practice variant of the worked example: its grade feeds mastery and review."""
    return variant_create_practice(item=variant.assignment_item, student=variant.student)


DRAIN = "grading.tasks.run_pending_followups"


@pytest.fixture
def published(settings, pending):
    """Celery mode with the broker replaced: (task name, args, queue) of every publish."""
    settings.GRADING_MODE = "celery"
    with mock.patch("attnquiz.celery.task_publish") as publish:
        yield lambda: [(call.args[0].name, call.kwargs["args"], call.kwargs.get("queue")) for call in publish.call_args_list]


@pytest.fixture
def pending(settings, followups_redis):
    """The ids waiting in this test's own pending batch (a real Redis)."""
    return lambda: [int(raw) for raw in followups_redis.lrange(settings.FOLLOWUP_PENDING_KEY, 0, -1)]


def slip(variant, *, attempt: int = 1) -> Submission:
    return Submission.objects.create(
        variant=variant, student=variant.student, part="weights", attempt=attempt,
        raw_answer=as_text(unscaled_weights(variant)),
    )


def test_every_listener_is_registered_and_grading_knows_none_of_them():
    assert set(events.followups_registered()) == {"mastery", "review"}
    receivers = {receiver.__module__ for receiver in events.grade_changed._live_receivers(Submission)[0]}
    assert receivers == {"lti.receivers"}


def test_a_grade_adds_its_followup_to_the_pending_batch_after_the_commit(
    practice, published, pending, django_capture_on_commit_callbacks
):
    submission = slip(practice)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.submission_grade(submission_id=submission.pk)
    assert published() == [] and pending() == []  # nothing before the grade commits
    for callback in callbacks:
        callback()
    assert pending() == [submission.pk]
    assert published() == [(DRAIN, [], "followups")]


def test_without_redis_a_grade_sends_a_followup_task_of_its_own(
    practice, published, settings, django_capture_on_commit_callbacks
):
    settings.REDIS_URL = ""
    submission = slip(practice)
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_grade(submission_id=submission.pk)
    assert published() == [("grading.tasks.run_followups", [[submission.pk]], "followups")]


def test_a_practice_answer_rides_practice_and_its_followup_never_does(
    practice, published, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        submission = services.submission_create(
            variant=practice, student=practice.student, part="weights", raw_answer=as_text(unscaled_weights(practice))
        )
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_grade(submission_id=submission.pk)  # as the worker would
    assert published() == [
        ("grading.tasks.grade_submission", [submission.pk], "practice"),
        (DRAIN, [], "followups"),
    ]


def test_a_second_delivery_stores_nothing_and_makes_no_followup(
    practice, published, pending, django_capture_on_commit_callbacks
):
    submission = slip(practice)
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_grade(submission_id=submission.pk)
    with django_capture_on_commit_callbacks(execute=True) as again:
        services.submission_grade(submission_id=submission.pk)
    assert again == []
    assert [name for name, _, _ in published()] == [DRAIN]
    assert pending() == [submission.pk]


def test_the_followup_task_updates_mastery_and_review(practice, published, django_capture_on_commit_callbacks):
    submission = slip(practice)
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_grade(submission_id=submission.pk)
    assert not Observation.objects.exists() and not ReviewEntry.objects.exists()  # the worker's job
    assert published() == [(DRAIN, [], "followups")]
    tasks.run_pending_followups.apply()
    observation = Observation.objects.get()
    assert (observation.submission_id, observation.skill, observation.correct, observation.misconception) == (
        submission.pk, "scaling", False, "no_scaling",
    )
    assert observation.is_practice is True
    entry = ReviewEntry.objects.get()
    assert (entry.submission_id, entry.rating) == (submission.pk, 1)


def test_a_regrade_batch_is_published_per_submission_with_one_followup(
    practice, django_capture_on_commit_callbacks
):
    submissions = [slip(practice, attempt=attempt) for attempt in (1, 2, 3)]
    changed = []

    def receiver(sender, submission, change, **kwargs):
        changed.append((submission.pk, change))

    events.grade_changed.connect(receiver)
    try:
        with mock.patch.object(events, "followups_enqueue") as enqueue:
            with django_capture_on_commit_callbacks(execute=True):
                events.grades_changed_publish(submissions=submissions, change=events.GradeChange.REGRADED)
    finally:
        events.grade_changed.disconnect(receiver)
    assert changed == [(submission.pk, "regraded") for submission in submissions]
    assert enqueue.call_args_list == [mock.call(submission_ids=[submission.pk for submission in submissions])]


def test_grades_that_became_visible_join_the_pending_batch(published, pending):
    events.grades_visible_publish(submission_ids=[4, 5, 6])
    events.grades_visible_publish(submission_ids=[])
    assert pending() == [4, 5, 6]
    assert published() == [(DRAIN, [], "followups")]


def test_a_failing_followup_never_stops_the_others(monkeypatch, caplog):
    ran = []

    def broken(*, submission_ids):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(events, "_followups", {"broken": broken, "kept": lambda *, submission_ids: ran.append(submission_ids)})
    events.followups_run(submission_ids=[7])
    assert ran == [[7]]
    assert "follow-up broken failed on 1 submissions" in caplog.text


def test_inline_followups_run_after_the_commit(practice, settings, django_capture_on_commit_callbacks):
    settings.GRADING_MODE = "inline"
    submission = slip(practice)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.submission_grade(submission_id=submission.pk)
    assert Submission.objects.get(pk=submission.pk).status == SubmissionStatus.GRADED
    assert not Observation.objects.exists()
    for callback in callbacks:
        callback()
    assert Observation.objects.filter(submission=submission).count() == 1
    assert ReviewEntry.objects.filter(submission=submission).count() == 1


def test_a_followup_that_loses_a_lock_race_runs_again_and_a_third_loss_is_logged(monkeypatch, caplog):
    from django.db import OperationalError

    calls = {"flaky": 0, "doomed": 0}

    def flaky(*, submission_ids):
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise OperationalError("deadlock detected")

    def doomed(*, submission_ids):
        calls["doomed"] += 1
        raise OperationalError("deadlock detected")

    monkeypatch.setattr(events, "_followups", {"flaky": flaky, "doomed": doomed})
    events.followups_run(submission_ids=[7])
    assert calls == {"flaky": 2, "doomed": 3}
    assert "follow-up doomed failed 3 times on 1 submissions" in caplog.text
    assert "follow-up flaky failed" not in caplog.text
