"""Celery entry points for mastery. Thin: the work is in ``mastery.services``.

Both are safe to run twice or late: an update recomputes from the stored history, and a
refit replaces the stored parameters with a fit of everything stored.
"""

import logging

from celery import shared_task
from django.conf import settings

from . import services

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def update_mastery(submission_id: int) -> None:
    services.mastery_record_submission(submission_id=submission_id)


@shared_task(acks_late=True, ignore_result=True)
def fit_skill_parameters() -> list[str]:
    """Periodic: record any grade whose update was lost, then refit every skill."""
    services.mastery_backfill(days=settings.MASTERY_BACKFILL_DAYS)
    return [fit.summary() for fit in services.skill_parameters_fit_all()]


def mastery_update_enqueue(*, submission_id: int) -> None:
    """Run after the grade commits. Mastery rides the practice queue, never delaying a
    graded answer; with no broker (inline mode) it runs here. Never raises: a lost
    update is recorded by the periodic refit's backfill."""
    try:
        if settings.GRADING_MODE == "inline":
            services.mastery_record_submission(submission_id=submission_id)
            return
        from attnquiz.celery import task_publish

        task_publish(update_mastery, args=[submission_id], queue=settings.PRACTICE_QUEUE)
    except Exception:
        logger.warning("mastery update of submission %s not done", submission_id, exc_info=True)
