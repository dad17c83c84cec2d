"""The exercise page without JavaScript: its maths is TeX source and it says so, once, and
the matrix grid's help names only what works (typing each cell; Tab), never the arrow keys
or the paste box, which attnquiz.js adds. With the script the maths is typeset, the note is
absent and the help names the arrow keys and pasting as well."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from e2e.conftest import DEMO_PASSWORD, guarded_context
from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"  # (a) weights, (b) output: 1 × 4 grids
MATHS_NOTE = (
    "Maths is shown as TeX source because JavaScript is off: it sits between $ signs, "
    "so $\\sqrt{d_k}$ reads “the square root of d_k”."
)
TYPING_HELP = "Type one number in each cell (1 × 4); Tab moves to the next cell."
SCRIPT_HELP = " The arrow keys move between cells too, and you can paste a whole matrix."


def exercise_url(demo_site) -> str:
    item = demo_site.assignment.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    return f"/exercises/{item.pk}/"


@pytest.fixture
def no_script_page(chromium, live_server, demo_site, watch):
    """A page with JavaScript off, logged in as the first demo student, under the same
    guards as e2e's (nothing leaves 127.0.0.1, no console error, no CSP refusal)."""
    context, page = guarded_context(chromium, live_server, watch, java_script_enabled=False)
    page.goto("/login/")
    page.locator("input[name=username]").fill("student1")
    page.locator("input[name=password]").fill(DEMO_PASSWORD)
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.wait_for_url(re.compile(r"/(#course-[\w-]+)?$"))
    yield page
    context.close()
    assert watch.blocked_requests == [], "requests tried to leave 127.0.0.1"
    assert watch.csp_violations == [], "the Content-Security-Policy blocked something"
    assert watch.unexpected_console_errors() == [], "the browser console reported errors"


def test_without_script_the_maths_is_tex_and_the_page_says_so_once(no_script_page, demo_site):
    page = no_script_page
    page.goto(exercise_url(demo_site))
    note = page.locator(".aq-noscript-note")
    expect(note).to_have_count(1)
    expect(note).to_be_visible()
    assert note.inner_text() == MATHS_NOTE
    assert note.evaluate("e => e.parentElement.tagName") == "NOSCRIPT"
    # The note comes before the prompt it explains, and the prompt is the TeX as written.
    prompt_follows = "e => !!(e.compareDocumentPosition(document.querySelector('.prompt')) & 4)"
    assert note.evaluate(prompt_follows)
    prompt = page.locator(".prompt").first.inner_text()
    assert "$" in prompt and "\\" in prompt
    assert page.locator(".katex").count() == 0


def test_without_script_the_grid_help_says_to_type_each_cell(no_script_page, demo_site):
    page = no_script_page
    page.goto(exercise_url(demo_site))
    help_text = page.locator("#help-weights")
    assert help_text.inner_text() == TYPING_HELP
    expect(page.locator("#help-weights [data-grid-script-help]")).to_be_hidden()
    assert "arrow" not in help_text.inner_text() and "paste" not in help_text.inner_text()
    expect(page.locator(".aq-paste")).to_have_count(0)  # the script's box is absent too

    # The help's way works: each cell typed, Tab to the next, the form sent as a plain POST.
    cells = page.locator("#grid-weights input")
    cells.nth(0).click()
    for value in ["0.1", "0.2", "0.3", "0.4"]:
        page.keyboard.type(value)
        page.keyboard.press("Tab")
    assert [cells.nth(index).input_value() for index in range(4)] == ["0.1", "0.2", "0.3", "0.4"]
    with page.expect_navigation():
        page.locator("#form-weights button[type=submit]").click()
    variant = Variant.objects.get(assignment_item__exercise_version__exercise__slug=WORKED_EXAMPLE,
                                  assignment_item__assignment=demo_site.assignment,
                                  student__username="student1")
    submission = Submission.objects.get(variant=variant, part="weights")
    assert submission.attempt == 1
    assert submission.raw_answer == [["0.1", "0.2", "0.3", "0.4"]]


def test_with_script_the_maths_is_typeset_and_the_grid_help_names_keys_and_paste(
    student_page, demo_site
):
    page = student_page
    page.goto(exercise_url(demo_site))
    page.locator(".prompt .katex").first.wait_for()
    assert "$" not in page.locator(".prompt").first.inner_text()
    # With the script, a <noscript>'s content is plain text: no note element at all.
    expect(page.locator(".aq-noscript-note")).to_have_count(0)

    sentence = page.locator("#help-weights [data-grid-script-help]")
    expect(sentence).to_be_visible()
    assert page.locator("#help-weights").inner_text() == TYPING_HELP + SCRIPT_HELP
    expect(page.locator("#form-weights .aq-paste")).to_have_count(1)
    expect(page.locator("#help-output [data-grid-script-help]")).to_be_visible()  # each grid's own

    # What the sentence names works: the arrow keys move between cells.
    cells = page.locator("#grid-weights input")
    cells.nth(0).focus()
    page.keyboard.press("ArrowRight")
    expect(cells.nth(1)).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(cells.nth(0)).to_be_focused()
