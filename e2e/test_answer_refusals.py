"""In the browser: every refusal of an answer, or of its result's poll, is said so.

htmx drops a 4xx or 5xx reply by default, and follows a redirect to the sign-in page as
if it were the result; either way a student could believe an answer stored that was not.
The page shows a refusal written for the result's place as it is, turns any whole page
into a notice that says whether the answer was stored, and asks a busy or silent server
for a pending result again a few times before it says to reload for the grade."""

from __future__ import annotations

import re
from urllib.parse import quote, urlparse

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from e2e.conftest import DEMO_PASSWORD
from e2e.test_student_journey import WORKED_EXAMPLE, fill_grid, item_for, weights_for_variant
from exercises.models import Variant
from grading.models import Submission

pytestmark = pytest.mark.browser

SUBMIT_URL = "**/grading/variants/*/parts/weights/submit/"
POLL_URL = re.compile(r"/grading/submissions/\d+/\?wait=1$")
SIGNED_OUT = (
    "You are signed out: your answer was not stored. Sign in again in a new tab, then send it again."
)
FORM_EXPIRED = (
    "This page is out of date (its form has expired): your answer was not stored. "
    "Reload the page, then send it again."
)
NOT_OPEN = "This exercise is no longer open to you: your answer was not stored."
TOO_LARGE = "Your answer is too large to send: it was not stored. Shorten it, then send it again."
REFUSED = "The server did not take your answer: it was not stored. Reload the page, then send it again."
POLL_SIGNED_OUT = (
    "You are signed out: your answer is stored. Sign in again in a new tab, "
    "then reload this page to see its grade."
)
POLL_BUSY = "The server is still busy: your answer is stored. Reload the page in a moment to see its grade."
A_WHOLE_PAGE = "<!doctype html><html lang='en'><head><title>Refused</title></head><body><h1>Refused</h1></body></html>"


