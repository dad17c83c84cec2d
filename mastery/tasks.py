"""Celery entry points for mastery. Thin: the work is in ``mastery.services``.

All are safe to run twice or late: an update recomputes from the stored history, and a
refit replaces the stored parameters with a fit of everything stored.
"""

import logging

from celery import shared_task
from django.conf import settings

from exercises.engine.skills import SKILL_SLUGS

from . import services

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def update_mastery(submission_id: int) -> None:
    services.mastery_record_submission(submission_id=submission_id)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=600, time_limit=660)
def update_mastery_many(submission_ids: list[int]) -> int:
    return services.mastery_record_visible(submission_ids=submission_ids)


@shared_task(acks_late=True, ignore_result=True)
def fit_skill_parameters() -> int:
    """Periodic: record any grade whose update was lost, then queue one refit per skill, so
    practice answers waiting on the same queue are graded between them."""
    recorded = services.mastery_backfill(days=settings.MASTERY_BACKFILL_DAYS)
    from attnquiz.celery import task_publish

    for skill in SKILL_SLUGS:
        task_publish(fit_skill, args=[skill], queue=settings.PRACTICE_QUEUE)
    return recorded


# A refit reads every stored attempt of one skill: longer than a grade, but bounded.
@shared_task(acks_late=True, ignore_result=True, soft_time_limit=240, time_limit=300)
def fit_skill(skill: str) -> str:
    return services.skill_parameters_fit(skill=skill).summary()


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


def mastery_update_many_enqueue(*, submission_ids: list[int]) -> None:
    """The updates of several submissions in one task on the practice queue (inline
    without a broker). Never raises: the periodic backfill records what is lost."""
    try:
        if settings.GRADING_MODE == "inline":
            services.mastery_record_visible(submission_ids=submission_ids)
            return
        from attnquiz.celery import task_publish

        task_publish(update_mastery_many, args=[submission_ids], queue=settings.PRACTICE_QUEUE)
    except Exception:
        logger.warning("mastery update of %d submissions not done", len(submission_ids), exc_info=True)
