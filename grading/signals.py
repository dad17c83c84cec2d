"""Signals other apps listen to, so grading never imports them.

``submission_scored`` is sent whenever a submission's stored outcome is set or changed:
once when the pipeline stores its grade (by the one delivery that stored it), when an
instructor grades it by hand, and when a regrade changes it. It may be sent inside a
transaction. Receivers must be quick and must not raise: enqueue work on commit (e.g.
LMS score passback) rather than do it.
"""

from django.dispatch import Signal

submission_scored = Signal()  # sender=Submission, submission=<Submission>


def send_submission_scored(submission) -> None:
    from .models import Submission

    submission_scored.send_robust(sender=Submission, submission=submission)
