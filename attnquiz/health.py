"""Is this process able to serve? Readiness checks of what a request needs.

``readiness_checks`` asks the database and, when answers are graded through Celery, the
broker and each grading queue's heartbeat (a worker consumed beat's ping lately); each
answers "ok", "not configured", "unavailable", or for a queue what is wrong. Each check is bounded by
a connect timeout, so a health probe never hangs on a dead dependency.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

OK = "ok"
NOT_CONFIGURED = "not configured"
UNAVAILABLE = "unavailable"
BROKER_TIMEOUT_SECONDS = 2.0


def database_check() -> str:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        logger.warning("readiness: database unavailable: %s", error)
        return UNAVAILABLE
    return OK


def broker_check() -> str:
    """The Celery broker answers, when grading goes through one (GRADING_MODE=celery)."""
    from attnquiz.celery import app

    url = app.conf.broker_url or ""
    if settings.GRADING_MODE != "celery" or not url or url.startswith("memory://"):
        return NOT_CONFIGURED
    try:
        with app.connection_for_read() as connection:
            connection.ensure_connection(
                max_retries=1, interval_start=0, interval_step=0, timeout=BROKER_TIMEOUT_SECONDS
            )
    except Exception as error:  # kombu raises transport-specific errors
        logger.warning("readiness: broker unavailable: %s", error)
        return UNAVAILABLE
    return OK


def queue_checks() -> dict[str, str]:
    """Per grading queue: did a worker consume the beat's heartbeat ping lately?

    "No worker consumed `grading` for 95 s" means answers wait: no worker runs, it is
    stuck, or the queue is that far behind (or beat, which sends the pings, is down)."""
    if settings.GRADING_MODE != "celery":
        return {}
    from grading.selectors import queue_heartbeat_ages

    try:
        ages = queue_heartbeat_ages(queues=settings.HEARTBEAT_QUEUES)
    except DatabaseError:
        return {}  # the database check reports it
    checks = {}
    for queue, age in ages.items():
        if age is None:
            checks[f"queue {queue}"] = f"no worker has consumed `{queue}` yet"
        elif age > settings.WORKER_STALE_AFTER_SECONDS:
            checks[f"queue {queue}"] = f"no worker consumed `{queue}` for {age:.0f} s"
        else:
            checks[f"queue {queue}"] = OK
    return checks


def readiness_checks() -> dict[str, str]:
    return {"database": database_check(), "broker": broker_check(), **queue_checks()}


def is_ready(checks: dict[str, str]) -> bool:
    return all(value in (OK, NOT_CONFIGURED) for value in checks.values())
