"""Every response carries the enforced CSP, Permissions-Policy, framing and referrer headers."""

from __future__ import annotations

import pytest

EXPECTED_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "style-src-attr": "'unsafe-inline'",
    "img-src": "'self'",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
EXPECTED_PERMISSIONS = (
    "accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), hid=(), "
    "magnetometer=(), microphone=(), midi=(), payment=(), serial=(), usb=()"
)


def policy_of(response) -> dict[str, str]:
    """The CSP header as {directive: sources} (django-csp does not keep directive order)."""
    directives = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, _, sources = part.strip().partition(" ")
        assert name not in directives, f"{name} appears twice"
        directives[name] = sources
    return directives


RESPONSES = {
    "page": lambda client: client.get("/explore/"),
    "htmx fragment": lambda client: client.get(
        "/explore/scaling/", {"d_k": "16", "seed": "3"}, headers={"HX-Request": "true"}
    ),
    "json": lambda client: client.get("/explore/scaling.json", {"d_k": "16", "seed": "3"}),
    "not found": lambda client: client.get("/no-such-page/"),
    "login page": lambda client: client.get("/login/"),
}


@pytest.mark.parametrize("kind", RESPONSES)
def test_every_kind_of_response_carries_the_security_headers(client, db, kind):
    response = RESPONSES[kind](client)
    assert policy_of(response) == EXPECTED_POLICY
    assert "Content-Security-Policy-Report-Only" not in response
    assert response["Permissions-Policy"] == EXPECTED_PERMISSIONS
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_the_fragment_and_json_are_what_they_claim(client, db):
    fragment = RESPONSES["htmx fragment"](client)
    assert fragment.status_code == 200
    assert b"<html" not in fragment.content
    data = RESPONSES["json"](client)
    assert data.status_code == 200 and data["Content-Type"] == "application/json"


def test_lms_origins_set_frame_ancestors_and_drop_x_frame_options_together(client, db, settings):
    settings.LTI_FRAME_ANCESTORS = ["https://canvas.example.edu", "https://moodle.example.edu"]
    for kind in ("page", "htmx fragment", "json"):
        response = RESPONSES[kind](client)
        assert policy_of(response) == {
            **EXPECTED_POLICY,
            "frame-ancestors": "'self' https://canvas.example.edu https://moodle.example.edu",
        }
        assert "X-Frame-Options" not in response


def test_lti_endpoints_are_framed_by_the_same_rule_as_every_page(client, db):
    # The launch used to be exempt from X-Frame-Options while the CSP forbade framing.
    response = client.post("/lti/launch/", {"state": "x", "id_token": "y"})
    assert response["X-Frame-Options"] == "DENY"
    assert policy_of(response)["frame-ancestors"] == "'none'"


def test_only_the_api_docs_page_allows_data_images(client, db):
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert policy_of(docs) == {**EXPECTED_POLICY, "img-src": "'self' data:"}
    assert policy_of(client.get("/explore/"))["img-src"] == "'self'"


def test_no_template_has_inline_script_or_event_handlers():
    import re
    from pathlib import Path

    from django.conf import settings as project_settings

    offenders = []
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
    handler = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
    style_element = re.compile(r"<style\b", re.I)
    base = Path(project_settings.BASE_DIR)
    templates = [*base.glob("templates/**/*.html"), *base.glob("*/templates/**/*.html")]
    assert len(templates) > 40
    for template in templates:
        text = template.read_text()
        for pattern in (inline_script, handler, style_element):
            if pattern.search(text):
                offenders.append(f"{template.relative_to(base)}: {pattern.pattern}")
    assert offenders == []
