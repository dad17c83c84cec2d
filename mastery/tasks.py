"""Celery entry points for mastery. Thin: the work is in ``mastery.services``.

All are safe to run twice or late: an update recomputes from the stored history, and a
refit replaces the stored parameters with a fit of everything stored.
"""

from celery import shared_task
from django.conf import settings

from exercises.engine.skills import SKILL_SLUGS

from . import services


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
