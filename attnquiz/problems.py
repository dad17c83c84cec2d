"""Problem documents (RFC 9457, application/problem+json) built without DRF, so that
middleware and plain views of any app can answer an API path in the API's own format.
The REST API's exception handler (api.problems) builds on the same body."""

from __future__ import annotations

from http import HTTPStatus

from django.http import JsonResponse

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "urn:attnquiz:problem:"


def problem_type(code: str) -> str:
    return PROBLEM_TYPE_BASE + code.replace("_", "-")


def problem_body(*, status_code: int, code: str, detail: str, errors: dict | None = None, **extra) -> dict:
    body = {
        "type": problem_type(code),
        "title": HTTPStatus(status_code).phrase,
        "status": status_code,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    body.update(extra)
    return body


def json_problem(*, status_code: int, code: str, detail: str) -> JsonResponse:
    """A problem document outside DRF (unknown API paths, unhandled errors)."""
    return JsonResponse(
        problem_body(status_code=status_code, code=code, detail=detail),
        status=status_code,
        content_type=PROBLEM_CONTENT_TYPE,
    )
