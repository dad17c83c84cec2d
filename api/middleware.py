"""Answers an unhandled error under /api/ with a JSON problem, never Django's HTML page:
an outage of the database or Redis is a 503 with Retry-After, anything else a logged 500."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404

from attnquiz.input_limits import UnstorableValue, request_too_large_response

from .problems import OUTAGE_ERRORS, json_problem, service_unavailable

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"


# Every API endpoint reads JSON only. A form body (multipart or urlencoded) is parsed by the
# size check's middleware before DRF sees it, and DRF then hands a view empty data: a
# multipart POST to an endpoint read its fields as missing, or as defaults (a regrade ran
# its dry run). So a form body under /api/ is refused here, for every endpoint at once.
# (The token page under /api/tokens/ is an HTML page with forms: only /api/v1/ is the REST API.)
FORM_MEDIA_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
REST_PREFIX = API_PREFIX + "v1/"


def form_body_refusal(request):
    """The 415 problem for a form body sent to an API endpoint, or None."""
    if request.method not in WRITE_METHODS or not request.path.startswith(REST_PREFIX):
        return None
    media_type = (request.content_type or "").split(";")[0].strip().lower()
    if media_type not in FORM_MEDIA_TYPES or not _has_body(request):
        return None  # a form with no fields says nothing, whatever its declared type
    return json_problem(
        status_code=415, code="unsupported_media_type",
        detail=f'Unsupported media type "{media_type}" in request.',
    )


def _has_body(request) -> bool:
    """Whether the form carries any field or file (a multipart body with none is only its
    closing boundary: a POST with no data, as ``curl -X POST -F`` nothing or a test client
    sends it)."""
    return bool(request.POST) or bool(request.FILES)


class ApiProblemMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return form_body_refusal(request) or self.get_response(request)

    def process_exception(self, request, exception):
        if not request.path.startswith(API_PREFIX):
            return None
        if isinstance(exception, Http404):
            return json_problem(status_code=404, code="not_found", detail=str(exception) or "Not found.")
        if isinstance(exception, PermissionDenied):
            return json_problem(status_code=403, code="permission_denied", detail=str(exception) or "Forbidden.")
        if isinstance(exception, OUTAGE_ERRORS):
            return service_unavailable(exception)
        if isinstance(exception, UnstorableValue):
            return json_problem(status_code=422, code=exception.code_name, detail=exception.messages[0])
        if isinstance(exception, RequestDataTooBig):  # a body over DATA_UPLOAD_MAX_MEMORY_SIZE
            return request_too_large_response(request)
        if isinstance(exception, SuspiciousOperation):
            return json_problem(status_code=400, code="bad_request", detail="The request was malformed.")
        logger.exception("unhandled error in %s %s", request.method, request.path)
        return json_problem(
            status_code=500,
            code="server_error",
            detail="Something went wrong on our side; the error was logged.",
        )
