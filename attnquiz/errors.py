"""Honest failure pages: a styled 503 when the database (or Redis) is unreachable, styled 500s.

Both render their template without the request, so they touch neither the database nor
``request.user`` (the outage may be the database itself). ``DatabaseUnavailableMiddleware``
turns a view's ``OperationalError``/``InterfaceError`` into the 503; ``server_error``
(``handler500``) does the same for one raised anywhere else (another middleware, an error
page's own rendering) and is the plain 500 page otherwise.
"""

from __future__ import annotations

import logging
import sys

import redis
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

# Redis is meant to fail open (a cache miss, an answer left queued); one of its errors
# that still reaches a view is an outage too, and gets the same 503 rather than a 500.
DATABASE_OUTAGE_ERRORS = (OperationalError, InterfaceError, redis.RedisError)
RETRY_AFTER_SECONDS = 30


def database_unavailable_response() -> HttpResponse:
    response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DATABASE_OUTAGE_ERRORS):
            logger.error("database or Redis unavailable for %s %s: %s", request.method, request.path, exception)
            return database_unavailable_response()
        return None


def api_service_unavailable(error) -> HttpResponse:
    """The API's 503 (a problem document with Retry-After): the database or Redis cannot be
    reached; nothing was done."""
    from .problems import json_problem

    logger.error("API unavailable: %s: %s", type(error).__name__, error)
    response = json_problem(
        status_code=503,
        code="service_unavailable",
        detail="attnquiz is temporarily unavailable (a database or cache outage). "
        "Nothing was changed; send the request again in a moment.",
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def server_error(request, *args, **kwargs) -> HttpResponse:
    """handler500: called while the uncaught exception is being handled."""
    if request.path.startswith("/api/"):  # raised outside a view (a middleware): still JSON
        from .problems import json_problem

        if isinstance(sys.exc_info()[1], DATABASE_OUTAGE_ERRORS):
            return api_service_unavailable(sys.exc_info()[1])
        return json_problem(status_code=500, code="server_error", detail="Something went wrong on our side; the error was logged.")
    if isinstance(sys.exc_info()[1], DATABASE_OUTAGE_ERRORS):
        return database_unavailable_response()
    return HttpResponse(render_to_string("500.html"), status=500)


def bad_request(request, exception=None, *args, **kwargs) -> HttpResponse:
    """handler400: say what was wrong with the request (too large, too many fields)."""
    from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent

    from .input_limits import request_too_large_response

    if isinstance(exception, RequestDataTooBig):  # rarely here: see input_limits.RequestSizeMiddleware
        return request_too_large_response(request)
    if isinstance(exception, TooManyFieldsSent):
        status, title = 400, "That form has too many fields"
        message = "Nothing was saved. Reload the page and send the form again."
    else:
        status, title = 400, "That request could not be read"
        message = "Nothing was saved. Reload the page and try again."
    return HttpResponse(
        render_to_string("400.html", {"status": status, "title": title, "message": message}),
        status=status,
    )
