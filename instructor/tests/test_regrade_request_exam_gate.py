"""The page's "ask for another look" at an exam answer passes the exam's gate, as the API's
does: from outside the exam's networks it is refused and nothing is stored."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from exams.tests.conftest import exam, graded_exam_answer, item, student  # noqa: F401  (fixtures)
from instructor.models import RegradeRequest

OUTSIDE = "198.51.100.7"


@pytest.fixture(autouse=True)
def inline(settings):
    settings.GRADING_MODE = "inline"


@pytest.fixture
def graded(graded_exam_answer):
    return graded_exam_answer


@pytest.mark.parametrize(("address", "status", "stored"), [(OUTSIDE, 403, 0), ("192.0.2.10", 302, 1)])
def test_a_regrade_request_on_the_page_is_refused_outside_the_exams_networks(
    exam, graded, student, address, status, stored
):
    exam.allowed_networks = "192.0.2.0/24"
    exam.save()
    client = Client(REMOTE_ADDR=address)
    client.force_login(student)
    response = client.post(reverse("grades:regrade_request", args=[graded.pk]), {"message": "Please look again."})
    assert response.status_code == status
    if status == 403:
        assert f"your address ({OUTSIDE}) is not one of them" in response.content.decode()
    assert RegradeRequest.objects.filter(submission=graded).count() == stored
