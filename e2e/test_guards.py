"""The guards themselves: an outside request is stopped and recorded, a console error is
seen, and a Content-Security-Policy violation is recorded."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser


def test_request_to_another_host_is_aborted_and_recorded(page, watch, transactional_db):
    # about:blank has no CSP, so the request reaches the network guard (on our pages the
    # CSP's connect-src refuses it before it is even sent).
    page.goto("about:blank")
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


def test_csp_violations_are_recorded_and_the_inline_script_does_not_run(
    page, watch, transactional_db
):
    page.goto("/explore/")
    ran = page.evaluate(
        """() => new Promise((resolve) => {
             const script = document.createElement("script");
             script.textContent = "window.inlineRan = true";
             document.body.appendChild(script);
             setTimeout(() => resolve(window.inlineRan === true), 200);
           })"""
    )
    assert ran is False
    reports = [json.loads(text) for text in watch.csp_violations if text.startswith("{")]
    assert [(report["directive"], report["blocked"], report["page"]) for report in reports] == [
        ("script-src-elem", "inline", "/explore/")
    ]
    watch.csp_violations.clear()  # provoked on purpose; the fixture's own check stays armed
