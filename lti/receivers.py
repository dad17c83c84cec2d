"""Receivers of grading's events: a stored or changed score, or a release, arms the LMS
passback outbox."""

import logging

from django.db import transaction

from . import passback

logger = logging.getLogger(__name__)


def _loaded_assignment(submission):
    """The submission's assignment when the sender already loaded it (no query), else None."""
    from courses.models import AssignmentItem
    from exercises.models import Variant
    from grading.models import Submission

    if not Submission.variant.is_cached(submission):
        return None
    variant = submission.variant
    if variant.assignment_item_id is None or not Variant.assignment_item.is_cached(variant):
        return None
    item = variant.assignment_item
    return item.assignment if AssignmentItem.assignment.is_cached(item) else None


def schedule_score_passback(sender, submission, **kwargs) -> None:
    """Write the outbox rows for an LTI-linked score change; send them after the commit.

    Runs in the transaction that stores the score, so the row commits with it. A score
    on an assignment no LMS link opens costs nothing when the sender loaded the
    assignment (the grading pipeline does), else the one existence query. Must never
    raise into grading (a failure is logged; the student's next change arms the row again).
    """
    try:
        assignment = _loaded_assignment(submission)
        if assignment is not None and not assignment.has_lti_link:
            return
        links = passback.passback_links(submission=submission)
        if not links:
            return
        with transaction.atomic():  # a savepoint: a failure here must not abort the grade
            passback.passbacks_record_and_schedule(submission=submission, links=links)
    except Exception:
        logger.exception("could not record the LTI passback of submission %s", submission.pk)


def release_passbacks(sender, assignment, released: bool, **kwargs) -> None:
    """An assignment's grades were released or withdrawn: every linked student's row is
    armed in that transaction (sent after the commit). A failure undoes the release."""
    passback.passbacks_record_for_assignment(assignment=assignment)


def flag_linked_assignment(sender, instance, **kwargs) -> None:
    """A link that opens an assignment marks it as LMS-linked (one UPDATE, only the first time).

    The flag is only ever set here; a link moved or deleted leaves it set, which costs the
    old lookup per grade and never skips a passback that is due."""
    from courses.models import Assignment

    if instance.assignment_id is None:
        return
    Assignment.objects.filter(pk=instance.assignment_id, has_lti_link=False).update(has_lti_link=True)
    if type(instance).assignment.is_cached(instance):
        instance.assignment.has_lti_link = True
