"""Answers an unhandled error under /api/ with a JSON problem, never Django's HTML page:
an outage of the database or Redis is a 503 with Retry-After, anything else a logged 500.
Before any view runs, it reads a chunked body (for every page, not only the API) and
refuses a form body sent to the REST API."""

from __future__ import annotations

import io
import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.core.handlers.wsgi import LimitedStream, WSGIRequest
from django.http import Http404, HttpResponse
from django.template.loader import render_to_string

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


# A body sent with "Transfer-Encoding: chunked" declares no length, and Django reads a request
# without CONTENT_LENGTH as empty: a chunked answer or import ran as if it carried no data
# (a 400 "field required", or a release or regrade with its fields missing). gunicorn
# de-chunks the body and says its stream ends where the body does (``wsgi.input_terminated``),
# so the body is read here, at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes, and handed on as if its
# length had been declared. A server that does not end the stream (runserver hands over the
# raw chunk framing, and reading it waits on the client) gets 411: nothing is read or lost.
# This runs for every path (pages too), after the other middleware's requests, which read no
# body, and before any view's check (the CSRF check, the size check's multipart) reads it.
CHUNK_READ_BYTES = 64 * 1024


def chunked_body_refusal(request):
    """Read a chunked body into ``request`` (see above) and return None; or the refusal:
    411 (the server cannot end the body), 413 (longer than the limit), 400 (bad framing)."""
    if not _sends_body_without_length(request):
        return None
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if not request.META.get("wsgi.input_terminated") or limit is None:
        return _refusal(
            request, status_code=411, code="length_required", title="A request without a length",
            detail="This server needs a Content-Length for a request with a body. "
                   "Nothing was done; send it again with its length (not chunked).",
        )
    try:
        body = _read_at_most(request.META["wsgi.input"], limit + 1)
    except Exception:  # gunicorn's chunk parser raises its own errors (not OSError) for bad framing
        return _refusal(
            request, status_code=400, code="bad_request", title="That request could not be read",
            detail="The chunked body was malformed or cut off. Nothing was done; send it again.",
        )
    if len(body) > limit:
        return request_too_large_response(request)
    request.META["CONTENT_LENGTH"] = str(len(body))  # DRF and the multipart parser read it
    # The stream WSGIRequest builds for a declared length (Django reads ``_stream``).
    request._stream = LimitedStream(io.BytesIO(body), len(body))
    return None


def _sends_body_without_length(request) -> bool:
    """A WSGI request framed by a transfer coding (gunicorn refuses one that also has a
    Content-Length). Only WSGI: Django's ASGI handler reads a whole body itself."""
    return (
        isinstance(request, WSGIRequest)
        and bool(request.META.get("HTTP_TRANSFER_ENCODING"))
        and not request.META.get("CONTENT_LENGTH")
    )


def _read_at_most(stream, size: int) -> bytes:
    """Up to ``size`` bytes of ``stream``, to its end (a read may return less than asked)."""
    chunks, read = [], 0
    while read < size:
        chunk = stream.read(min(CHUNK_READ_BYTES, size - read))
        if not chunk:
            break
        chunks.append(chunk)
        read += len(chunk)
    return b"".join(chunks)


def _refusal(request, *, status_code: int, code: str, title: str, detail: str):
    """A problem document under /api/ (as the size check's 413), else the error page."""
    if request.path.startswith(API_PREFIX):
        return json_problem(status_code=status_code, code=code, detail=detail)
    context = {"status": status_code, "title": title, "message": detail}
    return HttpResponse(render_to_string("400.html", context), status=status_code)


def method_not_allowed_page(request, response):
    """A page refusing a request's method (``require_POST`` and the like answer 405 with an
    empty body): the error page, saying which methods it takes, with the same Allow header."""
    if getattr(response, "streaming", False) or response.content:
        return response
    allowed = response.get("Allow", "")
    detail = (f"This address does not take a {request.method[:20]} request (it takes {allowed}). "
              "Nothing was changed: go back and use the page's own links and buttons.")
    page = _refusal(request, status_code=405, code="method_not_allowed", title="That request is not used here",
                    detail=detail)
    if allowed:
        page["Allow"] = allowed
    return page


class ApiProblemMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = chunked_body_refusal(request) or form_body_refusal(request) or self.get_response(request)
        if response.status_code == 405 and not request.path.startswith(API_PREFIX):
            return method_not_allowed_page(request, response)
        return response

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
