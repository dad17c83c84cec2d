"""The API docs page (vendored Swagger UI) passes axe's colour-contrast rule (WCAG AA).

Swagger UI's own palette does not: white on its light method badges (GET 2.3:1, POST
2.0:1, PATCH 1.6:1), its green Authorize, red Cancel, blue Execute, grey "(path)" and
"Expand all", and the numbers of its highlighted JSON. Our sheet
static/attnquiz/css/api-docs.css, loaded after Swagger's, darkens them. The page is
checked as a reader goes through it: as loaded, an operation open with "Try it out",
a request sent (an anonymous reader gets a 401 problem document, shown highlighted),
and every schema expanded; on a phone and on a desktop. The Authorize dialog, where a reader
pastes a token, is checked open too.
"""

from __future__ import annotations

import re

import pytest

from e2e.a11y import DESKTOP, PHONE, axe_violations, settle

pytestmark = pytest.mark.browser


def contrast_failures(page, watch) -> list[str]:
    return [
        target
        for violation in axe_violations(page, watch)
        if violation["id"] == "color-contrast"
        for target in violation["targets"]
    ]


def open_docs(page) -> None:
    page.goto("/api/docs/")
    page.locator(".swagger-ui .info .title").filter(has_text="attnquiz API").wait_for()
    page.locator(".opblock-summary-path").first.wait_for()
    settle(page)


def test_the_api_docs_page_as_loaded_has_no_contrast_violation(page, watch, transactional_db):
    seen = {}
    for label, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        page.set_viewport_size(viewport)
        open_docs(page)
        seen[label] = contrast_failures(page, watch)
    assert seen == {"phone": [], "desktop": []}
    assert page.locator(".opblock-get .opblock-summary-method").first.evaluate(
        "el => getComputedStyle(el).backgroundColor"
    ) == "rgb(24, 102, 184)"  # #1866b8, not Swagger's #61affe: our sheet is the one applied


def test_an_operation_tried_out_and_the_schemas_opened_have_no_contrast_violation(
    page, watch, transactional_db
):
    watch.expect_console_error(r"status of 401 \(Unauthorized\)")  # the request sent, unauthenticated
    page.set_viewport_size(DESKTOP)
    open_docs(page)
    seen = {}

    courses = page.locator("#operations-student-v1_courses_list")
    courses.locator(".opblock-summary").click()
    courses.get_by_role("button", name="Try it out").click()
    seen["tried out"] = contrast_failures(page, watch)

    courses.get_by_role("button", name="Execute").click()
    status = courses.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for()
    assert status.inner_text().strip() == "401"
    courses.locator(".live-responses-table .microlight").first.wait_for()
    seen["response shown"] = contrast_failures(page, watch)

    attempt = page.locator("#operations-student-v1_courses_assignments_attempt_create")
    attempt.locator(".opblock-summary").click()
    attempt.locator(".parameter__in").first.wait_for()
    page.get_by_role("button", name=re.compile("^Expand all")).first.click()
    page.locator(".json-schema-2020-12__constraint--string").first.wait_for()
    seen["schemas expanded"] = contrast_failures(page, watch)

    assert seen == {"tried out": [], "response shown": [], "schemas expanded": []}


def test_the_authorize_dialog_has_no_contrast_violation(page, watch, transactional_db):
    # The dialog where a reader pastes a token: its labels, input, Authorize and Close.
    for viewport in (PHONE, DESKTOP):
        page.set_viewport_size(viewport)
        open_docs(page)
        page.locator(".auth-wrapper .btn.authorize").click()
        dialog = page.locator(".dialog-ux .modal-ux")
        dialog.wait_for()
        settle(page)
        assert contrast_failures(page, watch) == [], viewport
        dialog.locator(".close-modal").click()
        dialog.wait_for(state="detached")
