"""A worker whose broker goes away and comes back keeps consuming.

The crash this guards against (see attnquiz.worker) needs an ack to fail on the dying
connection just before the consumer notices the loss, so each cycle stops Redis while
the worker grades and acks a stream of answers. A lost cycle is a dead worker: the probe
answer after it is never graded. The timing is a race, so a cycle does not always reach
that path; the last test below takes it directly.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import transaction

from attnquiz.worker import Consumer
from grading import services
from grading.management.commands.bench_pipeline import prepared_answers
from grading.harness import CeleryWorker, wait_until
from grading.models import Submission, SubmissionStatus

from .conftest import worker_database_url
from .test_redis_outage import wrong_answer

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]

CYCLES = 3


@pytest.fixture
def production_worker(broker, transactional_db):
    """A worker as production runs it: two pool processes, gossip, mingle and heartbeats."""
    worker = CeleryWorker(broker_url=broker.url, database_url=worker_database_url())
    worker.start(concurrency=2, lean=False)
    yield worker
    worker.stop()


def test_worker_keeps_consuming_across_broker_restarts(production_worker, broker, demo, variant, student):
    worker = production_worker
    parts = ["weights", "output", "weights"]
    for cycle in range(CYCLES):
        stream = prepared_answers(30)
        with transaction.atomic():  # sent at the commit, at once: the worker grades and acks a stream
            for other_variant, other_student, answer in stream:
                services.submission_create(
                    variant=other_variant, student=other_student, part="weights", raw_answer=answer
                )
        time.sleep(0.3 + 0.2 * cycle)  # the worker is mid-stream, acking
        broker.stop()
        time.sleep(1.0)
        broker.start()
        # A student's answer after the restart: stored, sent, and graded by the same worker.
        probe = services.submission_create(
            variant=variant, student=student, part=parts[cycle],
            raw_answer=wrong_answer(variant, parts[cycle], offset=0.5 + cycle / 10),  # each new
        )
        wait_until(
            lambda: Submission.objects.get(pk=probe.pk).status
            in (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE)
            or worker.process.poll() is not None,
            timeout=60, what=f"the probe of cycle {cycle} to be graded",
        )
        assert worker.process.poll() is None, "".join(worker.log[-60:])
        assert Submission.objects.get(pk=probe.pk).deliveries == 1
    assert not any("Unrecoverable error" in line for line in worker.log)
    # What the restarts (an empty Redis each time) took from the queue, the sweeper sends.
    services.submissions_requeue_stale(older_than=timedelta(0))
    wait_until(
        lambda: not Submission.objects.exclude(status=SubmissionStatus.GRADED).exists(),
        timeout=60, what="every answer to be graded",
    )


def test_a_failed_close_of_the_lost_connection_is_not_fatal(monkeypatch):
    """The kombu failure itself, without a broker: the consumer logs it and reconnects."""
    from celery.worker.consumer import Consumer as CeleryConsumer

    def close_through_a_detached_transport(self, exc):
        raise AttributeError("'NoneType' object has no attribute 'hostname'")

    monkeypatch.setattr(
        CeleryConsumer, "on_connection_error_after_connected", close_through_a_detached_transport
    )
    consumer = Consumer.__new__(Consumer)
    consumer.connection = object()
    consumer.on_connection_error_after_connected(ConnectionError("closed by server"))
    assert consumer.connection is None



def test_an_ack_through_a_replaced_connection_is_not_fatal():
    """A task that finishes after the reconnect acks through its old, detached channel."""
    def ack_through_a_detached_transport(logger, errors):
        raise AttributeError("'NoneType' object has no attribute 'hostname'")

    class EventLoop:  # runs a callback as the worker's event loop does: unguarded
        def call_soon(self, callback):
            callback()

    consumer = Consumer.__new__(Consumer)
    consumer.hub = EventLoop()
    consumer.call_soon_ack(ack_through_a_detached_transport, None, (ConnectionError,))
