"""Writes of rubric grading: a course's rubric per exercise part and its items, grading one
answer by ticking items, applying one item to many answers at once, and students'
regrade requests with the staff's reply.

A rubric's score is the points of the ticked items over the rubric's positive points,
kept within [0, 1]; the assignment's penalties then apply as for any manual grade. Two
items of one rubric never say the same thing (compared ignoring case and spacing).
"""

from __future__ import annotations

import unicodedata

from django.db import IntegrityError, transaction
from django.utils import timezone

from courses.models import AssignmentItem, Course
from exams.selectors import FeedbackVisibility, feedback_visibility_for
from exercises.specs import version_spec
from grading.models import Submission

from .models import (
    SCORE_CHANGE_EPSILON, ManualGrade, RegradeRequest, RegradeRequestStatus, Rubric, RubricItem,
)
from .selectors import MANUAL_ANSWER_TYPES
from .selectors_rubrics import REGRADE_OPEN, RegradeRefusalKind, regrade_ask_refusal
from .services import InstructorRefused, _require_writable, submission_grade_manually

MAX_RUBRIC_ITEMS = 40
MAX_BULK_ANSWERS = 1000
MAX_ITEM_POINTS = 100


class RubricConflict(InstructorRefused):
    """Refused by the state of things, not by what was asked: a rubric that exists already,
    a request already answered or already open, an answer not graded yet."""


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


@transaction.atomic
def rubric_create(*, course: Course, item: AssignmentItem, part: str, criteria=None, seed_criteria=()) -> Rubric:
    """The course's rubric of this exercise part, made now: with ``criteria`` ((text, points)
    pairs) when given, else from the author's ``seed_criteria``. Refused when it exists."""
    _require_writable(course)
    if Rubric.objects.filter(course=course, exercise_id=item.exercise_version.exercise_id, part=part).exists():
        raise RubricConflict("This part already has a rubric; add or change its items instead.")
    if criteria is not None:
        if len(criteria) > MAX_RUBRIC_ITEMS:
            raise InstructorRefused(f"A rubric has at most {MAX_RUBRIC_ITEMS} items.")
        checked = [(_item_text(text), _item_points(points)) for text, points in criteria]
        _refuse_duplicate_texts([text for text, _ in checked])
    rubric = rubric_for_part(course=course, item=item, part=part, seed_criteria=() if criteria is not None else seed_criteria)
    if criteria is not None:
        RubricItem.objects.bulk_create(
            [RubricItem(rubric=rubric, text=text, points=points, position=index)
             for index, (text, points) in enumerate(checked, start=1)]
        )
    return rubric


def _item_text(text: str) -> str:
    text = (text or "").strip()
    if not text:
        raise InstructorRefused("A rubric item needs a description.")
    if len(text) > 300:
        raise InstructorRefused("A rubric item's description has at most 300 characters.")
    return text


def _same_text_key(text: str) -> str:
    """What two descriptions are compared by: case, spacing, invisible characters (zero-width
    spaces, joiners) and compatibility forms (full-width letters, ligatures) do not make an
    item new."""
    folded = unicodedata.normalize("NFKC", text)
    visible = "".join(char for char in folded if unicodedata.category(char) != "Cf")
    return " ".join(visible.split()).casefold()


def duplicate_item_message(text: str) -> str:
    return f"This rubric already has the item “{text}”: give each item its own description."


def _refuse_duplicate_texts(texts: list[str]) -> None:
    seen: dict[str, str] = {}
    for text in texts:
        key = _same_text_key(text)
        if key in seen:
            raise InstructorRefused(duplicate_item_message(seen[key]))
        seen[key] = text


def _refuse_text_in_rubric(*, rubric: Rubric, text: str, other_than: int | None = None) -> None:
    """Refused when another item of ``rubric`` says ``text`` (ignoring case and spacing)."""
    key = _same_text_key(text)
    for pk, existing in rubric.items.values_list("pk", "text"):
        if pk != other_than and _same_text_key(existing) == key:
            raise InstructorRefused(duplicate_item_message(existing))


def _lock_rubric(rubric: Rubric) -> None:
    """Hold the rubric's row to the end of the transaction, so that two people adding the
    same item at once cannot both pass the duplicate check."""
    Rubric.objects.select_for_update().filter(pk=rubric.pk).first()


def _item_points(points: float) -> float:
    if not -MAX_ITEM_POINTS <= points <= MAX_ITEM_POINTS:  # NaN fails this too
        raise InstructorRefused(f"A rubric item is worth between -{MAX_ITEM_POINTS} and {MAX_ITEM_POINTS} points.")
    return points


