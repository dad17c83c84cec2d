"""Celery entry points for LTI. Thin: the work is ``services.score_passback``.

Safe to run twice or late: each run sends the student's total as it is at that moment.
"""

import logging

from celery import shared_task

from . import services

logger = logging.getLogger(__name__)


@shared_task(
    acks_late=True,
    ignore_result=True,
    autoretry_for=(services.PassbackTemporaryError,),
    retry_backoff=10,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=5,
)
def passback_score(resource_link_id: int, user_id: int) -> str:
    """Report the student's assignment score to the LMS line item of the resource link."""
    try:
        return services.score_passback(resource_link_id=resource_link_id, user_id=user_id)
    except services.PassbackRefused as refusal:
        # A 4xx will be refused again; the next score change sends a fresh request.
        logger.warning("LMS refused the score for link %s: %s", resource_link_id, refusal)
        return f"refused: {refusal}"
