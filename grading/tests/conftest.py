"""Fixtures for grading tests: the real pipeline (a Redis server and Celery workers)."""

from __future__ import annotations

import pytest
from django.db import connection


from courses.models import AssignmentItem
from exercises.services import variant_get_or_create_for_item
from grading.core import symbolic
from grading.harness import CeleryWorker, RedisServer, database_url

WORKED_EXAMPLE = "attention-weights-one-query"


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.fixture
def variant(demo, student):
    """student1's variant of the worked example in the demo assignment."""
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )
    return variant_get_or_create_for_item(item=item, student=student)


def worker_database_url() -> str:
    if connection.vendor != "postgresql":
        pytest.skip("integration tests need PostgreSQL (make test provides it)")
    return database_url(connection.settings_dict, vendor=connection.vendor)


@pytest.fixture
def redis_server():
    server = RedisServer()
    server.start()
    yield server
    server.cleanup()


@pytest.fixture
def broker(redis_server, settings):
    """Point this process's Celery app at the private Redis and enqueue through it."""
    from attnquiz.celery import app, producer_pool_close

    previous = app.conf.broker_url
    producer_pool_close(app)  # an earlier private broker's sockets, perhaps on this same port
    app.conf.broker_url = redis_server.url  # read at each send (services.submission_enqueue)
    settings.GRADING_MODE = "celery"
    yield redis_server
    producer_pool_close(app)
    app.conf.broker_url = previous


@pytest.fixture
def start_worker(broker, transactional_db):
    """A factory: start_worker(**env) starts a real worker; all are stopped afterwards."""
    workers: list[CeleryWorker] = []
    database_url = worker_database_url()

    def start(**extra_env) -> CeleryWorker:
        worker = CeleryWorker(
            broker_url=broker.url,
            database_url=database_url,
            extra_env={k: str(v) for k, v in extra_env.items()},
        )
        worker.start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


@pytest.fixture
def followups_redis(settings):
    """A client of the Redis that holds this test's own pending follow-ups (its key comes
    from the root conftest, which also clears it)."""
    if not settings.REDIS_URL:
        pytest.skip("the follow-up batch lives in Redis")
    import redis

    return redis.Redis.from_url(settings.REDIS_URL)


@pytest.fixture
def points_key():
    """Set the key of the unpredictable points for one test; the process's own comes back after."""
    previous = symbolic._UNPREDICTABLE_KEY
    yield symbolic.unpredictable_points_key_set
    symbolic.unpredictable_points_key_set(previous)
    symbolic.decide_equivalent.cache_clear()
