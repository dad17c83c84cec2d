"""The follow-ups of many grades run as one batch: each grade adds its submission id to a
list in Redis, and one drain task, due ``FOLLOWUP_BATCH_SECONDS`` after the first id it
will find, runs the follow-ups once for every id pending then.

At an exam start that turns a few hundred follow-up tasks a second (each a broker round
trip, a worker wake-up and its own transactions) into about one a second, and the grading
worker's part of it into one Redis round trip per grade.

- At most one drain is due at a time: adding ids schedules one only when none is (a key
  set with NX; it expires after ``FOLLOWUP_DRAIN_LEASE_SECONDS``, so a lost drain is
  replaced by the next grade's). A drain clears that key *before* it reads the list: an
  id added while it runs schedules the next drain, never waits unseen.
- The beat drains every ``FOLLOWUP_DRAIN_SWEEP_SECONDS`` too, for ids whose drain was lost
  with no grade after them.
- Ids popped by a drain that then dies are lost like a lost task: the follow-ups'
  periodic backfills make them good.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings

from attnquiz.redis_clients import redis_client, redis_mark_down

logger = logging.getLogger(__name__)

DRAIN_TASK = "grading.tasks.run_pending_followups"


def _pending_key() -> str:
    return settings.FOLLOWUP_PENDING_KEY


def _scheduled_key() -> str:
    return settings.FOLLOWUP_PENDING_KEY + ":drain-due"


def followups_pending_keys() -> tuple[str, str]:
    """The Redis keys of the batch: the list of pending ids and the "drain due" marker."""
    return _pending_key(), _scheduled_key()


def _client():
    return redis_client(socket_timeout=settings.REDIS_SOCKET_TIMEOUT)


def followups_pending_add(*, submission_ids: list[int]) -> bool:
    """Add these ids to the pending batch and make sure a drain is due; False when Redis
    cannot take them (the caller sends a task of its own instead)."""
    client = _client()
    if client is None:
        return False
    try:
        pipe = client.pipeline(transaction=False)
        pipe.rpush(_pending_key(), *submission_ids)
        _, drain_needed = pipe.set(_scheduled_key(), 1, nx=True, ex=settings.FOLLOWUP_DRAIN_LEASE_SECONDS).execute()
    except Exception:
        redis_mark_down()
        logger.info("could not add %d follow-ups to the pending batch", len(submission_ids), exc_info=True)
        return False
    if drain_needed:
        _drain_schedule(countdown=settings.FOLLOWUP_BATCH_SECONDS)
    return True


def _drain_schedule(*, countdown: float | None) -> None:
    """Send the drain task. If it cannot be sent, the ids wait for the beat's drain."""
    from attnquiz.enqueue import task_send

    try:
        task_send(DRAIN_TASK, args=[], queue=settings.FOLLOWUP_QUEUE, countdown=countdown)
    except Exception:
        logger.warning("the follow-up drain could not be scheduled; the beat's drain takes it", exc_info=True)


def followups_pending_drain(*, run: Callable[[list[int]], object]) -> int:
    """Pop up to ``FOLLOWUP_BATCH_MAX`` pending ids and ``run`` them as one batch (each id
    once, oldest first); schedule the next drain at once when more are waiting. Returns
    how many ids were run."""
    client = _client()
    if client is None:
        return 0
    try:
        client.delete(_scheduled_key())
        popped = client.lpop(_pending_key(), settings.FOLLOWUP_BATCH_MAX) or []
        more_waiting = client.llen(_pending_key()) > 0
    except Exception:
        redis_mark_down()
        logger.warning("could not read the pending follow-ups", exc_info=True)
        return 0
    submission_ids = sorted({int(raw) for raw in popped})
    if submission_ids:
        run(submission_ids)
    if more_waiting and _drain_due_claim(client):
        _drain_schedule(countdown=None)
    return len(submission_ids)


def _drain_due_claim(client) -> bool:
    try:
        return bool(client.set(_scheduled_key(), 1, nx=True, ex=settings.FOLLOWUP_DRAIN_LEASE_SECONDS))
    except Exception:
        redis_mark_down()
        return False
