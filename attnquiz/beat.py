"""Celery beat that sends periodic tasks only while it holds the one beat lock.

Two beats (a second node started by mistake, the overlap of a rolling restart) would send
every periodic task twice. The lock is a PostgreSQL session advisory lock, held on a
connection of its own for as long as this beat runs: a second beat finds it taken and
stays idle, retrying every few seconds, and takes over when the first one's connection
ends (its process exited or was killed). Why not celery-redbeat: it keeps the schedule
and its lock in Redis, which here is a cache that may restart empty. SQLite (the embedded
single-process set-up) has no such lock; a beat there always sends.
"""

from __future__ import annotations

import logging

from celery.beat import PersistentScheduler

logger = logging.getLogger(__name__)

LOCK_KEY = 0x6174746E_62656174  # "attnbeat"
LOCK_RETRY_SECONDS = 5.0


class SingleBeatScheduler(PersistentScheduler):
    def __init__(self, *args, **kwargs):
        self._lock_connection = None
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs):
        if not self._holds_lock():
            return min(self.max_interval, LOCK_RETRY_SECONDS)
        return super().tick(*args, **kwargs)

    def close(self):
        self._release_lock()
        super().close()

    def _holds_lock(self) -> bool:
        import django
        from django.apps import apps

        if not apps.ready:
            django.setup()
        from django.db import DatabaseError, connections

        if connections["default"].vendor != "postgresql":
            return True
        try:
            if self._lock_connection is not None:
                with self._lock_connection.cursor() as cursor:
                    cursor.execute("SELECT 1")  # still the same session, so still the lock
                return True
            connection = connections.create_connection("default")
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY])
                acquired = cursor.fetchone()[0]
            if not acquired:
                connection.close()
                return False
            self._lock_connection = connection
            logger.warning("beat: holding the beat lock; sending periodic tasks")
            return True
        except DatabaseError:
            logger.warning("beat: the database is unreachable; not sending", exc_info=True)
            self._release_lock()
            return False

    def _release_lock(self) -> None:
        connection, self._lock_connection = self._lock_connection, None
        if connection is not None:
            try:
                connection.close()  # the session ends, and with it the lock
            except Exception:
                pass
