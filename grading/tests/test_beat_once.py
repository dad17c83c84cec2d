"""However many beats run, periodic tasks are sent once: one beat holds the lock, a second
idles, and takes over when the first dies (attnquiz.beat). Part of ``make scale-test``
(ATTNQUIZ_SCALE_TEST=1): it starts a worker and two beats."""

from __future__ import annotations

import os
import time

import pytest
from django.conf import settings

from grading.harness import CeleryBeat, CeleryWorker, stack_env, wait_until

from .conftest import worker_database_url

pytestmark = [
    pytest.mark.integration,
    pytest.mark.xdist_group("pipeline"),
    pytest.mark.skipif(os.environ.get("ATTNQUIZ_SCALE_TEST") != "1", reason="make scale-test runs it"),
]


def pings(worker: CeleryWorker) -> int:
    return sum("grading.tasks.queue_heartbeat[" in line and " received" in line for line in worker.log)


def test_two_beats_send_each_periodic_task_once(broker, transactional_db):
    database_url = worker_database_url()
    env = stack_env(
        database_url=database_url, redis_url=broker.url, secret_key=settings.SECRET_KEY,
        variant_seed_secret=settings.VARIANT_SEED_SECRET,
    )
    env["WORKER_HEARTBEAT_SECONDS"] = "1"  # two queues: two pings a second from one beat
    worker = CeleryWorker(broker_url=broker.url, database_url=database_url)
    worker.env.update(env)
    first, second = CeleryBeat(env=env), CeleryBeat(env=env)
    try:
        worker.start()
        first.start()
        wait_until(lambda: pings(worker) >= 2, timeout=60, what="the first beat's pings")
        second.start()
        # The second beat is up once it has opened its schedule file; then it finds the lock taken.
        wait_until(lambda: os.listdir(second.directory), timeout=60, what="the second beat to start")
        time.sleep(2)
        before = pings(worker)
        time.sleep(6)
        sent = pings(worker) - before
        assert 8 <= sent <= 15, sent  # one beat: ~12 in 6 s; two would send ~24

        first.kill()  # its database session ends, and with it the lock
        before = pings(worker)
        wait_until(lambda: pings(worker) >= before + 4, timeout=30, what="the second beat to take over")
    finally:
        first.cleanup()
        second.cleanup()
        worker.stop()
