"""Fixtures shared by every app's tests."""

import pytest

from attnquiz.testing import CLOCK_START, FrozenClock


@pytest.fixture
def demo(db):
    """The bank loaded and the demo course with its accounts, as `make run` sets it up."""
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    bank_load()
    return demo_course_ensure()


@pytest.fixture
def clock(monkeypatch):
    """django.utils.timezone.now frozen at CLOCK_START, moved on by hand (``clock.advance``)."""
    return FrozenClock(monkeypatch, CLOCK_START)


@pytest.fixture(autouse=True)
def _own_pending_followups(settings):
    """Each test has its own list of pending follow-ups (grading.followup_batch) in the
    shared Redis: ids one test left there, or the drain it scheduled, never reach another."""
    import uuid

    settings.FOLLOWUP_PENDING_KEY = f"attnquiz:test-followups:{uuid.uuid4().hex}"
    yield
    if settings.REDIS_URL:
        from attnquiz.redis_clients import redis_client
        from grading.followup_batch import followups_pending_keys

        client = redis_client(socket_timeout=0.5)
        try:
            if client is not None:
                client.delete(*followups_pending_keys())
        except Exception:  # a test that stopped Redis on purpose
            pass
