"""A derivation's steps in its feedback: typeset by KaTeX with JavaScript, and read as the
student typed them without it (never as LaTeX source full of backslashes)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.conftest import DEMO_PASSWORD, is_local, log_in
from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser

SCORE_VARIANCE = "score-variance"
DERIVATION = "Var(dot(q, k))\nd_k Var(q_m k_m)\nd_k"
STEPS = "#result-unit_variance [data-derivation-steps]"


def item_for(demo_site, slug: str):
    return demo_site.assignment.items.get(exercise_version__exercise__slug=slug)


def submit_derivation(page, item) -> None:
    page.goto(f"/exercises/{item.pk}/")
    page.locator("#answer-unit_variance").fill(DERIVATION)
    page.locator("#form-unit_variance button[type=submit]").click()
    page.locator("#result-unit_variance [data-result=graded]").wait_for()


def test_the_steps_are_typeset_with_script_and_typed_text_without(student_page, demo_site, chromium, live_server):
    page = student_page
    item = item_for(demo_site, SCORE_VARIANCE)
    submit_derivation(page, item)
    steps = page.locator(f"{STEPS} code[data-tex]")
    expect(steps).to_have_count(3)
    for index in range(3):
        steps.nth(index).locator(".katex").wait_for()
    assert steps.nth(1).locator("annotation").text_content() == r"d_{k} \operatorname{Var}\left[q_{m} k_{m}\right]"
    assert page.locator(f"{STEPS} .katex-error").count() == 0

    # Typed by the student: the same page after a reload, typeset again from data-tex.
    page.reload()
    expect(page.locator(f"{STEPS} code[data-tex] .katex")).to_have_count(3)

    # KaTeX with trust off: a data-tex \href is shown as an error, never a link.
    page.evaluate("""() => {
      const code = document.createElement('code');
      code.id = 'hostile-tex';
      code.dataset.tex = String.raw`\\href{javascript:alert(1)}{x}`;
      code.textContent = 'typed';
      document.body.appendChild(code);
      window.attnquiz.enhance(code);
    }""")
    hostile = page.locator("#hostile-tex")
    hostile.locator(".katex").wait_for()
    assert hostile.locator("a").count() == 0
    assert "\\href" in hostile.inner_text()

    context = chromium.new_context(base_url=live_server.url, java_script_enabled=False)
    context.route("**/*", lambda route: route.continue_() if is_local(route.request.url) else route.abort())
    try:
        no_script = context.new_page()
        no_script.goto("/login/")
        no_script.locator("input[name=username]").fill("student1")
        no_script.locator("input[name=password]").fill(DEMO_PASSWORD)
        no_script.locator("form button[type=submit], form input[type=submit]").last.click()
        no_script.goto(f"/exercises/{item.pk}/")
        typed = no_script.locator(f"{STEPS} code[data-tex]")
        expect(typed).to_have_count(3)
        assert [typed.nth(index).inner_text() for index in range(3)] == DERIVATION.split("\n")
        shown = no_script.locator(STEPS).inner_text()
        assert "\\" not in shown and "Restates the question" in shown
        assert no_script.locator(f"{STEPS} .katex").count() == 0
    finally:
        context.close()


def test_the_instructor_reads_an_earlier_attempts_steps_typeset(page, demo_site):
    item = item_for(demo_site, SCORE_VARIANCE)
    log_in(page, "student1")
    submit_derivation(page, item)
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    first = Submission.objects.get(variant=variant, part="unit_variance", attempt=1)
    Submission.objects.create(variant=variant, student=variant.student, part="unit_variance", attempt=2,
                              raw_answer="Var(dot(q, k))\nd_k", status="queued")
    page.context.clear_cookies()
    log_in(page, "instructor")
    page.goto(reverse("instructor:submission", args=[demo_site.course.slug, first.pk]))
    steps = page.locator(".derivation-steps code[data-tex]")
    expect(steps).to_have_count(3)
    steps.nth(2).locator(".katex").wait_for()
    assert steps.nth(2).locator("annotation").text_content() == "d_{k}"
