"""The API docs page renders in Chromium from vendored files, under the enforced CSP."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_api_docs_render_every_endpoint_with_no_console_error(page, transactional_db):
    page.goto("/api/docs/")
    page.locator(".swagger-ui .info .title").filter(has_text="attnquiz API").wait_for()
    page.locator(".opblock-summary-path").first.wait_for()
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/v1/exercises/{item_id}/parts/{part}/submissions/" in [p.replace("\u200b", "") for p in paths]
    assert len(paths) == 38  # one per operation