def _open_worked_example(page, demo_site) -> Variant:
    """The worked example's page with the right weights filled in."""
    item = item_for(demo_site, WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    variant = Variant.objects.get(assignment_item=item, student__username="student1")
    fill_grid(page, "weights", weights_for_variant(variant, scaled=True))
    return variant


def _submit(page) -> None:
    page.locator("#form-weights button[type=submit]").click()


def _notice(page):
    return page.locator("#result-weights [data-answer-notice]")


def _no_page_in_the_result(page) -> None:
    result = page.locator("#result-weights")
    expect(result.locator("h1, header, nav, input[name=password]")).to_have_count(0)


def _stored(variant: Variant) -> int:
    return Submission.objects.filter(variant=variant, part="weights").count()


def _busy(route) -> None:
    route.fulfill(status=503, headers={"Retry-After": "1"}, body="busy")


def _first_answered_by(first, seen: list):
    """A route handler: the first request gets ``first(route)``, later ones reach the
    server; every request's URL is kept in ``seen``."""

    def handle(route):
        seen.append(route.request.url)
        if len(seen) == 1:
            first(route)
        else:
            route.continue_()

    return handle


def test_signed_out_the_answer_is_not_stored_and_is_sent_again_after_signing_in(student_page, demo_site):
    page = student_page
    variant = _open_worked_example(page, demo_site)
    page.context.clear_cookies(name="sessionid")  # the session ended (expired, or signed out elsewhere)

    _submit(page)
    notice = _notice(page)
    expect(notice).to_have_text(SIGNED_OUT)
    expect(notice).to_have_attribute("role", "alert")
    _no_page_in_the_result(page)
    assert _stored(variant) == 0

    link = notice.get_by_role("link", name="Sign in again in a new tab")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("href", "/login/?next=" + quote(urlparse(page.url).path, safe=""))
    with page.expect_popup() as popup_info:
        link.click()
    sign_in = popup_info.value
    sign_in.get_by_label(re.compile("username", re.I)).fill("student1")
    sign_in.get_by_label(re.compile("password", re.I)).fill(DEMO_PASSWORD)
    sign_in.locator("form button[type=submit], form input[type=submit]").last.click()
    sign_in.wait_for_url(re.compile(r"/exercises?/"))
    sign_in.close()

    # Signing in renewed the CSRF secret; the answer still typed on this page goes through.
    _submit(page)
    page.locator("#result-weights [data-result=graded]").filter(has_text="attempt 1").wait_for()
    assert _stored(variant) == 1


def test_an_expired_form_says_the_answer_was_not_stored(student_page, demo_site, watch):
    watch.expect_console_error(r"status of 403")
    watch.expect_console_error(r"Response Status Error Code 403")
    page = student_page
    variant = _open_worked_example(page, demo_site)
    page.context.clear_cookies(name="csrftoken")  # the server answers its "Form expired" page

    _submit(page)
    expect(_notice(page)).to_have_text(FORM_EXPIRED)
    expect(_notice(page)).to_have_attribute("role", "alert")
    _no_page_in_the_result(page)
    assert _stored(variant) == 0


def test_an_answer_larger_than_the_server_takes_says_it_was_not_stored(student_page, demo_site, settings, watch):
    """No faked reply: the server itself refuses the body (its 413 page) and the page says so."""
    watch.expect_console_error(r"status of 413")
    watch.expect_console_error(r"Response Status Error Code 413")
    page = student_page
    variant = _open_worked_example(page, demo_site)
    cell = page.locator("#grid-weights input").first
    cell.evaluate("(input, size) => { input.value = '1'.repeat(size); }", settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)

    _submit(page)
    expect(_notice(page)).to_have_text(TOO_LARGE)
    expect(_notice(page)).to_have_attribute("role", "alert")
    _no_page_in_the_result(page)
    assert _stored(variant) == 0


def test_a_refusal_written_for_the_result_is_shown_as_it_is(student_page, demo_site, watch):
    watch.expect_console_error(r"status of 403")
    page = student_page
    variant = _open_worked_example(page, demo_site)
    page.route(
        SUBMIT_URL,
        lambda route: route.fulfill(
            status=403,
            content_type="text/html; charset=utf-8",
            body='<p class="invalid" role="alert" data-result="refused">This attempt is open in another browser.</p>',
        ),
    )

    _submit(page)
    expect(page.locator("#result-weights [data-result=refused]")).to_have_text(
        "This attempt is open in another browser."
    )
    expect(_notice(page)).to_have_count(0)
    expect(page.locator("#form-weights button[type=submit]")).to_be_enabled()
    assert _stored(variant) == 0


def test_a_variant_that_is_not_the_students_says_the_answer_was_not_stored(student_page, demo_site, watch):
    watch.expect_console_error(r"status of 404")
    watch.expect_console_error(r"Response Status Error Code 404")
    page = student_page
    variant = _open_worked_example(page, demo_site)
    gone = Variant.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000

    def to_a_variant_not_theirs(route):
        route.continue_(url=route.request.url.replace(f"/variants/{variant.pk}/", f"/variants/{gone}/"))

    page.route(SUBMIT_URL, to_a_variant_not_theirs)
    _submit(page)
    expect(_notice(page)).to_have_text(NOT_OPEN)
    _no_page_in_the_result(page)
    assert Submission.objects.count() == 0


@pytest.mark.parametrize(
    "status, notice",
    [(413, TOO_LARGE), (409, REFUSED), (410, REFUSED), (400, REFUSED), (401, REFUSED)],
    ids=["413", "409", "410", "400", "401"],
)
def test_any_other_refused_page_says_the_answer_was_not_stored(student_page, demo_site, watch, status, notice):
    watch.expect_console_error(rf"status of {status}")
    watch.expect_console_error(rf"Response Status Error Code {status}")
    page = student_page
    variant = _open_worked_example(page, demo_site)
    page.route(
        SUBMIT_URL,
        lambda route: route.fulfill(status=status, content_type="text/html; charset=utf-8", body=A_WHOLE_PAGE),
    )
    _submit(page)
    expect(_notice(page)).to_have_text(notice)
    _no_page_in_the_result(page)
    assert _stored(variant) == 0


def _submit_for_a_pending_result(page, settings, demo_site) -> Variant:
    """Submit with no wait for the grade: the reply is the pending result, which polls."""
    settings.GRADING_SUBMIT_WAIT_SECONDS = 0
    variant = _open_worked_example(page, demo_site)
    _submit(page)
    return variant


@pytest.mark.parametrize(
    "first_reply, console_errors",
    [
        (_busy, [r"status of 503", r"Response Status Error Code 503"]),
        (lambda route: route.abort(), [r"ERR_FAILED|net::", r"htmx:(afterRequest|sendError)"]),
    ],
    ids=["busy", "no reply"],
)
def test_a_poll_refused_or_unanswered_once_is_sent_again_and_gets_the_grade(
    student_page, demo_site, settings, watch, first_reply, console_errors
):
    for pattern in console_errors:
        watch.expect_console_error(pattern)
    page = student_page
    polls = []
    page.route(POLL_URL, _first_answered_by(first_reply, polls))
    variant = _submit_for_a_pending_result(page, settings, demo_site)
    page.locator("#result-weights [data-result=graded]").filter(has_text="attempt 1").wait_for()
    assert len(polls) >= 2 and polls[0] == polls[1]
    assert _stored(variant) == 1


def test_a_poll_refused_every_time_says_the_answer_is_stored(student_page, demo_site, settings, watch):
    watch.expect_console_error(r"status of 503")
    watch.expect_console_error(r"Response Status Error Code 503")
    page = student_page
    polls = []

    def always_busy(route):
        polls.append(route.request.url)
        _busy(route)

    page.route(POLL_URL, always_busy)
    variant = _submit_for_a_pending_result(page, settings, demo_site)
    expect(_notice(page)).to_have_text(POLL_BUSY, timeout=20_000)
    expect(page.locator("#result-weights [data-result=pending]")).to_have_count(0)
    assert len(polls) == 6  # the first poll and 5 more
    assert _stored(variant) == 1
    page.wait_for_timeout(1500)
    assert len(polls) == 6  # and then no more


def test_a_poll_after_the_session_ended_says_the_answer_is_stored(student_page, demo_site, settings, watch):
    watch.expect_console_error(r"status of 503")
    watch.expect_console_error(r"Response Status Error Code 503")
    page = student_page
    polls = []

    def busy_then_signed_out(route):
        _busy(route)
        page.context.clear_cookies(name="sessionid")  # the next poll goes without a session

    page.route(POLL_URL, _first_answered_by(busy_then_signed_out, polls))
    variant = _submit_for_a_pending_result(page, settings, demo_site)
    notice = _notice(page)
    expect(notice).to_have_text(POLL_SIGNED_OUT)
    expect(notice.get_by_role("link", name="Sign in again in a new tab")).to_have_attribute("target", "_blank")
    _no_page_in_the_result(page)
    assert len(polls) == 2
    assert _stored(variant) == 1


def test_a_poll_refused_by_the_exam_gate_shows_the_refusal(student_page, demo_site, settings, watch):
    watch.expect_console_error(r"status of 403")
    page = student_page
    page.route(
        POLL_URL,
        lambda route: route.fulfill(
            status=403,
            content_type="text/html; charset=utf-8",
            body='<p class="invalid" role="alert" data-result="refused">This attempt is open in another browser.</p>',
        ),
    )
    variant = _submit_for_a_pending_result(page, settings, demo_site)
    expect(page.locator("#result-weights [data-result=refused]")).to_have_text(
        "This attempt is open in another browser."
    )
    expect(page.locator("#result-weights [data-result=pending]")).to_have_count(0)
    assert _stored(variant) == 1
