"""The grading pipeline through real services: PostgreSQL, a Redis server, Celery workers.

Each test drives the same code paths production uses: on-commit enqueue, the worker's
task, redelivery after a crash, and the sweeper.
"""

from __future__ import annotations

import numpy as np
import pytest

from courses.models import AssignmentItem
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from grading import services
from grading.models import Submission, SubmissionStatus
from grading.selectors import part_progress

from grading.harness import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]

def right_answer(variant, part="weights") -> str:
    spec = engine.spec_from_json(variant.exercise_version.spec)
    values = np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float)
    return "[" + ", ".join(f"{v:.4f}" for v in values) + "]"


def status_of(submission_id: int) -> str:
    return Submission.objects.get(pk=submission_id).status


def wait_graded(submission_id: int, timeout: float = 30) -> Submission:
    wait_until(
        lambda: status_of(submission_id) in (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE),
        timeout=timeout,
        what=f"submission {submission_id} to be graded",
    )
    return Submission.objects.get(pk=submission_id)


def test_submit_is_graded_by_the_worker(start_worker, variant, student):
    start_worker()
    submission = services.submission_create(
        variant=variant, student=student, part="weights", raw_answer=right_answer(variant)
    )
    graded = wait_graded(submission.pk)
    assert (graded.status, graded.score, graded.correct, graded.deliveries) == (
        SubmissionStatus.GRADED, 1.0, True, 1,
    )


def test_task_delivered_twice_grades_once(start_worker, variant, student):
    start_worker()
    submission = services.submission_create(
        variant=variant, student=student, part="weights", raw_answer=right_answer(variant)
    )
    services.submission_enqueue(submission_id=submission.pk)
    graded = wait_graded(submission.pk)
    first_graded_at = graded.graded_at
    # A third delivery, after grading, must change nothing either.
    services.submission_enqueue(submission_id=submission.pk)
    probe = services.submission_create(
        variant=variant, student=student, part="output", raw_answer=right_answer(variant, "output")
    )
    wait_graded(probe.pk)  # the worker has drained the queue ahead of the probe
    graded.refresh_from_db()
    assert graded.deliveries == 1
    assert graded.graded_at == first_graded_at
    assert Submission.objects.filter(variant=variant, part="weights").count() == 1


def test_broker_down_at_submit_then_sweeper_grades_it(start_worker, broker, variant, student):
    broker.stop()
    submission = services.submission_create(
        variant=variant, student=student, part="weights", raw_answer=right_answer(variant)
    )
    assert status_of(submission.pk) == SubmissionStatus.QUEUED
    broker.start()
    start_worker()
    from datetime import timedelta

    assert services.submissions_requeue_stale(older_than=timedelta(0)) == [submission.pk]
    graded = wait_graded(submission.pk)
    assert (graded.status, graded.score, graded.deliveries) == (SubmissionStatus.GRADED, 1.0, 1)


def test_worker_killed_mid_grade_is_graded_exactly_once_after_restart(start_worker, variant, student):
    slow = start_worker(GRADING_FAULT_DELAY_SECONDS=3)
    submission = services.submission_create(
        variant=variant, student=student, part="weights", raw_answer=right_answer(variant)
    )
    wait_until(lambda: status_of(submission.pk) == SubmissionStatus.GRADING, timeout=20, what="claim")
    slow.kill()
    assert status_of(submission.pk) == SubmissionStatus.GRADING
    # The unacknowledged task comes back after the visibility timeout (4 s in tests).
    start_worker()
    graded = wait_graded(submission.pk, timeout=40)
    assert graded.status == SubmissionStatus.GRADED
    assert graded.score == 1.0
    assert graded.deliveries == 2


def test_redis_flushed_sweeper_regrades_each_submission_once(start_worker, broker, variant, student):
    submissions = [
        services.submission_create(
            variant=variant, student=student, part=part, raw_answer=right_answer(variant, part)
        )
        for part in ("weights", "output")
    ]
    broker.flushall()  # the queued tasks are gone; only the database remembers
    start_worker()
    from datetime import timedelta

    requeued = services.submissions_requeue_stale(older_than=timedelta(0))
    assert sorted(requeued) == sorted(s.pk for s in submissions)
    for submission in submissions:
        graded = wait_graded(submission.pk)
        assert (graded.status, graded.score, graded.deliveries) == (SubmissionStatus.GRADED, 1.0, 1)


