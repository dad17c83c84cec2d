"""Signal receivers: a stored or changed grade schedules the mastery update after commit.

The grade is stored first and costs nothing more: the receiver runs no query, it only
registers an on-commit callback that hands the submission to a quick task (or, with no
broker, runs the update in this process after the commit).
"""

import logging

from django.db import transaction

from . import tasks

logger = logging.getLogger(__name__)


def schedule_mastery_update(sender, submission, **kwargs) -> None:
    """Must never raise into grading: a failure is logged (the periodic backfill records it)."""
    try:
        from exams.selectors import grade_withheld

        if grade_withheld(submission):
            return  # an exam's unreleased grade: the periodic backfill records it once released
        submission_id = submission.pk
        transaction.on_commit(lambda: tasks.mastery_update_enqueue(submission_id=submission_id))
    except Exception:
        logger.exception("could not schedule the mastery update of submission %s", getattr(submission, "pk", None))


def mastery_newly_visible(sender, submission_ids, **kwargs) -> None:
    """Exam grades the student may now see: record the evidence left out while they were
    withheld (one task per batch; the update recomputes from history). Never raises."""
    tasks.mastery_update_many_enqueue(submission_ids=list(submission_ids))
