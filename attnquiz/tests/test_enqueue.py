"""Enqueueing by task name: the registered task is found (its module imported on demand)
and published with the queue asked for; an unknown name is an error, not a lost task."""

from unittest import mock

import pytest

from attnquiz import enqueue


def test_a_task_is_found_by_its_name():
    task = enqueue.registered_task("instructor.tasks.run_regrade")
    assert task.name == "instructor.tasks.run_regrade"
    from instructor import tasks

    assert task is tasks.run_regrade._get_current_object()


def test_an_unknown_name_raises():
    with pytest.raises(KeyError):
        enqueue.registered_task("grading.tasks.no_such_task")


def test_task_send_publishes_the_named_task_on_the_queue_asked_for():
    with mock.patch("attnquiz.celery.task_publish") as publish:
        enqueue.task_send("grading.tasks.run_followups", args=[[1, 2]], queue="followups")
    [call] = publish.call_args_list
    assert (call.args[0].name, call.kwargs) == (
        "grading.tasks.run_followups", {"args": [[1, 2]], "queue": "followups", "countdown": None}
    )


def test_task_send_passes_a_countdown_to_the_message():
    from attnquiz.celery import task_publish

    task = enqueue.registered_task("grading.tasks.run_pending_followups")
    with mock.patch.object(task, "apply_async") as apply_async:
        task_publish(task, args=[], queue="followups", countdown=1.5)
    assert apply_async.call_args.kwargs == {"args": [], "retry": False, "queue": "followups", "countdown": 1.5}
