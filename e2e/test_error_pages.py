"""Error pages and the sign-out confirmation, in the browser and under the CSP."""

from __future__ import annotations

import re

import pytest

from .conftest import log_in

pytestmark = pytest.mark.browser


def test_a_missing_page_is_styled_and_the_logout_link_confirms(page, watch, demo_site):
    log_in(page, "student1")
    response = page.goto("/no-such-page/")
    assert response.status == 404
    watch.expect_console_error(r"status of 404")
    assert page.get_by_role("heading", level=1).inner_text() == "There is no such page"
    assert page.locator(".site-header .brand").inner_text() == "attnquiz"

    page.goto("/logout/")
    assert page.get_by_role("heading", level=1).inner_text() == "Log out of attnquiz?"
    page.get_by_role("button", name="Log out").last.click()
    page.wait_for_url(re.compile(r"/login/$"))
    page.goto("/")
    page.wait_for_url(re.compile(r"/login/\?next=/$"))
