"""Every student page at 390 × 844 and 1280 × 800: no sideways scroll on a phone,
screenshots into test-artifacts/390/ and test-artifacts/1280/, and axe-core finds no
serious or critical violation. Teaching tables scroll inside their own box with the
first column kept in view."""

from __future__ import annotations

import pytest
from django.urls import reverse

from e2e.a11y import PHONE, check_page, horizontal_overflow, settle
from e2e.conftest import log_in
from e2e.test_student_journey import WORKED_EXAMPLE, fill_grid, item_for, submit_and_wait_for_grade

pytestmark = pytest.mark.browser


def assert_page_ok(seen: dict) -> None:
    overflow = seen["overflow"]
    assert overflow["scrollWidth"] <= overflow["innerWidth"], (seen["name"], overflow)
    assert seen["axe"] == {"390": [], "1280": []}, seen["name"]
    assert seen["headings"] == [], seen["name"]


def student_urls(demo_site) -> list[tuple[str, str]]:
    assignment = demo_site.assignment
    urls = [
        ("dashboard", reverse("dashboard")),
        ("assignment", reverse("assignment", args=[assignment.course.slug, assignment.slug])),
    ]
    for item in assignment.items.select_related("exercise_version__exercise").order_by("position", "pk"):
        urls.append((f"exercise-{item.exercise_version.exercise.slug}", reverse("exercise", args=[item.pk])))
    urls += [
        ("explore", reverse("explorations:index")),
        ("explore-scaling", reverse("explorations:scaling")),
        ("explore-variance", reverse("explorations:variance")),
    ]
    return urls


def test_login_page_fits_a_phone_and_passes_axe(page, watch, demo_site, artifacts):
    page.goto(reverse("login"))
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="login"))


def test_every_student_page_fits_a_phone_and_passes_axe(student_page, watch, demo_site, artifacts):
    page = student_page
    # A graded wrong attempt first, so the exercise page also shows a result and a heatmap.
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    fill_grid(page, "weights", [0.25, 0.25, 0.25, 0.25])
    submit_and_wait_for_grade(page, "weights", attempt=1)
    problems = []
    for name, url in student_urls(demo_site):
        page.goto(url)
        seen = check_page(page, watch, artifacts=artifacts, name=name)
        overflow = seen["overflow"]
        if overflow["scrollWidth"] > overflow["innerWidth"]:
            problems.append((name, "scrolls sideways", overflow))
        for label, violations in seen["axe"].items():
            if violations:
                problems.append((name, label, violations))
        if seen["headings"]:
            problems.append((name, "headings", seen["headings"]))
    page.goto(reverse("exercise", args=[item.pk]))
    page.locator("form.practice-actions button[type=submit]").first.click()
    page.wait_for_url("**/practice/**")
    seen = check_page(page, watch, artifacts=artifacts, name="practice")
    if seen["overflow"]["scrollWidth"] > seen["overflow"]["innerWidth"] or any(seen["axe"].values()) or seen["headings"]:
        problems.append(seen)
    assert problems == [], "\n".join(repr(problem) for problem in problems)


def test_teaching_tables_scroll_in_their_box_with_a_sticky_first_column(page, watch, demo_site, artifacts):
    log_in(page, "instructor")
    course, assignment = demo_site.course.slug, demo_site.assignment.slug
    pages = [
        ("teach-gradebook", reverse("instructor:gradebook", args=[course, assignment])),
        ("teach-assignment", reverse("instructor:assignment", args=[course, assignment])),
        ("teach-analytics", reverse("instructor:analytics", args=[course, assignment])),
        ("teach-course", reverse("instructor:course", args=[course])),
        ("teach-skills", reverse("mastery:course_grid", args=[course])),
    ]
    for name, url in pages:
        page.goto(url)
        check_page(page, watch, artifacts=artifacts, name=name)
        page.set_viewport_size(PHONE)
        settle(page)
        overflow = horizontal_overflow(page)
        assert overflow["scrollWidth"] <= overflow["innerWidth"], (name, overflow)
    page.goto(pages[0][1])
    page.set_viewport_size(PHONE)
    box = page.locator(".aq-table-scroll").first
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # the table scrolls, not the page
    first_cell = box.locator("tbody tr th, tbody tr td").first
    assert first_cell.evaluate("el => getComputedStyle(el).position") == "sticky"
    left_before = first_cell.bounding_box()["x"]
    box.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    assert first_cell.bounding_box()["x"] == pytest.approx(left_before, abs=1)
