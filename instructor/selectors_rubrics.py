"""Reads of rubric grading by question: the hand-graded parts of a course with how many
answers wait, every student's newest answer to one part, the next one waiting, and the
regrade requests. ``access_*`` fetch with the permission check (course staff only)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q
from django.http import Http404

from courses.models import AssignmentItem, Course
from exams.selectors import feedback_for_student, feedback_visibility_for
from exercises.specs import part_label, version_spec
from grading.models import Submission, SubmissionStatus

from .models import ManualGrade, ManualGradeKind, RegradeRequest, RegradeRequestStatus, Rubric, RubricItem
from .selectors import (
    MANUAL_ANSWER_TYPES, access_teaching, assignment_submissions, newest_hand_grade_kind, rubric_for,
)


@dataclass(frozen=True)
class ManualPart:
    item: AssignmentItem
    part: str
    label: str
    title: str
    answers: int
    waiting: int


def course_manual_parts(*, course: Course) -> list[ManualPart]:
    """Every hand-graded part of the course's assignments, with the students who answered
    it and how many of their newest answers wait for a grade (two queries)."""
    items = list(
        AssignmentItem.objects.filter(assignment__course=course)
        .select_related("assignment", "exercise_version__exercise")
        .order_by("assignment__due_at", "assignment__title", "position", "pk")
    )
    counts = {
        (row["variant__assignment_item_id"], row["part"]): row
        for row in Submission.objects.filter(variant__assignment_item__assignment__course=course)
        .values("variant__assignment_item_id", "part")
        .annotate(
            answers=Count("student", distinct=True),
            waiting=Count("student", distinct=True, filter=Q(status=SubmissionStatus.MANUAL)),
        )
        .order_by()
    }
    parts = []
    for item in items:
        spec = version_spec(item.exercise_version)
        for part in spec.parts:
            if part.type not in MANUAL_ANSWER_TYPES:
                continue
            row = counts.get((item.pk, part.key), {})
            parts.append(
                ManualPart(
                    item=item, part=part.key, label=part_label(spec, part.key),
                    title=f"{item.assignment.title} · {spec.title} {part_label(spec, part.key)}",
                    answers=row.get("answers", 0), waiting=row.get("waiting", 0),
                )
            )
    return parts


def access_question(*, user, course_slug: str, item_id: int, part: str):
    """(course, item, spec part, role) of one hand-graded part, for the course's staff."""
    course, role = access_teaching(user=user, course_slug=course_slug)
    item = (
        AssignmentItem.objects.select_related("assignment__course", "exercise_version__exercise")
        .filter(pk=item_id, assignment__course=course)
        .first()
    )
    if item is None:
        raise Http404("No such exercise in this course.")
    spec = version_spec(item.exercise_version)
    spec_part = next((p for p in spec.parts if p.key == part), None)
    if spec_part is None or spec_part.type not in MANUAL_ANSWER_TYPES:
        raise Http404("No such hand-graded part.")
    return course, item, spec_part, role


def question_rubric(*, course: Course, item: AssignmentItem, part: str) -> Rubric | None:
    return (
        Rubric.objects.filter(course=course, exercise_id=item.exercise_version.exercise_id, part=part)
        .select_related("exercise")
        .prefetch_related("items")
        .first()
    )


def author_criteria(*, item: AssignmentItem, part: str):
    """The criteria the exercise's author wrote for the part ((text, points) pairs), to start
    a new course rubric from; none until someone answered (they are read off a variant)."""
    submission = (
        assignment_submissions(assignment=item.assignment)
        .filter(variant__assignment_item=item, part=part)
        .select_related("variant__exercise_version")
        .first()
    )
    return rubric_for(submission=submission).criteria if submission else ()


def rubric_scale_words(items) -> str:
    """How a rubric's ticked items become a score, in one sentence for the people editing
    and using it (``services_rubrics.rubric_score``: ticked points / positive points, kept
    within 0..1)."""
    items = list(items)
    maximum = sum(item.points for item in items if item.points > 0)
    if maximum <= 0:
        return ("No item is worth points yet: a student's score on this part will be the points of the "
                "ticked items ÷ the sum of the positive items, between 0 and 100 %.")
    words = (f"A student's score on this part is the points of the ticked items ÷ {maximum:g} "
             "(the sum of the positive items), between 0 and 100 %.")
    if any(item.points < 0 for item in items):
        words += " A negative item is a deduction."
    return words


@dataclass
class QuestionAnswer:
    number: int  # 1, 2, … in grading order: the name shown in anonymous mode
    submission: Submission
    ticked: list[int]

    @property
    def waiting(self) -> bool:
        return self.submission.status == SubmissionStatus.MANUAL


