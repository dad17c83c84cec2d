"""The API refuses the same answer as a part's latest one that counts: 409 ``unchanged``,
nothing stored, no attempt used (grading/tests/test_submit_unchanged.py has the rule's table)."""

from __future__ import annotations

import pytest

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client
from courses.models import AssignmentItem
from grading.models import Submission, SubmissionStatus
from grading.tests.conftest import WORKED_EXAMPLE

SAID = "This is the answer you sent last on this part; it was not stored again. Change it to try again."


def submit(client, item_id: int, part: str, answer, key: str | None = None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(f"/api/v1/exercises/{item_id}/parts/{part}/submissions/", {"answer": answer},
                       content_type="application/json", **headers)


@pytest.fixture
def student(world):
    return api_client(world.tokens["student"])


def outcome(response) -> tuple:
    if response.status_code == 202:
        return 202, None
    body = response.json()
    return response.status_code, body["type"]


UNCHANGED = (409, "urn:attnquiz:problem:unchanged")
ACCEPTED = (202, None)
INVALID = (400, "urn:attnquiz:problem:invalid")


# (case, first answer, the status the first is left in, the second answer, its outcome,
# answers stored); the part is "total" (a + b >= 4), so "0" and "1" are wrong.
@pytest.mark.parametrize(("first", "left", "second", "expected", "count"), [
    ("0", SubmissionStatus.GRADED, "0", UNCHANGED, 1),
    ("0", SubmissionStatus.GRADED, " 0\n", UNCHANGED, 1),
    ("0", SubmissionStatus.GRADED, "1", ACCEPTED, 2),
    ("0", SubmissionStatus.GRADED, "0.0", ACCEPTED, 2),  # other text, as on the page
    ("0", SubmissionStatus.GRADED, 0, INVALID, 1),  # a JSON number is refused: answers are text
    ("0", SubmissionStatus.QUEUED, "0", UNCHANGED, 1),
    ("0", SubmissionStatus.COULD_NOT_GRADE, "0", ACCEPTED, 2),
    ("0", SubmissionStatus.COULD_NOT_GRADE, " 0 ", ACCEPTED, 2),
], ids=["identical", "spaces around", "another answer", "a trailing zero more", "a JSON number",
        "still queued", "could not grade: a retry", "could not grade: a retry with spaces"])
def test_the_same_answer_again_is_409_unchanged(world, student, first, left, second, expected, count):
    assert submit(student, world.item.pk, "total", first).status_code == 202
    Submission.objects.update(status=left)
    response = submit(student, world.item.pk, "total", second)
    assert outcome(response) == expected
    assert Submission.objects.filter(part="total").count() == count
    if expected == UNCHANGED:
        assert (response.json()["detail"], response.json()["title"]) == (SAID, "Conflict")


def test_a_resend_under_its_key_is_202_with_the_stored_answer(world, student):
    first = submit(student, world.item.pk, "total", "0", key="answer-0001-first")
    again = submit(student, world.item.pk, "total", "0", key="answer-0001-first")
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json()["id"] == first.json()["id"]
    assert outcome(submit(student, world.item.pk, "total", "0", key="answer-0002-new")) == UNCHANGED
    assert Submission.objects.count() == 1


@pytest.fixture
def demo_student(demo, django_user_model):
    """student1 of the demo course, with an API token: the worked example's grid part."""
    user = django_user_model.objects.get(username="student1")
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE)
    return api_client(api_token_create(user=user, name="t", scope=TokenScope.WRITE, lifetime_days=7)[1]), item


@pytest.mark.parametrize(("second", "expected", "count"), [
    ([["0.1", "0.2", "0.3", "0.4"]], UNCHANGED, 1),
    ([[" 0.1", "0.2 ", "\t0.3", "0.4"]], UNCHANGED, 1),  # spaces around cells
    ([["0.1", "0.2", "0.3", "0.40"]], ACCEPTED, 2),  # one cell's text changed
    ("[0.1, 0.2, 0.3, 0.4]", ACCEPTED, 2),  # the same numbers as text: another answer as typed
])
def test_a_grid_is_compared_cell_by_cell(demo_student, second, expected, count):
    client, item = demo_student
    assert submit(client, item.pk, "weights", [["0.1", "0.2", "0.3", "0.4"]]).status_code == 202
    assert outcome(submit(client, item.pk, "weights", second)) == expected
    assert Submission.objects.filter(part="weights").count() == count
