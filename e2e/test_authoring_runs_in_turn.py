"""Browser test: the pages do not collide with their own runs in the sandbox (one at a time per
person). Save pressed while the editor's live check is on its way waits for that check and is
then sent once, and no further check starts while the page is being saved; previews opened at
once in the exercise picker are fetched one after another. No request is refused (429)."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse

from e2e.conftest import log_in

pytestmark = pytest.mark.browser


class Requests:
    """The requests the page sends to paths ending with one of ``suffixes``, and their replies."""

    def __init__(self, page, *suffixes: str):
        self.sent, self.statuses = [], []
        def mine(url: str) -> bool:
            return url.split("?")[0].endswith(suffixes)
        page.on("request", lambda request: mine(request.url) and self.sent.append((request.method, request.url)))
        page.on("response", lambda response: mine(response.url) and self.statuses.append(response.status))


def wait_until(page, condition, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(50)  # Playwright delivers the page's events meanwhile


def test_save_waits_for_the_check_on_its_way_and_starts_no_other(page, transactional_db):
    from authoring import services
    from authoring.tests.factories import PASSWORD, people_create, product_yaml
    from exercises.models import ExerciseVersion

    people = people_create()
    services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    edit = reverse("authoring:edit", args=["attn", "product", 1])
    check = reverse("authoring:check", args=["attn"])
    log_in(page, "ines", PASSWORD)
    page.goto(edit)
    held = []
    page.route(re.compile(re.escape(check) + "$"), lambda route: held.append(route))  # the check waits here until let go
    traffic = Requests(page, edit, check)

    page.locator("#check-button").click()
    wait_until(page, lambda: held)
    typed = product_yaml(points=3) + "# typed, then saved at once\n"
    page.locator("#id_source").fill(typed)  # would set off another check after 600 ms
    page.locator("#save-button").click()
    page.wait_for_timeout(1_000)
    assert traffic.sent == [("POST", page.url.split("/author")[0] + check)]  # Save waits for the check
    assert len(held) == 1  # and the typing set off no second check

    held[0].continue_()
    page.wait_for_url(re.compile(r"/e/product/v1/$"), timeout=15_000)
    page.wait_for_timeout(800)  # a check set off by the typing would have gone by now
    assert [method for method, _ in traffic.sent] == ["POST", "POST"]  # the check, then Save once
    assert 429 not in traffic.statuses and traffic.statuses[:2] == [200, 302]
    assert ExerciseVersion.objects.get().source == typed


def test_previews_opened_at_once_are_fetched_in_turn(page, transactional_db, settings):
    from django.core.cache import cache

    from courses.models import Assignment
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    site = demo_course_ensure()
    Assignment.objects.create(course=site.course, slug="week-2", title="Week 2")
    cache.clear()  # no preview kept from before: each one runs in the sandbox
    log_in(page, "instructor")
    page.goto("/teach/attention-101/a/week-2/items/choose/")
    traffic = Requests(page, *(f"/items/preview/{pk}/" for pk in page.eval_on_selector_all(
        ".aq-picker-row input[name=version]", "boxes => boxes.slice(0, 4).map(box => box.value)")))

    page.eval_on_selector_all(".aq-picker-preview", "rows => rows.slice(0, 4).forEach(row => { row.open = true; })")
    bodies = page.locator(".aq-picker-preview-body")
    wait_until(page, lambda: bodies.count() == 4)
    assert traffic.statuses == [200, 200, 200, 200]  # none refused as "another run of yours"
    assert all(bodies.nth(i).inner_text().strip() for i in range(4))
