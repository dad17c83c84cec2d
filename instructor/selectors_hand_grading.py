"""Reads for grading a checked answer by hand on the staff's submission page: who may,
whether a person may set its score now (or give it back to the checker), what the part is
worth, the people's grades so far and the checker's verdict they replaced
(``instructor.services.submission_grade_manually``,
``instructor.services.submission_grade_return_to_checker``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.safestring import mark_safe

from courses.models import Course
from exercises import engine
from exercises.specs import version_spec
from grading.derivation_feedback import derivation_steps_html
from grading.models import Submission, SubmissionStatus

from .models import ManualGrade
from .selectors import MANUAL_ANSWER_TYPES, access_course_submission

# A person grades a checked answer the checker has finished with: a verdict, or "could not
# grade". One still being checked is refused (the checker's result would land on theirs).
HAND_GRADABLE_CHECKED_STATUSES = (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE)


@dataclass(frozen=True)
class CheckerVerdict:
    """The checker's grade of an answer, as the staff read it."""

    status_label: str
    score: float | None
    awarded: float | None
    correct: bool | None
    message: str
    misconception_message: str
    misconception: str
    graded_at: datetime | None
    steps_html: str  # a derivation's steps with the first that does not follow, sanitised


@dataclass(frozen=True)
class HandGrading:
    """What the submission page shows and offers about people's grades of one answer."""

    checked: bool  # a checker grades this part (it is not free text)
    allowed: bool  # a person may set its score now (the checker has finished, course open)
    part_points: float  # what the part is worth in the assignment, as the gradebook counts it
    grades: list[ManualGrade]  # newest first
    status: str = ""  # the answer's SubmissionStatus

    @property
    def latest(self) -> ManualGrade | None:
        return self.grades[0] if self.grades else None

    @property
    def in_force(self) -> ManualGrade | None:
        """The person's grade that stands (None when nobody graded the answer, or the
        newest grade gave it back to the checker)."""
        latest = self.latest
        return latest if latest is not None and not latest.is_return else None

    @property
    def score_by(self) -> str:
        """Who set the answer's standing score, as its score line says it: "by ta, by hand"
        while a person's grade stands (on any part), "by the checker" for a checked answer
        the checker graded (or was given back to), "" while nobody has."""
        grade = self.in_force
        if grade is not None:
            return f"by {grader_name(grade)}, by hand"
        if self.checked and self.status == SubmissionStatus.GRADED:
            return "by the checker"
        return ""

    @property
    def may_return(self) -> bool:
        """A person's score of a checked answer stands, and may give way to the checker's."""
        return self.allowed and self.in_force is not None

    @property
    def replaced_verdict(self) -> CheckerVerdict | None:
        """The checker's grade that the standing person's grade replaced (None if none did)."""
        stored = self.in_force.checker_verdict if self.in_force is not None else {}
        return checker_verdict_shown(stored) if stored else None


def access_hand_grading(*, user, course_slug: str, submission_id: int) -> tuple[Submission, str]:
    """An answer whose grade the user may set by hand (or give back to the checker): the
    course's staff, as for every submission of the course (404 for others' courses, 403
    for its students)."""
    return access_course_submission(user=user, course_slug=course_slug, submission_id=submission_id)


def hand_grading(*, submission: Submission, course: Course) -> HandGrading:
    checked = _part_type(submission) not in MANUAL_ANSWER_TYPES
    return HandGrading(
        checked=checked,
        allowed=checked and submission.status in HAND_GRADABLE_CHECKED_STATUSES and not course.is_archived,
        part_points=_part_points(submission),
        grades=list(submission.manual_grades.select_related("grader")),
        status=submission.status,
    )


def grader_name(grade: ManualGrade) -> str:
    """The username of the person who gave ``grade`` (their account may be gone)."""
    return grade.grader.get_username() if grade.grader is not None else "a former member of staff"


def checker_verdict_shown(stored: dict) -> CheckerVerdict:
    """A verdict kept by ``submission_grade_manually`` (or a submission's own fields) for
    the staff page; every field may be missing or of the wrong type in old rows."""
    feedback = stored.get("feedback") if isinstance(stored.get("feedback"), dict) else {}
    status = stored.get("status") or ""
    graded_at = stored.get("graded_at")
    return CheckerVerdict(
        status_label=SubmissionStatus(status).label if status in SubmissionStatus.values else str(status),
        score=stored.get("score"),
        awarded=stored.get("awarded"),
        correct=stored.get("correct"),
        message=str(feedback.get("message") or ""),
        misconception_message=str(feedback.get("misconception_message") or ""),
        misconception=str(stored.get("misconception") or ""),
        graded_at=datetime.fromisoformat(graded_at) if isinstance(graded_at, str) else None,
        steps_html=_steps_html(feedback),
    )


def checker_steps_html(*, submission: Submission) -> str:
    """The typeset steps of a derivation the checker graded ("" for other answers or when
    the feedback is a person's): the staff read them before giving partial credit."""
    return _steps_html(submission.feedback if isinstance(submission.feedback, dict) else {})


def _steps_html(feedback: dict) -> str:
    # Built from escaped parts and passed through the one sanitiser (derivation_steps_html).
    return mark_safe(derivation_steps_html(feedback, show_verdicts=True, show_instances=True))


def _part_type(submission: Submission) -> str:
    return version_spec(submission.variant.exercise_version).part(submission.part).type


def _part_points(submission: Submission) -> float:
    """The part's share of its exercise's points in the assignment (gradebook_part_points),
    read from the version the assignment uses now, or the answered one if that lacks the part."""
    item = submission.variant.assignment_item
    for version in (item.exercise_version, submission.variant.exercise_version):
        points = engine.part_points(version_spec(version), item.points)
        if submission.part in points:
            return float(points[submission.part])
    return 0.0
