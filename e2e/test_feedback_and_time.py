"""In the browser: the heatmap after a wrong answer, focus moved to the feedback, the skip
link and landmarks, a wrong choice's own feedback, the countdown disabling the forms at
zero, and the teaching pages typesetting answers."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from e2e.conftest import log_in
from e2e.test_student_journey import (
    WORKED_EXAMPLE, fill_grid, item_for, submit_and_wait_for_grade, weights_for_variant,
)
from exercises.models import Variant

pytestmark = pytest.mark.browser


def test_wrong_weights_show_my_heatmap_with_off_cells_and_focus_lands_on_the_feedback(student_page, demo_site, artifacts):
    page = student_page
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    unscaled = weights_for_variant(variant, scaled=False)
    fill_grid(page, "weights", unscaled)
    result = submit_and_wait_for_grade(page, "weights", attempt=1)
    expect(result).to_be_focused()  # keyboard and screen-reader users land on the grade
    mine = result.locator("figure.aq-heatmap")
    assert mine.count() == 1  # before the solution is released: only my weights
    assert mine.locator("td.aq-heatmap__cell").all_inner_texts()[0].startswith(f"{unscaled[0]:.4f}")
    assert mine.locator("td.is-off").count() >= 1
    assert "sharper than expected" in result.inner_text()
    page.screenshot(path=artifacts / "heatmap-wrong-attempt.png", full_page=True)
    # The history lists the attempts before the one in the result block, each with its heatmap.
    expect(page.locator("#history-weights")).to_have_count(0)
    fill_grid(page, "weights", [0.25, 0.25, 0.25, 0.25])
    submit_and_wait_for_grade(page, "weights", attempt=2)
    page.reload()
    page.locator("#history-weights > summary").click()
    expect(page.locator("#history-weights > summary")).to_have_text("Earlier attempts at this part (1)")
    expect(page.locator("#history-weights figure.aq-heatmap")).to_have_count(1)
    expect(page.locator("#history-weights [data-attempt]")).to_have_attribute("data-attempt", "1")
    expect(page.locator("#result-weights figure.aq-heatmap")).to_have_count(1)


def test_skip_link_landmarks_and_the_format_error_gets_focus(student_page, demo_site, watch):
    watch.expect_console_error(r"status of 422")
    page = student_page
    page.goto(reverse("exercise", args=[item_for(demo_site, WORKED_EXAMPLE).pk]))
    page.keyboard.press("Tab")
    skip = page.locator("a.aq-skip-link")
    expect(skip).to_be_focused()
    assert skip.inner_text() == "Skip to main content"
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()
    assert page.locator("header.site-header").count() == 1
    assert page.get_by_role("navigation", name="Main").count() == 1
    assert page.get_by_role("main").count() == 1
    page.locator("#grid-weights input").first.fill("a quarter")
    page.locator("#form-weights button[type=submit]").click()
    invalid = page.locator("#result-weights [data-result=invalid]")
    expect(invalid).to_be_focused()


def test_a_wrong_choice_says_why_that_choice_is_wrong(student_page, demo_site):
    from exercises import engine
    from exercises.specs import version_spec

    page = student_page
    item = item_for(demo_site, "shift-vs-scale")
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    spec = version_spec(item.exercise_version)
    part = next(p for p in spec.parts if p.type == "choice")
    right = engine.reference_answers(spec, variant.params)[part.key]
    right = {str(key) for key in (right if isinstance(right, (list, tuple)) else [right])}
    wrong = next(c for c in part.choices if str(c["key"]) not in right and c.get("feedback"))
    page.locator(f"#form-{part.key} input[value='{wrong['key']}']").check()
    page.locator(f"#form-{part.key} button[type=submit]").click()
    result = page.locator(f"#result-{part.key} [data-result=graded]")
    result.wait_for()
    text = result.locator(".feedback").inner_text()
    assert text.startswith("Not the right choice: ")
    assert wrong["feedback"][:40] in text


def test_the_countdown_disables_the_forms_at_zero(student_page, demo_site):
    page = student_page
    assignment = demo_site.assignment
    assignment.time_limit_minutes = 1
    assignment.save()
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("assignment", args=[assignment.course.slug, assignment.slug]))
    clock = page.locator("#clock")
    assert "Time limit: 1 minute." in clock.inner_text()
    assert "The clock starts when you open the first exercise" in clock.inner_text()
    page.goto(reverse("exercise", args=[item.pk]))
    assert "is up" not in page.locator("#clock").inner_text()  # a fresh 1-minute limit
    assert re.search(r"Time left: (1:00|0:5\d)", page.locator("#clock").inner_text())
    # Move the clock's start back so that 3 seconds remain, and reload.
    Variant.objects.filter(assignment_item__assignment=assignment, student__username="student1").update(
        created_at=timezone.now() - timedelta(seconds=57)
    )
    page.reload()
    assert page.locator("#form-weights button[type=submit]").is_enabled()
    expect(page.locator("#clock [data-countdown-alert]")).to_have_text(
        "Your time for this assignment is up; answers are no longer accepted.", timeout=8000
    )
    expect(page.locator("#clock [data-countdown-text]")).to_have_text("0:00")
    expect(page.locator("#form-weights button[type=submit]")).to_be_disabled()
    expect(page.locator("#grid-weights input").first).to_be_disabled()
    page.reload()  # the server agrees: no form to fill in
    assert page.locator("form.answer-form").count() == 0
    assert "answers are no longer accepted" in page.locator("#clock").inner_text()


def test_teaching_pages_typeset_answers(page, demo_site, artifacts):
    from grading.models import Submission

    log_in(page, "student1")
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    fill_grid(page, "weights", [0.25, 0.25, 0.25, 0.25])
    submit_and_wait_for_grade(page, "weights", attempt=1)
    submission = Submission.objects.get(variant__assignment_item=item, part="weights")
    page.context.clear_cookies()
    log_in(page, "instructor")
    course, slug = demo_site.course.slug, demo_site.assignment.slug
    page.goto(reverse("instructor:submission", args=[course, submission.pk]))
    assert page.locator("#raw-answer").inner_text() == '[["0.2500","0.2500","0.2500","0.2500"]]'
    expect(page.locator(".aq-answer-typeset .katex")).to_have_count(1)
    page.goto(reverse("instructor:analytics", args=[course, slug]))
    page.locator("details summary", has_text="Part (a)").first.click()  # the weights, the first part
    wrong = page.locator(".aq-wrong-answers li[data-count='1']").first
    expect(wrong.locator(".katex")).to_have_count(1)
    assert "× 1" in wrong.inner_text()
    page.screenshot(path=artifacts / "teach-analytics-wrong-answers.png", full_page=True)
