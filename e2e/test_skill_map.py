"""A student makes the no-scaling slip twice: the dashboard's skill map marks scaling
shaky and names the slip; the instructor's grid puts scaling first, as the class's weakest
skill. Screenshots: test-artifacts/skill-map.png, test-artifacts/instructor-skill-grid.png."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.a11y import PHONE, check_page, horizontal_overflow, settle
from e2e.conftest import log_in
from e2e.skills import answer_weights, skill_line, wait_for_mastery
from e2e.test_student_journey import WORKED_EXAMPLE, item_for
from exercises.models import Variant
from exercises.services import variant_get_or_create_for_item
from e2e.test_student_journey import weights_for_variant
from grading.services import submission_create
from grading.tests.test_services import as_text

pytestmark = pytest.mark.browser


def test_two_no_scaling_slips_make_scaling_shaky_on_the_map_and_first_on_the_grid(
    student_page, demo_site, watch, artifacts, django_user_model
):
    page = student_page
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    for attempt in (1, 2):
        result = answer_weights(page, variant, scaled=False, attempt=attempt)
        assert result.locator(".misconception").get_attribute("data-misconception") == "no_scaling"
    scaling = wait_for_mastery(username="student1", skill="scaling", attempts=2)
    assert round(scaling.p_known, 4) == 0.1714  # 0.3 -> 83/440 -> 11299/65920 with the default parameters
    # A classmate answers right first time (through the same worker): every skill of the part.
    classmate = django_user_model.objects.get(username="student2")
    theirs = variant_get_or_create_for_item(item=item, student=classmate)
    submission_create(variant=theirs, student=classmate, part="weights",
                      raw_answer=as_text(weights_for_variant(theirs, scaled=True)))
    assert round(wait_for_mastery(username="student2", skill="softmax", attempts=1).p_known, 4) == 0.825

    page.goto(reverse("dashboard"))
    line = skill_line(page, "scaling")
    expect(line).to_have_text(
        "scaling by √d_k: shaky (2 attempts, 17% likely known) — last 2 attempts showed ‘left out √d_k’"
    )
    expect(skill_line(page, "softmax")).to_have_text("softmax: not yet seen")
    seen = check_page(page, watch, artifacts=artifacts, name="dashboard-skill-map")
    assert seen["axe"] == {"390": [], "1280": []} and seen["headings"] == []
    assert seen["overflow"]["scrollWidth"] <= seen["overflow"]["innerWidth"]
    page.set_viewport_size(PHONE)
    settle(page)
    page.locator(".skill-map").screenshot(path=artifacts / "skill-map.png")

    log_in(page, "instructor")
    page.get_by_role("link", name="Teach: assignments, gradebook, analytics").click()
    page.get_by_role("navigation", name="Course").get_by_role("link", name="Skills").click()
    page.wait_for_url(f"**/teach/{demo_site.course.slug}/skills/")
    grid = page.locator("#skill-grid")
    expect(grid.locator("thead th").nth(1)).to_have_attribute("data-skill", "scaling")
    # scaling: mean of 0.1714 and 0.825; the other two skills of the part: 0.825 (student2 only)
    expect(grid.locator("thead th").nth(1)).to_contain_text("mean 0.50 · 2 seen")
    expect(grid.locator("thead th").nth(2)).to_have_attribute("data-skill", "dot-product-scores")
    expect(grid.locator("thead th").nth(2)).to_contain_text("mean 0.83 · 1 seen")
    row = grid.locator("tbody tr", has=page.get_by_role("rowheader", name="student1"))
    expect(row.locator("td").first).to_have_text("0.17shaky")
    expect(row.locator("td").nth(1)).to_have_text("—not yet seen")
    row = grid.locator("tbody tr", has=page.get_by_role("rowheader", name="student2"))
    expect(row.locator("td").first).to_have_text("0.83developing")
    expect(page.get_by_text("Practice never counts toward grades")).to_be_visible()
    seen = check_page(page, watch, artifacts=artifacts, name="instructor-skill-grid")
    assert seen["axe"] == {"390": [], "1280": []} and seen["headings"] == []
    page.set_viewport_size(PHONE)
    settle(page)
    assert horizontal_overflow(page)["scrollWidth"] <= PHONE["width"]
    page.set_viewport_size({"width": 1280, "height": 800})
    settle(page)
    page.screenshot(path=artifacts / "instructor-skill-grid.png", full_page=True)
