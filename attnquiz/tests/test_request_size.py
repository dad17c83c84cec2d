"""A body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 with the README's message, for pages,
htmx and the API, under DEBUG=1 and DEBUG=0, with the CSRF check on as in a browser, and
no traceback on the console; nothing is stored. Real bodies of 1.1 MB through the client."""

from __future__ import annotations

import logging
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from authoring.tests.factories import FREE_TEXT_YAML, PASSWORD, assignment_create, people_create, published_version
from grading.models import Submission

MESSAGE = (
    "attnquiz accepts at most 1,000 kB in one form or request (files are uploaded separately). "
    "Nothing was saved; shorten it and send it again."
)
OVERSIZED_ANSWER = "x" * 1_100_000  # a free-text answer over 1 MB
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def scene(db):
    people = people_create()
    assignment = assignment_create(people.course, [published_version(source=FREE_TEXT_YAML)])
    item = assignment.items.get()
    browser = Client(enforce_csrf_checks=True)
    browser.login(username="sam", password=PASSWORD)
    browser.get(reverse("exercise", args=[item.pk]))  # the variant, and the CSRF cookie
    variant = item.variants.get(student=people.student)
    token = api_token_create(user=people.student, name="script", scope=TokenScope.WRITE, lifetime_days=7)[1]
    return {
        "browser": browser, "csrf": {"HTTP_X_CSRFTOKEN": browser.cookies["csrftoken"].value},
        "page_url": reverse("submit", args=[variant.pk, "why"]),
        "api_url": f"/api/v1/exercises/{item.pk}/parts/why/submissions/",
        "token": {"HTTP_AUTHORIZATION": f"Bearer {token}"},
    }


def _page(scene, *, htmx: bool, multipart: bool):
    headers = {**scene["csrf"], **({"HTTP_HX_REQUEST": "true"} if htmx else {})}
    if multipart:  # the test client's default encoding; Django counts the fields as it parses
        return scene["browser"].post(scene["page_url"], {"answer": OVERSIZED_ANSWER}, **headers)
    body = urlencode({"answer": OVERSIZED_ANSWER})
    return scene["browser"].generic("POST", scene["page_url"], body, content_type=FORM, **headers)


def _api(scene, *, session: bool):
    body = '{"answer": "' + OVERSIZED_ANSWER + '"}'
    if session:  # the browser's session: DRF's CSRF check reads the form first
        return scene["browser"].generic("POST", scene["api_url"], body, content_type="application/json", **scene["csrf"])
    return Client().generic("POST", scene["api_url"], body, content_type="application/json", **scene["token"])


REQUESTS = {
    "page form": lambda scene: _page(scene, htmx=False, multipart=False),
    "page multipart form": lambda scene: _page(scene, htmx=False, multipart=True),
    "htmx form": lambda scene: _page(scene, htmx=True, multipart=False),
    "htmx multipart form": lambda scene: _page(scene, htmx=True, multipart=True),
    "API with a token": lambda scene: _api(scene, session=False),
    "API in the browser's session": lambda scene: _api(scene, session=True),
}


@pytest.mark.parametrize("debug", [True, False], ids=["DEBUG=1", "DEBUG=0"])
@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_a_body_over_the_limit_is_a_413_that_says_so(scene, settings, caplog, debug, kind):
    settings.DEBUG = debug
    caplog.set_level(logging.INFO)
    response = REQUESTS[kind](scene)
    assert response.status_code == 413
    if kind.startswith("API"):
        assert response["Content-Type"] == "application/problem+json"
        assert response.json() == {
            "type": "urn:attnquiz:problem:too-large", "title": "Request Entity Too Large", "status": 413,
            "detail": MESSAGE,
        }
    else:
        html = response.content.decode()
        assert "<title>That request is too large · attnquiz</title>" in html and f"<p>{MESSAGE}</p>" in html
        assert "Error 413" in html
    assert Submission.objects.count() == 0
    assert [record.exc_info for record in caplog.records if record.exc_info] == []  # no traceback
    refusals = [record.getMessage() for record in caplog.records if record.name.startswith("django.")]
    assert refusals == [f"Request Entity Too Large: {scene['api_url' if kind.startswith('API') else 'page_url']}"]


def test_a_body_just_under_the_limit_is_read_and_answered_by_the_view(scene, settings):
    """The limit is Django's, not a stricter one: a form of 999,990 bytes reaches the view,
    which refuses a 20 kB+ answer itself (422, nothing stored)."""
    body = urlencode({"answer": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE - 20)})
    assert len(body) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = scene["browser"].generic(
        "POST", scene["page_url"], body, content_type=FORM, HTTP_HX_REQUEST="true", **scene["csrf"]
    )
    assert response.status_code == 422
    assert "That answer is too long (more than 20 kB)." in response.content.decode()
    assert Submission.objects.count() == 0


@pytest.mark.parametrize("debug", [True, False], ids=["DEBUG=1", "DEBUG=0"])
def test_the_live_preview_gets_its_413_as_json(scene, settings, debug):
    settings.DEBUG = debug
    body = '{"type": "free_text", "answer": "' + OVERSIZED_ANSWER + '"}'
    response = scene["browser"].generic(
        "POST", reverse("preview"), body, content_type="application/json", **scene["csrf"]
    )
    assert (response.status_code, response.json()) == (413, {"error": f"That request is too large. {MESSAGE}"})
