"""What a first-time student ran into on the exercise pages (round 3 walk).

- A solved part's form was dimmed as a whole (opacity 0.85), which took its help text
  (--aq-muted on white) below 4.5:1: axe reported color-contrast on every solved part
  with help text. Only the disabled controls are dimmed now.
- Without JavaScript a format error ("could not read '6o'") was shown at the top of the
  page while the page came back scrolled to the part (#part-Q), so the student saw the
  form again, unchanged, and no reason: the message now stays in view on exercise pages.
- Without JavaScript nothing polls a pending grade: the marker links to the page again.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from e2e.a11y import axe_violations
from e2e.conftest import guarded_context, log_in

pytestmark = pytest.mark.browser

MATRIX_EXPRESSION = "attention-as-matrix-expression"
PROJECTIONS = "qkv-projections"


def item_url(demo_site, slug: str) -> str:
    item = demo_site.assignment.items.get(exercise_version__exercise__slug=slug)
    return f"/exercises/{item.pk}/"


def test_a_solved_parts_help_text_keeps_its_contrast(student_page, demo_site, watch):
    page = student_page
    page.goto(item_url(demo_site, MATRIX_EXPRESSION))
    page.locator("#answer-formula").fill("softmax(Q K^T / sqrt(d_k)) V")
    page.locator("#answer-formula").press("Enter")
    result = page.locator("#result-formula [data-result=graded]")
    expect(result).to_contain_text("Correct")
    form = page.locator("#form-formula")
    expect(form).to_have_class(re.compile(r"\bis-finished\b"))
    expect(page.locator("#answer-formula")).to_be_disabled()
    # The help text is at full strength; the disabled box and button are dimmed.
    assert page.locator("#help-formula").evaluate("e => getComputedStyle(e).opacity") == "1"
    assert form.evaluate("e => getComputedStyle(e).opacity") == "1"
    assert page.locator("#answer-formula").evaluate("e => getComputedStyle(e).opacity") == "0.85"
    violations = axe_violations(page, watch)
    assert [v for v in violations if v["id"] == "color-contrast"] == []
    assert violations == []
    # The attempts line says "Solved" at once, as the reloaded page does (it kept "Attempts
    # left: 4 of 5" alone until a reload).
    attempts = page.locator("#part-formula p.attempts")
    expect(attempts).to_have_text("Attempts left: 4 of 5 · Solved")
    page.reload()
    expect(attempts).to_have_text("Attempts left: 4 of 5 · Solved")


def test_a_practice_part_solved_says_solved_without_a_stray_dot(student_page, demo_site):
    page = student_page
    page.goto(item_url(demo_site, MATRIX_EXPRESSION))
    page.get_by_role("button", name="Practise with new numbers").click()
    page.wait_for_url(re.compile(r"/practice/\d+/$"))
    attempts = page.locator("#part-formula p.attempts")
    expect(attempts).to_have_text("")  # practice has no attempt limit
    page.locator("#answer-formula").fill("softmax(Q K^T / sqrt(d_k)) V")
    page.locator("#answer-formula").press("Enter")
    expect(page.locator("#result-formula [data-result=graded]")).to_contain_text("Correct")
    expect(attempts).to_have_text("Solved")
    page.reload()
    expect(attempts).to_have_text("Solved")


@pytest.fixture
def no_script_page(chromium, live_server, watch, demo_site):
    """A page with JavaScript off, on the same guards as the ``page`` fixture."""
    context, page = guarded_context(
        chromium, live_server, watch, viewport={"width": 360, "height": 740}, java_script_enabled=False
    )
    yield page
    context.close()
    assert watch.blocked_requests == []
    assert watch.csp_violations == []
    assert watch.unexpected_console_errors() == []


def in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_without_javascript_a_format_error_is_in_view_at_the_part(no_script_page, demo_site):
    page = no_script_page
    log_in(page, "student1")
    url = item_url(demo_site, PROJECTIONS)
    page.goto(url)
    cells = page.locator("#grid-Q input")
    assert cells.count() == 6
    for index, text in enumerate(["1", "2", "3", "4", "5", "6o"]):
        cells.nth(index).fill(text)
    page.locator("#form-Q button[type=submit]").click()
    page.wait_for_url(re.compile(re.escape(url) + "#part-Q$"))
    assert page.evaluate("window.scrollY") > 0  # the browser went down to the part
    # The error is beside the part, under the grid, which still holds what was typed.
    message = page.locator("#result-Q [role=alert]")
    expect(message).to_contain_text("could not read '6o' as a number")
    assert in_viewport(page, message)
    assert [cells.nth(index).input_value() for index in range(6)] == ["1", "2", "3", "4", "5", "6o"]
    # ...and the part's heading the page scrolled to is in view above it.
    heading = page.locator("#part-Q-title")
    assert in_viewport(page, heading)
    assert heading.bounding_box()["y"] + heading.bounding_box()["height"] <= message.bounding_box()["y"]
    expect(page.locator(".aq-messages")).to_have_count(0)
    # The error used no attempt.
    expect(page.locator("#part-Q .attempts")).to_contain_text("Attempts left: 5 of 5")


ALL_IMPACTS_AXE = """async () => {
  const result = await window.axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact,
    targets: v.nodes.map(n => n.target.join(" "))}));
}"""


@pytest.mark.parametrize("path", ["/explore/scaling/", "/explore/variance/"])
def test_the_explorations_tables_name_every_column(student_page, watch, path):
    """axe's empty-table-header (minor, so the serious-only sweep let it pass): the scaling
    table's corner cell was empty, and the variance table's $d_k$ and $\\sqrt{d_k}$ headers
    were only typeset maths, which axe read as no text (they say "Width" and "Predicted" now)."""
    from e2e.a11y import AXE_SOURCE

    page = student_page
    page.goto(path)
    page.locator("table [data-math-rendered], table .katex").first.wait_for()
    seen = len(watch.csp_violations)
    page.evaluate(AXE_SOURCE.read_text(encoding="utf-8"))
    violations = page.evaluate(ALL_IMPACTS_AXE)
    page.evaluate("() => new Promise(resolve => setTimeout(resolve, 0))")
    del watch.csp_violations[seen:]  # axe's own <style>, refused by the page's CSP
    assert [v for v in violations if v["id"] == "empty-table-header"] == []
    headers = page.locator("thead th").evaluate_all("ths => ths.map(th => th.textContent.trim())")
    assert "" not in headers


def test_the_visual_editor_says_when_a_subscript_swallowed_the_rest(student_page, demo_site):
    """Typing d_k*sigma^2 straight on in the visual editor leaves the caret in the subscript:
    the box got d_(k * sigma^2) and the only word was the server's "unknown function 'd_'".
    The editor's note now names the subscript and how to leave it; once the answer is
    typed with → after d_k the note goes."""
    page = student_page
    page.goto(item_url(demo_site, "variance-shared-sigma"))
    page.get_by_role("button", name="Visual editor for part (a)", exact=True).click()
    field = page.locator("#form-general_variance math-field")
    expect(field).to_be_focused()
    page.keyboard.type("d_k*sigma^2")
    box = page.locator("#answer-general_variance")
    expect(box).to_have_value("d_(k * sigma^2)")
    note = page.locator("#answer-general_variance-editor-note")
    expect(note).to_be_visible()
    expect(note).to_have_text(
        "The subscript of d holds k * sigma^2. In the visual editor a subscript goes on until you "
        "leave it: press → (the right arrow key) after d's subscript, then type the rest."
    )
    assert field.get_attribute("aria-describedby") == "answer-general_variance-editor-note"

    for _ in range(12):
        page.keyboard.press("Backspace")
    expect(box).to_have_value("")
    expect(note).to_be_hidden()
    page.keyboard.type("d_k")
    page.keyboard.press("ArrowRight")
    page.keyboard.type("*sigma^2")
    expect(box).to_have_value(re.compile(r"^d_k ?\* ?sigma\^2$"))
    expect(note).to_be_hidden()
    expect(page.locator("#preview-general_variance .katex")).to_be_visible()
