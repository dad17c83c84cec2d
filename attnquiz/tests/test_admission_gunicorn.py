"""The admission worker in a real gunicorn: one thread, a burst, a tight limit."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.conf import settings
from django.db import connection

from grading.harness import Gunicorn, database_url, stack_env


@pytest.fixture
def busy_gunicorn(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (make test provides it)")
    env = stack_env(
        database_url=database_url(connection.settings_dict, vendor=connection.vendor),
        redis_url=settings.REDIS_URL, secret_key=settings.SECRET_KEY,
        variant_seed_secret=settings.VARIANT_SEED_SECRET,
    )
    # Shorter than one request's service: on a fast machine a 50 ms limit was never reached
    # by 24 clients (all 48 served), so the test saw no refusal to check.
    env["ADMISSION_MAX_QUEUE_WAIT_SECONDS"] = "0.002"
    web = Gunicorn(env=env, workers=1, threads=1)
    web.start()
    yield web
    web.stop()


def test_a_burst_past_one_thread_is_partly_refused_with_503_and_retry_after(busy_gunicorn):
    def get(_):
        return requests.get(busy_gunicorn.url + "/login/", timeout=30)

    with ThreadPoolExecutor(24) as pool:
        responses = list(pool.map(get, range(48)))
    statuses = [response.status_code for response in responses]
    assert set(statuses) == {200, 503}  # every request answered: served, or refused at once
    refused = [response for response in responses if response.status_code == 503]
    assert all(response.headers["Retry-After"] == "2" for response in refused)
    assert all("attnquiz is busy right now" in response.text for response in refused)
    # The probes are never refused, however long they queued.
    with ThreadPoolExecutor(24) as pool:
        probes = list(pool.map(lambda _: requests.get(busy_gunicorn.url + "/healthz/live/", timeout=30), range(24)))
    assert {probe.status_code for probe in probes} == {200}
