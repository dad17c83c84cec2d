"""The Celery application: configuration comes from Django settings (CELERY_* names)."""

import logging
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "attnquiz.settings")

app = Celery("attnquiz")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger(__name__)


@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_database_connections(task=None, **kwargs) -> None:
    """Between tasks, drop only the connections that broke or outlived CONN_MAX_AGE.

    Celery's own fix-up would close them all (settings.CELERY_DB_REUSE_MAX spaces that
    out); a healthy connection is reused, as Django does between requests. A task run
    eagerly (``apply``) belongs to its caller's connection and transaction: left alone.
    """
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


def task_publish(task, *, args: list, queue: str | None = None, countdown: float | None = None) -> None:
    """Send ``task`` through the app's pooled producer; raise if the broker cannot take it.

    A pooled socket may be stale after a broker restart: that one send is retried once on
    a fresh connection. The pool is rebuilt when the broker URL changes (tests point the
    app at a private Redis).
    """
    task_app = task.app
    _drop_pool_if_broker_changed(task_app)
    routing = {"queue": queue} if queue else {}
    if countdown:
        routing["countdown"] = countdown
    try:
        task.apply_async(args=args, retry=False, **routing)
    except Exception:
        logger.info("pooled publish of %s failed; retrying on a fresh connection", task.name)
        with task_app.connection_for_write() as connection:
            task.apply_async(args=args, retry=False, connection=connection, **routing)


def _drop_pool_if_broker_changed(task_app) -> None:
    url = task_app.conf.broker_url
    if getattr(task_app, "_attnquiz_pool_url", url) != url:
        producer_pool_close(task_app)
    task_app._attnquiz_pool_url = url


def producer_pool_close(task_app) -> None:
    """Close the app's pooled broker connections; the next send opens a new pool. A private
    broker that a test stops may be followed by another on the same port and URL, whose
    first sends would otherwise meet the stale sockets."""
    if task_app._pool is not None:
        task_app._pool.force_close_all()
        task_app._pool = None
        task_app.amqp._producer_pool = None
