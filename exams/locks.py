"""The exam attempt's row lock that an answer takes while it is stored.

Low in the layers: it reads the exam records only, so the grading pipeline can lock the
attempt without importing the exam services above it.
"""

from __future__ import annotations

from attnquiz.prepared_reads import PreparedRead
from courses.models import Assignment, AssignmentKind

from .models import AssignmentAttempt


# Every exam answer takes this lock: compiled once (inside a transaction, as select_for_update needs).
_ATTEMPT_LOCKED = PreparedRead(
    lambda *, assignment_id, student_id: AssignmentAttempt.objects.select_for_update()
    .filter(assignment_id=assignment_id, student_id=student_id)
    .order_by()[:1],  # one attempt per student and assignment
    assignment_id=int,
    student_id=int,
)


def attempt_lock_for_answer(*, assignment: Assignment | None, student) -> tuple[str, str] | None:
    """Why an answer to this assignment must be refused now (code, message), or None.

    Call inside the transaction that stores the answer: it locks the student's attempt
    row, so an attempt cannot end between this check and the answer's commit."""
    if assignment is None or assignment.kind != AssignmentKind.EXAM:
        return None
    attempt = _ATTEMPT_LOCKED.first(assignment_id=assignment.pk, student_id=student.pk)
    if attempt is None:
        return ("not_started", "Start the exam on its assignment page before answering.")
    if attempt.finished_at is not None:
        return (
            "attempt_finished",
            "Your attempt is finished: it takes no more answers. The answers you saved count.",
        )
    return None
