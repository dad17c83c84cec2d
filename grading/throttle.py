"""A token bucket per key, kept in the cache: a burst, then a steady rate.

Why not a library: django-ratelimit and ``limits`` offer fixed and sliding windows only.
A window either lets a burst through at every boundary (fixed) or, after a burst, refuses
everything until the whole window has passed (sliding); a student who sent ten quick
answers should instead get one more each second. That is a token bucket, here in its
one-number form, GCRA: the cache keeps the "theoretical arrival time" (TAT) of the next
request; a request is let through when TAT minus the burst allowance is not in the future,
and pushes TAT one interval on.

The read-modify-write must be atomic across web processes: on Redis it is one Lua script
(run atomically by the server, timed by the server's clock, so hosts with skewed clocks
agree); on the per-process local-memory cache a lock is enough, because that cache is not
shared between processes anyway.

When Redis cannot be reached the bucket is kept in this process instead (the safe default:
each web process then limits on its own, so the limit holds per process and nothing is
let through unlimited, and no request fails because of it). The answer API's throttle and
the submission limit both use ``token_take``.
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# KEYS[1]: the bucket; ARGV[1]: seconds per token; ARGV[2]: burst. Returns the wait in
# seconds as a string: "0" when the request was let through (and counted).
_GCRA_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat + interval - burst * interval - now
if wait > 0 then return tostring(wait) end
local new_tat = tat + interval
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil((new_tat - now) * 1000) + 1000)
return '0'
"""

_local_lock = threading.Lock()
# The buckets of this process while Redis is unreachable: name -> theoretical arrival time.
_fallback_buckets: dict[str, float] = {}
FALLBACK_MAX_BUCKETS = 50_000
REDIS_FAILURES = (RedisError, OSError)


def token_take(*, key: str, burst: int, per_second: float, clock=time.time) -> float:
    """Take one token from ``key``'s bucket: 0.0 if granted, else seconds until one is.

    A refused request takes nothing, so retrying after the wait succeeds. ``burst`` < 1
    or ``per_second`` <= 0 switches the limit off.
    """
    if burst < 1 or per_second <= 0:
        return 0.0
    interval = 1.0 / per_second
    cache = caches["default"]
    name = f"token-bucket:{key}"
    redis = _redis_client(cache, name)
    if redis is not None:
        client, full_key = redis
        try:
            return float(client.eval(_GCRA_SCRIPT, 1, full_key, repr(interval), burst))
        except REDIS_FAILURES as error:
            logger.warning("rate limit %s kept in this process: Redis unreachable (%s)", key, error)
            return _take_in_process(name=name, interval=interval, burst=burst, now=clock())
    with _local_lock:
        now = clock()
        tat = max(float(cache.get(name) or 0.0), now)
        wait = tat + interval - burst * interval - now
        if wait > 0:
            return wait
        new_tat = tat + interval
        cache.set(name, new_tat, timeout=(new_tat - now) + 1)
        return 0.0


def _redis_client(cache, name: str):
    """(redis-py client, full key) when the cache is Redis (Django's or django-redis), else None."""
    if isinstance(cache, RedisCache):
        full_key = cache.make_and_validate_key(name)
        # Django's RedisCache keeps its redis-py client pool here; reusing it avoids a second.
        return cache._cache.get_client(full_key, write=True), full_key
    if type(cache).__module__.startswith("django_redis"):
        return cache.client.get_client(write=True), str(cache.make_key(name))
    return None


def _take_in_process(*, name: str, interval: float, burst: int, now: float) -> float:
    with _local_lock:
        if len(_fallback_buckets) > FALLBACK_MAX_BUCKETS:
            for stale in [k for k, tat in _fallback_buckets.items() if tat < now]:
                del _fallback_buckets[stale]
        tat = max(_fallback_buckets.get(name, 0.0), now)
        wait = tat + interval - burst * interval - now
        if wait > 0:
            return wait
        _fallback_buckets[name] = tat + interval
        return 0.0
