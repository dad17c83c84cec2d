"""The pending batch of follow-ups (grading.followup_batch): many grades, one drain; at most
one drain due; nothing added while a drain runs is left unseen; bounded batches."""

from __future__ import annotations

from unittest import mock

import pytest

from grading.followup_batch import followups_pending_add, followups_pending_drain, followups_pending_keys


@pytest.fixture
def redis_client(followups_redis):
    return followups_redis


@pytest.fixture
def sent():
    """(args, countdown) of every drain task sent."""
    with mock.patch("attnquiz.enqueue.task_send") as task_send:
        yield lambda: [
            (call.args[0], call.kwargs["queue"], call.kwargs["countdown"]) for call in task_send.call_args_list
        ]


def test_many_grades_schedule_one_drain_that_runs_them_once_in_order(redis_client, sent, settings):
    settings.FOLLOWUP_BATCH_SECONDS = 1.5
    for ids in ([12], [10, 11], [12]):  # 12 again: a regrade of a grade still pending
        assert followups_pending_add(submission_ids=ids) is True
    assert sent() == [("grading.tasks.run_pending_followups", "followups", 1.5)]
    ran = []
    assert followups_pending_drain(run=ran.append) == 3
    assert ran == [[10, 11, 12]]
    assert followups_pending_drain(run=ran.append) == 0 and ran == [[10, 11, 12]]  # nothing twice
    followups_pending_add(submission_ids=[13])  # the drain cleared its key: the next grade schedules one
    assert len(sent()) == 2


def test_the_due_drain_key_expires_so_a_lost_drain_is_replaced(redis_client, settings, sent):
    settings.FOLLOWUP_DRAIN_LEASE_SECONDS = 30
    followups_pending_add(submission_ids=[1])
    _, drain_due = followups_pending_keys()
    assert 0 < redis_client.ttl(drain_due) <= 30
    redis_client.delete(drain_due)  # as after 30 s
    followups_pending_add(submission_ids=[2])
    assert len(sent()) == 2


def test_an_id_added_while_a_drain_runs_schedules_the_next_drain(redis_client, sent):
    followups_pending_add(submission_ids=[1])
    ran = []

    def run(ids):
        ran.append(ids)
        followups_pending_add(submission_ids=[2])  # a grade stored meanwhile

    followups_pending_drain(run=run)
    assert ran == [[1]]
    assert len(sent()) == 2  # the first drain, and the one the late grade scheduled
    followups_pending_drain(run=ran.append)
    assert ran == [[1], [2]]


def test_a_drain_takes_at_most_the_batch_and_sends_the_next_at_once(redis_client, sent, settings):
    settings.FOLLOWUP_BATCH_MAX = 3
    followups_pending_add(submission_ids=[5, 4, 3, 2, 1])
    ran = []
    assert followups_pending_drain(run=ran.append) == 3
    assert ran == [[3, 4, 5]]
    assert sent()[-1] == ("grading.tasks.run_pending_followups", "followups", None)
    assert followups_pending_drain(run=ran.append) == 2
    assert ran == [[3, 4, 5], [1, 2]]
    assert len(sent()) == 2  # nothing left: no third drain


def test_without_redis_nothing_is_added_and_the_caller_is_told(settings, sent):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    assert followups_pending_add(submission_ids=[1]) is False
    assert followups_pending_drain(run=lambda ids: pytest.fail("ran without Redis")) == 0
    assert sent() == []


def test_the_beat_drains_the_pending_batch_on_the_followup_queue(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["drain-pending-followups"]
    assert (entry["task"], entry["options"]) == ("grading.tasks.run_pending_followups", {"queue": "followups"})
    assert entry["schedule"] == 30.0
