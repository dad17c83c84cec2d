"""In the browser: an answer the server did not take is said so and stored once.

A busy server (503 with Retry-After) stores nothing: the page says so and sends the same
answer again by itself. A reply lost on the way (the server stored the answer, the page
never heard): sending it again returns the stored answer, the attempt is used once.
Both rely on the key the page sends with each answer (``submission_key``)."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.test_student_journey import WORKED_EXAMPLE, fill_grid, item_for, weights_for_variant
from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser


def _keys_of(posts: list[str]) -> list[str]:
    return [parse_qs(body)["submission_key"][0] for body in posts]


def _open_worked_example(page, demo_site, *, scaled: bool):
    """The worked example's page with the weights filled in: right (scaled) or wrong."""
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    fill_grid(page, "weights", weights_for_variant(variant, scaled=scaled))
    return variant


def test_a_busy_server_says_so_and_the_page_sends_the_same_answer_again(student_page, demo_site, watch):
    watch.expect_console_error(r"status of 503")
    watch.expect_console_error(r"Response Status Error Code 503")  # htmx logs the refused request
    page = student_page
    variant = _open_worked_example(page, demo_site, scaled=True)
    posts = []

    def busy_once(route):
        posts.append(route.request.post_data)
        if len(posts) == 1:
            route.fulfill(status=503, headers={"Retry-After": "1"}, body="busy")
        else:
            route.continue_()

    page.route("**/grading/variants/*/parts/weights/submit/", busy_once)
    page.locator("#form-weights button[type=submit]").click()
    notice = page.locator("#result-weights [data-answer-notice]")
    expect(notice).to_have_text("The server is busy: your answer was not stored yet. It is sent again in 1 s.")
    graded = page.locator("#result-weights [data-result=graded]")
    graded.filter(has_text="attempt 1").wait_for()
    assert len(posts) == 2
    first, second = _keys_of(posts)
    assert first == second and len(first) == 32
    assert list(Submission.objects.filter(variant=variant, part="weights").values_list("attempt", "client_key")) == [
        (1, first)
    ]


def test_a_lost_reply_sent_again_is_stored_once_and_a_changed_answer_is_a_new_one(
    student_page, demo_site, watch
):
    watch.expect_console_error(r"ERR_FAILED|net::")
    watch.expect_console_error(r"htmx:(afterRequest|sendError)")  # htmx logs the request it lost
    watch.expect_console_error(r"status of 429|Error Code 429")  # a resend within the throttle is sent again
    page = student_page
    variant = _open_worked_example(page, demo_site, scaled=False)  # wrong: the part stays open
    posts = []

    def reply_lost_once(route):
        posts.append(route.request.post_data)
        if len(posts) == 1:
            route.fetch()  # the server stores the answer ...
            route.abort()  # ... and its reply never reaches the page
        else:
            route.continue_()

    page.route("**/grading/variants/*/parts/weights/submit/", reply_lost_once)
    button = page.locator("#form-weights button[type=submit]")
    button.click()
    expect(page.locator("#result-weights [data-answer-notice]")).to_contain_text("No reply from the server")
    button.click()  # the student sends the same answer again
    page.locator("#result-weights [data-result=graded]").filter(has_text="attempt 1").wait_for()
    first, second = _keys_of(posts)
    assert first == second
    assert Submission.objects.filter(variant=variant, part="weights").count() == 1

    page.locator("#grid-weights input").first.fill("0.5")  # a changed answer: a new key
    button.click()
    page.locator("#result-weights [data-result=graded]").filter(has_text="attempt 2").wait_for()
    assert _keys_of(posts)[2] != first
    assert sorted(Submission.objects.filter(variant=variant, part="weights").values_list("attempt", flat=True)) == [1, 2]


def _too_soon_once(posts: list[str]):
    def handler(route):
        posts.append(route.request.post_data)
        if len(posts) == 1:
            route.fulfill(status=429, headers={"Retry-After": "2"}, body="too soon")
        else:
            route.continue_()
    return handler


def test_a_resend_is_called_off_when_the_student_changes_the_answer_meanwhile(student_page, demo_site, watch):
    watch.expect_console_error(r"status of 429|Error Code 429")
    page = student_page
    variant = _open_worked_example(page, demo_site, scaled=False)
    posts = []
    page.route("**/grading/variants/*/parts/weights/submit/", _too_soon_once(posts))
    button = page.locator("#form-weights button[type=submit]")
    button.click()
    notice = page.locator("#result-weights [data-answer-notice]")
    expect(notice).to_have_text("That was sent too soon: your answer was not stored yet. It is sent again in 2 s.")
    fill_grid(page, "weights", weights_for_variant(variant, scaled=True))  # the student corrects it
    expect(notice).to_have_text(
        "You changed the answer before it was sent again: the earlier one was not stored. "
        "Send this one when it is ready."
    )
    page.wait_for_timeout(3000)  # past the refused answer's Retry-After: nothing is sent
    assert len(posts) == 1
    assert not Submission.objects.filter(variant=variant).exists()
    button.click()
    page.locator("#result-weights [data-result=graded]").filter(has_text="attempt 1").wait_for()
    assert len(posts) == 2
    assert list(Submission.objects.filter(variant=variant, part="weights").values_list("correct", flat=True)) == [True]


def test_an_answer_the_student_sends_again_before_the_resend_keeps_its_grade(student_page, demo_site, watch):
    # The resend used to fire after the part was solved: its disabled fields sent no answer,
    # and "No answer was entered" replaced the grade.
    watch.expect_console_error(r"status of 429|Error Code 429")
    page = student_page
    variant = _open_worked_example(page, demo_site, scaled=True)
    posts = []
    page.route("**/grading/variants/*/parts/weights/submit/", _too_soon_once(posts))
    button = page.locator("#form-weights button[type=submit]")
    button.click()
    expect(page.locator("#result-weights [data-answer-notice]")).to_contain_text("That was sent too soon")
    button.click()  # not waiting for the page's own resend
    graded = page.locator("#result-weights [data-result=graded]").filter(has_text="attempt 1")
    graded.wait_for()
    page.wait_for_timeout(3000)  # past the first answer's Retry-After
    expect(graded).to_be_visible()
    expect(page.locator("#result-weights")).not_to_contain_text("No answer was entered")
    assert len(posts) == 2
    assert Submission.objects.filter(variant=variant, part="weights").count() == 1
