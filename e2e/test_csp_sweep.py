"""Every page a person can reach by following links, as a student and as an instructor,
loads under the enforced Content-Security-Policy without a single violation (the page
fixture fails the test on any, and on any console error)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from .conftest import log_in

pytestmark = pytest.mark.browser

MAX_PAGES = 40
PER_SHAPE = 3  # pages of one URL shape (e.g. /author/<course>/e/<slug>/v<n>/) are alike
SEEDS = ["/", "/explore/", "/api/docs/", "/accounts/profile/"]
# Not pages: sign-out, downloads and machine-readable twins; the admin has its own tests.
SKIP_PREFIXES = ("/logout/", "/admin/", "/static/", "/api/schema/", "/api/v1/")
SKIP_SUFFIXES = (".csv", ".json", ".yaml", "/export/")


def same_site_links(page, base: str) -> list[str]:
    hrefs = page.eval_on_selector_all(
        "a[href]:not([download])", "links => links.map((link) => link.href)"
    )
    paths = []
    for href in hrefs:
        parsed = urlparse(href)
        if f"{parsed.scheme}://{parsed.netloc}" != base:
            continue
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        if path.startswith(SKIP_PREFIXES) or parsed.path.endswith(SKIP_SUFFIXES):
            continue
        paths.append(path)
    return paths


def shape(path: str) -> tuple:
    segments = [segment for segment in urlparse(path).path.split("/") if segment]
    return (*segments[:2], len(segments))


def sweep(page, live_server) -> list[str]:
    base = live_server.url
    queue, seen, visited, shapes = list(SEEDS), set(SEEDS), [], {}
    while queue and len(visited) < MAX_PAGES:
        path = queue.pop(0)
        shapes[shape(path)] = shapes.get(shape(path), 0) + 1
        if shapes[shape(path)] > PER_SHAPE:
            continue
        response = page.goto(path)
        assert response is not None and response.status == 200, (path, response and response.status)
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)  # let deferred scripts, KaTeX and htmx run
        visited.append(path)
        for link in same_site_links(page, base):
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return visited


@pytest.fixture
def demo_pages(transactional_db, settings):
    """The demo course and bank; nothing is answered, so no grading worker is needed."""
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


@pytest.mark.parametrize("username", ["student1", "instructor"])
def test_every_linked_page_loads_without_a_csp_violation(page, watch, live_server, demo_pages, username):
    log_in(page, username)
    visited = sweep(page, live_server)
    assert watch.csp_violations == []
    assert len(visited) >= 8, visited
