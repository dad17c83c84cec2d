"""Writes of rubric grading: a course's rubric per exercise part and its items, grading one
answer by ticking items, applying one item to many answers at once, and students'
regrade requests with the staff's reply.

A rubric's score is the points of the ticked items over the rubric's positive points,
kept within [0, 1]; the assignment's penalties then apply as for any manual grade.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from courses.models import AssignmentItem, Course
from grading.models import Submission, SubmissionStatus

from .models import ManualGrade, RegradeRequest, RegradeRequestStatus, Rubric, RubricItem
from .services import InstructorRefused, _require_writable, submission_grade_manually

MAX_RUBRIC_ITEMS = 40
MAX_BULK_ANSWERS = 1000


def rubric_for_part(*, course: Course, item: AssignmentItem, part: str, seed_criteria=()) -> Rubric:
    """The course's rubric of this exercise part, made on first use; a new one starts from
    the criteria the exercise's author wrote (``seed_criteria``: (text, points) pairs)."""
    rubric, created = Rubric.objects.get_or_create(
        course=course, exercise_id=item.exercise_version.exercise_id, part=part
    )
    if created and seed_criteria:
        RubricItem.objects.bulk_create(
            [RubricItem(rubric=rubric, text=text[:300], points=points, position=index)
             for index, (text, points) in enumerate(seed_criteria)]
        )
    return rubric


def rubric_item_add(*, rubric: Rubric, text: str, points: float) -> RubricItem:
    _require_writable(rubric.course)
    text = (text or "").strip()
    if not text:
        raise InstructorRefused("A rubric item needs a description.")
    if not -100 <= points <= 100:
        raise InstructorRefused("A rubric item is worth between -100 and 100 points.")
    if rubric.items.count() >= MAX_RUBRIC_ITEMS:
        raise InstructorRefused(f"A rubric has at most {MAX_RUBRIC_ITEMS} items.")
    position = (rubric.items.order_by("-position").values_list("position", flat=True).first() or 0) + 1
    return RubricItem.objects.create(rubric=rubric, text=text[:300], points=points, position=position)


def rubric_item_remove(*, item: RubricItem) -> None:
    """Grades that ticked it keep their score; the item leaves the rubric."""
    _require_writable(item.rubric.course)
    if item.grades.exists():
        raise InstructorRefused("Answers were graded with this item; it stays so their grades stay explained.")
    item.delete()


def rubric_score(*, rubric_items: list[RubricItem], ticked: list[RubricItem]) -> float:
    maximum = sum(item.points for item in rubric_items if item.points > 0)
    if maximum <= 0:
        raise InstructorRefused("The rubric has no item worth points yet.")
    earned = sum(item.points for item in ticked)
    return min(max(earned / maximum, 0.0), 1.0)


def submission_grade_with_rubric(
    *, submission: Submission, rubric: Rubric, grader, item_ids: list[int], comment: str = ""
) -> Submission:
    """Grade one answer by the ticked items of ``rubric`` (ids of other rubrics refused)."""
    items = list(rubric.items.all())
    by_id = {item.pk: item for item in items}
    unknown = [item_id for item_id in item_ids if item_id not in by_id]
    if unknown:
        raise InstructorRefused("Tick items of this part's rubric only.")
    ticked = [by_id[item_id] for item_id in dict.fromkeys(item_ids)]
    score = rubric_score(rubric_items=items, ticked=ticked)
    with transaction.atomic():
        graded = submission_grade_manually(submission=submission, grader=grader, score=score, comment=comment)
        grade = graded.manual_grades.order_by("-created_at", "-id").first()
        grade.rubric_items.set(ticked)
    return graded


def rubric_item_apply(*, rubric: Rubric, item: RubricItem, submissions: list[Submission], grader) -> int:
    """Tick ``item`` on each answer, on top of the items its newest grade ticked (an answer
    not graded yet gets this item alone). Returns how many answers were graded."""
    if item.rubric_id != rubric.pk:
        raise InstructorRefused("That item belongs to another rubric.")
    if len(submissions) > MAX_BULK_ANSWERS:
        raise InstructorRefused(f"Apply an item to at most {MAX_BULK_ANSWERS} answers at once.")
    ticked_before = _ticked_by_newest_grade(submissions)
    with transaction.atomic():
        for submission in submissions:
            before = ticked_before.get(submission.pk, [])
            comment = _newest_comment(submission)
            submission_grade_with_rubric(
                submission=submission, rubric=rubric, grader=grader,
                item_ids=[*before, item.pk] if item.pk not in before else before, comment=comment,
            )
    return len(submissions)


def _ticked_by_newest_grade(submissions: list[Submission]) -> dict[int, list[int]]:
    newest: dict[int, ManualGrade] = {}
    for grade in ManualGrade.objects.filter(submission__in=submissions).prefetch_related("rubric_items").order_by(
        "created_at", "id"
    ):
        newest[grade.submission_id] = grade
    return {submission_id: [i.pk for i in grade.rubric_items.all()] for submission_id, grade in newest.items()}


def _newest_comment(submission: Submission) -> str:
    return (submission.feedback or {}).get("grader_comment", "") if isinstance(submission.feedback, dict) else ""


# ---------------------------------------------------------------------------
# Regrade requests
# ---------------------------------------------------------------------------


def regrade_request_create(*, submission: Submission, student, message: str) -> RegradeRequest:
    """A student asks to look again at a graded answer of theirs (one open request each)."""
    message = (message or "").strip()
    if submission.student_id != student.pk:
        raise InstructorRefused("You can ask for a regrade of your own answers only.")
    if submission.status != SubmissionStatus.GRADED:
        raise InstructorRefused("This answer has no grade yet.")
    if not message:
        raise InstructorRefused("Say what should be looked at again.")
    if len(message) > 2000:
        raise InstructorRefused("Keep the request under 2,000 characters.")
    item = submission.variant.assignment_item
    if item is not None:
        _require_writable(item.assignment.course)
    try:
        with transaction.atomic():
            return RegradeRequest.objects.create(
                submission=submission, student=student, message=message, score_before=submission.awarded
            )
    except IntegrityError:
        raise InstructorRefused("You already asked about this answer; wait for the reply.") from None


def regrade_request_reply(*, request: RegradeRequest, replier, reply: str) -> RegradeRequest:
    reply = (reply or "").strip()
    if not reply:
        raise InstructorRefused("Write a reply for the student.")
    if request.status != RegradeRequestStatus.OPEN:
        raise InstructorRefused("This request was already answered.")
    request.submission.refresh_from_db(fields=["awarded"])
    request.reply = reply[:5000]
    request.replied_by = replier
    request.replied_at = timezone.now()
    request.status = RegradeRequestStatus.ANSWERED
    request.score_after = request.submission.awarded
    request.save(update_fields=["reply", "replied_by", "replied_at", "status", "score_after"])
    return request
