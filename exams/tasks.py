"""Celery entry points of the exams app (thin)."""

from celery import shared_task

from . import services


@shared_task(ignore_result=True)
def close_expired_attempts() -> dict:
    """Periodic (beat): close every open attempt whose time or close date is over."""
    return services.attempts_close_expired()
