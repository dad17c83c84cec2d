"""Refuse, cheaply and honestly, what the server cannot serve in time: 503 + Retry-After.

Under an exam-start spike more requests arrive than two cores can serve; queued without
bound, each waits tens of seconds and its client gives up (an answer lost in the middle).
A request that already waited longer than ``ADMISSION_MAX_QUEUE_WAIT_SECONDS`` for a
thread (measured by ``attnquiz.gunicorn_worker``) is answered at once with the styled 503
page and ``Retry-After``, before a session, a user or a query is read: the refusal costs
microseconds, so the queue drains, and the client (a browser's reload, the load test's
retry) sends it again later. Nothing was done, so any request may be resent; submit is
idempotent on its ``Idempotency-Key``. Health probes are never refused: a busy node is
alive. Without the worker (runserver, tests) there is no wait and nothing is refused.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from django.conf import settings
from django.http import HttpResponse
from django.template.loader import render_to_string

from .gunicorn_worker import QUEUE_WAIT_ENVIRON

logger = logging.getLogger(__name__)

NEVER_REFUSED_PREFIXES = ("/healthz/",)


@lru_cache(maxsize=1)
def _busy_page() -> str:
    """The 503 page for a busy server: rendered once (it reads no request)."""
    return render_to_string("503.html", {"busy": True})


def busy_response(*, retry_after: int) -> HttpResponse:
    response = HttpResponse(_busy_page(), status=503)
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response


def should_refuse(*, queue_wait: float, path: str, limit: float) -> bool:
    """Whether a request that waited ``queue_wait`` seconds for a thread is refused."""
    return queue_wait > limit and not path.startswith(NEVER_REFUSED_PREFIXES)


class AdmissionMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.limit = settings.ADMISSION_MAX_QUEUE_WAIT_SECONDS
        self.retry_after = settings.ADMISSION_RETRY_AFTER_SECONDS

    def __call__(self, request):
        queue_wait = request.META.get(QUEUE_WAIT_ENVIRON, 0.0)
        if should_refuse(queue_wait=queue_wait, path=request.path, limit=self.limit):
            logger.warning("busy: %s %s refused after %.1f s in the queue", request.method, request.path, queue_wait)
            return busy_response(retry_after=self.retry_after)
        return self.get_response(request)
