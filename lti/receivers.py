"""Signal receivers: a stored or changed score arms the LMS passback outbox."""

import logging

from django.db import transaction

from . import passback

logger = logging.getLogger(__name__)


def schedule_score_passback(sender, submission, **kwargs) -> None:
    """Write the outbox rows for an LTI-linked score change; send them after the commit.

    Runs in the transaction that stores the score, so the row commits with it. A score
    on an assignment without an LMS link costs the one existence query and nothing else.
    Must never raise into grading (a failure is logged; the student's next change arms
    the row again).
    """
    try:
        links = passback.passback_links(submission=submission)
        if not links:
            return
        with transaction.atomic():  # a savepoint: a failure here must not abort the grade
            passback.passbacks_record_and_schedule(submission=submission, links=links)
    except Exception:
        logger.exception("could not record the LTI passback of submission %s", submission.pk)
