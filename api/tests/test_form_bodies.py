"""Every REST endpoint reads JSON only: a form body (multipart or urlencoded) is a 415 problem
before any view reads it (a middleware had parsed the form, and DRF then gave the view empty
data: a multipart regrade ran as a dry run with its fields ignored). The token page under
/api/tokens/ is an HTML page whose forms still post."""

from __future__ import annotations

import pytest

from api.tests.conftest import api_client
from instructor.models import RegradeJob


@pytest.mark.parametrize("path", [
    "/api/v1/courses/attn/assignments/week1/regrades/",
    "/api/v1/courses/attn/assignments/week1/release/",
    "/api/v1/courses/attn/assignments/week1/attempt/",
])
@pytest.mark.parametrize("form", ["multipart", "urlencoded"])
def test_a_form_body_to_a_rest_endpoint_is_415(world, path, form):
    instructor = api_client(world.tokens["instructor"])
    if form == "multipart":
        response = instructor.post(path, {"apply": "1"})
        media_type = "multipart/form-data"
    else:
        response = instructor.post(path, "apply=1", content_type="application/x-www-form-urlencoded")
        media_type = "application/x-www-form-urlencoded"
    assert response.status_code == 415
    assert response.json() == {
        "type": "urn:attnquiz:problem:unsupported-media-type",
        "title": "Unsupported Media Type",
        "status": 415,
        "detail": f'Unsupported media type "{media_type}" in request.',
    }
    assert RegradeJob.objects.count() == 0


def test_an_empty_body_is_read_as_no_fields_whatever_its_declared_type(world):
    from django.test import Client

    from api.tests.conftest import bearer

    response = Client().post("/api/v1/courses/attn/assignments/week1/release/", **bearer(world.tokens["instructor"]))
    # The test client's POST without data (multipart, only its closing boundary), as an empty
    # `curl -X POST`: read as a JSON body with no fields, so the view names what is missing.
    assert response.status_code == 400
    assert response.json()["errors"] == {"action": ["This field is required."]}


def test_the_token_page_still_takes_its_forms(client, world):
    client.force_login(world.people.student)
    response = client.post("/api/tokens/", {"name": "laptop", "scope": "read", "lifetime_days": "30"})
    assert response.status_code == 201  # the token made, shown once
