"""In the browser: a course archived while a student's exercise page is open. The answer sent
from that page is refused with the reason, where its result would be (not "the server did
not take your answer, reload"); reloaded, the page is read-only: a notice, no forms."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from e2e.test_answer_refusals import _open_worked_example, _stored, _submit
from e2e.test_student_journey import WORKED_EXAMPLE, item_for

pytestmark = pytest.mark.browser

ARCHIVED = "This course was archived by its instructors; it takes no more answers. Your answer was not stored."


def test_an_answer_sent_after_the_archiving_says_why_and_the_page_becomes_read_only(student_page, demo_site, watch):
    from courses.services import course_archive

    watch.expect_console_error(r"status of 409")
    watch.expect_console_error(r"Response Status Error Code 409")
    page = student_page
    variant = _open_worked_example(page, demo_site)
    course_archive(course=demo_site.course, confirmed=True)
    _submit(page)
    expect(page.locator("#result-weights [data-archived]")).to_have_text(ARCHIVED)
    assert _stored(variant) == 0
    page.reload()
    expect(page.locator("#archived-notice")).to_contain_text(
        "This course was archived by its instructors; it takes no more answers."
    )
    expect(page.locator("form.answer-form")).to_have_count(0)
    assert item_for(demo_site, WORKED_EXAMPLE).assignment.course.is_archived
