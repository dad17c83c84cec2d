"""Helpers the tests of every app share (imported by tests only)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

from django.utils import timezone

# The moment the shared ``clock`` fixture starts at: a Monday morning, in UTC.
CLOCK_START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt_timezone.utc)


class FrozenClock:
    """timezone.now() (also behind auto_now_add) returns ``now`` until moved on."""

    def __init__(self, monkeypatch, now: datetime):
        self.now = now
        monkeypatch.setattr(timezone, "now", lambda: self.now)

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)
