"""The people page of a 300-student course in the browser at 1280 × 800: one page of 50,
the table fits (no sideways scroll, the actions column in view), long names and e-mails
wrap, "send the invitation again" asks with the number, and axe finds nothing serious (at
390 px too)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from authoring.tests.factories import PASSWORD
from courses.tests.test_people_page import course_with
from e2e.a11y import DESKTOP, axe_violations, check_page, horizontal_overflow, settle
from e2e.conftest import log_in
from e2e.test_layout_and_accessibility import assert_page_ok

pytestmark = pytest.mark.browser

LONG_NAMES = [
    ("s100", "Maximiliana-Theodora", "Konstantinopoulou-Wetherspoon",
     "maximiliana.theodora.konstantinopoulou-wetherspoon@students.example-university.edu"),
    ("s002", "Al", "Al-Farsi", "a@example.org"),
]


def _in_view(page, selector: str) -> dict:
    return page.evaluate(
        """selector => {
          const box = document.querySelector(selector).getBoundingClientRect();
          return {left: box.left, right: box.right, width: window.innerWidth};
        }""",
        selector,
    )


def test_a_300_student_people_page_fits_1280_px(page, watch, transactional_db, live_server, artifacts):
    course = course_with(students=300, joined=17, invited=283, expired=20)
    User = get_user_model()
    for username, first, last, email in LONG_NAMES:
        User.objects.filter(username=username).update(first_name=first, last_name=last, email=email)
    page.set_viewport_size(DESKTOP)
    log_in(page, "ines", PASSWORD)
    response = page.goto(reverse("courses:people", args=[course.slug]) + "?role=student&sort=name")
    assert response.status == 200
    settle(page)
    assert page.locator("#people-summary").inner_text() == (
        "303 people: 300 students (17 joined, 283 invited and not yet joined, 0 not invited), "
        "2 teaching assistants, 1 instructor. The invitation link of 20 students expired before they joined."
    )
    assert page.locator("#people tbody tr").count() == 50
    assert page.locator(".pagination").inner_text().split() == ["Page", "1", "of", "6", "Next", "Last"]

    # Nothing scrolls sideways: not the page, not the table's own box.
    overflow = horizontal_overflow(page)
    assert overflow["scrollWidth"] <= overflow["innerWidth"], overflow
    region = page.evaluate(
        "() => { const r = document.querySelector('.aq-table-scroll'); return [r.scrollWidth, r.clientWidth]; }"
    )
    assert region[0] <= region[1], region
    # The actions column and a row's buttons are in view, without scrolling sideways.
    header = _in_view(page, "#people thead th:last-child")
    assert page.locator("#people thead th:last-child").inner_text() == "Actions"
    assert 0 <= header["left"] and header["right"] <= header["width"], header
    long_row = page.locator("#people tbody tr", has_text="Konstantinopoulou")
    for name in ("Resend invitation to s100", "Drop s100"):
        button = long_row.get_by_role("button", name=name)
        assert button.is_visible()
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= DESKTOP["width"], (name, box)
    assert page.locator("#people tbody tr").first.locator("th").inner_text().startswith("Al Al-Farsi")

    # Bulk: the first press asks with the number and sends nothing.
    page.get_by_role("button", name="Send the invitation again to the 283 not yet joined of this list…").click()
    page.wait_for_load_state()
    assert page.locator("#invite-again-confirmation").inner_text().startswith(
        "Nothing is sent yet. Send the invitation e-mail again to 283 people who have not joined yet (students)?"
    )
    assert axe_violations(page, watch) == []
    page.get_by_role("link", name="Cancel").click()
    page.wait_for_load_state()
    assert page.locator("#invite-again-confirmation").count() == 0
    assert page.url.endswith("?role=student&sort=name")  # the filter and sort kept

    page.goto(reverse("courses:people", args=[course.slug]) + "?role=student&sort=name&page=2")
    assert_page_ok(check_page(page, watch, artifacts=artifacts, name="people-300"))
