"""Sessions in the database, with a copy in the cache that is never trusted for long.

Django's ``cached_db`` engine reads a session from the cache and falls back to the
database; with the cache failing open (settings.CACHES) a Redis outage is a cache miss,
not an error. What the outage can leave behind is a stale copy: a session changed or
deleted while Redis was unreachable keeps its old copy in Redis, and ``cached_db`` would
serve it for the session's whole age (two weeks). Here a cached copy lives at most
SESSION_CACHE_SECONDS, so after an outage every session reads the database again within
that bound, at the cost of one primary-key read per session per bound.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.backends import cached_db


class SessionStore(cached_db.SessionStore):
    def _cache_seconds(self, expiry=None) -> int:
        age = self.get_expiry_age() if expiry is None else self.get_expiry_age(expiry=expiry)
        return max(0, min(age, settings.SESSION_CACHE_SECONDS))

    def load(self):
        data = self._cache.get(self.cache_key)
        if data is not None:
            return data
        stored = self._get_session_from_db()
        if not stored:
            return {}
        data = self.decode(stored.session_data)
        self._cache.set(self.cache_key, data, self._cache_seconds(expiry=stored.expire_date))
        return data

    def save(self, must_create=False):
        super(cached_db.SessionStore, self).save(must_create)  # the database row
        self._cache.set(self.cache_key, self._session, self._cache_seconds())
