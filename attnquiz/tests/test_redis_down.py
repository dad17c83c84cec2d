"""With Redis unreachable, signed-in pages work from the database and a submit is stored.

Redis here is a cache (sessions' copies, throttles) and the broker: each use fails open or
falls back to the database, within a short timeout. The full-stack version of this, with
gunicorn and a worker while Redis stops and returns, is grading/tests/test_redis_outage.py.
"""

from __future__ import annotations

import time

import pytest
import redis
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.cache import caches
from django.http import HttpRequest
from django.test import Client
from django.urls import reverse

from attnquiz import sessions
from attnquiz.errors import DatabaseUnavailableMiddleware
from grading.harness import RedisServer, free_port
from grading.models import Submission, SubmissionStatus
from grading.tests.conftest import student, variant  # noqa: F401
from grading.tests.test_redis_outage import wrong_answer


def redis_cache(url: str) -> dict:
    from django.conf import settings

    return {"default": {**settings.CACHES["default"], "BACKEND": "django_redis.cache.RedisCache",
                        "LOCATION": url,
                        "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2,
                                    "SOCKET_TIMEOUT": 0.5}}}


@pytest.fixture
def redis_down(settings):
    """Cache, sessions, throttle, grade announcements and broker all point at a dead port."""
    from attnquiz.celery import app

    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings.CACHES = redis_cache(dead)
    settings.SESSION_ENGINE = "attnquiz.sessions"
    settings.REDIS_URL = dead
    settings.GRADING_MODE = "celery"
    settings.SUBMIT_RATE_BURST = 10  # the bucket is asked, and cannot answer
    previous = app.conf.broker_url
    app.conf.broker_url = dead
    yield dead
    app.conf.broker_url = previous


def test_a_dead_cache_is_a_miss_in_milliseconds(redis_down):
    cache = caches["default"]
    started = time.monotonic()
    assert cache.get("anything") is None
    cache.set("anything", 1)
    cache.delete("anything")
    assert time.monotonic() - started < 0.5


def test_signed_in_pages_work_from_the_database(redis_down, demo, variant):
    client = Client(raise_request_exception=False)
    client.force_login(variant.student)
    for path in (reverse("dashboard"), reverse("exercise", args=[variant.assignment_item_id])):
        assert client.get(path).status_code == 200, path


def test_signing_in_and_out_works_from_the_database(redis_down, demo, settings):
    settings.AXES_ENABLED = True
    client = Client(raise_request_exception=False)
    response = client.post(reverse("login"), {"username": "student1", "password": "attention-demo"})
    assert response.status_code == 302
    assert client.get(reverse("dashboard")).status_code == 200
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("dashboard")).status_code == 302  # signed out: to the sign-in page


def test_a_submit_is_stored_queued_for_the_sweeper(redis_down, demo, variant):
    client = Client(raise_request_exception=False)
    client.force_login(variant.student)
    response = client.post(
        reverse("submit", args=[variant.pk, "weights"]), {"answer": wrong_answer(variant, "weights")},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    stored = Submission.objects.get(variant=variant)
    assert (stored.status, stored.attempt, stored.deliveries) == (SubmissionStatus.QUEUED, 1, 0)


@pytest.mark.django_db
def test_a_session_is_read_from_the_database_when_the_cache_is_down(redis_down):
    saved = DatabaseSessionStore()
    saved["exam_access_codes"] = {"7": 3}
    saved.save()
    loaded = sessions.SessionStore(session_key=saved.session_key)
    assert loaded["exam_access_codes"] == {"7": 3}
    loaded["seen"] = True
    loaded.save()  # the database row is written even though the cache cannot be
    assert DatabaseSessionStore(session_key=saved.session_key)["seen"] is True


@pytest.mark.django_db
def test_a_cached_session_copy_expires_within_the_bound(settings):
    server = RedisServer()
    server.start()
    try:
        settings.CACHES = redis_cache(server.url)
        settings.SESSION_CACHE_SECONDS = 120
        store = sessions.SessionStore()
        store["k"] = 1
        store.save()
        ttl = redis.Redis.from_url(server.url).ttl(caches["default"].make_key(store.cache_key))
        assert 110 <= ttl <= 120
        assert sessions.SessionStore(session_key=store.session_key)["k"] == 1
    finally:
        server.cleanup()


def test_a_redis_error_that_reaches_a_view_is_a_styled_503():
    middleware = DatabaseUnavailableMiddleware(lambda request: None)
    request = HttpRequest()
    request.method, request.path = "GET", "/"
    response = middleware.process_exception(request, redis.ConnectionError("refused"))
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert "attnquiz is temporarily unavailable" in response.content.decode()
