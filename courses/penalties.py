"""What an assignment's penalties mean for one student, said before they start: a retry
penalty only where a part may be tried again, a late penalty only where an answer can be
late (a due date, and no close at or before it). Pure: reads the assignment's fields and
the student's limits (exams.window.StudentLimits, accommodation applied), runs no query.

grading.services.awarded_score applies the same two penalties to each answer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class PenaltyPolicy:
    # Fraction of the part's score each attempt after the first costs; None: no such penalty.
    per_retry: float | None
    # Fraction an answer after the due date loses; None: no such penalty.
    late: float | None
    # Until when late answers are taken (the student's close date); None: no close date.
    late_until: datetime | None

    @property
    def any(self) -> bool:
        return self.per_retry is not None or self.late is not None


def penalty_policy(*, assignment, limits) -> PenaltyPolicy:
    """The penalties that can apply to this student on ``assignment``, given their own
    ``limits`` (attempts per part, due and close dates)."""
    per_retry = assignment.penalty_per_extra_attempt or 0.0
    may_retry = limits.attempts_per_part != 1  # 0 is unlimited
    late = assignment.late_penalty or 0.0
    may_be_late = limits.due_at is not None and (limits.closes_at is None or limits.closes_at > limits.due_at)
    return PenaltyPolicy(
        per_retry=per_retry if per_retry > 0 and may_retry else None,
        late=late if late > 0 and may_be_late else None,
        late_until=limits.closes_at if late > 0 and may_be_late else None,
    )
