"""Grade events: grading announces every change of a grade, the other apps listen.

Grading imports none of its listeners: they connect in their AppConfig.ready (the LMS
passback to ``grade_changed``; mastery and spaced review register a follow-up). Each
change is published once, by the write that stored it:

- ``grade_changed`` — a submission's stored outcome was set or changed: graded by the
  pipeline (by the one delivery that stored it), regraded, graded by hand, or given back
  to the checker's grade. Sent inside the transaction that stores it, so a listener's own
  rows (the LMS passback outbox) commit or roll back with the grade. Receivers must be
  quick, must not raise, and start work only on commit.
- ``grades_release_changed`` — an assignment's grades were released or withdrawn. Sent in
  that transaction (the LMS passback outbox learns the new scores, or "pending"); a
  listener that raises undoes the release.
- "became visible" — the review policy may have begun to show these submissions'
  correctness to their students (a release, an attempt's end, a close date). It reaches
  the follow-ups only, in batches, and may come again for the same ids.

The follow-ups are the learning that a grade feeds (mastery, spaced review). They run
after the commit, in batches: each published change (a grade, a regrade's batch, newly
visible grades) adds its ids to a pending list in Redis, and one drain task on the
follow-ups' own queue (``settings.FOLLOWUP_QUEUE``, never the queue that carries the
students' practice answers) runs every registered follow-up once for all ids pending
(``grading.followup_batch``). Without Redis a change sends a task of its own. A
follow-up is called with submission ids, must be idempotent (the task may run twice,
late, or for ids it skips: a withheld exam grade) and decides itself what it records. With no broker (inline mode) they run in-process
after the commit. A lost task is made good by each listener's periodic backfill.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from enum import StrEnum

from django.conf import settings
from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

FOLLOWUP_TASK = "grading.tasks.run_followups"


class GradeChange(StrEnum):
    GRADED = "graded"
    REGRADED = "regraded"
    GRADED_BY_HAND = "graded_by_hand"
    RETURNED_TO_CHECKER = "returned_to_checker"  # a person's grade gave way to the checker's again
    BECAME_VISIBLE = "became_visible"


grade_changed = Signal()  # sender=Submission, submission=<Submission>, change=GradeChange
grades_release_changed = Signal()  # sender=Assignment, assignment=<Assignment>, released=bool

Followup = Callable[..., object]  # followup(*, submission_ids: list[int]) -> anything
_followups: dict[str, Followup] = {}


def followup_register(name: str, followup: Followup) -> None:
    """Run ``followup(submission_ids=[...])`` after every grade change (call in ready())."""
    _followups[name] = followup


def followups_registered() -> dict[str, Followup]:
    return dict(_followups)


# --- Publishing ----------------------------------------------------------------------------


def grade_changed_publish(*, submission, change: GradeChange) -> None:
    """Announce one stored change. Call inside the transaction that stored it."""
    grades_changed_publish(submissions=[submission], change=change)


def grades_changed_publish(*, submissions: Iterable, change: GradeChange) -> None:
    """Announce the stored changes of several submissions, with one follow-up for all."""
    from .models import Submission

    submission_ids = []
    for submission in submissions:
        for receiver, error in grade_changed.send_robust(sender=Submission, submission=submission, change=change):
            if error is not None:
                logger.error("%s failed on the %s submission %s", receiver, change, submission.pk, exc_info=error)
        submission_ids.append(submission.pk)
    _followups_on_commit(submission_ids)


def grades_visible_publish(*, submission_ids: list[int]) -> None:
    """These submissions' grades may now be visible to their students (one batch). Call
    after the commit that made them visible: the follow-up is queued at once."""
    if submission_ids and _followups:
        followups_enqueue(submission_ids=list(submission_ids))


def grades_release_changed_publish(*, assignment, released: bool) -> None:
    """The assignment's grades were released (or withdrawn). Call inside that transaction:
    a listener that fails undoes the release (the LMS must not miss it)."""
    from courses.models import Assignment

    grades_release_changed.send(sender=Assignment, assignment=assignment, released=released)


# --- The one follow-up task ----------------------------------------------------------------


def _followups_on_commit(submission_ids: list[int]) -> None:
    if submission_ids and _followups:
        transaction.on_commit(lambda: followups_enqueue(submission_ids=submission_ids))


def followups_enqueue(*, submission_ids: list[int]) -> None:
    """Queue the follow-ups of these submissions: into the pending batch (one drain task
    runs many grades' follow-ups at once, see grading.followup_batch), or as a task of
    their own without Redis; run here in inline mode. Never raises: a lost task is made
    good by each follow-up's periodic backfill."""
    try:
        if settings.GRADING_MODE == "inline":
            followups_run(submission_ids=submission_ids)
            return
        from .followup_batch import followups_pending_add

        if followups_pending_add(submission_ids=submission_ids):
            return
        from attnquiz.enqueue import task_send

        task_send(FOLLOWUP_TASK, args=[submission_ids], queue=settings.FOLLOWUP_QUEUE)
    except Exception:
        logger.warning("follow-ups of %d submissions not queued", len(submission_ids), exc_info=True)


def followups_pending_run() -> int:
    """Run one batch of pending follow-ups (the drain task); returns how many ids it ran."""
    from .followup_batch import followups_pending_drain

    return followups_pending_drain(run=lambda submission_ids: followups_run(submission_ids=submission_ids))


# A follow-up that lost a lock race (deadlock, serialization failure) runs again at once:
# its work is idempotent, and waiting for the periodic backfill would hide the grade for minutes.
FOLLOWUP_TRIES = 3


def followups_run(*, submission_ids: list[int]) -> None:
    """Every registered follow-up, each on its own: one failing never stops the others."""
    for name, followup in followups_registered().items():
        _followup_run(name, followup, submission_ids)


def _followup_run(name: str, followup: Followup, submission_ids: list[int]) -> None:
    from django.db import OperationalError

    for attempt in range(1, FOLLOWUP_TRIES + 1):
        try:
            followup(submission_ids=submission_ids)
            return
        except OperationalError:
            if attempt == FOLLOWUP_TRIES:
                logger.exception("follow-up %s failed %d times on %d submissions", name, attempt, len(submission_ids))
                return
            logger.warning("follow-up %s lost a lock race on %d submissions; again", name, len(submission_ids))
        except Exception:
            logger.exception("follow-up %s failed on %d submissions", name, len(submission_ids))
            return
