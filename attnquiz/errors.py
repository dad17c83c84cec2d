"""Honest failure pages: a styled 503 when the database is unreachable, styled 500s.

Both render their template without the request, so they touch neither the database nor
``request.user`` (the outage may be the database itself). ``DatabaseUnavailableMiddleware``
turns a view's ``OperationalError``/``InterfaceError`` into the 503; ``server_error``
(``handler500``) does the same for one raised anywhere else (another middleware, an error
page's own rendering) and is the plain 500 page otherwise.
"""

from __future__ import annotations

import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

DATABASE_OUTAGE_ERRORS = (OperationalError, InterfaceError)
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
            logger.error("database unavailable for %s %s: %s", request.method, request.path, exception)
            return database_unavailable_response()
        return None


def server_error(request, *args, **kwargs) -> HttpResponse:
    """handler500: called while the uncaught exception is being handled."""
    if isinstance(sys.exc_info()[1], DATABASE_OUTAGE_ERRORS):
        return database_unavailable_response()
    return HttpResponse(render_to_string("500.html"), status=500)
