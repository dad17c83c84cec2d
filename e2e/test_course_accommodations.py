"""Browser test of a course-wide accommodation: the instructor gives student2 50 % extra
time once for the course, on its own page, with the keyboard; the 10-minute exam's start
page then tells student2 their own limit (15 minutes) before they press Start, and
student3 the exam's 10. An accommodation on the exam itself then overrides the
course-wide factor there."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from e2e.a11y import check_page
from e2e.conftest import guarded_context, log_in
from e2e.test_layout_and_accessibility import assert_page_ok

pytestmark = pytest.mark.browser


def test_a_course_wide_factor_reaches_the_start_page(page, chromium, live_server, watch, demo_site, artifacts):
    from exams.models import Accommodation, CourseAccommodation

    course = demo_site.course
    course.time_zone = "Europe/Berlin"
    course.save()
    exam = demo_site.assignment
    exam.kind, exam.time_limit_minutes = "exam", 10
    exam.save()
    log_in(page, "instructor")

    page.goto(reverse("courses:people", args=[course.slug]))
    page.get_by_role("link", name="Course-wide accommodations").click()
    page.get_by_role("link", name="Add a course-wide accommodation").click()
    page.get_by_role("combobox", name=re.compile(r"^Student:?$")).select_option(label="student2")
    factor = page.get_by_label("Time factor")
    factor.focus()
    page.keyboard.type("1.5")
    factor.press("Enter")  # submits the form from the keyboard
    page.wait_for_url(re.compile(r"/accommodations/$"))
    assert "student2: course-wide: time factor — → 1.5." in page.locator("[role=status]").inner_text()
    assert "time ×1.5" in page.locator("#course-accommodations").inner_text()
    assert re.search(r"\d\d:\d\d CET · student2 · set on the page by instructor", page.locator(
        "#course-accommodation-history").inner_text())
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="teach-course-accommodations"))
    stored = CourseAccommodation.objects.get()
    assert (stored.course, stored.student.username, stored.time_factor) == (course, "student2", 1.5)

    overview = reverse("assignment", args=[course.slug, exam.slug])
    pages = {}
    for username in ("student2", "student3"):
        _, student = guarded_context(chromium, live_server, watch)
        log_in(student, username)
        student.goto(overview)
        pages[username] = student
    assert pages["student2"].locator("#start-limit").inner_text() == "15 minutes"
    assert pages["student3"].locator("#start-limit").inner_text() == "10 minutes"

    # The exam's own accommodation overrides the course-wide factor on this exam.
    Accommodation.objects.create(assignment=exam, student=stored.student, time_factor=2.0)
    pages["student2"].reload()
    assert pages["student2"].locator("#start-limit").inner_text() == "20 minutes"
    page.goto(reverse("proctor:accommodations", args=[course.slug, exam.slug]))
    assert "this assignment overrides the course-wide time factor" in page.locator("#accommodations").inner_text()
    assert watch.unexpected_console_errors() == [] and watch.csp_violations == []
