"""Django's PostgreSQL backend, without the health check on a connection proven moments ago.

With ``CONN_HEALTH_CHECKS`` Django sends ``SELECT 1`` before the first query of every
request and of every task (``close_old_connections`` runs around each), so that a
connection the server dropped while it sat idle is replaced instead of failing a request.
In the exam hour a connection is never idle: each one carries a request or a task every
few milliseconds, and that check was a round trip of every submit's eight and of the
grading worker's five, and 11 % of the submit's wall-clock samples under load (waiting
for PostgreSQL while both cores were busy).

Here the check is skipped when the connection ended a request or task without a
connection error less than ``DATABASE_PROVEN_SECONDS`` ago (1 s). A connection idle for
longer is checked as before. The cost: a server that drops connections (a restart, a
terminated backend) within that second fails the next request on each of them with the
database-outage 503 (``attnquiz.errors``), as a drop in the middle of a request always
did, and that connection is replaced when the request ends.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    proven_at: float | None = None  # when a request or task last ended on it without a connection error

    def close_if_unusable_or_obsolete(self):
        # health_check_done is set by the first cursor of a request or task: it was used.
        worked = self.connection is not None and self.health_check_done and not self.errors_occurred
        super().close_if_unusable_or_obsolete()
        if self.connection is None:
            self.proven_at = None
        elif worked:
            self.proven_at = time.monotonic()

    def close_if_health_check_failed(self):
        if self.connection is not None and not self.health_check_done and self._proven_recently():
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def _proven_recently(self) -> bool:
        return self.proven_at is not None and time.monotonic() - self.proven_at < settings.DATABASE_PROVEN_SECONDS
