"""Celery entry points for grading. Thin: all logic lives in grading.services.

Tasks are safe to run twice (the broker may deliver twice, and the sweeper re-queues
anything left queued), because ``submission_grade`` checks and moves the status with
conditional updates.
"""

from celery import shared_task, signals
from celery.exceptions import SoftTimeLimitExceeded

from . import events, services


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def grade_submission(submission_id: int) -> None:
    try:
        services.submission_grade(submission_id=submission_id)
    except SoftTimeLimitExceeded:
        # Retrying an answer that ran out of time would only run out of time again.
        services.submission_give_up(
            submission_id=submission_id,
            message="Grading this answer took longer than the time allowed.",
        )


# The follow-ups of one grade change (or batch of them), when Redis could not take them into
# the pending batch; on the follow-up queue. A batch of newly visible exam grades may take minutes.
@shared_task(acks_late=True, ignore_result=True, soft_time_limit=600, time_limit=660)
def run_followups(submission_ids: list[int]) -> None:
    events.followups_run(submission_ids=submission_ids)


# One batch of pending follow-ups (grading.followup_batch): due a moment after the first
# grade it finds, and from the beat. At most FOLLOWUP_BATCH_MAX ids, then the next drain.
@shared_task(ignore_result=True, soft_time_limit=600, time_limit=660)
def run_pending_followups() -> None:
    events.followups_pending_run()


@shared_task(ignore_result=True)
def bench_noop() -> None:
    """Does nothing: ``bench_http`` drains these to measure the bare broker and worker."""


@shared_task(bind=True, ignore_result=True)
def queue_heartbeat(self, queue: str) -> None:
    """The beat's ping, sent to each grading queue: whichever worker consumes it says so."""
    services.queue_heartbeat_record(queue=queue, worker=self.request.hostname or "")


@shared_task(ignore_result=True)
def requeue_stale_submissions() -> int:
    return len(services.submissions_requeue_stale())


@signals.worker_init.connect
def warm_checkers_before_the_pool_forks(**kwargs) -> None:
    """The worker's main process reads and checks one answer of each sandboxed type before it
    forks its pool, so every pool process and every checker they fork starts warm
    (``answers.warm_up``: a first derivation cost 1.0–1.7 s cold, ~5 ms warm)."""
    services.checkers_warm_up()


@signals.worker_process_init.connect
def warm_checker_pool(**kwargs) -> None:
    """Each pool process forks its warm checker at start, not inside its first grade; what
    it loaded is frozen first (attnquiz.startup_heap), so its full collections skip it and
    the checkers it forks inherit it untouched."""
    from attnquiz.startup_heap import startup_objects_freeze
    from grading.core import sandbox

    sandbox.pool_warm(before_fork=startup_objects_freeze)
