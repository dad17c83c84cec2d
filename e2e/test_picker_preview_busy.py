"""Browser test: while another sandbox run of the instructor's holds their one place, a row's
preview in the exercise picker is refused (429) and says why; the row asks again by itself
after Retry-After, and once the other run has ended it shows the preview."""

from __future__ import annotations

import time
import uuid

import pytest
from django.urls import reverse

from e2e.conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def picker(page, watch, transactional_db, settings):
    from authoring.tests.factories import PASSWORD, assignment_create, people_create, product_yaml, published_version

    # A key prefix of this test's own: no preview cached by an earlier run is shown.
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}}
    people = people_create()
    version = published_version(source=product_yaml())
    assignment_create(people.course, [])
    watch.expect_console_error(r"status of 429")  # Chromium logs every 4xx reply
    log_in(page, "ines", PASSWORD)
    return people, version


def test_a_rows_preview_is_asked_for_again_until_the_other_run_has_ended(page, picker):
    from authoring import services
    from authoring.models import SourceCheckRun

    people, version = picker
    preview = reverse("instructor:exercise_preview", args=["attn", "week1", version.pk])
    statuses = []
    page.on("response", lambda response: response.url.endswith(preview) and statuses.append(response.status))
    page.goto(reverse("instructor:exercise_picker", args=["attn", "week1"]))
    services.source_check_start(user=people.instructor)

    row = page.locator(".aq-picker-row[data-slug='product']")
    row.locator("summary").click()
    notice = row.locator(".aq-preview-busy")
    notice.wait_for()
    assert notice.inner_text().startswith("A check of yours is still running, so this preview was not started")
    deadline = time.monotonic() + 15
    while statuses.count(429) < 2:  # the click, and the row's first try again
        assert time.monotonic() < deadline, statuses
        page.wait_for_timeout(100)
    SourceCheckRun.objects.all().delete()
    row.locator(".aq-picker-preview-body .prompt").wait_for(timeout=15_000)
    assert "Multiply" in row.locator(".aq-picker-preview-body").inner_text()
    assert row.locator(".aq-preview-busy").count() == 0
    assert statuses[:2] == [429, 429] and statuses[-1] == 200 and set(statuses) == {429, 200}
