"""A student answers the worked-example exercise in a real browser, and types symbols.

The wrong answer is the one the chapter warns about: softmax of the raw scores, not
divided by sqrt(d_k). It is computed here from the student's own variant with
grading.core.attention, so the test follows whatever variant the student was dealt.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from courses.models import AssignmentItem
from exercises.models import Variant
from grading.core import attention

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"
SCORE_VARIANCE = "score-variance"


def item_for(demo_site, slug: str) -> AssignmentItem:
    return demo_site.assignment.items.get(exercise_version__exercise__slug=slug)


def weights_for_variant(variant: Variant, *, scaled: bool) -> list[float]:
    params = variant.params
    Q, K, V = attention.qkv_projections(params["X"], params["W_Q"], params["W_K"], params["W_V"])
    result = attention.attention(Q, K, V, scale=None if scaled else 1.0)
    return np.round(result.weights[params["q"]], 4).tolist()


def fill_grid(page, part: str, values: list[float], *, digits: int = 4) -> None:
    cells = page.locator(f"#grid-{part} input")
    assert cells.count() == len(values)
    for index, value in enumerate(values):
        cells.nth(index).fill(f"{value:.{digits}f}")


def submit_and_wait_for_grade(page, part: str, attempt: int):
    page.locator(f"#form-{part} button[type=submit]").click()
    result = page.locator(f"#result-{part} [data-result=graded]")
    result.filter(has_text=f"attempt {attempt}").wait_for()
    return result


def test_worked_example_wrong_then_right_with_heatmap(student_page, demo_site, artifacts):
    page = student_page
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.get_by_role("link", name=demo_site.assignment.title).click()
    page.get_by_role("link", name=re.compile("Attention weights and context vector")).click()
    page.wait_for_url(f"**/exercises/{item.pk}/")
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    unscaled = weights_for_variant(variant, scaled=False)
    scaled = weights_for_variant(variant, scaled=True)
    assert unscaled != scaled

    # The prompt's maths is typeset by the vendored KaTeX.
    assert page.locator(".prompt .katex").count() > 0
    assert page.locator("#grid-weights input").first.get_attribute("aria-label") == "first entry of part (a)"

    fill_grid(page, "weights", unscaled)
    page.screenshot(path=artifacts / "worked-example-before-grading.png", full_page=True)
    result = submit_and_wait_for_grade(page, "weights", attempt=1)

    misconception = result.locator(".misconception")
    assert re.search(r"not divided by √d_k", misconception.inner_text())
    assert misconception.get_attribute("data-misconception") == "no_scaling"
    assert "Not correct" in result.locator(".score").inner_text()
    # Cell marks and the attempts counter land just after the swap: wait for them.
    wrong_cells = page.locator("#grid-weights input[aria-invalid=true]")
    expect(wrong_cells).to_have_count(sum(1 for a, b in zip(unscaled, scaled) if abs(a - b) > 5e-5))
    expect(page.locator("#attempts-left-weights")).to_have_text("4")
    page.screenshot(path=artifacts / "worked-example-wrong-graded.png", full_page=True)

    fill_grid(page, "weights", scaled)
    result = submit_and_wait_for_grade(page, "weights", attempt=2)

    assert "Correct" in result.locator(".score").inner_text()
    assert "score 100%" in result.locator(".score").inner_text()
    expect(page.locator("#grid-weights input[aria-invalid=true]")).to_have_count(0)
    heatmaps = result.locator("figure.aq-heatmap")
    assert heatmaps.count() == 2
    correct_cells = heatmaps.nth(1).locator("td.aq-heatmap__cell")
    assert correct_cells.all_inner_texts() == [f"{w:.4f}" for w in scaled]
    classes = correct_cells.first.get_attribute("class")
    assert re.search(r"\baq-heat-\d+\b", classes)
    # Solved: the form is locked so a stray click cannot spend another attempt.
    expect(page.locator("#form-weights button[type=submit]")).to_be_disabled()
    page.screenshot(path=artifacts / "worked-example-after-grading.png", full_page=True)


def test_format_error_costs_no_attempt(student_page, demo_site, watch):
    page = student_page
    # Chromium logs every 4xx response; the 422 is the point of this test.
    watch.expect_console_error(r"status of 422 \(Unprocessable (Entity|Content)\)")
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(f"/exercises/{item.pk}/")
    fill_grid(page, "weights", [0.25, 0.25, 0.25, 0.25])
    page.locator("#grid-weights input").nth(2).fill("a quarter")
    page.locator("#form-weights button[type=submit]").click()
    invalid = page.locator("#result-weights [data-result=invalid]")
    invalid.wait_for()
    assert "did not use an attempt" in invalid.inner_text()
    assert page.locator("#attempts-left-weights").inner_text() == "5"


def test_grid_paste_box_and_arrow_keys(student_page, demo_site):
    page = student_page
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(f"/exercises/{item.pk}/")
    cells = page.locator("#grid-weights input")

    page.locator("#part-weights .aq-paste summary").click()
    page.locator("#part-weights [data-paste-source]").fill("0.1\t0.2\t0.3\t0.4")
    page.locator("#part-weights [data-paste-fill]").click()
    assert [cells.nth(i).input_value() for i in range(4)] == ["0.1", "0.2", "0.3", "0.4"]
    assert page.locator("#part-weights [data-grid-status]").inner_text() == "Filled 1 × 4 entries."

    page.locator("#part-weights [data-paste-source]").fill("[[1, 2], [3, 4]]")
    page.locator("#part-weights [data-paste-fill]").click()
    status = page.locator("#part-weights [data-grid-status]")
    assert status.inner_text() == "That is a 2 × 2 matrix, but the answer is 1 × 4."
    assert "is-error" in status.get_attribute("class")
    cells.nth(1).fill("0.25")  # the grid changed: the paste's error is stale
    assert status.inner_text() == "" and "is-error" not in status.get_attribute("class")

    cells.nth(0).focus()
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "second entry of part (a)"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "third entry of part (a)"


def test_a_matrix_left_in_the_paste_box_is_sent_when_the_grid_is_empty(student_page, demo_site):
    """A student pastes a matrix into the box and presses Submit, not "Fill the grid": the
    grid is filled from the box and that answer is graded; one the box cannot fill is not
    sent, and cells typed by hand are never replaced by the box."""
    page = student_page
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(f"/exercises/{item.pk}/")
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    scaled = weights_for_variant(variant, scaled=True)
    cells = page.locator("#grid-weights input")
    box = page.locator("#part-weights [data-paste-source]")
    page.locator("#part-weights .aq-paste summary").click()

    box.fill("[[1, 2], [3, 4]]")
    page.locator("#form-weights button[type=submit]").click()
    status = page.locator("#part-weights [data-grid-status]")
    expect(status).to_have_text("That is a 2 × 2 matrix, but the answer is 1 × 4.")
    expect(box).to_be_focused()
    assert page.locator("#result-weights [data-result]").count() == 0  # nothing sent
    assert page.locator("#attempts-left-weights").inner_text() == "5"

    box.fill("\\begin{bmatrix} " + " & ".join(f"{w:.4f}" for w in scaled) + " \\end{bmatrix}")
    result = submit_and_wait_for_grade(page, "weights", attempt=1)
    assert "Correct" in result.locator(".score").inner_text()
    assert [cells.nth(i).input_value() for i in range(4)] == [f"{w:.4f}" for w in scaled]


def test_cells_typed_by_hand_are_sent_whatever_the_paste_box_holds(student_page, demo_site):
    page = student_page
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(f"/exercises/{item.pk}/")
    page.locator("#part-weights .aq-paste summary").click()
    page.locator("#part-weights [data-paste-source]").fill("0.1 0.2 0.3 0.4")
    fill_grid(page, "weights", [0.25, 0.25, 0.25, 0.25], digits=2)
    result = submit_and_wait_for_grade(page, "weights", attempt=1)
    assert "Not correct" in result.locator(".score").inner_text()
    assert [page.locator("#grid-weights input").nth(i).input_value() for i in range(4)] == ["0.25"] * 4


def test_matrix_text_formats_are_read_the_same(student_page, demo_site):
    page = student_page
    page.goto(f"/exercises/{item_for(demo_site, WORKED_EXAMPLE).pk}/")
    expected = [["1", "2"], ["3", "4"]]
    for text in ["[[1, 2], [3, 4]]", "1 2\n3 4", "1, 2; 3, 4", "1\t2\n3\t4\n", "[1 2; 3 4]",
                 "array([[1, 2],\n       [3, 4]])", "\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}",
                 "\\begin{pmatrix}1&2\\\\\n3&4\\\\\\end{pmatrix}"]:
        parsed = page.evaluate("text => window.attnquiz.parseMatrixText(text)", text)
        assert parsed == {"rows": expected}, text
    ragged = page.evaluate("window.attnquiz.parseMatrixText('1 2\\n3')")
    assert ragged == {"error": "The second row has 1 entry but the first has 2."}


def test_symbolic_answer_preview_reads_powers_and_implicit_products(student_page, demo_site):
    page = student_page
    page.goto(f"/exercises/{item_for(demo_site, SCORE_VARIANCE).pk}/")
    answer = page.locator("#answer-general_variance")
    preview = page.locator("#preview-general_variance")

    answer.press_sequentially("d_k sigma_q^2 sigma_k^", delay=10)
    preview.locator(".aq-preview-error").wait_for()
    assert "missing after it" in preview.inner_text()
    assert answer.get_attribute("aria-invalid") == "true"

    answer.press_sequentially("2", delay=10)
    preview.locator(".aq-preview-math .katex").wait_for()
    assert answer.get_attribute("aria-invalid") is None
    annotation = preview.locator("annotation").text_content()
    assert annotation == r"d_{k} \sigma_{q}^{2} \sigma_{k}^{2}"


def test_derivation_steps_are_previewed_one_by_one(student_page, demo_site):
    page = student_page
    page.goto(f"/exercises/{item_for(demo_site, SCORE_VARIANCE).pk}/")
    steps = page.locator("#answer-unit_variance")
    steps.fill("Var(dot(q, k))\nd_k*(")
    items = page.locator("#part-unit_variance .aq-derivation-preview li")
    items.nth(1).locator(".aq-preview-error").wait_for()
    # Each step is its own request: the first may answer after the second.
    items.nth(0).locator(".katex").wait_for()
    assert items.count() == 2
    assert items.nth(0).locator(".katex").count() == 1
    assert items.nth(1).inner_text().startswith("⚠") or "never closed" in items.nth(1).inner_text()
    assert not items.nth(1).inner_text().strip().startswith("Step")


def test_visual_editor_loads_mathlive_locally_and_feeds_the_text_answer(
    student_page, demo_site, watch
):
    page = student_page
    page.goto(f"/exercises/{item_for(demo_site, SCORE_VARIANCE).pk}/")
    toggle = page.locator("#part-correct_scale [data-visual-editor-toggle]")
    toggle.click()
    field = page.locator("#part-correct_scale math-field")
    field.wait_for()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert page.evaluate("MathfieldElement.soundsDirectory") is None

    page.evaluate(
        """() => {
          const field = document.querySelector('#part-correct_scale math-field');
          field.value = String.raw`\\sqrt{d_k}\\sigma_q\\sigma_k`;
          field.dispatchEvent(new Event('input'));
        }"""
    )
    assert page.locator("#answer-correct_scale").input_value() == "sqrt(d_k)sigma_q sigma_k"
    preview = page.locator("#preview-correct_scale")
    preview.locator(".aq-preview-math .katex").wait_for()
    assert preview.locator("annotation").text_content() == r"\sqrt{d_{k}} \sigma_{q} \sigma_{k}"
    page.wait_for_load_state("networkidle")
    mathlive_requests = [url for url in watch.requests if "/vendor/mathlive/" in url]
    assert any(url.endswith("/static/vendor/mathlive/mathlive.min.js") for url in mathlive_requests)
    assert all("127.0.0.1" in url or "localhost" in url for url in mathlive_requests)
