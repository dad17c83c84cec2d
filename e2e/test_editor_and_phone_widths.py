"""What a walk on phones and keyboards found, in a real browser:

- the visual (MathLive) editor starts from the answer already typed in the text box, and
  typing in it appends to that answer instead of replacing it; the text box and the editor
  stay in step both ways; an answer the editor cannot show exactly stays in the text box
  (and the editor says so) until the student changes the answer in the editor;
- at 375 px the "Ask for another look" textarea and the API tokens table fit the phone
  (the table scrolls in its own box), and each Revoke button names its token.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.a11y import horizontal_overflow, settle
from e2e.conftest import log_in
from e2e.test_student_journey import WORKED_EXAMPLE, fill_grid, item_for, submit_and_wait_for_grade, weights_for_variant
from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser

SCORE_VARIANCE = "score-variance"  # (b) correct_scale is a symbolic part with the visual editor
PHONE = {"width": 375, "height": 812}
INEXACT = (
    "The visual editor cannot show this answer exactly as typed. What you typed stays in the text box "
    "until you change the answer in the editor; from then on the editor's answer replaces it."
)


@pytest.fixture
def site(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


def field_latex(page) -> str:
    return page.evaluate("document.querySelector('#part-correct_scale math-field').getValue('latex')")


def open_editor(page):
    page.locator("#part-correct_scale [data-visual-editor-toggle]").click()
    field = page.locator("#part-correct_scale math-field")
    field.wait_for()
    return field


def editor_has_focus(page) -> None:
    """MathLive moves the focus into its field 60 ms after it is asked to: keys typed
    before that go to whatever had it (the button, the text box)."""
    page.wait_for_function(
        "() => document.activeElement === document.querySelector('#part-correct_scale math-field')"
    )


def test_the_visual_editor_starts_from_the_typed_answer_and_appends_to_it(page, site):
    log_in(page, "student1")
    page.goto(reverse("exercise", args=[item_for(site, SCORE_VARIANCE).pk]))
    text = page.locator("#answer-correct_scale")
    text.click()
    page.keyboard.type("d_k*sigma_q^2*sigma_k^2")

    open_editor(page)
    assert field_latex(page) == r"d_{k}\cdot \sigma _{q}^{2}\cdot \sigma _{k}^{2}"
    assert text.input_value() == "d_k*sigma_q^2*sigma_k^2"  # opening the editor changes nothing
    expect(page.locator("#part-correct_scale [data-visual-editor-note]")).to_be_hidden()

    editor_has_focus(page)  # opening it gave it the focus, its caret after the answer
    page.keyboard.type("+1")
    expect(text).to_have_value("d_k * sigma_q^2 * sigma_k^2+1")
    preview = page.locator("#preview-correct_scale")
    expect(preview.locator("annotation")).to_have_text(r"d_{k} \sigma_{q}^{2} \sigma_{k}^{2} + 1")

    # Typing in the text box while the editor is open updates the editor, and only the editor.
    text.fill("1/sqrt(d_k)")
    assert field_latex(page) == r"1/\sqrt{d_{k}}"
    assert text.input_value() == "1/sqrt(d_k)"
    page.locator("#part-correct_scale math-field").click()
    editor_has_focus(page)
    page.keyboard.press("End")
    page.keyboard.type("*2")
    expect(text).to_have_value("1/sqrt(d_k) * 2")

    # Closed and opened again, it still shows the text box's answer.
    toggle = page.locator("#part-correct_scale [data-visual-editor-toggle]")
    toggle.click()
    text.fill("d_model/h")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert field_latex(page) == r"d_{model}/h"
    assert text.input_value() == "d_model/h"


def test_an_answer_the_editor_cannot_show_exactly_stays_until_the_editor_is_changed(page, site):
    log_in(page, "student1")
    page.goto(reverse("exercise", args=[item_for(site, SCORE_VARIANCE).pk]))
    text = page.locator("#answer-correct_scale")
    text.fill("abs(d_k)")
    field = open_editor(page)
    note = page.locator("#part-correct_scale [data-visual-editor-note]")
    expect(note).to_have_text(INEXACT)
    assert field.get_attribute("aria-describedby") == note.get_attribute("id") == "answer-correct_scale-editor-note"
    field.click()  # looking, focusing: the text box keeps what was typed
    assert text.input_value() == "abs(d_k)"

    text.fill("sqrt(d_k) sigma_q sigma_k")  # an answer it can show: the note goes
    expect(note).to_be_hidden()
    assert field_latex(page) == r"\sqrt{d_{k}}\sigma _{q}\sigma _{k}"

    text.fill("2^3^2")  # shown as 2^(3^2): not as typed, so the note is back
    expect(note).to_have_text(INEXACT)
    field.click()
    editor_has_focus(page)
    page.keyboard.press("End")
    page.keyboard.type("+1")  # the student changed the editor: its answer replaces the text
    expect(text).to_have_value("2^(3^2)+1")
    expect(note).to_be_hidden()


# What the text box holds -> what the editor is given (None: MathLive's own reading) and
# whether the editor's answer reads as typed (else the note says so).
TYPED = [
    ("d_k*sigma_q^2*sigma_k^2", r"d_{k}\cdot \sigma _{q}^{2}\cdot \sigma _{k}^{2}", True),
    ("sqrt(d_k)sigma_q sigma_k", r"\sqrt{d_{k}}\sigma _{q}\sigma _{k}", True),
    ("1/sqrt(d_k)", r"1/\sqrt{d_{k}}", True),
    ("d_model/h", r"d_{model}/h", True),
    ("2 d_k", r"2d_{k}", True),
    ("x^(1/2)", r"x^{1/2}", True),
    ("d_k ** 2", r"d_{k}^{2}", True),
    ("d_k^-1/2", r"d_{k}^{-1}/2", True),
    ("e^(-x^2/2)", r"e^{-x^{2}/2}", True),
    ("exp(x)/(1+exp(x))", r"\exp(x)/(1+\exp(x))", True),
    ("1.5e-3", "1.5e-3", True),
    ("", "", True),
    ("2^3^2", r"2^{3^{2}}", False),
    ("abs(d_k)", r"\mathrm{abs}(d_{k})", False),
    ("sqrt(d_k", None, False),
    ("σ_q^2", None, False),
]


def test_typed_answers_and_what_the_editor_is_given(page, site):
    log_in(page, "student1")
    page.goto(reverse("exercise", args=[item_for(site, SCORE_VARIANCE).pk]))
    open_editor(page)
    text = page.locator("#answer-correct_scale")
    note = page.locator("#part-correct_scale [data-visual-editor-note]")
    seen = []
    for typed, _, _ in TYPED:
        text.fill(typed)
        back = page.evaluate(
            "() => window.attnquiz.asciiFromMathfield("
            "document.querySelector('#part-correct_scale math-field').getValue('ascii-math'))"
        )
        seen.append((
            typed,
            page.evaluate("text => window.attnquiz.latexFromAnswerText(text)", typed),
            page.evaluate("([a, b]) => window.attnquiz.sameAnswerText(a, b)", [back, typed]),
        ))
        assert note.is_hidden() is seen[-1][2], typed
        assert text.input_value() == typed  # the text box is never rewritten by showing it
    assert seen == TYPED


def test_the_regrade_request_box_fits_a_375px_phone(page, site):
    item = item_for(site, WORKED_EXAMPLE)
    log_in(page, "student1")
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    fill_grid(page, "weights", weights_for_variant(variant, scaled=False))
    submit_and_wait_for_grade(page, "weights", attempt=1)
    answer = Submission.objects.get(variant=variant, part="weights")

    page.set_viewport_size(PHONE)
    box = page.locator(f"#result-weights #regrade-{answer.pk}")
    box.get_by_text("Ask for another look").click()
    textarea = box.get_by_label("What should be looked at again, and why?")
    expect(textarea).to_be_visible()
    settle(page)
    right = textarea.evaluate("el => el.getBoundingClientRect().right")
    assert right <= PHONE["width"]
    assert textarea.evaluate("el => getComputedStyle(el).maxWidth") == "100%"
    overflow = horizontal_overflow(page)
    assert overflow["scrollWidth"] <= overflow["innerWidth"] == PHONE["width"], overflow


def test_the_token_table_scrolls_in_its_box_on_a_phone_and_revoke_names_its_token(page, site):
    log_in(page, "student1")
    page.goto("/api/tokens/")
    page.get_by_label("Name").fill("bank sync in CI")
    page.get_by_role("button", name="Create token").click()
    expect(page.locator("[data-token-secret]")).to_be_visible()
    page.goto("/api/tokens/")
    page.set_viewport_size(PHONE)
    settle(page)
    overflow = horizontal_overflow(page)
    assert overflow["scrollWidth"] <= overflow["innerWidth"] == PHONE["width"], overflow
    region = page.get_by_role("region", name="Your tokens")
    assert region.evaluate("el => el.scrollWidth > el.clientWidth")  # the table scrolls, not the page
    expect(page.get_by_role("columnheader", name="Revocation")).to_have_count(1)
    revoke = page.get_by_role("button", name="Revoke the token “bank sync in CI”", exact=True)
    expect(revoke).to_have_count(1)
    revoke.click()
    expect(page.get_by_role("button", name="Revoke the token “bank sync in CI”", exact=True)).to_have_count(0)
