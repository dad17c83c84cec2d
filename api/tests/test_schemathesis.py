"""Schemathesis drives every operation of the schema, as a student and as an instructor,
against the WSGI app: no 500, and every response (status, content type, headers, body)
matches the schema. Path parameters are the fixture's real objects, so requests reach the
views' real work instead of stopping at a 404; queries and bodies are generated."""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.tests.conftest import grading_objects_create, world_create
from exercises.services import variant_get_or_create_for_item
from grading.services import submission_create
from authoring.services import exercise_create
from authoring.tests.factories import product_yaml
from instructor.services import regrade_job_create

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 4


@pytest.fixture(autouse=True)
def keep_the_test_transactions_connection():
    """Schemathesis calls the WSGI app directly; like Django's test client, keep the
    end-of-request hook from closing the connection that holds the test's transaction."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(db):
    return schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


@pytest.fixture
def known_objects(db, django_capture_on_commit_callbacks):
    world = world_create()
    draft = exercise_create(course=world.people.course, actor=world.people.instructor,
                            source=product_yaml(slug="owned-product"))
    job = regrade_job_create(assignment=world.assignment, actor=world.people.instructor, enqueue=False)
    grading = grading_objects_create(world)
    # Through services, not Django's test client: the client reconnects the end-of-request
    # hook that the fixture above keeps off.
    variant = variant_get_or_create_for_item(item=world.item, student=world.people.student)
    with django_capture_on_commit_callbacks(execute=True):
        submitted = submission_create(variant=variant, student=world.people.student, part="total", raw_answer="0")
    return world, {
        "course_slug": world.people.course.slug,
        "assignment_slug": world.assignment.slug,
        "item_id": world.item.pk,
        "part": "product",
        "submission_id": submitted.pk,
        "job_id": job.pk,
        "slug": draft.exercise.slug,
        "number": draft.number,
        **{name: value for name, value in grading.items() if name != "graded_id"},
    }


@pytest.mark.parametrize("role", ["student", "instructor"])
def test_every_operation_conforms_to_the_schema(api_schema, known_objects, role):
    world, known = known_objects
    headers = {"Authorization": f"Bearer {world.tokens[role]}"}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) == 38
    for operation in operations:
        names = {p.name for p in operation.path_parameters}
        strategy = operation.as_strategy(
            path_parameters={name: known[name] for name in names}, headers=headers
        )

        @given(case=strategy)
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def run(case):
            response = case.call()
            case.validate_response(response, checks=CHECKS)

        run()
