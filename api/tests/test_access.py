"""Every endpoint × every kind of caller → the expected status.

Callers: nobody, a student's token, a TA's, an instructor's, another course's instructor,
an expired token, and a read-only instructor token (which may read but never write)."""

from __future__ import annotations

import json

import pytest

from api.tests.conftest import api_client, grading_objects_create, world_create
from authoring.services import exercise_create
from authoring.tests.factories import product_yaml
from exercises.services import variant_get_or_create_for_item
from grading.services import submission_create
from instructor.services import regrade_job_create

ROLES = ["anonymous", "student", "ta", "instructor", "outsider", "expired", "instructor_read"]
TOKEN_OF = {"anonymous": None, "student": "student", "ta": "ta", "instructor": "instructor",
            "outsider": "outsider", "expired": "expired", "instructor_read": "instructor_read"}

A = "/api/v1/courses/attn/assignments/week1/"
C = "/api/v1/courses/attn/"
# (method, path template, body, expected status per role in ROLES order)
MATRIX = [
    ("get", "/api/v1/courses/", None, [401, 200, 200, 200, 200, 401, 200]),
    ("get", C + "assignments/", None, [401, 200, 200, 200, 404, 401, 200]),
    ("get", A, None, [401, 200, 200, 200, 404, 401, 200]),
    ("get", "/api/v1/exercises/{item}/", None, [401, 200, 200, 200, 404, 401, 200]),
    ("post", "/api/v1/exercises/{item}/parts/product/submissions/", {"answer": "1"}, [401, 202, 202, 202, 404, 401, 403]),
    ("get", "/api/v1/submissions/{submission}/", None, [401, 200, 200, 200, 404, 401, 200]),
    ("get", A + "gradebook/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("get", A + "gradebook.csv", None, [401, 403, 200, 200, 404, 401, 200]),
    ("get", A + "submissions/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("get", A + "analytics/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("post", A + "regrades/", {}, [401, 403, 403, 202, 404, 401, 403]),
    ("get", A + "release/", None, [401, 403, 403, 200, 404, 401, 200]),  # what a release would do
    ("post", A + "release/", {"action": "release"}, [401, 403, 403, 200, 404, 401, 403]),
    # An exam's attempt: week1 is homework, so whoever may see it learns it has none.
    ("get", A + "attempt/", None, [401, 404, 404, 404, 404, 401, 404]),
    ("post", A + "attempt/", {"action": "start"}, [401, 404, 404, 404, 404, 401, 403]),
    ("get", C + "regrades/{job}/", None, [401, 403, 403, 200, 404, 401, 200]),
    # The job is a dry run still pending, so even its instructor is refused (409), not forbidden.
    ("post", C + "regrades/{job}/apply/", None, [401, 403, 403, 409, 404, 401, 403]),
    ("get", C + "roster/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("get", C + "gradebook/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("get", C + "gradebook.csv", None, [401, 403, 200, 200, 404, 401, 200]),
    ("post", C + "roster/", {"rows": [{"username": "sue"}]}, [401, 403, 403, 200, 404, 401, 403]),
    ("get", C + "exercises/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("post", C + "exercises/validate/", {"source": "slug: x\n"}, [401, 403, 200, 200, 404, 401, 200]),
    ("post", C + "exercises/", {"source": product_yaml(slug="pushed")}, [401, 403, 403, 201, 404, 401, 403]),
    ("get", C + "exercises/owned/versions/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("get", C + "exercises/owned/versions/1/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("post", C + "exercises/owned/versions/1/transition/", {"to_status": "in_review"},
     [401, 403, 403, 200, 404, 401, 403]),
    # Rubric grading: the essay's rubric exists and its criterion graded sam's answer, so
    # making the rubric again is refused (409) for the staff, and removing the criterion asks
    # first (409 confirmation_needed: sam's score would change); an item worth 0 points
    # changes no score, so it is added at once.
    ("get", C + "{question}rubric/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("post", C + "{question}rubric/", {}, [401, 403, 409, 409, 404, 401, 403]),
    ("post", C + "{question}rubric/criteria/", {"text": "Clear ({role})", "points": 0}, [401, 403, 201, 201, 404, 401, 403]),
    ("patch", C + "rubric-criteria/{criterion}/", {"text": "Names the variance of q·k"},
     [401, 403, 200, 200, 404, 401, 403]),
    ("delete", C + "rubric-criteria/{criterion}/", None, [401, 403, 409, 409, 404, 401, 403]),
    ("get", C + "{question}answers/", None, [401, 403, 200, 200, 404, 401, 200]),
    # An empty body: access is decided first, then the body is a 400.
    ("post", C + "{question}grades/", {}, [401, 403, 400, 400, 404, 401, 403]),
    ("get", A.replace("week1", "essay") + "regrade-requests/", None, [401, 403, 200, 200, 404, 401, 200]),
    ("post", C + "regrade-requests/{request}/reply/", {}, [401, 403, 400, 400, 404, 401, 403]),
    # A student's own graded answer: nobody else's (staff included) to ask about.
    ("get", "/api/v1/submissions/{graded}/regrade-requests/", None, [401, 200, 404, 404, 404, 401, 404]),
    ("post", "/api/v1/submissions/{graded}/regrade-requests/", {"message": "Please look again."},
     [401, 409, 404, 404, 404, 401, 403]),  # his request about it is open: 409 for him
]

CASES = [pytest.param(method, path, body, expected, id=f"{method} {path}") for method, path, body, expected in MATRIX]


@pytest.fixture
def objects(db):
    world = world_create()
    exercise_create(course=world.people.course, actor=world.people.instructor, source=product_yaml(slug="owned"))
    variant = variant_get_or_create_for_item(item=world.item, student=world.people.student)
    submission = submission_create(variant=variant, student=world.people.student, part="total", raw_answer="0")
    job = regrade_job_create(assignment=world.assignment, actor=world.people.instructor, enqueue=False)
    grading = grading_objects_create(world)
    return world, {
        "item": world.item.pk, "submission": submission.pk, "job": job.pk,
        "question": f"questions/{grading['exercise_id']}/why/", "criterion": grading["criterion_id"],
        "request": grading["request_id"], "graded": grading["graded_id"],
    }


def test_the_matrix_names_every_operation_of_the_schema():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {(method, path) for path, item in schema["paths"].items() for method in item}
    assert len(operations) == len(MATRIX) == 38


@pytest.mark.parametrize(("method", "path", "body", "expected"), CASES)
def test_access(objects, method, path, body, expected):
    """The roles in turn, on one set of objects: only the instructor's (or a student's or TA's
    own) write succeeds, and every refusal is decided before any state matters."""
    world, ids = objects
    url = path.format(**ids)
    seen = []
    for role in ROLES:
        token = TOKEN_OF[role]
        client = api_client(world.tokens[token] if token else None)
        if method == "get":
            response = client.get(url)
        else:
            # "{role}" in a value: each role's own text (a rubric refuses an item it already has).
            sent = {key: value.replace("{role}", role) if isinstance(value, str) else value
                    for key, value in (body or {}).items()}
            response = client.generic(method.upper(), url, json.dumps(sent), content_type="application/json")
        seen.append(response.status_code)
        if response.status_code >= 400:
            assert response["Content-Type"] == "application/problem+json"
            assert response.json()["status"] == response.status_code
        if response.status_code == 401:
            assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert dict(zip(ROLES, seen)) == dict(zip(ROLES, expected))


def test_a_release_without_an_action_releases_nothing(objects):
    world, _ = objects
    client = api_client(world.tokens["instructor"])
    response = client.post(A + "release/", {}, content_type="application/json")
    assert response.status_code == 400
    world.assignment.refresh_from_db()
    assert world.assignment.grades_released_at is None
