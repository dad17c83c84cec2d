"""A stored or changed score becomes a review of its part's card, after the commit."""

import logging

from django.db import transaction

logger = logging.getLogger(__name__)


def schedule_review(sender, submission, **kwargs) -> None:
    """Enqueue the review on commit. No query here: the grading path's pinned query
    counts stay as they are, and the task decides whether the course takes reviews.
    Must never raise into grading."""
    try:
        from exams.selectors import grade_withheld

        from .services import review_enqueue

        if grade_withheld(submission):
            return  # an exam's unreleased grade would show in the review due list
        submission_id = submission.pk
        transaction.on_commit(lambda: review_enqueue(submission_id=submission_id))
    except Exception:
        logger.exception("could not arm the review of submission %s", getattr(submission, "pk", None))


def review_newly_visible(sender, submission_ids, **kwargs) -> None:
    """Exam grades the student may now see: record the reviews left out while they were
    withheld (one task per batch; review_record is idempotent). Never raises."""
    from .services import reviews_enqueue_many

    reviews_enqueue_many(submission_ids=list(submission_ids))
