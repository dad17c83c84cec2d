"""Content negotiation that fails still answers the API's error shape: the schema's 406 was
its problem rendered by the view's first renderer, YAML, labelled application/problem+json."""

from __future__ import annotations

import pytest
import yaml

NOT_ACCEPTABLE = {
    "type": "urn:attnquiz:problem:not-acceptable",
    "title": "Not Acceptable",
    "status": 406,
    "detail": "Could not satisfy the request Accept header.",
}


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "application/problem+json"])
def test_an_accept_header_the_schema_cannot_satisfy_is_a_json_problem(client, db, accept):
    response = client.get("/api/schema/", HTTP_ACCEPT=accept)
    assert response.status_code == 406
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == NOT_ACCEPTABLE


def test_a_rest_endpoint_answers_the_same_406(client, db):
    response = client.get("/api/v1/courses/", HTTP_ACCEPT="application/xml")
    assert (response.status_code, response["Content-Type"]) == (406, "application/problem+json")
    assert response.json() == NOT_ACCEPTABLE


@pytest.mark.parametrize("accept, content_type", [
    ("*/*", "application/vnd.oai.openapi; charset=utf-8"),
    ("application/vnd.oai.openapi", "application/vnd.oai.openapi; charset=utf-8"),
    ("application/yaml", "application/yaml; charset=utf-8"),
    ("application/json", "application/json"),
    ("application/vnd.oai.openapi+json", "application/vnd.oai.openapi+json"),
])
def test_the_schema_still_speaks_yaml_and_json(client, db, accept, content_type):
    response = client.get("/api/schema/", HTTP_ACCEPT=accept)
    assert (response.status_code, response["Content-Type"]) == (200, content_type)
    schema = response.json() if "json" in content_type else yaml.safe_load(response.content)
    assert schema["info"]["title"] == "attnquiz API"
