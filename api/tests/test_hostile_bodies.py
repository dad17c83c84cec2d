"""Every write operation of the OpenAPI schema, fed hostile JSON: deep nesting, NUL, lone
surrogates, numbers too large for a float, huge integers, wrong types. Each answers a 4xx
problem document or a success, never a 5xx, and nothing hostile is stored."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

from api.tests.conftest import api_client, grading_objects_create, world_create
from authoring.services import exercise_create
from authoring.tests.factories import product_yaml
from exercises.services import variant_get_or_create_for_item
from grading.services import submission_create
from instructor.services import regrade_job_create

WRITE_METHODS = ("post", "put", "patch", "delete")
# Raw JSON values: written as text, so escapes and number forms reach the parser as sent.
HOSTILE_VALUES = {
    "NUL": '"\\u0000"',
    "NUL inside": '"ab\\u0000cd"',
    "lone high surrogate": '"\\ud800"',
    "lone low surrogate": '"x\\udfffy"',
    "float overflow": "1e400",
    "negative float overflow": "-1e400",
    "huge integer": "9" * 5000,
    "NaN": "NaN",
    "deep array": "[" * 1100 + "]" * 1100,
    "deep object": '{"a":' * 1100 + "1" + "}" * 1100,
    "just too deep": "[" * 65 + "]" * 65,
    "true": "true",
    "list": "[1, 2]",
    "object": '{"x": "\\u0000"}',
    "empty": '""',
}
HOSTILE_BODIES = {
    **{f"whole body: {name}": value for name, value in HOSTILE_VALUES.items()},
    "invalid UTF-8": b'{"a": "\xff\xfe"}',
    "null": "null",
}


def schema_write_operations() -> list[tuple[str, str, list[str]]]:
    """(method, path template, request-body property names) of every write operation."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    operations = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            if method not in WRITE_METHODS:
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            ref = body.get("schema", {}).get("$ref", "")
            properties = list(components[ref.rsplit("/", 1)[-1]].get("properties", {})) if ref else []
            operations.append((method, path, properties))
    return operations


@pytest.fixture
def known(db, django_capture_on_commit_callbacks):
    world = world_create()
    draft = exercise_create(course=world.people.course, actor=world.people.instructor,
                            source=product_yaml(slug="owned-product"))
    job = regrade_job_create(assignment=world.assignment, actor=world.people.instructor, enqueue=False)
    grading = grading_objects_create(world)
    variant = variant_get_or_create_for_item(item=world.item, student=world.people.student)
    with django_capture_on_commit_callbacks(execute=True):
        submission_create(variant=variant, student=world.people.student, part="total", raw_answer="0")
    return world, {
        "course_slug": world.people.course.slug,
        "assignment_slug": world.assignment.slug,
        "item_id": world.item.pk,
        "part": "product",
        "job_id": job.pk,
        "slug": draft.exercise.slug,
        "number": draft.number,
        "submission_id": grading["graded_id"],
        **{name: value for name, value in grading.items() if name != "graded_id"},
    }


def bodies_for(properties: list[str]):
    for name, raw in HOSTILE_BODIES.items():
        yield name, raw
    for field in properties:
        for name, raw in HOSTILE_VALUES.items():
            yield f"{field}: {name}", '{"%s": %s}' % (field, raw)


def test_the_schema_has_the_write_operations_this_walks():
    operations = schema_write_operations()
    assert len(operations) >= 8
    assert ("post", "/api/v1/exercises/{item_id}/parts/{part}/submissions/", ["answer"]) in operations


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_no_hostile_body_gets_a_server_error_from_any_write_operation(known, role):
    from exercises.models import Exercise
    from grading.models import Submission

    world, objects = known
    client = api_client(world.tokens[role])
    stored_before = Submission.objects.count(), Exercise.objects.count()
    failures, sent = [], 0
    for method, path, properties in schema_write_operations():
        url = path.format(**objects)
        for name, raw in bodies_for(properties):
            body = raw if isinstance(raw, bytes) else raw.encode()
            response = client.generic(method.upper(), url, body, content_type="application/json")
            sent += 1
            if response.status_code >= 500 or (
                response.status_code >= 400 and response["Content-Type"] != "application/problem+json"
            ):
                failures.append((method, url, name, response.status_code))
    assert failures == []
    assert sent > 200
    # Nothing hostile was stored as an answer or an exercise.
    assert (Submission.objects.count(), Exercise.objects.count()) == stored_before
