"""What the submissions endpoint refuses before anything is stored or counted: answers sent
too fast (429 with Retry-After), JSON numbers where the schema says strings (400), and bodies
that are not JSON, multipart forms included (415)."""

from __future__ import annotations

import pytest
from django.core.cache import caches

from api.tests.conftest import api_client
from grading.models import Submission

NUMBER_ANSWER = (
    'Send the answer as text: "0.5", not 0.5 (a list of strings for choices, a list of rows of '
    "strings for a grid). A JSON number loses how it was written (1.50 arrives as 1.5), and "
    "answers are read and compared as typed."
)


@pytest.fixture
def student(world):
    return api_client(world.tokens["student"])


@pytest.fixture
def url(world):
    return f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/"


@pytest.fixture
def answer_limit(settings, world):
    """The per-student answer bucket: a burst of 2, then one token every 100 s."""
    key = f"token-bucket:submit:{world.people.student.pk}"
    settings.SUBMIT_RATE_BURST = 2
    settings.SUBMIT_RATE_PER_SECOND = 0.01
    caches["default"].delete(key)
    yield
    caches["default"].delete(key)


def attempts_left(student, world) -> int:
    parts = student.get(f"/api/v1/exercises/{world.item.pk}/").json()["parts"]
    return next(part["attempts_left"] for part in parts if part["key"] == "product")


def test_answers_over_the_rate_limit_are_429_with_retry_after(world, student, url, answer_limit):
    for answer in ("1", "2"):
        assert student.post(url, {"answer": answer}, content_type="application/json").status_code == 202
    refused = student.post(url, {"answer": "3"}, content_type="application/json")
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert refused["Retry-After"] == "100"  # one token per 100 s, the bucket just emptied
    assert refused.json() == {
        "type": "urn:attnquiz:problem:rate-limited",
        "title": "Too Many Requests",
        "status": 429,
        "detail": "You are sending answers too quickly. Wait 100 seconds and send it again; "
        "this answer was not stored.",
    }
    assert sorted(Submission.objects.values_list("raw_answer", flat=True)) == ["1", "2"]


@pytest.mark.parametrize(("wait", "header"), [(0.2, "1"), (2.0, "2"), (2.01, "3")])
def test_retry_after_is_whole_seconds_and_at_least_one(world, student, url, monkeypatch, wait, header):
    from grading import services

    monkeypatch.setattr(services.throttle, "token_take", lambda **kwargs: wait)
    refused = student.post(url, {"answer": "3"}, content_type="application/json")
    assert (refused.status_code, refused["Retry-After"]) == (429, header)
    assert Submission.objects.count() == 0


@pytest.mark.parametrize(
    "answer",
    [123, 0.5, -0, [[5, 48]], ["1", 2], [["1", "2"], ["3", 4.0]], [1]],
)
def test_a_json_number_in_an_answer_is_a_400_that_uses_no_attempt(world, student, url, answer):
    before = attempts_left(student, world)
    response = student.post(url, {"answer": answer}, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "urn:attnquiz:problem:invalid",
        "title": "Bad Request",
        "status": 400,
        "detail": "The request is not valid; see errors.",
        "errors": {"answer": [NUMBER_ANSWER]},
    }
    assert Submission.objects.count() == 0
    assert attempts_left(student, world) == before == 3


def test_a_number_refused_takes_no_token_from_the_rate_limit(world, student, url, answer_limit):
    for _ in range(5):
        assert student.post(url, {"answer": 7}, content_type="application/json").status_code == 400
    for answer in ("1", "2"):  # the whole burst of 2 is still there
        assert student.post(url, {"answer": answer}, content_type="application/json").status_code == 202


def test_the_same_answer_as_text_is_taken(world, student, url):
    response = student.post(url, {"answer": "123"}, content_type="application/json")
    assert response.status_code == 202
    assert Submission.objects.get().raw_answer == "123"


@pytest.mark.parametrize(
    ("body", "content_type", "media_type"),
    [
        ("answer=1", "application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),
        (None, None, "multipart/form-data"),  # the test client's default: a multipart form
        ("answer=1", "text/plain", "text/plain"),
    ],
)
def test_a_body_that_is_not_json_is_415(world, student, url, body, content_type, media_type):
    if content_type is None:
        response = student.post(url, {"answer": "1"})
    else:
        response = student.post(url, body, content_type=content_type)
    assert response.status_code == 415
    assert response.json() == {
        "type": "urn:attnquiz:problem:unsupported-media-type",
        "title": "Unsupported Media Type",
        "status": 415,
        "detail": f'Unsupported media type "{media_type}" in request.',
    }
    assert Submission.objects.count() == 0


def test_a_multipart_exam_action_is_415_too(world, student):
    from authoring.tests.factories import assignment_create, product_yaml, published_version

    assignment_create(world.people.course, [published_version(source=product_yaml(slug="exam-q"))],
                      slug="midterm", kind="exam")
    url = "/api/v1/courses/attn/assignments/midterm/attempt/"
    response = student.post(url, {"action": "start"})
    assert response.status_code == 415
    assert response.json()["detail"] == 'Unsupported media type "multipart/form-data" in request.'
    assert student.get(url).json()["state"] == "not_started"
