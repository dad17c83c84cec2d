"""gunicorn's threaded worker, telling the app how long each request waited for a thread.

gunicorn's ``gthread`` worker accepts every connection (up to ``--worker-connections``)
and queues it for its thread pool; past the machine's capacity that queue only grows, and
every request in it waits longer than its client will. This worker stamps a request when
it joins the queue and passes the seconds it waited to the app as
``environ["attnquiz.queue_wait"]``; ``attnquiz.admission.AdmissionMiddleware`` answers
503 with Retry-After to one that waited too long, at the cost of a few microseconds, so
the queue drains and the client retries rather than times out. Run gunicorn with
``--worker-class attnquiz.gunicorn_worker.AdmissionThreadWorker``.
"""

from __future__ import annotations

import threading
import time

from gunicorn.workers.gthread import ThreadWorker

QUEUE_WAIT_ENVIRON = "attnquiz.queue_wait"


class AdmissionThreadWorker(ThreadWorker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.waits = threading.local()

    def enqueue_req(self, conn):
        conn.attnquiz_queued_at = time.monotonic()
        super().enqueue_req(conn)

    def handle(self, conn):
        self.waits.seconds = time.monotonic() - getattr(conn, "attnquiz_queued_at", time.monotonic())
        return super().handle(conn)

    def load_wsgi(self):
        super().load_wsgi()
        self.wsgi = with_queue_wait(self.wsgi, self.waits)


def with_queue_wait(app, waits: threading.local):
    """The WSGI app, given the seconds the current thread's request waited in ``environ``."""

    def application(environ, start_response):
        environ[QUEUE_WAIT_ENVIRON] = getattr(waits, "seconds", 0.0)
        return app(environ, start_response)

    return application
