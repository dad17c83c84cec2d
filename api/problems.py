"""Errors as JSON problem details (RFC 9457): ``type``, ``title``, ``status``, ``detail`` and,
for invalid input, ``errors`` (field -> messages). No API URL ever answers an HTML page."""

from __future__ import annotations


from django.core.exceptions import PermissionDenied
from django.http import Http404
from redis.exceptions import ConnectionError as RedisConnectionError, TimeoutError as RedisTimeoutError
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import set_rollback

from attnquiz.errors import DATABASE_OUTAGE_ERRORS, RETRY_AFTER_SECONDS  # noqa: F401
from attnquiz.errors import api_service_unavailable as service_unavailable  # noqa: F401
from attnquiz.problems import PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, json_problem, problem_body, problem_type  # noqa: F401
from attnquiz.input_limits import UnstorableValue
from courses.services import CourseArchived


# What makes the API answer 503 rather than 500: the database or Redis out of reach.
OUTAGE_ERRORS = (*DATABASE_OUTAGE_ERRORS, RedisConnectionError, RedisTimeoutError)


class Problem(exceptions.APIException):
    """Raise from a view to answer a problem with a given status, code and message."""

    def __init__(self, detail: str, *, status_code: int, code: str, **extra):
        super().__init__(detail=detail, code=code)
        self.status_code = status_code
        self.problem_code = code
        self.extra = extra


def problem_response(body: dict, *, headers: dict | None = None) -> Response:
    return Response(body, status=body["status"], headers=headers, content_type=PROBLEM_CONTENT_TYPE)


def _flatten_errors(detail) -> dict:
    """DRF's nested ValidationError detail as {"field" or "field.sub": [messages]}."""
    flat: dict[str, list[str]] = {}

    def walk(value, path):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list) and value and all(isinstance(v, (str, exceptions.ErrorDetail)) for v in value):
            flat.setdefault(path or "non_field_errors", []).extend(str(v) for v in value)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}.{index}" if path else str(index))
        else:
            flat.setdefault(path or "non_field_errors", []).append(str(value))

    walk(detail, "")
    return flat


def _render_problems_as_json(request) -> None:
    """A problem is JSON whatever the view renders. DRF renders an error with the renderer the
    request negotiated or, when negotiation failed (406), the view's first one: the schema
    answered its 406 in YAML, labelled application/problem+json."""
    if request is not None:
        request.accepted_renderer, request.accepted_media_type = JSONRenderer(), "application/json"


def exception_handler(exc, context):
    """DRF's exception handler: every error it sees becomes a problem document."""
    _render_problems_as_json(context.get("request"))
    if isinstance(exc, OUTAGE_ERRORS):
        set_rollback()
        return service_unavailable(exc)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or "You may not do this.")
    if isinstance(exc, CourseArchived):
        return problem_response(problem_body(status_code=409, code="archived", detail=exc.message))
    if isinstance(exc, UnstorableValue):  # from a model's save: the text or date can never be stored
        return problem_response(problem_body(
            status_code=422, code=exc.code_name, detail=exc.messages[0],
            errors={exc.field: exc.messages} if exc.field else None,
        ))
    if isinstance(exc, Problem):
        return problem_response(
            problem_body(status_code=exc.status_code, code=exc.problem_code, detail=str(exc.detail), **exc.extra)
        )
    if not isinstance(exc, exceptions.APIException):
        return None  # a bug: the middleware answers 500 and logs it
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait + 0.999))
    if isinstance(exc, exceptions.ValidationError):
        body = problem_body(
            status_code=exc.status_code,
            code="invalid",
            detail="The request is not valid; see errors.",
            errors=_flatten_errors(exc.detail),
        )
    else:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        body = problem_body(status_code=exc.status_code, code=code, detail=str(detail))
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        view = context.get("view")
        auth_header = view.get_authenticate_header(context["request"]) if view else None
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
    return problem_response(body, headers=headers or None)


def not_found(request, *args, **kwargs):
    return json_problem(
        status_code=status.HTTP_404_NOT_FOUND,
        code="not_found",
        detail=f"There is no API endpoint at {request.path}; see /api/schema/.",
    )
