"""The exercise-bank API on sources whose spec the database cannot store (the editor's
table, authoring/tests/test_unstorable_sources.py): a push is the problem+json 422 of any
invalid file and stores nothing; validate says invalid, with the same issue."""

import pytest

from api.tests.conftest import api_client
from authoring.tests.test_unstorable_sources import BAD_SOURCES, IDS
from exercises.models import Exercise, ExerciseVersion

C = "/api/v1/courses/attn/exercises/"


def post(client, path, body):
    return client.post(path, body, content_type="application/json")


def as_dict(issue: str) -> dict:
    """'line 23: variants.v1.a: message' as the API's issue object."""
    line, path, message = issue.split(": ", 2)
    return {"line": int(line.removeprefix("line ")), "path": path, "message": message}


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_push_is_a_422_problem_with_the_issue_and_stores_nothing(world, what, source, issue):
    before = (Exercise.objects.count(), ExerciseVersion.objects.count())
    response = post(api_client(world.tokens["instructor"]), C, {"source": source})
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["type"], body["detail"], body["issues"]) == (
        "urn:attnquiz:problem:invalid-exercise",
        f"The exercise file has 1 problem(s): {issue}",
        [as_dict(issue)],
    )
    assert (Exercise.objects.count(), ExerciseVersion.objects.count()) == before


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_validate_reports_the_issue_instead_of_valid(world, what, source, issue):
    before = ExerciseVersion.objects.count()
    response = post(api_client(world.tokens["ta_read"]), C + "validate/", {"source": source})
    assert response.status_code == 200
    body = response.json()
    assert (body["valid"], body["slug"], body["issues"]) == (False, None, [as_dict(issue)])
    assert ExerciseVersion.objects.count() == before
