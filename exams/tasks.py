"""Celery entry points of the exams app (thin)."""

from celery import shared_task
from django.conf import settings

from . import services


@shared_task(ignore_result=True)
def close_expired_attempts() -> dict:
    """Periodic (beat): close every open attempt whose time or close date is over."""
    return services.attempts_close_expired()


@shared_task(ignore_result=True)
def announce_visible_grades() -> int:
    """Periodic (beat): tell mastery and review about grades an attempt's end or a close
    date has just made visible."""
    return services.grades_visible_sweep(window_seconds=2 * settings.EXAM_VISIBLE_SWEEP_SECONDS)


@shared_task(ignore_result=True)
def release_scheduled_grades() -> int:
    """Periodic (beat): release the grades whose scheduled release time has come."""
    return services.grades_release_scheduled_run()


@shared_task(ignore_result=True)
def prepare_exam_variant_draws() -> int:
    """Periodic (beat): draw the variants of exams about to open before their students do."""
    return services.exam_variant_draws_prepare_due()
