"""The guards themselves: an outside request is stopped and recorded, a console error is seen."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_request_to_another_host_is_aborted_and_recorded(page, watch, transactional_db):
    page.goto("/explore/")
    outcome = page.evaluate(
        "() => fetch('https://cdn.example.org/katex.min.css').then(() => 'loaded', () => 'blocked')"
    )
    assert outcome == "blocked"
    assert watch.blocked_requests == ["https://cdn.example.org/katex.min.css"]
    watch.expect_console_error(r"ERR_FAILED|Failed to fetch|cdn\.example\.org")
    watch.blocked_requests.clear()  # seen on purpose; the fixture's own check stays armed


def test_console_errors_are_collected(page, watch, transactional_db):
    page.goto("/explore/")
    page.evaluate("() => console.error('boom from the page')")
    assert "console: boom from the page" in watch.console_errors
    watch.expect_console_error(r"boom from the page")
