"""The exam's access controls stand in front of every student endpoint of the API that
reaches an exam answer: a regrade request about an exam answer (read or asked) from
outside the exam's networks, or with an API token while the exam is bound to one browser
session, is refused as the answer itself is."""

from __future__ import annotations

import pytest

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client
from courses.models import SessionPolicy
from exams.tests.conftest import correct, exam, graded_exam_answer, item, student  # noqa: F401  (fixtures)
from exercises.services import variant_get_or_create_for_item
from grading.models import Submission
from grading.services import submission_create
from instructor.models import RegradeRequest

INSIDE, OUTSIDE = "192.0.2.10", "198.51.100.7"
NETWORK_REFUSAL = (
    "This exam can only be taken from the networks its instructor allowed; your address "
    f"({OUTSIDE}) is not one of them. Ask the invigilator."
)


@pytest.fixture(autouse=True)
def setup(settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}
    settings.GRADING_MODE = "inline"


@pytest.fixture
def graded(graded_exam_answer):
    return graded_exam_answer


@pytest.fixture
def api(student):
    return api_client(api_token_create(user=student, name="t", scope=TokenScope.WRITE, lifetime_days=7)[1])


def url(submission) -> str:
    return f"/api/v1/submissions/{submission.pk}/regrade-requests/"


def test_a_regrade_request_from_outside_the_exams_networks_is_refused(exam, graded, api):
    exam.allowed_networks = "192.0.2.0/24"
    exam.save()
    listed = api.get(url(graded), REMOTE_ADDR=OUTSIDE)
    asked = api.post(url(graded), {"message": "Please look again."}, content_type="application/json",
                     REMOTE_ADDR=OUTSIDE)
    for response in (listed, asked):
        assert (response.status_code, response.json()["detail"]) == (403, NETWORK_REFUSAL)
    assert not RegradeRequest.objects.exists()
    # From inside, the same requests are answered.
    assert (api.get(url(graded), REMOTE_ADDR=INSIDE).status_code, api.get(url(graded), REMOTE_ADDR=INSIDE).json()) == (200, [])
    created = api.post(url(graded), {"message": "Please look again."}, content_type="application/json", REMOTE_ADDR=INSIDE)
    assert created.status_code == 201
    assert RegradeRequest.objects.count() == 1


def test_a_regrade_request_with_a_token_is_refused_while_the_exam_is_bound_to_a_browser(exam, graded, api):
    exam.session_policy = SessionPolicy.REFUSE_SECOND
    exam.save()
    for response in (
        api.get(url(graded)),
        api.post(url(graded), {"message": "Please look again."}, content_type="application/json"),
    ):
        assert (response.status_code, response.json()["detail"]) == (
            403, "This exam is taken in the browser: an API token cannot open it.",
        )
    assert not RegradeRequest.objects.exists()


def test_homework_answers_keep_their_regrade_requests(demo, item, student, api, clock, django_capture_on_commit_callbacks):
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submission_create(variant=variant, student=student, part="weights", raw_answer=correct(variant, "weights"))
    submission = Submission.objects.get(variant=variant, part="weights")
    assert (api.get(url(submission), REMOTE_ADDR=OUTSIDE).status_code, api.get(url(submission)).json()) == (200, [])
