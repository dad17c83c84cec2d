"""Celery entry points for spaced review. Thin: the logic is in review.services."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, ignore_result=True)
def review_schedule(submission_id: int) -> None:
    services.review_record(submission_id=submission_id)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=600, time_limit=660)
def review_schedule_many(submission_ids: list[int]) -> int:
    return services.reviews_record_many(submission_ids=submission_ids)


@shared_task(ignore_result=True)
def record_missing_reviews() -> int:
    return services.reviews_record_missing()
