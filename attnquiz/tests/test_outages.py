"""Outages are honest: readiness says which dependency failed, pages say the site is
unavailable (a styled 503, not a bare 500), and liveness stays cheap."""

from __future__ import annotations

import socket

import pytest
from django.db import connections
from django.test import Client

from grading.tests.conftest import broker, redis_server  # noqa: F401


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def database_down(db):
    """The default database alias now points at a server (or file) that is not there.

    A fresh connection wrapper replaces the test's own, so the test database itself is
    untouched and comes back afterwards.
    """
    real = connections["default"]
    settings_dict = dict(real.settings_dict)
    if real.vendor == "postgresql":
        settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
        settings_dict["OPTIONS"] = {**settings_dict.get("OPTIONS", {}), "connect_timeout": 2}
    else:
        settings_dict["NAME"] = "/nonexistent-directory/attnquiz.sqlite3"
    broken = real.__class__(settings_dict, alias="default")
    connections["default"] = broken
    yield
    broken.close()
    connections["default"] = real


@pytest.fixture
def signed_in_client(demo):
    client = Client(raise_request_exception=False)
    assert client.login(username="student1", password="attention-demo")
    return client


def test_liveness_answers_without_the_database(database_down):
    response = Client().get("/healthz/live/")
    assert response.status_code == 200
    assert response.content == b"ok"
    assert response["Cache-Control"].startswith("max-age=0")


def test_readiness_is_ok_when_the_database_answers(client, db):
    response = client.get("/healthz/")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok", "checks": {"database": "ok", "broker": "not configured"}
    }


def test_readiness_is_503_and_names_the_database_when_it_is_down(database_down):
    response = Client().get("/healthz/")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable", "checks": {"database": "unavailable", "broker": "not configured"}
    }


@pytest.fixture
def workers_consuming(db, settings):
    """Every grading queue's heartbeat was consumed just now."""
    from grading.services import queue_heartbeat_record

    for queue in settings.HEARTBEAT_QUEUES:
        queue_heartbeat_record(queue=queue, worker="w@host")


def test_readiness_checks_the_broker_when_grading_goes_through_one(client, broker, workers_consuming):
    response = client.get("/healthz/")
    assert response.status_code == 200
    assert response.json()["checks"] == {
        "database": "ok", "broker": "ok", "queue grading": "ok", "queue practice": "ok"
    }


def test_readiness_is_503_when_the_broker_is_down(client, broker, workers_consuming):
    broker.stop()
    response = client.get("/healthz/")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {
            "database": "ok", "broker": "unavailable", "queue grading": "ok", "queue practice": "ok"
        },
    }


@pytest.mark.parametrize("path", ["/", "/explore/", "/teach/attention-101/", "/author/attention-101/"])
def test_pages_answer_a_styled_503_when_the_database_is_down(signed_in_client, database_down, path):
    response = signed_in_client.get(path)
    assert response.status_code == 503
    page = response.content.decode()
    assert "<h1 id=\"error-title\">attnquiz is temporarily unavailable</h1>" in page
    assert 'class="site-header"' in page and "attnquiz.css" in page  # the product's layout
    assert response["Retry-After"] == "30"
    assert "default-src 'self'" in response["Content-Security-Policy"]


def test_a_post_with_the_database_down_is_a_503_too(signed_in_client, database_down):
    response = signed_in_client.post("/grading/variants/1/parts/a/submit/", {"answer": "1"})
    assert response.status_code == 503
