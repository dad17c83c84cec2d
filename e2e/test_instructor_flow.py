"""An instructor writes an exercise in the browser, fixes a validation error, previews
two seeds, sends it to review; a second instructor approves it; it joins an assignment."""

from __future__ import annotations

import re

import pytest

from e2e.conftest import log_in

pytestmark = pytest.mark.browser

COURSE = "attention-101"
ASSIGNMENT = "scaled-dot-product"
SOURCE = """\
slug: scaled-score
title: One scaled score
version: 1
difficulty: easy
parameters:
  s: {generator: int_range, min: 2, max: 40}
  d: {generator: choice, from: [4, 16, 64]}
prompt: |
  A query and a key have dot product ${{s}}$ and $d_k = {{d}}$. What is the scaled score?
parts:
  - key: scaled
    type: numeric
    answer: "s / sqrt(WRONG)"
    decimals: 3
    solution: |
      Divide by $\\sqrt{d_k}$: ${{s}} / \\sqrt{ {{d}} } = {{s / sqrt(d) | 3}}$.
"""


@pytest.fixture
def teaching_site(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


def expected_reference(seed: int) -> str:
    from exercises import engine

    spec = engine.load_spec(SOURCE.replace("WRONG", "d"))
    params = engine.draw_variant(spec, seed).params
    return f"{params['s'] / params['d'] ** 0.5:.3f}"


def test_author_review_publish_and_assign(page, watch, teaching_site):
    watch.expect_console_error("status of 422")  # the refused save answers 422 on purpose
    log_in(page, "instructor")
    page.goto(f"/author/{COURSE}/new/")
    page.fill("#id_source", SOURCE)
    page.click("#save-button")
    errors = page.locator("#spec-errors")
    errors.wait_for()
    assert re.search(r"line 13: parts\[0\]\.answer: .*WRONG", errors.inner_text())

    page.fill("#id_source", SOURCE.replace("WRONG", "d"))
    page.click("#save-button")
    page.wait_for_url(f"**/author/{COURSE}/e/scaled-score/v1/")
    assert page.locator("#version-status").inner_text() == "Draft"

    for seed in (3, 4):
        page.fill("#preview-seed", str(seed))
        page.click("#preview-button")
        result = page.locator(f'#preview .preview-result[data-seed="{seed}"]')
        result.wait_for()
        assert result.locator('td.reference[data-part="scaled"]').inner_text() == expected_reference(seed)
        assert "fails" not in result.locator(".gates").inner_text()

    page.get_by_role("button", name="Send to review").click()
    page.wait_for_load_state()
    assert page.locator("#version-status").inner_text() == "In review"
    assert page.locator("#approve-button").count() == 0  # the author cannot approve

    page.context.clear_cookies()
    log_in(page, "reviewer")
    page.goto(f"/author/{COURSE}/e/scaled-score/v1/")
    page.fill("#id_message", "Checked both seeds by hand.")
    page.get_by_role("button", name="Add comment").click()
    page.wait_for_load_state()
    page.click("#approve-button")
    page.wait_for_load_state()
    assert page.locator("#version-status").inner_text() == "Published"
    assert "Checked both seeds by hand." in page.content()

    page.goto(f"/teach/{COURSE}/a/{ASSIGNMENT}/")
    page.get_by_role("link", name="Add exercises…").click()
    page.fill("#picker-q", "scaled-score")
    page.locator(".aq-picker-row[data-slug='scaled-score'] input[type=checkbox]").check()
    page.fill("#id_points", "2")
    page.get_by_role("button", name="Add 1 exercise").click()
    page.wait_for_url(f"**/teach/{COURSE}/a/{ASSIGNMENT}/")
    row = page.locator("#items tbody tr", has=page.get_by_text("scaled-score", exact=True))
    assert row.count() == 1
    assert "v1" in row.inner_text()

    from courses.models import AssignmentItem

    item = AssignmentItem.objects.get(exercise_version__exercise__slug="scaled-score")
    assert (item.assignment.slug, item.points, item.exercise_version.status) == (ASSIGNMENT, 2.0, "published")
