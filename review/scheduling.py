"""The FSRS scheduler attnquiz uses, and the rule that turns a graded attempt into a rating.

No Django here: the rule and the scheduler are tested, and benchmarked, on their own.

The rule (one graded attempt = one review of the part's card):

- right on the first try, with no hint shown      -> Good
- right after a hint, or on a later try            -> Hard
- wrong (including partly right)                   -> Again
- could not be graded, or waiting for manual grading -> no review at all

The scheduler has no learning steps and no fuzz: intervals are whole days from the first
review on (a course's review is daily, not minutes apart), and the same history always
gives the same due dates.
"""

from __future__ import annotations

from functools import lru_cache

import fsrs


def review_rating(*, correct: bool | None, earlier_tries: int, hint_seen: bool) -> fsrs.Rating | None:
    """The rating of one graded attempt (see the module docstring); None for no review."""
    if correct is None:
        return None
    if not correct:
        return fsrs.Rating.Again
    if earlier_tries == 0 and not hint_seen:
        return fsrs.Rating.Good
    return fsrs.Rating.Hard


@lru_cache(maxsize=4)
def review_scheduler(desired_retention: float = 0.9) -> fsrs.Scheduler:
    return fsrs.Scheduler(
        desired_retention=desired_retention,
        learning_steps=(),
        relearning_steps=(),
        enable_fuzzing=False,
    )
