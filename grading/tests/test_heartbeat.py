"""The workers' heartbeat: beat pings each grading queue, whichever worker consumes the ping
stamps it, and /healthz/ fails once no worker consumed a queue's ping for too long."""

from __future__ import annotations


import pytest
from django.conf import settings as django_settings

from grading import services, tasks
from grading.models import QueueHeartbeat


@pytest.fixture
def celery_mode(settings, monkeypatch):
    settings.GRADING_MODE = "celery"
    settings.WORKER_STALE_AFTER_SECONDS = 90
    monkeypatch.setattr("attnquiz.health.broker_check", lambda: "ok")


def test_beat_pings_every_grading_queue_and_an_unconsumed_ping_expires():
    pings = {
        entry["args"][0]: entry for entry in django_settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"] == "grading.tasks.queue_heartbeat"
    }
    assert sorted(pings) == ["grading", "practice"]
    for queue, entry in pings.items():
        assert entry["options"] == {"queue": queue, "expires": 2 * entry["schedule"]}


@pytest.mark.django_db
def test_consuming_the_ping_stamps_the_queue_once(clock):
    tasks.queue_heartbeat.apply(args=["grading"])
    clock.advance(seconds=5)
    tasks.queue_heartbeat.apply(args=["grading"])  # a second beat's ping changes the time only
    stamp = QueueHeartbeat.objects.get()
    assert (stamp.queue, stamp.consumed_at) == ("grading", clock.now)


@pytest.mark.django_db
def test_healthz_fails_when_no_worker_consumed_grading_for_too_long(client, celery_mode, clock):
    services.queue_heartbeat_record(queue="grading", worker="grading@a")
    services.queue_heartbeat_record(queue="practice", worker="practice@a")
    clock.advance(seconds=60)
    services.queue_heartbeat_record(queue="practice", worker="practice@a")
    assert client.get("/healthz/").status_code == 200
    clock.advance(seconds=35)
    response = client.get("/healthz/")
    assert response.status_code == 503
    assert response.json()["checks"] == {
        "database": "ok", "broker": "ok",
        "queue grading": "no worker consumed `grading` for 95 s", "queue practice": "ok",
    }


@pytest.mark.django_db
def test_healthz_fails_before_any_worker_consumed_a_queue(client, celery_mode):
    services.queue_heartbeat_record(queue="grading", worker="grading@a")
    response = client.get("/healthz/")
    assert response.status_code == 503
    assert response.json()["checks"]["queue practice"] == "no worker has consumed `practice` yet"


@pytest.mark.django_db
def test_in_process_grading_has_no_queue_to_watch(client, settings):
    settings.GRADING_MODE = "inline"
    assert client.get("/healthz/").json()["checks"] == {"database": "ok", "broker": "not configured"}
