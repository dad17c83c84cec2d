"""The attempt limit holds when many answers for one part arrive at the same moment.

Each post runs in its own thread with its own database connection, all released at
once by a barrier, against real PostgreSQL (SQLite serialises writers anyway and has
no row locks to test).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from courses.models import AssignmentItem
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from grading import services
from grading.models import Submission, SubmissionStatus
from grading.tests.conftest import WORKED_EXAMPLE

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]

POSTS = 10


@pytest.fixture
def pg_variant(transactional_db, demo, django_user_model, monkeypatch, settings):
    if connection.vendor != "postgresql":
        pytest.skip("the concurrency tests need PostgreSQL (make test provides it)")
    # Leave every post queued: the race is about storing, not grading.
    monkeypatch.setattr(services, "submission_enqueue", lambda **kwargs: True)
    settings.GRADING_LONG_POLL_SECONDS = 0
    settings.SUBMIT_RATE_BURST = 1000
    student = django_user_model.objects.get(username="student1")
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )
    return variant_get_or_create_for_item(item=item, student=student)


def wrong_answer(variant, offset: float = 0.1) -> str:
    spec = engine.spec_from_json(variant.exercise_version.spec)
    values = np.asarray(engine.reference_answers(spec, variant.params)["weights"], dtype=float)
    return "[" + ", ".join(f"{v + offset:.4f}" for v in values) + "]"


def wrong_answers(variant, posts: int = POSTS) -> list[str]:
    """A different wrong answer per post (the same one again is refused as unchanged)."""
    return [wrong_answer(variant, 0.2 + n / 10_000) for n in range(posts)]


def post_at_once(variant, answers: list[str]) -> list[int]:
    """One submit request per answer, in parallel threads; their status codes."""
    url = reverse("submit", args=[variant.pk, "weights"])
    barrier = threading.Barrier(len(answers))
    statuses: list[int] = []
    errors: list[BaseException] = []

    def post(answer: str) -> None:
        client = Client()
        client.force_login(variant.student)
        try:
            barrier.wait(timeout=30)
            response = client.post(url, {"answer": answer}, HTTP_HX_REQUEST="true")
            statuses.append(response.status_code)
        except BaseException as error:  # reported by the test, not lost in the thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(answer,)) for answer in answers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return sorted(statuses)


def set_attempts(variant, attempts: int) -> None:
    assignment = variant.assignment_item.assignment
    assignment.attempts_per_part = attempts
    assignment.save(update_fields=["attempts_per_part"])


def test_ten_posts_on_the_last_attempt_store_exactly_one(pg_variant):
    set_attempts(pg_variant, 3)
    for attempt in (1, 2):
        Submission.objects.create(
            variant=pg_variant, student=pg_variant.student, part="weights",
            raw_answer=wrong_answer(pg_variant), attempt=attempt,
            status=SubmissionStatus.GRADED, score=0.0, correct=False, queued_at=timezone.now(),
        )
    statuses = post_at_once(pg_variant, wrong_answers(pg_variant))
    stored = Submission.objects.filter(variant=pg_variant, part="weights")
    assert sorted(stored.values_list("attempt", flat=True)) == [1, 2, 3]
    assert statuses == [200] + [422] * (POSTS - 1)


def test_ten_posts_with_five_attempts_store_exactly_five(pg_variant):
    set_attempts(pg_variant, 5)
    statuses = post_at_once(pg_variant, wrong_answers(pg_variant))
    stored = Submission.objects.filter(variant=pg_variant, part="weights")
    assert sorted(stored.values_list("attempt", flat=True)) == [1, 2, 3, 4, 5]
    assert statuses == [200] * 5 + [422] * 5


def test_ten_posts_of_the_same_answer_at_once_store_it_once(pg_variant):
    """"The same as the latest" is decided under the variant's lock: the copies that wait
    for it see the one stored first and are refused as unchanged."""
    set_attempts(pg_variant, 5)
    statuses = post_at_once(pg_variant, [wrong_answer(pg_variant)] * POSTS)
    stored = Submission.objects.filter(variant=pg_variant, part="weights")
    assert list(stored.values_list("attempt", "raw_answer")) == [(1, wrong_answer(pg_variant))]
    assert statuses == [200] + [422] * (POSTS - 1)
