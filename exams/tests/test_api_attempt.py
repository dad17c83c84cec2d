"""An exam's Start and Finish through the API, behind the page's gates."""

from __future__ import annotations

import pytest

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client
from exams.models import AssignmentAttempt


@pytest.fixture
def api(student):
    _, secret = api_token_create(user=student, name="t", scope=TokenScope.WRITE, lifetime_days=7)
    return api_client(secret)


def url(exam) -> str:
    return f"/api/v1/courses/{exam.course.slug}/assignments/{exam.slug}/attempt/"


def test_start_and_finish_through_the_api(api, exam, student, clock):
    exam.time_limit_minutes = 10
    exam.save()
    assert api.get(url(exam)).json()["state"] == "not_started"
    assert api.post(url(exam), {}, content_type="application/json").status_code == 400
    started = api.post(url(exam), {"action": "start"}, content_type="application/json").json()
    assert (started["state"], started["seconds_left"], started["time_limit_seconds"]) == ("running", 600, 600)
    clock.advance(minutes=3)
    finished = api.post(url(exam), {"action": "finish"}, content_type="application/json").json()
    assert (finished["state"], finished["ended_by"], finished["deadline"], finished["seconds_left"]) == (
        "finished", "you", None, None,
    )
    again = api.post(url(exam), {"action": "finish"}, content_type="application/json")
    assert again.status_code == 200  # finishing twice is one finish
    assert AssignmentAttempt.objects.get().close_reason == "finished"


def test_an_exam_with_an_access_code_is_browser_only(api, exam, student):
    exam.access_code = "owl-42"
    exam.save()
    response = api.post(url(exam), {"action": "start"}, content_type="application/json")
    assert (response.status_code, response.json()["detail"]) == (
        403, "This exam is taken in the browser: an API token cannot open it."
    )
    assert not AssignmentAttempt.objects.exists()


def test_homework_has_no_attempt(api, demo):
    response = api.get(f"/api/v1/courses/{demo.course.slug}/assignments/{demo.assignment.slug}/attempt/")
    assert response.status_code == 404
