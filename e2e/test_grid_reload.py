"""A matrix answer survives a reload: its entries are back in the grid, and the one wrong
cell is the only one marked, as it was when the grade came in."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from exercises import engine
from exercises.models import Variant

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"  # part (b) "output": a 1 × 4 grid


def test_a_reload_keeps_the_grids_last_answer_and_its_wrong_cell(student_page, demo_site):
    page = student_page
    item = demo_site.assignment.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    page.goto(f"/exercises/{item.pk}/")
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    spec = engine.spec_from_json(variant.exercise_version.spec)
    output = np.asarray(engine.reference_answers(spec, variant.params)["output"], dtype=float).ravel()
    entries = [f"{value:.4f}" for value in output[:3]] + [f"{output[3] + 1:.4f}"]
    cells = page.locator("#grid-output input")
    for index, entry in enumerate(entries):
        cells.nth(index).fill(entry)
    page.locator("#form-output button[type=submit]").click()
    page.locator("#result-output [data-result=graded]").filter(has_text="attempt 1").wait_for()
    wrong = page.locator("#grid-output input.is-wrong-cell[aria-invalid=true]")
    expect(wrong).to_have_count(1)

    page.reload()
    assert [cells.nth(index).input_value() for index in range(4)] == entries
    expect(wrong).to_have_count(1)
    assert wrong.get_attribute("name") == "cell-0-3"
    expect(page.locator("#grid-output input[aria-invalid]")).to_have_count(1)
