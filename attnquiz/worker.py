"""The Celery worker, hardened against a broker that goes away and comes back.

Celery 5.7 / kombu 5.7 (the newest releases) can kill a worker when Redis restarts under
it: a task's ack fails ("Couldn't ack … ConnectionError"), the consumer collects the broken
connection (which detaches its transport) and then closes it; closing the default channel
tries to restore that unacknowledged message through the detached transport and raises
``AttributeError: 'NoneType' object has no attribute 'hostname'``. That error is not one
of the connection errors the close ignores, so it escapes as "Unrecoverable error" and the
worker exits. The same error escapes a task's ack when the task finishes after the
reconnect: its message belongs to the old, detached channel. Here each is what it is, a
failed close of a dead connection or an ack that cannot reach the broker any more:
logged, and the worker goes on. Such a message comes back through the transport's
visibility timeout, or from the database (the sweeper), and grading it again is a no-op
(grading.services.submission_grade): nothing is lost or graded twice.
"""

from __future__ import annotations

import logging

from celery.worker.consumer import Consumer as CeleryConsumer

logger = logging.getLogger(__name__)


class Consumer(CeleryConsumer):
    def on_connection_error_after_connected(self, exc):
        try:
            super().on_connection_error_after_connected(exc)
        except AttributeError:
            self.connection = None  # the broken connection is gone either way
            logger.warning(
                "closing the lost broker connection failed; reconnecting anyway", exc_info=True
            )

    def call_soon_ack(self, callback, *args, **kwargs):
        """Acks and rejects run from the event loop, where an error would end the worker."""
        return super().call_soon_ack(_unless_connection_gone(callback), *args, **kwargs)


def _unless_connection_gone(callback):
    def run(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except AttributeError:  # the message's channel went with its replaced connection
            logger.warning("could not ack or reject a message: its broker connection is gone",
                           exc_info=True)
            return None

    return run

