"""Admission control: a request that waited too long for a thread is a cheap 503."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from attnquiz.admission import should_refuse
from attnquiz.gunicorn_worker import QUEUE_WAIT_ENVIRON, with_queue_wait


@pytest.mark.parametrize(
    ("queue_wait", "path", "refused"),
    [
        (0.0, "/", False),
        (4.9, "/exercises/3/", False),
        (5.0, "/exercises/3/", False),  # at the limit: still served
        (5.01, "/exercises/3/", True),
        (30.0, "/grading/variants/1/parts/weights/submit/", True),
        (30.0, "/healthz/", False),  # a busy node is alive and ready
        (30.0, "/healthz/live/", False),
    ],
)
def test_should_refuse(queue_wait, path, refused):
    assert should_refuse(queue_wait=queue_wait, path=path, limit=5.0) is refused


@pytest.mark.django_db
def test_a_request_that_queued_too_long_is_a_503_with_retry_after_and_no_query(client, settings):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/login/", **{QUEUE_WAIT_ENVIRON: 6.0})
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert response["Cache-Control"] == "no-store"
    assert "Content-Security-Policy" in response
    assert "attnquiz is busy right now" in response.content.decode()
    assert "nothing was" in response.content.decode()
    assert len(queries) == 0


@pytest.mark.django_db
def test_a_post_refused_as_busy_stores_nothing(client, django_user_model):
    response = client.post("/login/", {"username": "nobody", "password": "x"}, **{QUEUE_WAIT_ENVIRON: 9.0})
    assert response.status_code == 503
    assert django_user_model.objects.count() == 0


@pytest.mark.django_db
def test_a_request_within_the_limit_is_served(client):
    assert client.get("/login/", **{QUEUE_WAIT_ENVIRON: 1.0}).status_code == 200


def test_the_worker_hands_the_wait_of_this_thread_to_the_app():
    import threading

    seen = {}

    def app(environ, start_response):
        seen["wait"] = environ[QUEUE_WAIT_ENVIRON]
        return [b""]

    waits = threading.local()
    wrapped = with_queue_wait(app, waits)
    wrapped({}, None)
    assert seen["wait"] == 0.0  # no stamp: nothing waited
    waits.seconds = 7.5
    wrapped({QUEUE_WAIT_ENVIRON: 0.0}, None)  # a client cannot send it: the worker sets it
    assert seen["wait"] == 7.5
