"""Reads of the exam side of an assignment: a student's attempt, and the review policy —
what of a graded answer the student may see now (correctness, score, misconception
feedback, hints, their own heatmap, solutions).

``feedback_visibility`` is the one place that decides it; every page, fragment and API
serializer that shows a student their grade asks it (through ``feedback_visibility_for``)
and masks what it may not show with the helpers below.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from django.db.models import Q
from django.utils import timezone

from courses.models import Assignment, AssignmentKind, ReleaseMoment
from grading.models import Submission, SubmissionStatus

from .models import Accommodation, AssignmentAttempt
from .selectors_accommodations import accommodation_of, limits_apply

POLICY_FIELDS = (
    ("correctness", "show_correctness"),
    ("score", "show_score"),
    ("misconception", "show_misconception"),
    ("hints", "show_hints"),
    ("heatmap", "show_heatmap"),
    ("solutions", "show_solutions"),
)


@dataclass(frozen=True)
class FeedbackVisibility:
    """Which kinds of feedback the student may see now (each on its own)."""

    correctness: bool
    score: bool
    misconception: bool
    hints: bool
    heatmap: bool
    solutions: bool  # still bounded by the assignment's solution policy

    @property
    def everything(self) -> bool:
        return all(getattr(self, field.name) for field in fields(self))

    @property
    def grade_hidden(self) -> bool:
        """Neither verdict nor score: the student sees only "Answer saved"."""
        return not (self.correctness or self.score)


EVERYTHING = FeedbackVisibility(True, True, True, True, True, True)


def is_exam(assignment: Assignment | None) -> bool:
    return assignment is not None and assignment.kind == AssignmentKind.EXAM


def attempt_of(*, assignment: Assignment, student) -> AssignmentAttempt | None:
    """The student's attempt at the assignment (open or closed), or None before Start."""
    return AssignmentAttempt.objects.filter(assignment=assignment, student=student).first()


def student_closes_at(*, assignment: Assignment, student):
    """The moment the assignment closes for this student, their accommodation applied
    (None: it never closes)."""
    accommodation = accommodation_of(assignment=assignment, student=student)
    return limits_apply(assignment=assignment, accommodation=accommodation, started_at=None).closes_at


def policy_all_during(assignment: Assignment) -> bool:
    return all(getattr(assignment, name) == ReleaseMoment.DURING for _, name in POLICY_FIELDS)


def moment_reached(moment: str, *, assignment: Assignment, attempt, closes_at, now) -> bool:
    """Whether one ReleaseMoment has come for this student.

    after_finish: their attempt was finished (by them or the clock) — or, for an
    assignment without attempts, its close date passed for them, which ends it as well.
    after_close: their own close date passed (never, without one).
    on_release: the instructor released the grades.
    """
    closed = closes_at is not None and now >= closes_at
    if moment == ReleaseMoment.DURING:
        return True
    if moment == ReleaseMoment.AFTER_FINISH:
        finished = attempt is not None and attempt.finished_at is not None and attempt.finished_at <= now
        return finished or closed
    if moment == ReleaseMoment.AFTER_CLOSE:
        return closed
    if moment == ReleaseMoment.ON_RELEASE:
        released = assignment.grades_released_at
        return released is not None and released <= now
    return False  # never, or a value this code does not know


def feedback_visibility(
    *, assignment: Assignment, attempt: AssignmentAttempt | None, closes_at, now
) -> FeedbackVisibility:
    """The review policy applied at ``now`` (pure: everything it needs is passed in).

    ``closes_at`` is the student's own close date (``student_closes_at``)."""
    return FeedbackVisibility(
        **{
            kind: moment_reached(
                getattr(assignment, name),
                assignment=assignment,
                attempt=attempt,
                closes_at=closes_at,
                now=now,
            )
            for kind, name in POLICY_FIELDS
        }
    )


def feedback_visibility_for(
    *, assignment: Assignment | None, student, now=None, attempt=None
) -> FeedbackVisibility:
    """What ``student`` may see now of their graded answers on ``assignment``.

    Practice (no assignment) and an all-"during" policy — every homework by default —
    show everything without a query, as before review policies existed. ``attempt`` may
    be passed by a caller that read it already."""
    if assignment is None or policy_all_during(assignment):
        return EVERYTHING
    if attempt is None:
        attempt = attempt_of(assignment=assignment, student=student)
    return feedback_visibility(
        assignment=assignment,
        attempt=attempt,
        closes_at=student_closes_at(assignment=assignment, student=student),
        now=now or timezone.now(),
    )


