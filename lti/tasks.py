"""Celery entry points for LTI. Thin: the work is in ``passback`` and ``roster``.

Safe to run twice or late: a passback sends the student's total as it is at that moment,
and only while its outbox row is pending; a roster sync is a full, idempotent refresh.
"""

import logging

from celery import shared_task

from . import passback, roster
from .connector import ServiceTemporaryError

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, ignore_result=True, max_retries=passback.MAX_ATTEMPTS)
def send_passback(self, passback_id: int) -> str:
    """Post one outbox row's score to the LMS; retried with back-off on temporary errors."""
    try:
        return passback.passback_send(passback_id=passback_id)
    except ServiceTemporaryError as error:
        # The row records the attempt and its back-off; the sweeper also honours it.
        countdown = passback.backoff_seconds(self.request.retries + 1)
        raise self.retry(exc=error, countdown=countdown) from None


@shared_task(acks_late=True, ignore_result=True)
def send_due_passbacks() -> dict:
    """Periodic sweeper: send the outbox rows a lost or failed task left pending."""
    return passback.passbacks_send_due()


@shared_task(acks_late=True, ignore_result=True)
def sync_roster(context_id: int) -> str:
    """Fetch the LMS course's membership (NRPS) and bring enrolments up to date."""
    return roster.roster_sync(context_id=context_id).summary()