def test_answer_too_complex_to_check_cannot_be_graded_and_the_next_one_grades(start_worker, demo, student):
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="score-variance"
    )
    variant = variant_get_or_create_for_item(item=item, student=student)
    start_worker()
    # Two towers: their values are too large to compare at any point and nothing cancels them
    # (one tower beside ordinary terms is decided "not equivalent" at once: it outweighs them).
    pathological = "exp(" * 39 + "sigma_q" + ")" * 39 + " - " + "exp(" * 39 + "sigma_k" + ")" * 39 + " + 1"
    stuck = services.submission_create(
        variant=variant, student=student, part="correct_scale", raw_answer=pathological
    )
    stuck = wait_graded(stuck.pk)
    assert stuck.status == SubmissionStatus.COULD_NOT_GRADE
    assert stuck.score is None
    assert stuck.feedback["message"] == (
        "Your answer is too complex to check automatically: its values are too large (or too small) to compare "
        "with the correct expression at any test point. Simplify it and submit it again. This did not use up an "
        "attempt, and your instructor can see the answer."
    )
    assert part_progress(variant=variant, part="correct_scale")["attempts_used"] == 0
    right = services.submission_create(
        variant=variant, student=student, part="correct_scale", raw_answer="sqrt(d_k) σ_q σ_k"
    )
    right = wait_graded(right.pk)
    assert (right.status, right.score, right.attempt) == (SubmissionStatus.GRADED, 1.0, 2)


def _submit_right_answer_on_a_live_worker(*, start_worker, variant, client, settings, submit_wait: float) -> str:
    """Post the right answer as the page does, a worker grading, the long poll 20 s and
    the answer's own wait ``submit_wait``; the response's HTML."""
    from django.urls import reverse

    settings.GRADING_LONG_POLL_SECONDS = 20
    settings.GRADING_SUBMIT_WAIT_SECONDS = submit_wait
    start_worker()
    assert client.login(username="student1", password="attention-demo")
    response = client.post(
        reverse("submit", args=[variant.pk, "weights"]), {"answer": right_answer(variant)}, HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    return response.content.decode()


def test_result_request_waits_for_the_grade_then_answers(start_worker, variant, student, client, settings):
    html = _submit_right_answer_on_a_live_worker(
        start_worker=start_worker, variant=variant, client=client, settings=settings, submit_wait=20
    )
    assert 'data-result="graded"' in html and "Correct" in html


def test_an_answer_is_acknowledged_before_its_grade_and_the_poll_brings_the_grade(
    start_worker, variant, student, client, settings
):
    from django.urls import reverse

    # The exam hour: no wait for the grade in the answer's response.
    html = _submit_right_answer_on_a_live_worker(
        start_worker=start_worker, variant=variant, client=client, settings=settings, submit_wait=0
    )
    assert 'data-result="pending"' in html and "Answer stored" in html
    submission = Submission.objects.get(variant=variant, part="weights")
    assert f'hx-get="{reverse("submission", args=[submission.pk])}?wait=1"' in html
    polled = client.get(reverse("submission", args=[submission.pk]) + "?wait=1", HTTP_HX_REQUEST="true")
    assert polled.status_code == 200
    assert 'data-result="graded"' in polled.content.decode() and "Correct" in polled.content.decode()
    assert polled["HX-Trigger"] == "graded"


def test_the_grades_followup_runs_on_the_worker_from_the_followup_queue(start_worker, variant, student):
    from mastery.models import Observation

    start_worker()
    submission = services.submission_create(
        variant=variant, student=student, part="weights", raw_answer=right_answer(variant)
    )
    wait_graded(submission.pk)
    wait_until(
        lambda: Observation.objects.filter(submission_id=submission.pk).exists(),
        timeout=30, what="the follow-up to record the mastery evidence",
    )
    recorded = Observation.objects.filter(submission_id=submission.pk).order_by("skill")
    assert list(recorded.values_list("skill", "correct")) == [
        ("dot-product-scores", True), ("scaling", True), ("softmax", True),
    ]