def question_answers(*, item: AssignmentItem, part: str) -> list[QuestionAnswer]:
    """Each student's newest answer to the part, in the order they came in (two queries)."""
    newest: dict[int, Submission] = {}
    for submission in (
        Submission.objects.filter(variant__assignment_item=item, part=part)
        .select_related("student")
        .order_by("attempt", "id")
    ):
        newest[submission.student_id] = submission
    answers = sorted(newest.values(), key=lambda s: (s.created_at, s.pk))
    ticked: dict[int, list[int]] = {}
    for grade in (
        ManualGrade.objects.filter(submission__in=[s.pk for s in answers])
        .prefetch_related("rubric_items")
        .order_by("created_at", "id")
    ):
        ticked[grade.submission_id] = [i.pk for i in grade.rubric_items.all()]
    return [QuestionAnswer(number, s, ticked.get(s.pk, [])) for number, s in enumerate(answers, start=1)]


def next_waiting(answers: list[QuestionAnswer], *, after: int | None = None) -> QuestionAnswer | None:
    """The next answer waiting for a grade after submission ``after`` (wrapping round),
    or the first one waiting."""
    start = next((index + 1 for index, a in enumerate(answers) if a.submission.pk == after), 0)
    for answer in answers[start:] + answers[:start]:
        if answer.waiting and answer.submission.pk != after:
            return answer
    return None


# ---------------------------------------------------------------------------
# Regrade requests
# ---------------------------------------------------------------------------


def course_regrade_requests(*, course: Course, open_only: bool = True):
    requests = RegradeRequest.objects.filter(
        submission__variant__assignment_item__assignment__course=course
    ).select_related(
        "student", "replied_by", "submission__variant__assignment_item__assignment",
        "submission__variant__exercise_version__exercise",
    )
    return requests.filter(status=RegradeRequestStatus.OPEN) if open_only else requests


def assignment_regrade_requests(*, assignment, status: str = "open"):
    """The regrade requests on answers to the assignment, newest first; ``status`` open,
    answered or all."""
    requests = course_regrade_requests(course=assignment.course, open_only=False).filter(
        submission__variant__assignment_item__assignment=assignment
    )
    return requests if status == "all" else requests.filter(status=status)


def submission_regrade_requests(*, submission: Submission):
    return RegradeRequest.objects.filter(submission=submission).select_related(
        "student", "replied_by", "submission__variant__assignment_item__assignment",
        "submission__variant__exercise_version__exercise",
    )


def access_rubric_item(*, user, course_slug: str, item_id: int) -> tuple[RubricItem, str]:
    """One item of one of the course's rubrics, for the course's staff."""
    course, role = access_teaching(user=user, course_slug=course_slug)
    item = RubricItem.objects.select_related("rubric__course").filter(pk=item_id, rubric__course=course).first()
    if item is None:
        raise Http404("No such rubric item in this course.")
    return item, role


def access_regrade_request(*, user, course_slug: str, request_id: int) -> tuple[RegradeRequest, str]:
    course, role = access_teaching(user=user, course_slug=course_slug)
    request = course_regrade_requests(course=course, open_only=False).filter(pk=request_id).first()
    if request is None:
        raise Http404("No such regrade request.")
    return request, role


def student_manual_grades(*, student):
    """The student's answers whose grade a person gave, newest first, with their requests
    (an answer given back to the checker since is the checker's again)."""
    return (
        Submission.objects.filter(student=student, status=SubmissionStatus.GRADED)
        .alias(newest_hand_grade_kind=newest_hand_grade_kind())
        .filter(newest_hand_grade_kind=ManualGradeKind.BY_HAND)
        .select_related("variant__assignment_item__assignment__course", "variant__exercise_version__exercise")
        .prefetch_related("regrade_requests")
        .order_by("-graded_at", "-id")[:200]
    )


def student_manual_grades_shown(*, student) -> list[dict]:
    """The student's answers graded by a person as the review policy lets them see each now:
    ``submission``, ``visibility`` (the score only where it is released) and ``feedback``
    (the ticked rubric items only where score and verdict both are). Answers whose verdict
    is still withheld are left out."""
    shown = []
    for submission in student_manual_grades(student=student):
        item = submission.variant.assignment_item
        visibility = feedback_visibility_for(
            assignment=item.assignment if item is not None else None, student=submission.student_id
        )
        if visibility.correctness:
            shown.append({
                "submission": submission,
                "visibility": visibility,
                "feedback": feedback_for_student(submission.feedback, visibility),
            })
    return shown


def access_own_graded_submission(*, user, submission_id: int) -> Submission:
    submission = (
        Submission.objects.select_related("variant__assignment_item__assignment__course")
        .filter(pk=submission_id, student=user)
        .first()
    )
    if submission is None:
        raise Http404("No such answer.")
    return submission
