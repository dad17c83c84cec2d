"""What a student walk found on the exercise page: a format error that outlived its fix,
a matrix whose unreadable cells were not all marked, typed answers lost on leaving
without a word, and a focus ring too faint to see (WCAG 2.2 asks 3:1)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from courses.models import SessionPolicy
from e2e.conftest import guarded_context, log_in

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"  # (a) weights, (b) output: 1 × 4 grids
SCORE_VARIANCE = "score-variance"  # (b) general_variance symbolic, (e) textbook_std numeric
# The page's own backgrounds (attnquiz.css): white, --aq-surface, the alerts and notices.
BACKGROUNDS = ["#ffffff", "#f6f8fa", "#fff5f5", "#ddf4ff", "#fff8c5"]
LEAVING_ASKS = """() => { const e = new Event("beforeunload", {cancelable: true});
  window.dispatchEvent(e); return e.defaultPrevented; }"""


def open_exercise(page, demo_site, slug: str) -> None:
    item = demo_site.assignment.items.get(exercise_version__exercise__slug=slug)
    page.goto(f"/exercises/{item.pk}/")


def luminance(rgb) -> float:
    def channel(value):
        value /= 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4
    red, green, blue = (channel(value) for value in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first, second) -> float:
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def hex_rgb(text: str):
    return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))


def test_a_format_error_goes_once_the_preview_reads_the_fixed_answer(student_page, demo_site, watch):
    page = student_page
    watch.expect_console_error(r"status of 422")
    open_exercise(page, demo_site, SCORE_VARIANCE)
    answer = page.locator("#answer-general_variance")
    answer.fill("(d_k sigma_q^2")
    page.get_by_role("button", name="Submit part (b)", exact=True).click()
    error = page.locator("#result-general_variance [data-result=invalid]")
    expect(error).to_contain_text("bracket")
    answer.fill("d_k sigma_q^2 sigma_k^2")
    page.locator("#preview-general_variance .katex").wait_for()
    expect(error).to_have_count(0)
    expect(page.locator("#result-general_variance")).to_be_empty()


def test_every_unreadable_grid_cell_is_marked_until_edited(student_page, demo_site, watch):
    page = student_page
    watch.expect_console_error(r"status of 422")
    open_exercise(page, demo_site, WORKED_EXAMPLE)
    cells = page.locator("#grid-weights input")
    for index, value in enumerate(["a quarter", "", "0.25", "1/4"]):
        cells.nth(index).fill(value)
    page.locator("#form-weights button[type=submit]").click()
    page.locator("#result-weights [data-result=invalid]").wait_for()
    expect(page.locator("#grid-weights input[aria-invalid=true]")).to_have_count(2)
    expect(cells.nth(0)).to_have_attribute("aria-invalid", "true")
    expect(cells.nth(1)).to_have_attribute("aria-invalid", "true")
    cells.nth(0).fill("0.25")
    expect(cells.nth(0)).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#grid-weights input[aria-invalid=true]")).to_have_count(1)


def test_leaving_asks_only_while_an_answer_is_unsent(student_page, demo_site):
    page = student_page
    assert page.evaluate(LEAVING_ASKS) is False  # the dashboard has no answer form
    open_exercise(page, demo_site, SCORE_VARIANCE)
    assert page.evaluate(LEAVING_ASKS) is False  # nothing typed yet
    number = page.get_by_role("textbox", name="Your answer to part (e)", exact=True)
    number.fill("12.5")
    assert page.evaluate(LEAVING_ASKS) is True
    page.get_by_role("button", name="Submit part (e)", exact=True).click()
    page.locator("#result-textbook_std [data-result=graded]").wait_for()
    # The page learns the stored answer when htmx settles the swapped result (a moment after
    # it is in the page): wait for that, not for the element alone.
    page.wait_for_function(f"() => !({LEAVING_ASKS})()", timeout=5000)  # sent
    page.reload()
    expect(number).to_have_value("12.5")
    assert page.evaluate(LEAVING_ASKS) is False  # restored as sent
    number.fill("12")
    assert page.evaluate(LEAVING_ASKS) is True


def test_the_focus_ring_has_three_to_one_on_every_background(student_page, demo_site):
    page = student_page
    open_exercise(page, demo_site, WORKED_EXAMPLE)
    page.locator("#grid-weights input").first.focus()
    page.keyboard.press("Tab")  # by keyboard, so :focus-visible applies
    style = page.evaluate("""() => { const s = getComputedStyle(document.activeElement);
      return {color: s.outlineColor, width: s.outlineWidth, style: s.outlineStyle}; }""")
    assert (style["width"], style["style"]) == ("3px", "solid")
    ring = tuple(int(part) for part in style["color"][4:-1].split(","))
    assert ring == (179, 89, 0)
    ratios = {background: round(contrast(ring, hex_rgb(background)), 2) for background in BACKGROUNDS}
    assert ratios == {"#ffffff": 4.83, "#f6f8fa": 4.54, "#fff5f5": 4.52, "#ddf4ff": 4.25, "#fff8c5": 4.48}
    assert min(ratios.values()) >= 3


def test_a_page_taken_over_by_another_browser_says_so_and_takes_no_answers(
    page, chromium, live_server, watch, demo_site
):
    exam = demo_site.assignment
    exam.kind, exam.time_limit_minutes, exam.session_policy = "exam", 10, SessionPolicy.SECOND_TAKES_OVER
    exam.save()
    item = exam.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    watch.expect_console_error("403")  # the old page's poll is refused, by design
    log_in(page, "student1")
    page.goto(reverse("assignment", args=[exam.course.slug, exam.slug]))
    page.get_by_role("button", name="Start the exam").click()
    page.goto(reverse("exercise", args=[item.pk]))
    page.locator("#grid-weights input").first.fill("0.25")
    context, second = guarded_context(chromium, live_server, watch)
    try:
        log_in(second, "student1")
        second.goto(reverse("exercise", args=[item.pk]))  # takes the attempt over
        expect(second.locator("#grid-weights input").first).to_be_enabled()
    finally:
        context.close()
    alert = page.locator("#clock [data-countdown-alert]")
    expect(alert).to_contain_text("taken it over", timeout=15_000)  # the next poll (every 5 s here)
    expect(page.locator("#form-weights button[type=submit]")).to_be_disabled()
    expect(page.locator("#grid-weights input").first).to_have_value("0.25")
    assert page.evaluate(LEAVING_ASKS) is False  # nothing can be sent from here
