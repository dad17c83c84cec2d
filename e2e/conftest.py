"""Browser tests: a live Django server, Debian's Chromium driven by Playwright, and guards.

Every page a test opens is watched:
  - any request to a host other than 127.0.0.1 / localhost is aborted and recorded,
    and the test fails if there was one (nothing may leave the machine: no CDN, no fonts);
  - any console error or uncaught page error fails the test;
  - any Content-Security-Policy violation fails the test (the policy is enforced, so a
    violation is a script, style or request the page needed and did not get).

Grading runs through a real Celery worker and Redis when the test database is
PostgreSQL (the fixtures of grading/tests/conftest.py, as in `make test`); on SQLite a
worker cannot share the in-memory test database, so grading runs in-process
(GRADING_MODE=inline) and the same tests still drive the same pages.

Chromium is the Debian package (`scripts/install_browser.sh`); Playwright never
downloads a browser of its own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.db import connection

# Fixtures of the real grading pipeline, shared with the integration tests.
from grading.tests.conftest import broker, redis_server, start_worker  # noqa: F401

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # Without these Chromium phones home (component updates, sync, safe browsing).
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
DEMO_PASSWORD = "attention-demo"


def pytest_collection_modifyitems(items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def allow_orm_beside_playwright():
    """Playwright's sync API keeps an asyncio loop marked running in this thread, which
    makes Django refuse ORM calls made by the test itself; the live server runs in its
    own thread and is unaffected."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (run scripts/install_browser.sh)")
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    yield browser
    browser.close()
    playwright.stop()


@dataclass
class PageWatch:
    """What the guards saw while a test ran."""

    blocked_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    expected_console_errors: list[re.Pattern] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)

    def expect_console_error(self, pattern: str) -> None:
        """A test that provokes an error on purpose names it (e.g. Chromium logging a 422)."""
        self.expected_console_errors.append(re.compile(pattern))

    def unexpected_console_errors(self) -> list[str]:
        return [
            error
            for error in self.console_errors
            if not any(pattern.search(error) for pattern in self.expected_console_errors)
        ]


def is_local(url: str) -> bool:
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about"):
        return True
    return parsed.hostname in LOCAL_HOSTS or f"[{parsed.hostname}]" in LOCAL_HOSTS


@pytest.fixture
def watch():
    return PageWatch()


# Runs before any page script (init scripts are exempt from the page's CSP) and reports
# every violation through console.error with a marker the fixture picks out.
CSP_VIOLATION_MARKER = "attnquiz-csp-violation:"
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", function (event) {
  console.error(%s + JSON.stringify({
    directive: event.effectiveDirective, blocked: event.blockedURI,
    source: event.sourceFile, line: event.lineNumber, sample: event.sample,
    page: document.location.pathname,
  }));
}, true);
""" % repr(CSP_VIOLATION_MARKER)


def record_console(watch: PageWatch, message) -> None:
    text = message.text
    if CSP_VIOLATION_MARKER in text:
        watch.csp_violations.append(text.split(CSP_VIOLATION_MARKER, 1)[1])
    elif text.startswith("Refused to ") or "Content Security Policy" in text:
        watch.csp_violations.append(text)
    elif message.type == "error":
        watch.console_errors.append(f"console: {text}")


def guarded_context(chromium, live_server, watch, **options):
    """A browser context on the live server whose pages report to ``watch``: (context, page).
    ``options`` go to the context (``java_script_enabled=False``, another ``viewport``)."""
    context = chromium.new_context(base_url=live_server.url, **({"viewport": {"width": 1100, "height": 900}} | options))

    def guard(route):
        url = route.request.url
        watch.requests.append(url)
        if is_local(url):
            route.continue_()
        else:
            watch.blocked_requests.append(url)
            route.abort()

    context.route("**/*", guard)
    context.add_init_script(CSP_LISTENER)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("console", lambda message: record_console(watch, message))
    page.on("pageerror", lambda error: watch.console_errors.append(f"page error: {error}"))
    return context, page


@pytest.fixture
def page(chromium, live_server, watch):
    """A fresh browser context on the live server, with the network and console guards."""
    context, page = guarded_context(chromium, live_server, watch)
    yield page
    context.close()
    assert watch.blocked_requests == [], "requests tried to leave 127.0.0.1"
    assert watch.csp_violations == [], "the Content-Security-Policy blocked something"
    assert watch.unexpected_console_errors() == [], "the browser console reported errors"


@pytest.fixture
def grading_pipeline(request, settings):
    """'celery' with a real worker on PostgreSQL, else 'inline' (same pages, same code)."""
    if connection.vendor == "postgresql":
        start = request.getfixturevalue("start_worker")
        start()
        return "celery"
    settings.GRADING_MODE = "inline"
    return "inline"


@pytest.fixture
def demo_site(transactional_db, grading_pipeline):
    """Bank, demo course and accounts, as `make run` sets them up."""
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    bank_load()
    return demo_course_ensure()


@pytest.fixture
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def log_in(page, username: str, password: str = DEMO_PASSWORD) -> None:
    page.goto("/login/")
    page.get_by_label(re.compile("username", re.I)).fill(username)
    page.get_by_label(re.compile("password", re.I)).fill(password)
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.wait_for_url(re.compile(r"/(#course-[\w-]+)?$"))  # a student of one course: its section


@pytest.fixture
def student_page(page, demo_site):
    """The page, logged in as the first demo student."""
    log_in(page, "student1")
    return page
