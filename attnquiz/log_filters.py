"""Logging filters. An expected refusal (a 403 for a student on a staff page, a 404 for a
course they are not in) is one line on the console, not a traceback: Django's request
logger attaches the exception to every 4xx it logs. Under DEBUG=1 as under DEBUG=0: the
settings' LOGGING leaves the "django" logger no handler of its own (Django's default one
printed every traceback while DEBUG was on), so its records reach only this filtered console."""

import logging


class ClientErrorWithoutTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500 and record.exc_info:
            record.exc_info = None
            record.exc_text = None
        return True
