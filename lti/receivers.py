"""Signal receivers: a stored or changed score schedules an LMS passback after commit."""

import logging
from functools import partial

from django.db import transaction

from . import selectors, services

logger = logging.getLogger(__name__)


def schedule_score_passback(sender, submission, **kwargs) -> None:
    """Enqueue a passback on commit when the score counts for an LTI-linked assignment.

    Must never raise into grading; it only reads and defers the work.
    """
    try:
        found = selectors.resource_link_for_passback(submission=submission)
    except Exception:
        logger.exception("could not look up the LTI link for submission %s", submission.pk)
        return
    if found is None:
        return
    link, _identity = found
    transaction.on_commit(
        partial(
            services.score_passback_enqueue, resource_link_id=link.pk, user_id=submission.student_id
        )
    )
