"""Grading tasks go out on Celery's pooled producer, and survive a broker restart."""

from __future__ import annotations

import pytest
import redis

from attnquiz.celery import task_publish
from grading import tasks

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]


def _client(broker) -> redis.Redis:
    return redis.Redis.from_url(broker.url)


def _connections_received(client: redis.Redis) -> int:
    return int(client.info("stats")["total_connections_received"])


def test_publishes_reuse_pooled_connections(broker, settings):
    client = _client(broker)
    task_publish(tasks.grade_submission, args=[1])  # the pool opens its connection
    before = _connections_received(client)
    for submission_id in range(2, 22):
        task_publish(tasks.grade_submission, args=[submission_id])
    assert _connections_received(client) - before == 0
    assert client.llen(settings.CELERY_TASK_DEFAULT_QUEUE) == 21


def test_a_restarted_broker_takes_the_next_publish(broker, settings):
    task_publish(tasks.grade_submission, args=[1])
    broker.stop()
    broker.start()  # same port, empty: the pooled socket is now stale
    task_publish(tasks.grade_submission, args=[2])
    assert _client(broker).llen(settings.CELERY_TASK_DEFAULT_QUEUE) == 1


def test_broker_down_raises_so_the_caller_leaves_it_queued(broker):
    broker.stop()
    with pytest.raises(Exception):
        task_publish(tasks.grade_submission, args=[1])
