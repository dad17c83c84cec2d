"""Browser test of the accommodations pages and the proctor view: an instructor gives a
student 50 % extra time with the keyboard through the labelled form, checks a CSV in a
dry run, watches the proctor table update by itself when the student starts, and
extends the student's time; every page fits a phone and passes axe-core under the CSP."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from e2e.a11y import check_page
from e2e.conftest import log_in
from e2e.test_layout_and_accessibility import assert_page_ok

pytestmark = pytest.mark.browser


def test_accommodations_and_proctor_pages(page, watch, demo_site, artifacts):
    from django.contrib.auth import get_user_model

    from exams.models import Accommodation
    from exercises.services import variant_get_or_create_for_item

    assignment = demo_site.assignment
    assignment.time_limit_minutes = 20
    assignment.save()
    course, slug = assignment.course.slug, assignment.slug
    student = get_user_model().objects.get(username="student2")
    log_in(page, "instructor")

    page.goto(reverse("proctor:accommodations", args=[course, slug]))
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="teach-accommodations-empty"))
    page.get_by_role("link", name="Add an accommodation").click()
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="teach-accommodation-form"))
    page.get_by_role("combobox", name=re.compile(r"^Student:?$")).select_option(label="student2")
    factor = page.get_by_label("Time factor")
    factor.focus()
    page.keyboard.type("1.5")
    page.get_by_label("Note").fill("DSO 2026-7")
    page.get_by_label("Note").press("Enter")  # submits the form from the keyboard
    page.wait_for_url(re.compile(r"/accommodations/$"))
    assert "student2: time factor — → 1.5; note — → DSO 2026-7." in page.locator("[role=status]").inner_text()
    assert page.locator("#accommodations tbody tr").count() == 1
    assert "time ×1.5; note: DSO 2026-7" in page.locator("#accommodations").inner_text()
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="teach-accommodations"))
    accommodation = Accommodation.objects.get()
    assert (accommodation.student, accommodation.time_factor) == (student, 1.5)

    page.goto(reverse("proctor:accommodations_import", args=[course, slug]))
    watch.expect_console_error(r"status of 422")  # a report with a bad line answers 422
    page.get_by_label("…or paste the CSV").fill("username,extra_minutes\nstudent3,10\nnobody,5\n")
    page.get_by_role("button", name="Check (dry run)").click()
    report = page.locator("#import-report").inner_text()
    assert "extra minutes — → 10" in report and "'nobody' is not a student of this course" in report
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="teach-accommodations-import"))
    assert Accommodation.objects.count() == 1  # the dry run changed nothing

    page.goto(reverse("proctor:view", args=[course, slug]))
    row = page.locator('#proctor tr[data-student="student2"]')
    assert row.get_attribute("data-state") == "not started"
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="teach-proctor"))
    item = assignment.items.order_by("position", "pk").first()
    variant_get_or_create_for_item(item=item, student=student)  # student2 starts
    # The table updates itself (htmx polls the fragment every 5 s): no reload.
    page.wait_for_function(
        "() => document.querySelector('#proctor tr[data-student=\"student2\"]').dataset.state === 'in progress'",
        timeout=12_000,
    )
    seconds = int(page.locator('#proctor tr[data-student="student2"] [data-seconds-left]').get_attribute("data-seconds-left"))
    assert 29 * 60 < seconds <= 30 * 60  # 20 minutes × 1.5

    page.get_by_role("combobox", name=re.compile(r"^Student:?$")).select_option(label="student2")
    page.get_by_label("Minutes more").fill("5")
    page.get_by_role("button", name="Extend time").click()
    page.wait_for_url(re.compile(r"/proctor/$"))
    assert "student2 has 5 minutes more." in page.locator("[role=status]").inner_text()
    seconds = int(page.locator('#proctor tr[data-student="student2"] [data-seconds-left]').get_attribute("data-seconds-left"))
    assert 34 * 60 < seconds <= 35 * 60
