"""Finish is decided under the lock an answer takes while it is stored: an answer being
stored when the student presses Finish is committed first, and the attempt's
``finished_at`` is read after it, never before the answer's ``queued_at``.

Two threads with their own connections against real PostgreSQL (SQLite has no row locks),
on the frozen clock, which the answer moves on while it holds the lock."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections

from exams import services
from exercises.services import variant_get_or_create_for_item
from grading import services as grading_services
from grading.models import Submission

from .conftest import START, UNIFORM

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]


def test_finish_waits_for_the_answer_being_stored_and_ends_after_it(
    transactional_db, exam, item, student, clock, monkeypatch
):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL (make test provides it)")
    monkeypatch.setattr(grading_services, "submission_enqueue", lambda **kwargs: True)
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    locked, finish_tried = threading.Event(), threading.Event()
    real_lock = grading_services.attempt_lock_for_answer

    def lock_then_dawdle(**kwargs):
        refusal = real_lock(**kwargs)  # the attempt row is locked from here to the commit
        locked.set()
        finish_tried.wait(timeout=10)
        clock.advance(seconds=40)  # the answer is stored 40 s later, still under the lock
        return refusal

    monkeypatch.setattr(grading_services, "attempt_lock_for_answer", lock_then_dawdle)
    outcome: dict = {}

    def answer():
        try:
            outcome["submission"] = grading_services.submission_create(
                variant=variant, student=student, part="weights", raw_answer=UNIFORM
            )
        finally:
            connections.close_all()

    def finish():
        try:
            outcome["attempt"] = services.attempt_finish(assignment=exam, student=student)
        finally:
            connections.close_all()

    answering = threading.Thread(target=answer)
    answering.start()
    assert locked.wait(timeout=10)
    finishing = threading.Thread(target=finish)
    finishing.start()
    finishing.join(timeout=1.0)
    assert finishing.is_alive()  # Finish waits for the answer's lock
    finish_tried.set()
    answering.join(timeout=10)
    finishing.join(timeout=10)
    submission = Submission.objects.get(pk=outcome["submission"].pk)
    attempt = outcome["attempt"]
    assert submission.queued_at == START + timedelta(seconds=40)
    assert attempt.finished_at == START + timedelta(seconds=40)
    assert submission.queued_at <= attempt.finished_at
