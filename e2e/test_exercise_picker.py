"""The assignment editor's exercise picker in the browser: search the library as you type,
preview an exercise, tick two, add both with one click (in the order ticked), and see them
on the assignment. The picker fits a phone and passes axe."""

from __future__ import annotations

import re

import pytest

from e2e.a11y import DESKTOP, PHONE, axe_violations, horizontal_overflow, settle
from e2e.conftest import log_in

pytestmark = pytest.mark.browser

COURSE = "attention-101"
FIRST, SECOND = "multi-head-split-shapes", "multi-head-dimensions"


@pytest.fixture
def empty_assignment(transactional_db, settings):
    from courses.models import Assignment, AssignmentItem
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    site = demo_course_ensure()
    week2 = Assignment.objects.create(course=site.course, slug="week-2", title="Week 2")
    # One exercise is in already: the picker marks it and cannot add it twice.
    AssignmentItem.objects.create(
        assignment=week2, exercise_version=site.assignment.items.get(
            exercise_version__exercise__slug="multi-head-scale-per-head").exercise_version, position=0,
    )
    return week2


def visible_slugs(page) -> list[str]:
    return page.eval_on_selector_all(
        ".aq-picker-row:not([hidden])", "rows => rows.map(row => row.dataset.slug)"
    )


def test_search_tick_two_add_both_and_see_them_on_the_assignment(page, watch, empty_assignment, live_server):
    from instructor.selectors_picker import exercise_picker_rows

    log_in(page, "instructor")
    page.goto(f"/teach/{COURSE}/a/week-2/")
    page.get_by_role("link", name="Add exercises…").click()
    page.wait_for_url(re.compile(r"/items/choose/$"))
    everything = [row.slug for row in exercise_picker_rows(assignment=empty_assignment)]
    assert visible_slugs(page) == everything and len(everything) == 41

    # Typing filters at once, exactly as the server's ?q= search does.
    page.fill("#picker-q", "multi-head")
    expected = [row.slug for row in exercise_picker_rows(assignment=empty_assignment, query="multi-head")]
    assert FIRST in expected and SECOND in expected and "multi-head-scale-per-head" in expected
    assert visible_slugs(page) == expected
    assert page.locator("#picker-count").inner_text() == f"{len(expected)} exercises fit the search."
    assert page.url.endswith("/items/choose/?q=multi-head")
    present = page.locator(".aq-picker-row[data-slug='multi-head-scale-per-head']")
    assert "already in this assignment" in present.inner_text()
    assert present.locator("input[type=checkbox]").is_disabled()

    # The preview of one exercise: its prompt for a sample variant, typeset.
    row = page.locator(f".aq-picker-row[data-slug='{FIRST}']")
    row.locator("summary").click()
    body = row.locator(".aq-picker-preview-body")
    body.wait_for()
    assert "sample variant (seed 0)" in body.inner_text()
    page.wait_for_function("() => !document.querySelector('[data-math]:not([data-math-rendered])')")
    assert body.locator(".katex").count() > 0

    # The page lists SECOND ("Per-head …") above FIRST ("Splitting …"); ticking FIRST first
    # makes it the first added.
    assert expected.index(SECOND) < expected.index(FIRST)
    page.locator(f"#pick-{row_version(FIRST)}").check()
    assert page.locator("#picker-submit").inner_text() == "Add 1 exercise"
    page.locator(f"#pick-{row_version(SECOND)}").check()
    assert page.locator("#picker-submit").inner_text() == "Add 2 exercises"
    assert page.locator(f".aq-picker-row[data-slug='{FIRST}'] .aq-picker-order").inner_text() == "1"
    chosen = page.locator("#picker-chosen").inner_text()
    assert chosen.startswith("Chosen, in this order: Splitting") and chosen.index("Splitting") < chosen.index("Per-head")

    # A narrower search hides a ticked exercise; it stays ticked and is still added.
    page.fill("#picker-q", "splitting")
    assert visible_slugs(page) == [FIRST]
    assert page.locator("#picker-count").inner_text() == "1 exercise fits the search."
    # The skill filter, alone and with words, agrees with the server's.
    page.fill("#picker-q", "")
    page.select_option("#picker-skill", "projections")
    assert visible_slugs(page) == [
        row.slug for row in exercise_picker_rows(assignment=empty_assignment, skill="projections")]
    page.fill("#picker-q", "shapes")
    assert visible_slugs(page) == [
        row.slug for row in exercise_picker_rows(assignment=empty_assignment, query="shapes", skill="projections")]
    assert page.url.endswith("/items/choose/?q=shapes&skill=projections")
    # Where they come from: the demo course owns none, so "This course's" shows none, and
    # the bank's are all of them.
    page.select_option("#picker-source", "course")
    assert visible_slugs(page) == []
    assert page.locator("#picker-count").inner_text() == "0 exercises fit the search."
    assert page.url.endswith("/items/choose/?q=shapes&skill=projections&source=course")
    page.select_option("#picker-source", "bank")
    assert visible_slugs(page) == [
        row.slug for row in exercise_picker_rows(assignment=empty_assignment, query="shapes", skill="projections",
                                                 source="bank")]
    page.select_option("#picker-source", "")
    assert page.locator("#picker-submit").inner_text() == "Add 2 exercises"
    page.fill("#id_points", "2")
    page.locator("#picker-submit").click()
    page.wait_for_url(re.compile(r"/teach/attention-101/a/week-2/$"))
    assert page.locator(".messages").inner_text() == f"Added 2 exercises: {FIRST}, {SECOND}."
    rows = page.locator("#items tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).locator("td").nth(1).inner_text().splitlines()[-1] for i in range(3)] == [
        "multi-head-scale-per-head", FIRST, SECOND,
    ]
    assert [(i.exercise_version.exercise.slug, i.position, i.points)
            for i in empty_assignment.items.select_related("exercise_version__exercise").order_by("position")] == [
        ("multi-head-scale-per-head", 0, 1.0), (FIRST, 1, 2.0), (SECOND, 2, 2.0),
    ]


def row_version(slug: str) -> int:
    from instructor.selectors_picker import assignable_versions

    return assignable_versions().filter(exercise__slug=slug).order_by("-number").first().pk


def test_the_picker_and_its_preview_fit_a_phone_and_pass_axe(page, watch, empty_assignment, live_server, artifacts):
    log_in(page, "instructor")
    page.set_viewport_size(PHONE)
    problems = {}
    for index, url in enumerate((f"/teach/{COURSE}/a/week-2/items/choose/", f"/teach/{COURSE}/a/week-2/items/choose/?q=softmax",
                f"/teach/{COURSE}/a/week-2/items/preview/{row_version(FIRST)}/")):
        assert page.goto(url).status == 200, url
        for summary in page.locator(".aq-picker-preview summary").all()[:3]:
            summary.click()  # open a few previews: their typeset prompts must fit too
        settle(page)
        overflow = horizontal_overflow(page)
        if overflow["scrollWidth"] > overflow["innerWidth"]:
            problems[url] = overflow
        violations = axe_violations(page, watch)
        if violations:
            problems[url + " (axe)"] = violations
        page.screenshot(path=artifacts / f"picker-390-{index}.png")
    page.goto(f"/teach/{COURSE}/a/week-2/items/choose/")
    page.set_viewport_size(DESKTOP)
    settle(page)
    page.screenshot(path=artifacts / "picker-1280.png")
    assert axe_violations(page, watch) == []
    assert problems == {}, "\n".join(f"{url}: {found}" for url, found in problems.items())