def rubric_item_update(*, item: RubricItem, text: str | None = None, points: float | None = None) -> RubricItem:
    """Reword an item at any time; change its points only while no grade ticked it (a
    stored grade keeps the score it was given, so its items must keep their points)."""
    _require_writable(item.rubric.course)
    with transaction.atomic():
        return _rubric_item_update(item=item, text=text, points=points)


def _rubric_item_update(*, item: RubricItem, text: str | None, points: float | None) -> RubricItem:
    fields = []
    if text is not None:
        text = _item_text(text)
        _lock_rubric(item.rubric)
        _refuse_text_in_rubric(rubric=item.rubric, text=text, other_than=item.pk)
        item.text = text
        fields.append("text")
    if points is not None and points != item.points:
        points = _item_points(points)
        if item.grades.exists():
            raise RubricConflict(
                "Answers were graded with this item; its points stay so their grades stay explained. "
                "Add a new item instead."
            )
        item.points = points
        fields.append("points")
    if fields:
        item.save(update_fields=fields)
    return item


@transaction.atomic
def rubric_item_add(*, rubric: Rubric, text: str, points: float) -> RubricItem:
    """A new item at the end of the rubric; refused when the rubric already has an item of
    that description (ignoring case and spacing)."""
    _require_writable(rubric.course)
    text = _item_text(text)
    points = _item_points(points)
    _lock_rubric(rubric)
    if rubric.items.count() >= MAX_RUBRIC_ITEMS:
        raise InstructorRefused(f"A rubric has at most {MAX_RUBRIC_ITEMS} items.")
    _refuse_text_in_rubric(rubric=rubric, text=text)
    position = (rubric.items.order_by("-position").values_list("position", flat=True).first() or 0) + 1
    return RubricItem.objects.create(rubric=rubric, text=text[:300], points=points, position=position)


def rubric_item_remove(*, item: RubricItem) -> None:
    """Grades that ticked it keep their score; the item leaves the rubric."""
    _require_writable(item.rubric.course)
    if item.grades.exists():
        raise RubricConflict("Answers were graded with this item; it stays so their grades stay explained.")
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
    ticked_ids = {item.pk for item in ticked}
    in_rubric_order = [(item.text, item.points) for item in items if item.pk in ticked_ids]
    with transaction.atomic():
        graded = submission_grade_manually(
            submission=submission, grader=grader, score=score, comment=comment, rubric_ticked=in_rubric_order
        )
        grade = graded.manual_grades.order_by("-created_at", "-id").first()
        grade.rubric_items.set(ticked)
    return graded


def rubric_item_apply(*, rubric: Rubric, item: RubricItem, submissions: list[Submission], grader) -> int:
    """Tick ``item`` on each answer, on top of the items its newest grade ticked (an answer
    not graded yet gets this item alone). Returns how many answers were graded."""
    return len(rubric_items_apply(rubric=rubric, items=[item], submissions=submissions, grader=grader))


def rubric_items_apply(
    *, rubric: Rubric, items: list[RubricItem], submissions: list[Submission], grader,
    replace: bool = False, comment: str | None = None,
) -> list[Submission]:
    """Grade each answer with ``items`` of ``rubric``: ticked on top of the items its newest
    grade ticked, or (``replace``) as the only items ticked. ``comment`` None keeps each
    answer's comment. All or nothing, in one transaction that first locks the answers'
    rows (in id order, so two graders never deadlock), so what was ticked before is read
    under the lock the grade is written under. Returns the graded answers."""
    if not items and not replace:
        raise InstructorRefused("Choose at least one rubric item.")
    if any(item.rubric_id != rubric.pk for item in items):
        raise InstructorRefused("That item belongs to another rubric.")
    if not submissions:
        raise InstructorRefused("Choose at least one answer.")
    if len(submissions) > MAX_BULK_ANSWERS:
        raise InstructorRefused(f"Apply an item to at most {MAX_BULK_ANSWERS} answers at once.")
    chosen = [item.pk for item in items]
    graded = []
    with transaction.atomic():
        locked = list(
            Submission.objects.select_for_update(of=("self",)).filter(pk__in=[s.pk for s in submissions]).order_by("pk")
        )
        ticked_before = {} if replace else _ticked_by_newest_grade(locked)
        for submission in locked:
            before = ticked_before.get(submission.pk, [])
            graded.append(submission_grade_with_rubric(
                submission=submission, rubric=rubric, grader=grader,
                item_ids=[*before, *(pk for pk in chosen if pk not in before)],
                comment=_newest_comment(submission) if comment is None else comment,
            ))
    return graded


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


MAX_REGRADE_MESSAGE = 2000
MAX_REGRADE_REPLY = 5000


