"""The OpenAPI schema validates, and the docs page is served from vendored files."""

from __future__ import annotations

import io

import pytest
import yaml
from django.core.management import call_command


def test_schema_validates_with_no_warnings(db):
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    schema = yaml.safe_load(out.getvalue())
    assert schema["openapi"] == "3.1.0"
    assert schema["components"]["securitySchemes"]["apiToken"] == {
        "type": "http", "scheme": "bearer", "description": "A personal API token (`aq_…`) from /api/tokens/.",
    }


def test_schema_is_served_as_json(client, db):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "attnquiz API"


def test_docs_page_has_no_inline_script_and_no_cdn(client, db):
    page = client.get("/api/docs/").content.decode()
    assert "<script>" not in page and "<style>" not in page
    assert "cdn." not in page and "https://" not in page
    assert '<script src="/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js">' in page
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"] == "application/javascript"
    assert b"SwaggerUIBundle" in script.content


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_schema_and_docs_need_no_login(client, db, path):
    assert client.get(path).status_code == 200


def test_a_parts_points_and_weight_are_described_apart(db):
    out = io.StringIO()
    call_command("spectacular", stdout=out)
    part = yaml.safe_load(out.getvalue())["components"]["schemas"]["Part"]["properties"]
    assert part["points"]["type"] == ["number", "null"]
    assert part["points"]["description"].startswith("What the part is worth in the assignment, as the exercise page")
    assert part["weight"]["type"] == "number"
    assert part["weight"]["description"].startswith("The part's weight in its exercise")
