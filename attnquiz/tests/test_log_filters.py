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


def _handlers_reached(logger: logging.Logger) -> list[logging.Handler]:
    """Every handler a record of ``logger`` reaches, up the propagation chain (pytest's own
    capture handlers apart)."""
    handlers = []
    while logger is not None:
        handlers += [handler for handler in logger.handlers if not type(handler).__module__.startswith("_pytest")]
        if not logger.propagate:
            break
        logger = logger.parent
    return handlers


@pytest.fixture
def console(settings):
    """The console as the web process has it (Django's default logging, then LOGGING), with
    every stream a refusal's record reaches written into one buffer."""
    import io

    from django.utils.log import configure_logging

    buffer = io.StringIO()
    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)
    for name in ("django.request", "django.security.RequestDataTooBig"):
        for handler in _handlers_reached(logging.getLogger(name)):
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(buffer)
    yield buffer
    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)


@pytest.mark.parametrize("debug", [True, False])
def test_an_expected_403_or_404_is_one_console_line_under_debug_or_not(db, client, settings, console, debug):
    from authoring.tests.factories import PASSWORD, people_create

    settings.DEBUG = debug
    people_create()
    client.login(username="sam", password=PASSWORD)
    assert client.get("/teach/attn/gradebook/").status_code == 403  # a student on a staff page
    assert client.get("/teach/other/gradebook/").status_code == 404  # a course they are not in
    lines = console.getvalue().splitlines()
    assert lines == ["Forbidden (Permission denied): /teach/attn/gradebook/", "Not Found: /teach/other/gradebook/"]


@pytest.mark.parametrize("debug", [True, False])
def test_every_handler_a_request_record_reaches_drops_client_error_tracebacks(settings, console, debug):
    settings.DEBUG = debug
    reached = _handlers_reached(logging.getLogger("django.request"))
    assert reached and all(
        any(isinstance(f, ClientErrorWithoutTraceback) for f in handler.filters) for handler in reached
    )
