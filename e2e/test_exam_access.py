"""Browser test of an exam's access controls and pools: the access-code page (by
keyboard, a wrong code's message, then in), the student's one item of a pool, and a
second browser session taking the attempt over so the first is refused. The code page
and the refusal page fit a phone and pass axe-core."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from courses.models import PoolDraw, SessionPolicy
from e2e.a11y import check_page
from e2e.conftest import guarded_context, log_in

pytestmark = pytest.mark.browser


def test_access_code_pool_and_a_second_session_taking_over(page, chromium, live_server, watch, demo_site, artifacts):
    assignment = demo_site.assignment
    pooled = list(assignment.items.order_by("position", "pk")[:2])
    for item in pooled:
        item.pool, item.points = "first", 1.0
        item.save()
    assignment.access_code = "owl-42"
    assignment.allowed_networks = "127.0.0.0/8\n::1/128"
    assignment.session_policy = SessionPolicy.SECOND_TAKES_OVER
    assignment.save()
    overview = reverse("assignment", args=[assignment.course.slug, assignment.slug])

    log_in(page, "student1")
    page.goto(overview)
    page.wait_for_url(re.compile(r"/access-code/"))
    seen = check_page(page, watch, artifacts=artifacts, name="exam-access-code")
    assert seen["overflow"]["scrollWidth"] <= seen["overflow"]["innerWidth"]
    assert seen["axe"] == {"390": [], "1280": []} and seen["headings"] == []

    code = page.get_by_label("Access code")
    code.focus()
    page.keyboard.type("owl-41")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    assert page.get_by_role("alert").inner_text() == "That is not this exam's access code."
    page.get_by_label("Access code").fill("owl-42")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(overview) + "$"))

    # One of the two pool items is listed, and it is the one stored for the student.
    drawn = PoolDraw.objects.get(student__username="student1").item
    links = page.locator("table.items tbody a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert reverse("exercise", args=[drawn.pk]) in hrefs
    other = next(item for item in pooled if item != drawn)
    assert reverse("exercise", args=[other.pk]) not in hrefs

    # A second browser logs in as the same student: it takes the attempt over.
    context, second = guarded_context(chromium, live_server, watch)
    try:
        log_in(second, "student1")
        second.goto(overview)
        second.wait_for_url(re.compile(r"/access-code/"))
        second.get_by_label("Access code").fill("owl-42")
        second.keyboard.press("Enter")
        second.wait_for_url(re.compile(re.escape(overview) + "$"))
    finally:
        context.close()
    watch.expect_console_error("403")
    page.goto(overview)
    assert "which has taken it over" in page.get_by_role("alert").inner_text()
    seen = check_page(page, watch, artifacts=artifacts, name="exam-access-refused")
    assert seen["overflow"]["scrollWidth"] <= seen["overflow"]["innerWidth"]
    assert seen["axe"] == {"390": [], "1280": []} and seen["headings"] == []
