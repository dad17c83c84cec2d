"""Signals other apps listen to, so the exams app never imports them.

``grades_became_visible`` is sent with ``submission_ids`` (a list of at most
``VISIBLE_BATCH`` ids) when the review policy may have begun to show those submissions'
correctness to their students: the grades were released, the student's attempt ended, or
their close date passed. What learns from a grade the student may see (mastery, spaced
review) listens and catches up on what it left out while the grade was withheld. It may be
sent again for the same ids; receivers must be idempotent, quick, and must not raise.
"""

from django.dispatch import Signal

grades_became_visible = Signal()  # sender=AssignmentAttempt's module, submission_ids=[...]
