"""The API's result of an answer graded by a person carries the rubric items that applied
(in the rubric's order, with their points) beside the grader's comment, under the same
review policy as the pages, and the schema documents them."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
import yaml
from django.core.management import call_command
from django.utils import timezone

from api.tests.conftest import api_client
from api.tests.test_grading import essay  # noqa: F401  (the fixture)
from courses.models import ReleaseMoment
from instructor import services_rubrics

CRITERIA = [("Divides by √d_k", 1.0), ("Says the variance grows", 2.0), ("Forgot the softmax", -0.5)]


@pytest.fixture
def graded(essay):  # noqa: F811
    """sam's essay answer graded with the first and the last item (ticked last first)."""
    world, answer = essay["world"], essay["answers"]["sam"]
    rubric = services_rubrics.rubric_create(course=world.people.course, item=essay["item"], part="why", criteria=CRITERIA)
    divides, _, forgot = rubric.items.all()
    services_rubrics.submission_grade_with_rubric(
        submission=answer, rubric=rubric, grader=world.people.ta, item_ids=[forgot.pk, divides.pk],
        comment="Mind the softmax.",
    )
    return essay


def read_feedback(essay, role: str = "student") -> dict:  # noqa: F811
    response = api_client(essay["world"].tokens[role]).get(f"/api/v1/submissions/{essay['answers']['sam'].pk}/")
    assert response.status_code == 200, response.content
    return response.json()["feedback"]


def test_the_result_lists_the_items_that_applied_with_the_comment(graded):
    feedback = read_feedback(graded)
    assert feedback["message"] == "Mind the softmax."
    assert feedback["rubric"] == [
        {"text": "Divides by √d_k", "points": 1.0}, {"text": "Forgot the softmax", "points": -0.5},
    ]
    assert read_feedback(graded, "ta")["rubric"] == feedback["rubric"]


def test_an_automatically_graded_answer_has_an_empty_list(essay):  # noqa: F811
    response = api_client(essay["world"].tokens["student"]).get(f"/api/v1/submissions/{essay['product'].pk}/")
    assert response.json()["feedback"]["rubric"] == []


@pytest.mark.parametrize("released, rubric_shown", [(False, False), (True, True)])
def test_the_items_wait_for_the_release_of_the_score(graded, released, rubric_shown):
    assignment = graded["item"].assignment
    assignment.show_score = ReleaseMoment.ON_RELEASE
    assignment.grades_released_at = timezone.now() - timedelta(seconds=1) if released else None
    assignment.save()
    feedback = read_feedback(graded)
    assert feedback["message"] == "Mind the softmax."  # the comment goes with the verdict
    assert (feedback["rubric"] != []) == rubric_shown


def test_the_schema_documents_the_items(db):
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    schemas = yaml.safe_load(out.getvalue())["components"]["schemas"]
    rubric = schemas["Feedback"]["properties"]["rubric"]
    assert rubric["type"] == "array" and rubric["items"] == {"$ref": "#/components/schemas/RubricLine"}
    assert "in the rubric's order" in rubric["description"]
    assert schemas["RubricLine"]["properties"]["points"]["type"] == "number"
    assert schemas["RubricLine"]["required"] == ["points", "text"]
