""""This submission is finished", told over Redis, so a waiting request need not poll the database.

When the pipeline stores an outcome it pushes onto a short-lived per-submission list;
a request waiting for that grade blocks on the list (BLPOP) and wakes the moment it
arrives. The database stays the source of truth: a waiter re-reads the submission after
every wake-up or slice, so a lost announcement only delays the answer by one slice, and
without Redis (``make run`` without it, or Redis down) waiting falls back to short sleeps.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

KEY = "attnquiz:graded:{submission_id}"
KEEP_SECONDS = 60
_clients: dict[str, object] = {}
_clients_lock = threading.Lock()


def _client():
    """A client for settings.REDIS_URL (one connection pool per URL and process), or None."""
    url = settings.REDIS_URL
    if not url:
        return None
    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            import redis

            client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=5)
            _clients[url] = client
        return client


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
        logger.info("could not announce submission %s on Redis", submission_id, exc_info=True)


def grade_wait(*, submission_id: int, timeout: float, fallback_interval: float) -> None:
    """Return when the submission is announced or ``timeout`` passes (sleeps without Redis)."""
    client = _client()
    if client is not None:
        try:
            client.blpop([KEY.format(submission_id=submission_id)], timeout=max(timeout, 0.01))
            return
        except Exception:
            logger.info("Redis unavailable while waiting for submission %s", submission_id, exc_info=True)
    time.sleep(min(timeout, fallback_interval))
