"""The "Paste a whole matrix" box takes the whole answer or nothing.

A smaller block pasted into the box used to fill the grid's top-left corner and leave the
rest as it was ("Filled 1 × 2 entries."), so an answer mixing the paste with older cells,
or with empty ones, could be sent unnoticed. A block pasted into a cell still fills the grid
from that cell on (a spreadsheet's habit).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from courses.models import AssignmentItem

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"


def open_weights_part(page, demo_site):
    item = AssignmentItem.objects.get(
        assignment=demo_site.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )
    page.goto(f"/exercises/{item.pk}/")
    page.locator("#part-weights .aq-paste summary").click()
    return page.locator("#grid-weights input"), page.locator("#part-weights [data-paste-source]")


def test_a_smaller_matrix_in_the_box_is_refused_and_the_grid_kept(student_page, demo_site):
    page = student_page
    cells, box = open_weights_part(page, demo_site)
    for index, value in enumerate(["0.1", "0.2", "0.3", "0.4"]):
        cells.nth(index).fill(value)

    box.fill("0.7 0.8")
    page.locator("#part-weights [data-paste-fill]").click()

    status = page.locator("#part-weights [data-grid-status]")
    expect(status).to_have_text("That is a 1 × 2 matrix, but the answer is 1 × 4.")
    assert "is-error" in status.get_attribute("class")
    assert [cells.nth(i).input_value() for i in range(4)] == ["0.1", "0.2", "0.3", "0.4"]


def test_a_smaller_matrix_left_in_the_box_is_not_sent(student_page, demo_site):
    page = student_page
    cells, box = open_weights_part(page, demo_site)

    box.fill("0.7")
    page.locator("#form-weights button[type=submit]").click()

    status = page.locator("#part-weights [data-grid-status]")
    expect(status).to_have_text("That is a 1 × 1 matrix, but the answer is 1 × 4.")
    expect(box).to_be_focused()
    assert [cells.nth(i).input_value() for i in range(4)] == ["", "", "", ""]
    assert page.locator("#result-weights [data-result]").count() == 0  # nothing sent
    assert page.locator("#attempts-left-weights").inner_text() == "5"


def test_a_block_pasted_into_a_cell_still_fills_from_that_cell(student_page, demo_site):
    page = student_page
    cells, _ = open_weights_part(page, demo_site)
    cells.nth(2).focus()
    page.evaluate(
        """() => {
          const data = new DataTransfer();
          data.setData("text/plain", "0.3\\t0.4");
          document.activeElement.dispatchEvent(
            new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
        }"""
    )
    assert [cells.nth(i).input_value() for i in range(4)] == ["", "", "0.3", "0.4"]
    expect(page.locator("#part-weights [data-grid-status]")).to_have_text("Filled 1 × 2 entries.")
