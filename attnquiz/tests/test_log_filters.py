"""An expected 403 or 404 is one log line without a traceback; a 500 keeps its traceback."""

import logging
import sys

import pytest

from attnquiz.log_filters import ClientErrorWithoutTraceback


def record(status_code):
    try:
        raise PermissionError("no")
    except PermissionError:
        info = sys.exc_info()
    log = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden: /x", (), info)
    log.status_code = status_code
    return log


@pytest.mark.parametrize("status, keeps_traceback", [(403, False), (404, False), (400, False), (500, True)])
def test_client_errors_lose_their_traceback(status, keeps_traceback):
    log = record(status)
    assert ClientErrorWithoutTraceback().filter(log) is True
    assert (log.exc_info is not None) is keeps_traceback
    assert ("Traceback" in logging.Formatter().format(log)) is keeps_traceback


def test_the_console_handler_uses_it(settings):
    assert "client_errors_plain" in settings.LOGGING["handlers"]["console"]["filters"]
