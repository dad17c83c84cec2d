"""Celery entry points for grading. Thin: all logic lives in grading.services.

Tasks are safe to run twice (the broker may deliver twice, and the sweeper re-queues
anything left queued), because ``submission_grade`` checks and moves the status with
conditional updates.
"""

from celery import shared_task

from . import services


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def grade_submission(submission_id: int) -> None:
    services.submission_grade(submission_id=submission_id)


@shared_task(ignore_result=True)
def requeue_stale_submissions() -> int:
    return len(services.submissions_requeue_stale())
