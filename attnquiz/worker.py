"""The Celery worker's consumer, hardened against a broker that goes away and comes back.

Celery 5.7 / kombu 5.7 (the newest releases) can kill a worker when Redis restarts under
it: a task's ack fails ("Couldn't ack … ConnectionError"), the consumer collects the broken
connection (which detaches its transport) and then closes it; closing the default channel
tries to restore that unacknowledged message through the detached transport and raises
``AttributeError: 'NoneType' object has no attribute 'hostname'``. That error is not one
of the connection errors the close ignores, so it escapes as "Unrecoverable error" and the
worker exits. Here it is what it is, a failed close of a dead connection: logged, and the
consumer goes on to reconnect. The message it could not restore comes back through the
transport's visibility timeout, or from the database (the sweeper): nothing is lost.
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
