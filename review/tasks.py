"""Celery entry points for spaced review. Thin: the logic is in review.services."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, ignore_result=True)
def review_schedule(submission_id: int) -> None:
    services.review_record(submission_id=submission_id)


@shared_task(ignore_result=True)
def record_missing_reviews() -> int:
    return services.reviews_record_missing()
