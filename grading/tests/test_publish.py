"""Grading tasks go out on Celery's pooled producer, and survive a broker restart."""

from __future__ import annotations

import pytest
import redis

from attnquiz.celery import task_publish
from grading import tasks

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]


def _client(broker) -> redis.Redis:
    return redis.Redis.from_url(broker.url)


@pytest.fixture
def sockets_opened(monkeypatch) -> list:
    """The Redis sockets this process opens from now on: counted here, not by the server,
    which also counts any other process that reaches its port."""
    opened = []
    connect = redis.connection.Connection._connect

    def counting_connect(self):
        opened.append((self.host, self.port))
        return connect(self)

    monkeypatch.setattr(redis.connection.Connection, "_connect", counting_connect)
    return opened


def test_publishes_reuse_pooled_connections(broker, settings, sockets_opened):
    client = _client(broker)
    task_publish(tasks.grade_submission, args=[1])  # the pool opens its connection
    assert sockets_opened, "the first publish opened the pool's socket"
    sockets_opened.clear()
    for submission_id in range(2, 22):
        task_publish(tasks.grade_submission, args=[submission_id])
    assert sockets_opened == []
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
