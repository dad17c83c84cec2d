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
"""

from __future__ import annotations

import threading
import time

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django_redis.cache import RedisCache as DjangoRedisCache

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
    if isinstance(cache, (RedisCache, DjangoRedisCache)):
        full_key = cache.make_and_validate_key(name)
        client = _redis_client(cache, full_key)
        return float(client.eval(_GCRA_SCRIPT, 1, full_key, repr(interval), burst))
    with _local_lock:
        now = clock()
        tat = max(float(cache.get(name) or 0.0), now)
        wait = tat + interval - burst * interval - now
        if wait > 0:
            return wait
        new_tat = tat + interval
        cache.set(name, new_tat, timeout=(new_tat - now) + 1)
        return 0.0


def _redis_client(cache, full_key: str):
    """The cache's own redis-py client (its connection pool and timeouts), not a second one."""
    if isinstance(cache, DjangoRedisCache):
        return cache.client.get_client(write=True)
    return cache._cache.get_client(full_key, write=True)