def feedback_for_student(feedback: dict | None, visibility: FeedbackVisibility) -> dict:
    """A submission's stored feedback with what the policy hides removed.

    The checker's message says whether the answer was right, so it goes with correctness;
    the per-cell verdicts too. The misconception's message goes with misconceptions."""
    feedback = dict(feedback or {})
    if visibility.everything:
        return feedback
    if not visibility.correctness:
        feedback["message"] = ""
        details = dict(feedback.get("details") or {})
        details.pop("entry_correct", None)
        feedback["details"] = details
    if not visibility.misconception:
        feedback["misconception_message"] = ""
    return feedback


def submission_outcome_for_student(submission, visibility: FeedbackVisibility) -> dict:
    """The grade fields of a submission as the student may read them (API, JSON)."""
    return {
        "score": submission.score if visibility.score else None,
        "awarded": submission.awarded if visibility.score else None,
        "correct": submission.correct if visibility.correctness else None,
        "misconception": (submission.misconception or "") if visibility.misconception else "",
        "feedback": feedback_for_student(submission.feedback, visibility),
    }


def status_for_student(status: dict, visibility: FeedbackVisibility) -> dict:
    """An exercise's status (exercises.selectors.exercise_status) as the student may see it:
    without correctness "solved" and "in progress" both read "answered" and the solved
    count is None; without scores the score is None. (exercise_status counts the attempts
    left without regard to solved parts itself, given ``solved_shown=False``.)"""
    if visibility.everything:
        return status
    status = dict(status)
    if not visibility.correctness:
        if status["state"] != "not started":
            status["state"] = "answered"
        status["solved_parts"] = None
    if not visibility.score:
        status["score"] = None
    return status


def grade_withheld(submission) -> bool:
    """Whether the review policy still hides this submission's correctness from its
    student. What learns from a grade the student would see (mastery, spaced review) waits
    while it does. No query for homework with today's policy (the rows the grading path
    loaded are read)."""
    item = submission.variant.assignment_item
    if item is None:
        return False
    return not feedback_visibility_for(assignment=item.assignment, student=submission.student_id).correctness


def submissions_made_visible(*, since, until):
    """Ids of graded submissions whose correctness the review policy may have begun to show
    their student in [since, until): the assignment's grades were released, the student's
    attempt ended, or the assignment (or the student's accommodation) closed. A candidate
    list: whoever acts on it asks ``grade_withheld`` per submission.

    The moments are found in the small tables first (assignments, attempts,
    accommodations), so the submissions are read only for the students and assignments
    they name."""
    withheld = Assignment.objects.exclude(show_correctness=ReleaseMoment.DURING)
    whole = list(
        withheld.filter(
            Q(grades_released_at__gte=since, grades_released_at__lt=until)
            | Q(closes_at__gte=since, closes_at__lt=until)
        ).values_list("pk", flat=True)
    )
    students: dict[int, set[int]] = {}
    for model in (AssignmentAttempt, Accommodation):
        moment = "finished_at" if model is AssignmentAttempt else "closes_at"
        for assignment_id, student_id in model.objects.filter(
            assignment__in=withheld, **{f"{moment}__gte": since, f"{moment}__lt": until}
        ).values_list("assignment_id", "student_id"):
            students.setdefault(assignment_id, set()).add(student_id)
    moments = Q(variant__assignment_item__assignment__in=whole) if whole else Q(pk__in=[])
    for assignment_id, student_ids in students.items():
        moments |= Q(variant__assignment_item__assignment=assignment_id, student__in=student_ids)
    return (
        Submission.objects.filter(status=SubmissionStatus.GRADED)
        .filter(moments)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def submissions_of_assignment(*, assignment: Assignment):
    """Ids of the assignment's graded submissions (all its students)."""
    return (
        Submission.objects.filter(
            status=SubmissionStatus.GRADED, variant__assignment_item__assignment=assignment
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def submissions_not_withheld(submission_ids) -> list[int]:
    """Those of ``submission_ids`` whose correctness their student may see now, in order."""
    submissions = Submission.objects.select_related("variant__assignment_item__assignment").filter(
        pk__in=list(submission_ids)
    ).order_by("pk")
    return [submission.pk for submission in submissions if not grade_withheld(submission)]
