"""The 500 page is rendered without the request (see attnquiz.errors), so it cannot know
who is signed in: its header shows the site name and a link home, never "Log in" or
"Sign up" to someone who is signed in."""

import pytest
from django.test import Client, RequestFactory

from attnquiz.errors import server_error
from authoring.tests.factories import PASSWORD, people_create


@pytest.fixture
def people(db):
    return people_create()


NEUTRAL_NAV = '<nav aria-label="Main">\n      <a href="/">Home</a>\n    </nav>'


def assert_neutral_header(page: str) -> None:
    assert '<a class="brand" href="/">attnquiz</a>' in page
    assert NEUTRAL_NAV in page
    for claim in ("Log in", "Sign up", "Log out", "/login/", "/accounts/signup/"):
        assert claim not in page


@pytest.mark.urls("attnquiz.tests.failing_urls")
def test_a_signed_in_user_is_not_offered_log_in_on_the_500_page(people):
    client = Client(raise_request_exception=False)
    assert client.login(username="sam", password=PASSWORD)
    response = client.get("/boom/")
    assert response.status_code == 500
    page = response.content.decode()
    assert_neutral_header(page)
    assert "sam" not in page


def test_the_handler_renders_the_neutral_header(db):
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    assert_neutral_header(response.content.decode())


def test_other_pages_keep_the_signed_in_header(client, people):
    client.login(username="sam", password=PASSWORD)
    page = client.get("/").content.decode()
    assert '<a class="who" href="/accounts/profile/">sam</a>' in page and "Log out" in page
    client.logout()
    page = client.get("/login/").content.decode()
    assert '<a href="/login/">Log in</a>' in page and '<a href="/accounts/signup/">Sign up</a>' in page


@pytest.mark.parametrize("template, context", [("503.html", {}), ("503.html", {"busy": True}),
                                               ("400.html", {"status": 400, "title": "Bad request", "message": "x"})])
def test_the_other_pages_rendered_without_the_request_have_the_neutral_header_too(template, context):
    from django.template.loader import render_to_string

    assert_neutral_header(render_to_string(template, context))
