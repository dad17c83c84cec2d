""""This submission is finished", told over Redis, so a waiting request need not poll the database.

When the pipeline stores an outcome it pushes onto a short-lived per-submission list;
a request waiting for that grade blocks on the list (BLPOP) and wakes the moment it
arrives. The database stays the source of truth: a waiter re-reads the submission after
every wake-up or slice, so a lost announcement only delays the answer by one slice, and
without Redis (``make run`` without it, or Redis down) waiting falls back to short sleeps.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction

from attnquiz.redis_clients import redis_client, redis_mark_down

logger = logging.getLogger(__name__)

KEY = "attnquiz:graded:{submission_id}"
KEEP_SECONDS = 60
BLOCK_SECONDS = 2.0  # the longest one BLPOP blocks; callers loop, re-reading the database


def _client():
    # A BLPOP holds the socket for its own timeout, at most BLOCK_SECONDS.
    return redis_client(socket_timeout=BLOCK_SECONDS + settings.REDIS_SOCKET_TIMEOUT)


def grade_announce(*, submission_id: int) -> None:
    """Wake whoever waits for this submission, once the outcome is committed. Never raises."""
    transaction.on_commit(lambda: _push(submission_id))


def _push(submission_id: int) -> None:
    client = _client()
    if client is None:
        return
    key = KEY.format(submission_id=submission_id)
    try:
        client.pipeline(transaction=False).rpush(key, 1).expire(key, KEEP_SECONDS).execute()
    except Exception:  # the grade is stored; a waiter will read it from the database
        redis_mark_down()
        logger.info("could not announce submission %s on Redis", submission_id, exc_info=True)


def grade_wait(*, submission_id: int, timeout: float, fallback_interval: float) -> None:
    """Return when the submission is announced, ``timeout`` (at most BLOCK_SECONDS) passes,
    or, without Redis, after a short sleep: callers re-read the database and loop."""
    client = _client()
    if client is not None:
        try:
            block = min(max(timeout, 0.01), BLOCK_SECONDS)
            client.blpop([KEY.format(submission_id=submission_id)], timeout=block)
            return
        except Exception:
            redis_mark_down()
            logger.info("Redis unavailable while waiting for submission %s", submission_id, exc_info=True)
    time.sleep(min(timeout, fallback_interval))
