"""Fixtures for e-mails a worker sends (``accounts.services.account_email_hand_off``): what a
request publishes, the worker's turn, and a broker or mail server that is down."""

from __future__ import annotations

from unittest import mock

import pytest

from grading.harness import free_port


@pytest.fixture
def published(settings):
    """A deployment with a worker: what the request publishes, as (task, args, queue)."""
    settings.GRADING_MODE = "celery"
    sent = []
    with mock.patch(
        "attnquiz.celery.task_publish",
        side_effect=lambda task, *, args, queue=None, countdown=None: sent.append((task, args, queue)),
    ):
        yield sent


def run_published(published) -> None:
    """The worker's turn: each published task run as the worker would (eagerly, here),
    and any task a run publishes after it."""
    while published:
        task, args, _queue = published.pop(0)
        assert task.apply(args=args).successful()


@pytest.fixture
def broker_down(settings):
    """A worker is expected, but the broker's port is closed."""
    from attnquiz.celery import app, producer_pool_close

    settings.GRADING_MODE = "celery"
    previous = app.conf.broker_url
    producer_pool_close(app)
    app.conf.broker_url = f"redis://127.0.0.1:{free_port()}/0"
    yield
    producer_pool_close(app)
    app.conf.broker_url = previous


@pytest.fixture
def mail_server_down(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    settings.EMAIL_USE_TLS, settings.EMAIL_USE_SSL, settings.EMAIL_TIMEOUT = False, False, 1
