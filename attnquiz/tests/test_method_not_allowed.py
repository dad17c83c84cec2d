"""A request by a method a page does not take: a 405 page that says which it takes (Django's
require_POST and require_safe answer with an empty body), and the read-only pages of
exercises refuse writes instead of answering them like a GET."""

from __future__ import annotations

import pytest
from django.urls import reverse

from courses.models import AssignmentItem


@pytest.fixture
def student(client, demo):
    client.login(username="student1", password="attention-demo")
    return client


def item_pk() -> int:
    return AssignmentItem.objects.order_by("pk").first().pk


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
@pytest.mark.parametrize("path", [
    lambda: reverse("dashboard"),
    lambda: reverse("exercise", args=[item_pk()]),
    lambda: reverse("assignment", args=["attention-101", "scaled-dot-product"]),
])
def test_a_read_only_page_refuses_a_write_with_a_page_that_says_so(student, method, path):
    response = getattr(student, method)(path())
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    page = response.content.decode()
    assert '<h1 id="error-title">That request is not used here</h1>' in page
    assert (f"This address does not take a {method.upper()} request (it takes GET, HEAD). Nothing was "
            "changed: go back and use the page&#x27;s own links and buttons.") in page


def test_a_form_address_opened_by_get_says_it_takes_post(student):
    response = student.get(reverse("practice_start", args=[item_pk()]))
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert "This address does not take a GET request (it takes POST)." in response.content.decode()


def test_a_made_up_method_is_shown_escaped_and_cut_short(student):
    response = student.generic("<SCRIPT>ALERT(1)</SCRIPT>" * 3, reverse("dashboard"))
    assert response.status_code == 405
    page = response.content.decode()
    assert "<SCRIPT>" not in page
    assert "does not take a &lt;SCRIPT&gt;ALERT(1)&lt;/SC request" in page


def test_the_read_only_pages_still_answer_get_and_head(student):
    for path in (reverse("dashboard"), reverse("exercise", args=[item_pk()])):
        assert student.get(path).status_code == 200
        assert student.head(path).status_code == 200


def test_the_api_keeps_its_own_problem_document_for_a_wrong_method(student):
    response = student.delete("/api/v1/courses/")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/problem+json") or response["Content-Type"].startswith("application/json")
    assert b"That request is not used here" not in response.content
