"""Celery entry points for instructors' background jobs. Thin: logic is in services."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True, soft_time_limit=3600, time_limit=3700)
def run_regrade(job_id: int) -> None:
    services.regrade_job_run(job_id=job_id)
