"""A typed answer survives a reload (a wrong number is back in its box, a derivation in its
textarea with its steps read again), and every answer control is found by a name that
says its part, as a screen reader reads it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser

SCORE_VARIANCE = "score-variance"  # (a) derivation, (b) symbolic, (c) derivation, (d) symbolic, (e) numeric
WORKED_EXAMPLE = "attention-weights-one-query"  # (a) and (b): 1 × 4 grids


def item_for(demo_site, slug: str):
    return demo_site.assignment.items.get(exercise_version__exercise__slug=slug)


def test_a_wrong_number_and_a_derivation_are_back_after_a_reload(student_page, demo_site):
    page = student_page
    item = item_for(demo_site, SCORE_VARIANCE)
    page.goto(f"/exercises/{item.pk}/")
    number = page.get_by_role("textbox", name="Your answer to part (e)", exact=True)
    number.fill("12.5")
    page.get_by_role("button", name="Submit part (e)", exact=True).click()
    page.locator("#result-textbook_std [data-result=graded]").filter(has_text="attempt 1").wait_for()
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    assert Submission.objects.get(variant=variant, part="textbook_std").correct is False
    Submission.objects.create(
        variant=variant, student=variant.student, part="unit_variance", attempt=1,
        raw_answer="Var(dot(q, k))\nd_k", status="queued",
    )

    page.reload()
    expect(page.get_by_role("textbox", name="Your answer to part (e)", exact=True)).to_have_value("12.5")
    derivation = page.get_by_role("textbox", name="Your derivation for part (a), one step per line", exact=True)
    expect(derivation).to_have_value("Var(dot(q, k))\nd_k")
    steps = page.locator("#part-unit_variance .aq-derivation-preview li")
    expect(steps).to_have_count(2)  # read again on load, one preview per step
    steps.nth(1).locator(".katex").wait_for()
    for empty in ("Your answer to part (b)", "Your answer to part (d)"):
        expect(page.get_by_role("textbox", name=empty, exact=True)).to_have_value("")
    expect(page.get_by_role("button", name="Visual editor for part (b)", exact=True)).to_be_visible()


def test_grid_cells_and_the_paste_box_name_their_part(student_page, demo_site):
    page = student_page
    page.goto(f"/exercises/{item_for(demo_site, WORKED_EXAMPLE).pk}/")
    expect(page.get_by_role("group", name="Answer grid of part (b), 1 by 4", exact=True)).to_be_visible()
    expect(page.get_by_role("textbox", name="fourth entry of part (b)", exact=True)).to_have_count(1)
    expect(page.get_by_role("textbox", name="first entry of part (a)", exact=True)).to_have_count(1)
    page.locator("#part-output summary").click()
    expect(page.get_by_role("textbox", name="Matrix for part (b): Rows on lines")).to_be_visible()
    expect(page.get_by_role("button", name="Fill the grid for part (b)", exact=True)).to_be_visible()
    # (a)'s paste box is closed, out of the accessibility tree until opened, but named too.
    expect(page.get_by_role("button", name="Fill the grid for part (a)", exact=True, include_hidden=True)).to_have_count(1)
