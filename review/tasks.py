"""Celery entry points for spaced review. Thin: the logic is in review.services.

A grade's review is recorded by the grade's follow-up task (grading.events); this is the
sweeper that records what a lost follow-up left out."""

from celery import shared_task

from . import services


@shared_task(ignore_result=True)
def record_missing_reviews() -> int:
    return services.reviews_record_missing()
