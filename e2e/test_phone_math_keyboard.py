"""On a phone, MathLive's virtual keyboard leaves the part's Submit button in sight.

The keyboard is fixed over the foot of the window (218 px of a 390 × 844 phone). A student
who scrolls down to a symbolic part and taps "Visual editor" near the foot of the screen
used to get the keyboard over the editor and the Submit button, and could reach Submit
only by closing the keyboard. Now, while the keyboard is shown, the page keeps room for it
and scrolls the focused editor and its Submit button above it.

MathLive shows its keyboard on focus only for a coarse pointer (a touch screen), so the
page is given Chromium's touch emulation, as a phone would have it.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.a11y import PHONE
from e2e.conftest import log_in
from e2e.test_student_journey import item_for

pytestmark = pytest.mark.browser

SCORE_VARIANCE = "score-variance"  # part (d), correct_scale, is symbolic with the visual editor
PART = "correct_scale"

# The boxes that matter, once the keyboard has slid in and the page stopped scrolling:
# nothing in them changes for ten frames in a row.
SETTLED_GEOMETRY = """(part) => new Promise(resolve => {
  const form = document.getElementById('form-' + part);
  const box = el => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  let last = '', same = 0;
  function look() {
    const keyboard = window.mathVirtualKeyboard;
    const seen = {
      keyboardVisible: Boolean(keyboard && keyboard.visible),
      keyboardTop: keyboard ? keyboard.boundingRect.top : null,
      keyboardHeight: keyboard ? keyboard.boundingRect.height : null,
      field: box(form.querySelector('math-field')),
      submit: box(form.querySelector('button[type=submit]')),
      fieldFocused: document.activeElement === form.querySelector('math-field'),
      viewportHeight: window.innerHeight,
      roomBelowPage: getComputedStyle(document.body).paddingBottom,
    };
    const now = JSON.stringify(seen);
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= 10 && seen.keyboardVisible && seen.keyboardHeight > 0) resolve(seen);
    else requestAnimationFrame(look);
  }
  look();
})"""


@pytest.fixture
def site(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


@pytest.fixture
def phone(page):
    """The page on a 390 × 844 touch screen: (pointer: coarse) matches, as on a phone."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    page.set_viewport_size(PHONE)
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    return page


def tap_keys(page, *keys: str) -> None:
    for key in keys:
        page.locator(f'.ML__keyboard .MLK__layer.is-visible .MLK__keycap[data-keycap-value="{key}"]').click()


def assert_editor_and_submit_above_the_keyboard(seen: dict) -> None:
    keyboard_top = seen["keyboardTop"]
    assert seen["fieldFocused"], seen
    assert 0 < keyboard_top < seen["viewportHeight"] == PHONE["height"], seen  # the keyboard is on screen
    assert 0 <= seen["field"]["top"] and seen["field"]["bottom"] <= keyboard_top, seen
    assert 0 <= seen["submit"]["top"] and seen["submit"]["bottom"] <= keyboard_top, seen
    assert seen["roomBelowPage"] == f"{seen['keyboardHeight']}px", seen


def test_submit_stays_above_the_math_keyboard_on_a_phone(phone, site):
    page = phone
    log_in(page, "student1")
    page.goto(reverse("exercise", args=[item_for(site, SCORE_VARIANCE).pk]))
    toggle = page.locator(f"#part-{PART} [data-visual-editor-toggle]")
    # The student scrolled down until the toggle showed at the foot of the screen.
    toggle.evaluate("el => window.scrollBy(0, el.getBoundingClientRect().bottom - window.innerHeight + 8)")
    assert 7 < toggle.evaluate("el => window.innerHeight - el.getBoundingClientRect().bottom") < 9

    toggle.click()
    page.locator(f"#part-{PART} math-field").wait_for()
    seen = page.evaluate(SETTLED_GEOMETRY, PART)
    assert seen["keyboardHeight"] > 150  # MathLive's own keyboard, not a sliver
    assert_editor_and_submit_above_the_keyboard(seen)

    # Typing on the virtual keyboard: an unfinished answer gets a two-line message in the
    # preview, between the editor and Submit, and Submit still shows above the keyboard.
    tap_keys(page, "2", "+")
    page.locator(f"#preview-{PART} .aq-preview-error").wait_for()
    seen = page.evaluate(SETTLED_GEOMETRY, PART)
    assert_editor_and_submit_above_the_keyboard(seen)

    tap_keys(page, "1")
    expect(page.locator(f"#answer-{PART}")).to_have_value("2+1")
    page.locator(f"#preview-{PART} .katex").wait_for()
    seen = page.evaluate(SETTLED_GEOMETRY, PART)
    assert_editor_and_submit_above_the_keyboard(seen)

    # A tap where Submit shows lands on Submit, not on the keyboard; the keyboard then goes,
    # and the room kept for it with it.
    submit = seen["submit"]
    page.mouse.click((submit["left"] + submit["right"]) / 2, (submit["top"] + submit["bottom"]) / 2)
    page.locator(f"#result-{PART} [data-result=graded]").filter(has_text="attempt 1").wait_for()
    page.wait_for_function("() => !window.mathVirtualKeyboard.visible")
    assert page.evaluate(
        "() => [document.documentElement.classList.contains('aq-math-keyboard-shown'),"
        " document.documentElement.style.getPropertyValue('--keyboard-inset-height'),"
        " getComputedStyle(document.body).paddingBottom]"
    ) == [False, "", "0px"]
