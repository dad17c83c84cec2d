"""One Redis client per URL, socket timeout and process, for the few places that talk to
Redis directly rather than through the cache or Celery (grade announcements, the queue of
pending follow-ups).

A client that failed is not offered again for ``RETRY_SECONDS``: a dead Redis then costs
one connect timeout per few seconds in each process, not one per call.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings

RETRY_SECONDS = 2.0
_clients: dict[tuple[str, float], object] = {}
_down_until: dict[str, float] = {}
_lock = threading.Lock()


def redis_client(*, socket_timeout: float):
    """A client for settings.REDIS_URL, or None without Redis or shortly after it failed."""
    url = settings.REDIS_URL
    if not url or time.monotonic() < _down_until.get(url, 0.0):
        return None
    key = (url, socket_timeout)
    with _lock:
        client = _clients.get(key)
        if client is None:
            import redis

            client = redis.Redis.from_url(
                url, socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT, socket_timeout=socket_timeout
            )
            _clients[key] = client
        return client


def redis_mark_down() -> None:
    """Redis failed in this process: callers go without it for a little while."""
    _down_until[settings.REDIS_URL] = time.monotonic() + RETRY_SECONDS