class RegradeHidden(InstructorRefused):
    """The review policy does not show the answer's grade to its student yet."""


def _plain_text(text: str, *, what: str, limit: int, empty: str) -> str:
    """``text`` stripped, or refused: empty, too long, or holding what the database cannot
    store (NUL, a lone surrogate)."""
    text = (text or "").strip()
    if not text:
        raise InstructorRefused(empty)
    if len(text) > limit:
        raise InstructorRefused(f"Keep the {what} under {limit:,} characters.")
    if "\x00" in text:
        raise InstructorRefused(f"The {what} may not contain NUL characters.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InstructorRefused(f"The {what} must be valid Unicode.") from None
    return text


def regrade_request_create(
    *, submission: Submission, student, message: str, visibility: FeedbackVisibility | None = None
) -> RegradeRequest:
    """A student asks for another look at a graded answer of theirs: checked or graded by a
    person, where ``selectors_rubrics.regrade_ask_refusal`` allows it (the review policy
    shows its score or verdict, an assignment's answer, the course not archived, one open
    request per answer). ``visibility``: what the policy shows the student now, when the
    caller has it. Refused with RegradeHidden (the policy hides the grade), RubricConflict
    (the state of things: archived, not graded, a request open) or InstructorRefused (a
    practice answer, a message empty, too long or not text)."""
    if submission.student_id != student.pk:
        raise InstructorRefused("You can ask for a regrade of your own answers only.")
    item = submission.variant.assignment_item
    if visibility is None:
        visibility = feedback_visibility_for(
            assignment=item.assignment if item is not None else None, student=submission.student_id
        )
    refusal = regrade_ask_refusal(
        submission=submission, visibility=visibility,
        has_open_request=RegradeRequest.objects.filter(
            submission=submission, status=RegradeRequestStatus.OPEN
        ).exists(),
    )
    if refusal is not None:
        raise _REFUSALS[refusal.kind](refusal.message)
    message = _plain_text(
        message, what="request", limit=MAX_REGRADE_MESSAGE, empty="Say what should be looked at again."
    )
    try:
        with transaction.atomic():
            return RegradeRequest.objects.create(
                submission=submission, student=student, message=message, score_before=submission.awarded
            )
    except IntegrityError:  # another request about it was stored meanwhile
        raise RubricConflict(REGRADE_OPEN) from None


_REFUSALS = {
    RegradeRefusalKind.HIDDEN: RegradeHidden,
    RegradeRefusalKind.PRACTICE: InstructorRefused,
    RegradeRefusalKind.ARCHIVED: RubricConflict,
    RegradeRefusalKind.UNGRADED: RubricConflict,
    RegradeRefusalKind.OPEN: RubricConflict,
}


def regrade_request_reply(
    *, request: RegradeRequest, replier, reply: str, score: float | None = None
) -> RegradeRequest:
    """Answer a student's request, which closes it. With ``score`` (a fraction in [0, 1]) the
    reply also sets the answer's score by hand, through ``submission_grade_manually`` (its
    penalties, history and events), in the same transaction: a checked answer only — an
    answer graded with a rubric is graded again with the rubric first, so its ticked items
    keep explaining the grade. The request records the score awarded before and after.
    Refused: an empty or too long reply, a request answered already (RubricConflict), an
    archived course."""
    reply = _plain_text(reply, what="reply", limit=MAX_REGRADE_REPLY, empty="Write a reply for the student.")
    submission = request.submission
    item = submission.variant.assignment_item
    if item is not None:
        _require_writable(item.assignment.course)
    if score is not None and version_spec(submission.variant.exercise_version).part(submission.part).type in (
        MANUAL_ANSWER_TYPES
    ):
        raise InstructorRefused(
            "This answer is graded with a rubric: grade it again with the rubric (Grade by question), then reply."
        )
    with transaction.atomic():
        request = RegradeRequest.objects.select_for_update(of=("self",)).select_related(
            "submission__variant__assignment_item__assignment__course", "submission__variant__exercise_version",
        ).get(pk=request.pk)
        if request.status != RegradeRequestStatus.OPEN:
            raise RubricConflict("This request was already answered.")
        submission = request.submission
        if score is not None and (submission.score is None or abs(score - submission.score) > SCORE_CHANGE_EPSILON):
            submission_grade_manually(
                submission=submission, grader=replier, score=score, comment=_newest_comment(submission)
            )
        submission.refresh_from_db(fields=["awarded"])
        request.reply = reply
        request.replied_by = replier
        request.replied_at = timezone.now()
        request.status = RegradeRequestStatus.ANSWERED
        request.score_after = submission.awarded
        request.save(update_fields=["reply", "replied_by", "replied_at", "status", "score_after"])
    return request
