"""Enqueue a Celery task by its name, so a service never imports the tasks that call it.

Tasks import services; services hand work to a worker through here. The task is looked
up in the Celery app's registry by name (every app's ``tasks`` module is imported the
first time a name is unknown), then published through the app's pooled producer
(``attnquiz.celery.task_publish``): the same message as ``send_task``, with the task's
own options. Callers send from a ``transaction.on_commit`` callback, so a worker never
reads a row that is not there yet.
"""

from __future__ import annotations

import threading


# Celery's first import of the tasks modules is not thread-safe: a second thread asking while
# the first is still importing found no task (NotRegistered) and its answer was left queued
# for the sweeper. One thread imports; the others wait for it.
_tasks_import_lock = threading.Lock()


def tasks_import() -> None:
    """Import the tasks modules of every installed app once (a web process does it at start),
    and resolve Celery's result backend: every publish asks for it, and resolving it scans
    the entry points of every installed package (4 ms alone), which the threads of a fresh
    process raced to do on their first answers while ``app.backend`` was still unset (4.6 %
    of submit's samples in a 15 s profile under load)."""
    from attnquiz.celery import app

    with _tasks_import_lock:
        app.loader.import_default_modules()
        app.backend  # noqa: B018 -- resolved once, here


def registered_task(name: str):
    """The task registered under ``name``; KeyError when no app defines it."""
    from attnquiz.celery import app

    if name not in app.tasks:
        with _tasks_import_lock:
            if name not in app.tasks:
                app.loader.import_default_modules()  # the tasks modules of every installed app
    return app.tasks[name]


def task_send(name: str, *, args: list, queue: str | None = None, countdown: float | None = None) -> None:
    """Publish now (to run ``countdown`` seconds from now); raise if the broker cannot take
    it (the caller decides what is lost)."""
    from attnquiz.celery import task_publish

    task_publish(registered_task(name), args=args, queue=queue, countdown=countdown)
