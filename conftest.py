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
