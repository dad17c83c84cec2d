"""Styled 403/404/500 pages in the product's layout, and a sign-out that confirms first."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import Client, RequestFactory

from attnquiz.errors import server_error


def in_layout(page: str) -> bool:
    return 'class="site-header"' in page and "attnquiz/attnquiz.css" in page


def test_unknown_address_is_a_styled_404(client, db):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert in_layout(page)
    assert '<h1 id="error-title">There is no such page</h1>' in page
    assert "Resolver404" not in page


def test_a_404_from_a_view_says_what_was_missing(client, demo):
    client.login(username="student1", password="attention-demo")
    response = client.get("/grading/submissions/999999/")
    assert response.status_code == 404
    assert '<h1 id="error-title">There is no such page</h1>' in response.content.decode()


def test_a_student_on_a_teaching_page_gets_a_styled_403(client, demo):
    client.login(username="student1", password="attention-demo")
    response = client.get("/teach/attention-101/")
    assert response.status_code == 403
    page = response.content.decode()
    assert in_layout(page)
    assert '<h1 id="error-title">You may not open this page</h1>' in page


def test_an_expired_form_is_a_styled_403():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    page = response.content.decode()
    assert in_layout(page)
    assert '<h1 id="error-title">This form has expired</h1>' in page


@pytest.mark.urls("attnquiz.tests.failing_urls")
def test_a_bug_is_a_styled_500_that_touches_no_database(db, django_assert_num_queries):
    client = Client(raise_request_exception=False)
    with django_assert_num_queries(0):
        response = client.get("/boom/")
    assert response.status_code == 500
    page = response.content.decode()
    assert in_layout(page)
    assert '<h1 id="error-title">Something went wrong on our side</h1>' in page
    assert "a bug in a view" not in page
    assert "default-src 'self'" in response["Content-Security-Policy"]


class ExplodingUser:
    def __getattr__(self, name):
        raise AssertionError(f"the error page read request.user.{name}")


def test_the_500_handler_never_reads_the_user(db, django_assert_num_queries):
    request = RequestFactory().get("/")
    request.user = ExplodingUser()
    with django_assert_num_queries(0):
        response = server_error(request)
    assert response.status_code == 500


def test_the_500_handler_answers_503_for_a_database_error_raised_outside_a_view():
    request = RequestFactory().get("/")
    request.user = ExplodingUser()
    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503
    assert "attnquiz is temporarily unavailable" in response.content.decode()


def test_get_logout_asks_to_confirm_with_a_post_button(client, demo):
    client.login(username="student1", password="attention-demo")
    response = client.get("/logout/")
    assert response.status_code == 200
    page = response.content.decode()
    assert '<h1>Log out of attnquiz?</h1>' in page
    assert '<form method="post" action="/logout/" class="actions">' in page
    assert client.get("/").status_code == 200  # the GET signed nobody out
    signed_out = client.post("/logout/")
    assert signed_out.status_code == 302 and signed_out["Location"] == "/login/"
    assert client.get("/")["Location"].startswith("/login/")


def test_get_logout_when_signed_out_goes_to_the_login_page(client, db):
    response = client.get("/logout/")
    assert response.status_code == 302 and response["Location"] == "/login/"
