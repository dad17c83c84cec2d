"""In the browser: a student asks for another look at a checked answer from under its
result, a TA replies with a new score on the course's regrade requests, and the student
reads the reply — under the answer and on their graded answers page — with the grade
changed. Hostile words in the request and the reply stay text."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.conftest import guarded_context, log_in
from e2e.test_student_journey import WORKED_EXAMPLE, fill_grid, item_for, submit_and_wait_for_grade, weights_for_variant
from exercises.models import Variant
from grading.models import Submission
from instructor.models import ManualGrade, RegradeRequest

pytestmark = pytest.mark.browser

COURSE = "attention-101"
MESSAGE = "I forgot the scale <script>document.title='pwned'</script>, but the softmax is right."
REPLY = "Right: half marks for the softmax. <img src=x onerror=alert(1)>"


@pytest.fixture
def regrade_site(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


def test_ask_for_another_look_staff_reply_and_the_student_reads_it(page, chromium, live_server, watch, regrade_site):
    item = item_for(regrade_site, WORKED_EXAMPLE)
    log_in(page, "student1")
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    fill_grid(page, "weights", weights_for_variant(variant, scaled=False))
    submit_and_wait_for_grade(page, "weights", attempt=1)
    answer = Submission.objects.get(variant=variant, part="weights")
    assert (answer.status, answer.score) == ("graded", 0.0)

    box = page.locator(f"#result-weights #regrade-{answer.pk}")
    box.get_by_text("Ask for another look").click()
    box.get_by_label("What should be looked at again, and why?").fill(MESSAGE)
    box.get_by_role("button", name="Send the request").click()
    page.wait_for_url(re.compile(rf"/exercises/{item.pk}/#regrade-{answer.pk}$"))
    box = page.locator(f"#result-weights #regrade-{answer.pk}")
    expect(box.locator("[data-regrade-state]")).to_have_text("Waiting for a reply")
    expect(box.locator("[data-regrade-message]")).to_have_text(MESSAGE)
    expect(box.locator("form[data-regrade-form]")).to_have_count(0)
    assert page.title() != "pwned"
    request = RegradeRequest.objects.get()
    assert (request.submission_id, request.message, request.status) == (answer.pk, MESSAGE, "open")

    # The TA replies on the course's regrade requests, giving half marks with the reply.
    context, staff = guarded_context(chromium, live_server, watch)
    try:
        log_in(staff, "ta")
        staff.goto(f"/teach/{COURSE}/grading/")
        staff.get_by_role("link", name="Regrade requests").click()
        card = staff.locator(f"#request-{request.pk}")
        expect(card.locator("blockquote")).to_have_text(MESSAGE)
        card.get_by_label("Reply to the student").fill(REPLY)
        card.get_by_label("New score (% of the part)").fill("50")
        card.get_by_role("button", name="Send the reply").click()
        expect(staff.get_by_text("Sent the reply (answered: the grade changed).")).to_be_visible()
    finally:
        context.close()
    answer.refresh_from_db()
    assert answer.score == 0.5 and ManualGrade.objects.get(submission=answer).score == 0.5

    # The student reads the reply under the answer, then on their graded answers page.
    page.reload()
    box = page.locator(f"#result-weights #regrade-{answer.pk}")
    expect(box.locator("[data-regrade-state]")).to_have_text("Answered: the grade changed")
    expect(box.locator("[data-regrade-reply]")).to_have_text(REPLY)
    expect(box).to_contain_text("awarded 0% before, 50% now")
    expect(page.locator(f"#result-weights [data-result=graded]")).to_contain_text("score 50%")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Graded answers").click()
    page.wait_for_url("**/grades/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your graded answers and requests")
    card = page.locator(f"#graded-{answer.pk}")
    expect(card.locator("[data-regrade-state]")).to_have_text("Answered: the grade changed")
    expect(card.locator("[data-regrade-reply]")).to_have_text(REPLY)
    assert page.locator("img[src=x]").count() == 0 and page.title() != "pwned"
