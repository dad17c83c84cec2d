"""Every /api/ answer is JSON: problem details for errors, rate limits with Retry-After."""

from __future__ import annotations

import pytest

from api import views
from api.tests.conftest import api_client


def test_unknown_api_path_is_a_json_404(db):
    response = api_client(None).get("/api/v2/anything/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "urn:attnquiz:problem:not-found",
        "title": "Not Found",
        "status": 404,
        "detail": "There is no API endpoint at /api/v2/anything/; see /api/schema/.",
    }


def test_an_unhandled_error_is_a_json_500(world, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(views.course_selectors, "enrolments_for_user", broken)
    client = api_client(world.tokens["student"])
    client.raise_request_exception = False
    response = client.get("/api/v1/courses/")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "urn:attnquiz:problem:server-error"
    assert b"boom" not in response.content


def test_a_404_from_an_access_check_is_a_problem(world):
    response = api_client(world.tokens["student"]).get("/api/v1/courses/other/assignments/")
    assert (response.status_code, response.json()["detail"]) == (404, "No such course.")
    assert response["Content-Type"] == "application/problem+json"


def test_field_errors_are_listed_by_field(world):
    response = api_client(world.tokens["student"]).post(
        f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/",
        {"answer": {"nested": 1}}, content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "answer": ["An answer is a string, a list of strings (choices) or a list of rows of strings (a grid)."]
    }


def test_malformed_json_is_a_400_problem(world):
    response = api_client(world.tokens["student"]).post(
        f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/", "{not json", content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["type"] == "urn:attnquiz:problem:parse-error"


@pytest.mark.parametrize("wait", ["-1", "11", "soon"])
def test_wait_is_bounded(world, wait):
    response = api_client(world.tokens["student"]).get(f"/api/v1/submissions/1/?wait={wait}")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["wait"]


def test_each_token_has_its_own_rate_limit(world, settings):
    settings.API_RATE_LIMITS = {"token": "3/min", "user": "100/min", "anon": "100/min"}
    student, ta = api_client(world.tokens["student"]), api_client(world.tokens["ta"])
    assert [student.get("/api/v1/courses/").status_code for _ in range(3)] == [200, 200, 200]
    limited = student.get("/api/v1/courses/")
    assert limited.status_code == 429
    assert limited["Retry-After"] == "20"  # a token every 20 s at 3 a minute
    assert limited.json()["type"] == "urn:attnquiz:problem:throttled"
    assert ta.get("/api/v1/courses/").status_code == 200  # another token is not limited
    # A second token of the same user has its own budget too.
    assert api_client(world.tokens["student_read"]).get("/api/v1/courses/").status_code == 200


def test_json_nested_1100_deep_is_refused_before_it_is_parsed(world):
    student = api_client(world.tokens["student"])
    url = f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/"
    body = '{"answer": ' + "[" * 1100 + "]" * 1100 + "}"
    response = student.post(url, body, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["detail"] == "JSON parse error - The JSON is nested more than 64 levels deep."
    # 64 levels is still read (and refused as an answer, not as JSON).
    at_limit = student.post(url, '{"answer": ' + "[" * 63 + "]" * 63 + "}", content_type="application/json")
    assert "nested" not in at_limit.json().get("detail", "")


@pytest.mark.parametrize("text, reason", [
    ('"ab\\u0000cd"', "contains a NUL character (U+0000)"),
    ('"\\ud800"', "contains a lone UTF-16 surrogate, which is not a character"),
])
def test_unstorable_text_in_json_is_refused_with_400(world, text, reason):
    response = api_client(world.tokens["student"]).post(
        f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/",
        '{"answer": %s}' % text, content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["detail"] == f"JSON parse error - This text {reason}; remove it and send it again."


def test_a_number_past_the_float_range_is_refused(world):
    response = api_client(world.tokens["student"]).post(
        f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/",
        '{"answer": 1e400}', content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "JSON parse error - The number 1e400 is too large."


@pytest.mark.parametrize("outage", [
    pytest.param(lambda: __import__("django.db").db.OperationalError("could not connect to server"), id="database"),
    pytest.param(lambda: __import__("redis").exceptions.ConnectionError("Error 111 connecting to redis"), id="redis"),
    pytest.param(lambda: __import__("redis").exceptions.TimeoutError("Timeout reading from socket"), id="redis-timeout"),
])
def test_an_outage_is_a_503_problem_with_retry_after(world, monkeypatch, outage):
    from courses import selectors

    def unreachable(**kwargs):
        raise outage()

    monkeypatch.setattr(selectors, "enrolments_for_user", unreachable)
    response = api_client(world.tokens["student"]).get("/api/v1/courses/")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == "30"
    assert response.json()["type"] == "urn:attnquiz:problem:service-unavailable"


def test_an_outage_outside_a_view_is_still_a_json_503():
    from django.db import OperationalError
    from django.test import RequestFactory

    from attnquiz.errors import server_error

    request = RequestFactory().get("/api/v1/courses/")
    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        response = server_error(request)
    assert (response.status_code, response["Content-Type"], response["Retry-After"]) == (503, "application/problem+json", "30")
