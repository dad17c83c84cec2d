"""Writes of rubric grading: a course's rubric per exercise part and its items, grading one
answer by ticking items, applying one item to many answers at once, and students'
regrade requests with the staff's reply.

A rubric's score is the points of the ticked items over the rubric's positive points,
kept within [0, 1]; the assignment's penalties then apply as for any manual grade. Two
items of one rubric never say the same thing (compared ignoring case and spacing). A
change of the items that changes scores (an item added, given other points or removed)
scores every answer graded with the rubric again, after asking with the numbers.
"""

from __future__ import annotations

import unicodedata

from django.db import IntegrityError, transaction
from django.utils import timezone

from attnquiz import confirmations
from courses.models import AssignmentItem, Course
from exams.selectors import FeedbackVisibility, feedback_visibility_for
from exercises.specs import version_spec
from grading.models import Submission

from . import selectors_rubric_change as rubric_change
from .models import (
    SCORE_CHANGE_EPSILON, ManualGrade, RegradeRequest, RegradeRequestStatus, Rubric, RubricItem,
)
from .selectors import MANUAL_ANSWER_TYPES
from .selectors_rubrics import REGRADE_OPEN, RegradeRefusalKind, regrade_ask_refusal
from .services import (  # noqa: F401  (GradedMeanwhile and UNCHECKED: the views read them here)
    UNCHECKED, Confirmed, GradedMeanwhile, grade_seen_posted, require_newest_grade_seen, InstructorRefused, _require_writable, confirmation_required, submission_grade_manually,
)

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


def _refuse_text_in_rubric(*, items, text: str, other_than: int | None = None) -> None:
    """Refused when another of ``items`` says ``text`` (ignoring case and spacing)."""
    key = _same_text_key(text)
    for item in items:
        if item.pk != other_than and _same_text_key(item.text) == key:
            raise InstructorRefused(duplicate_item_message(item.text))


def _rubric_items_locked(rubric: Rubric) -> list[RubricItem]:
    """Hold the rubric's row to the end of the transaction and read its items under it: two
    people changing it at once (adding the same item, or a change while an answer is graded
    with it) are decided one after the other, each on the items the other left."""
    Rubric.objects.select_for_update().filter(pk=rubric.pk).first()
    return list(RubricItem.objects.filter(rubric=rubric).order_by("position", "id"))


def _item_points(points: float) -> float:
    if not -MAX_ITEM_POINTS <= points <= MAX_ITEM_POINTS:  # NaN fails this too
        raise InstructorRefused(f"A rubric item is worth between -{MAX_ITEM_POINTS} and {MAX_ITEM_POINTS} points.")
    return points


# ---------------------------------------------------------------------------
# Changing a rubric's items: the answers graded with it are scored again
# ---------------------------------------------------------------------------
#
# A rubric's score is out of its positive points, so adding an item, giving one other
# points or removing one changes every answer graded with it. Each change is decided under
# the rubric's lock with the graded answers' rows locked: what it does to them is put in
# numbers and asked first (ConfirmationNeeded, nothing changed), and once confirmed the
# rubric changes and every answer whose score or ticked items change is graded again from
# its ticked items, in the same transaction, as a new grade in its history. TAs change a
# rubric as instructors do (they grade with it): the same question, the same confirmation.


def _require_rescore_confirmed(
    *, rubric: Rubric, rescore: rubric_change.RubricRescore, question: str, change: dict, confirmed: Confirmed
) -> None:
    """Refuse a change that leaves graded answers without an item worth points, and ask
    (ConfirmationNeeded) before one that changes scores, unless ``confirmed`` holds for this
    very change of this rubric with the same numbers (attnquiz.confirmations)."""
    if rescore.graded and rescore.maximum_after <= 0:
        raise RubricConflict(
            f"{rescore.graded} answer{'s' * (rescore.graded != 1)} {'were' if rescore.graded != 1 else 'was'} "
            "graded with this rubric: it keeps at least one item worth points."
        )
    confirmation_required(
        scope=confirmations.scope_of("instructor.rubric", rubric.pk, change=change),
        message=rubric_change.rubric_change_question(rescore, change=question), confirmed=confirmed,
    )


def _rubric_rescore_locked(
    *, rubric: Rubric, lines_before, lines_after, touched: int | None = None
) -> rubric_change.RubricRescore:
    """What ``lines_after`` does to the answers graded with ``rubric``, read with their rows
    locked (in id order, as every grading path locks them). Call inside the transaction,
    holding the rubric's lock: no answer is graded with it meanwhile, and one graded since
    with a typed score is read as such (read again once its row is locked)."""
    candidates = list(rubric_change.rubric_graded_submissions(rubric=rubric).values_list("pk", flat=True))
    list(Submission.objects.select_for_update(of=("self",)).filter(pk__in=candidates).order_by("pk").values_list("pk"))
    submissions = list(
        rubric_change.rubric_graded_submissions(rubric=rubric).filter(pk__in=candidates)
        .select_related("variant__assignment_item__assignment", "student")
    )
    return rubric_change.rubric_rescore(
        submissions=submissions, lines_before=lines_before, lines_after=lines_after, touched=touched
    )


def _grade_again(*, rubric: Rubric, rescore: rubric_change.RubricRescore, actor, reason: str) -> None:
    """Grade each answer of ``rescore`` again from its ticked items, by ``actor``, keeping its
    comment: a new grade in its history that says why (``reason``). Call in the change's
    transaction, after the rubric's items are changed."""
    for answer in rescore.answers:
        graded = submission_grade_manually(
            submission=answer.submission, grader=actor, score=answer.score_after,
            comment=_newest_comment(answer.submission),
            rubric_ticked=[(line.text, line.points) for line in answer.ticked],
        )
        _record_rubric_grade(
            submission=graded, rubric=rubric, ticked=answer.ticked, maximum=rescore.maximum_after, reason=reason
        )


def _record_rubric_grade(*, submission: Submission, rubric: Rubric, ticked, maximum: float, reason: str = "") -> None:
    """Keep on the answer's newest grade what it was given with: the rubric, its items ticked
    as they read and counted, the rubric's positive points, and (a rescore) why."""
    grade = submission.manual_grades.order_by("-created_at", "-id").first()
    grade.rubric = rubric
    grade.rubric_ticked = [{"id": line.pk, "text": line.text, "points": line.points} for line in ticked]
    grade.rubric_maximum = maximum
    grade.reason = reason
    grade.save(update_fields=["rubric", "rubric_ticked", "rubric_maximum", "reason"])
    grade.rubric_items.set([line.pk for line in ticked])


def rubric_item_update(
    *, item: RubricItem, text: str | None = None, points: float | None = None, actor=None,
    confirmed: Confirmed = True,
) -> RubricItem:
    """Reword an item, or give it other points: the answers graded with the rubric are then
    scored again (asked first, see ``rubric_item_add``)."""
    _require_writable(item.rubric.course)
    if text is not None:
        text = _item_text(text)
    if points is not None:
        points = _item_points(points)
    with transaction.atomic():
        items = _rubric_items_locked(item.rubric)
        stored = next((i for i in items if i.pk == item.pk), None)
        if stored is None:
            raise RubricConflict("This item was removed from the rubric meanwhile.")
        fields = []
        if text is not None:
            _refuse_text_in_rubric(items=items, text=text, other_than=item.pk)
            stored.text = text
            fields.append("text")
        rescore = None
        if points is not None and points != stored.points:
            before = rubric_change.rubric_lines(items)
            after = [
                rubric_change.RubricLine(line.pk, stored.text, points) if line.pk == item.pk else line
                for line in before
            ]
            rescore = _rubric_rescore_locked(
                rubric=item.rubric, lines_before=before, lines_after=after, touched=item.pk
            )
            _require_rescore_confirmed(
                rubric=item.rubric, rescore=rescore, confirmed=confirmed,
                question=f"with “{stored.text}” worth {points:+g} instead of {stored.points:+g}",
                change={"edit": "item_points", "item": item.pk, "points": points},
            )
            what = f"“{stored.text}” worth {points:+g} instead of {stored.points:+g}"
            stored.points = points
            fields.append("points")
        if fields:
            stored.save(update_fields=fields)
        if rescore is not None:
            _grade_again(rubric=item.rubric, rescore=rescore, actor=actor, reason=rubric_change.rubric_change_reason(
                what=what, maximum_before=rescore.maximum_before, maximum_after=rescore.maximum_after,
            ))
    item.text, item.points = stored.text, stored.points
    return item


def rubric_item_add(
    *, rubric: Rubric, text: str, points: float, actor=None, confirmed: Confirmed = True
) -> RubricItem:
    """A new item at the end of the rubric; refused when the rubric already has an item of
    that description (ignoring case and spacing).

    An item worth points changes what the rubric's scores are out of: every answer graded
    with the rubric (its newest grade ticked its items; not a typed score, not one given
    back to the checker) is scored again from its ticked items, graded by ``actor``. Asked
    first: ConfirmationNeeded says how many answers and scores change, in numbers, and
    whether their students see them now; nothing changes until ``confirmed`` is the token
    of that question, younger than the confirmation's age limit, for this change with the
    same numbers. ``confirmed=True`` (scripts) changes it without asking."""
    _require_writable(rubric.course)
    text = _item_text(text)
    points = _item_points(points)
    with transaction.atomic():
        items = _rubric_items_locked(rubric)
        if len(items) >= MAX_RUBRIC_ITEMS:
            raise InstructorRefused(f"A rubric has at most {MAX_RUBRIC_ITEMS} items.")
        _refuse_text_in_rubric(items=items, text=text)
        before = rubric_change.rubric_lines(items)
        rescore = _rubric_rescore_locked(
            rubric=rubric, lines_before=before, lines_after=[*before, rubric_change.RubricLine(None, text, points)]
        )
        words = rubric_change.item_words(text, points)
        _require_rescore_confirmed(
            rubric=rubric, rescore=rescore, question=f"with {words}", confirmed=confirmed,
            change={"edit": "item_add", "text": text, "points": points},
        )
        position = max((item.position for item in items), default=0) + 1
        added = RubricItem.objects.create(rubric=rubric, text=text[:300], points=points, position=position)
        _grade_again(rubric=rubric, rescore=rescore, actor=actor, reason=rubric_change.rubric_change_reason(
            what=f"{words} added", maximum_before=rescore.maximum_before, maximum_after=rescore.maximum_after,
        ))
    return added


def rubric_item_remove(*, item: RubricItem, actor=None, confirmed: Confirmed = True) -> None:
    """The item leaves the rubric; the answers graded with the rubric are scored again without
    it (asked first, see ``rubric_item_add``). Their earlier grades keep the items they
    ticked as they read and counted then (``ManualGrade.rubric_ticked``)."""
    _require_writable(item.rubric.course)
    with transaction.atomic():
        items = _rubric_items_locked(item.rubric)
        stored = next((i for i in items if i.pk == item.pk), None)
        if stored is None:
            return  # removed meanwhile: what was asked is done
        before = rubric_change.rubric_lines(items)
        after = [line for line in before if line.pk != item.pk]
        rescore = _rubric_rescore_locked(rubric=item.rubric, lines_before=before, lines_after=after, touched=item.pk)
        words = rubric_change.item_words(stored.text, stored.points)
        _require_rescore_confirmed(
            rubric=item.rubric, rescore=rescore, question=f"without {words}", confirmed=confirmed,
            change={"edit": "item_remove", "item": item.pk},
        )
        stored.delete()
        _grade_again(rubric=item.rubric, rescore=rescore, actor=actor, reason=rubric_change.rubric_change_reason(
            what=f"{words} removed", maximum_before=rescore.maximum_before, maximum_after=rescore.maximum_after,
        ))


def rubric_rescore(*, rubric: Rubric, actor, confirmed: Confirmed = True) -> int:
    """Score again, from their ticked items under the rubric as it stands, the answers graded
    with it whose score is not what those items give now (graded before an item was added,
    given other points or removed, when such a change did not score them again). Asked
    first as a change of items is. Returns how many answers were graded again."""
    _require_writable(rubric.course)
    with transaction.atomic():
        lines = rubric_change.rubric_lines(_rubric_items_locked(rubric))
        rescore = _rubric_rescore_locked(rubric=rubric, lines_before=lines, lines_after=lines)
        if not rescore.changed:
            raise RubricConflict("Every answer graded with this rubric already has the score its ticked items give.")
        _require_rescore_confirmed(
            rubric=rubric, rescore=rescore, question="", confirmed=confirmed, change={"edit": "rescore"}
        )
        _grade_again(rubric=rubric, rescore=rescore, actor=actor, reason=rubric_change.rubric_change_reason(
            what="", maximum_before=rescore.maximum_before, maximum_after=rescore.maximum_after,
        ))
    return len(rescore.answers)


def rubric_score(*, rubric_items: list[RubricItem], ticked: list[RubricItem]) -> float:
    maximum = sum(item.points for item in rubric_items if item.points > 0)
    if maximum <= 0:
        raise InstructorRefused("The rubric has no item worth points yet.")
    earned = sum(item.points for item in ticked)
    return min(max(earned / maximum, 0.0), 1.0)


def submission_grade_with_rubric(
    *, submission: Submission, rubric: Rubric, grader, item_ids: list[int], comment: str = "",
    grade_seen=UNCHECKED,
) -> Submission:
    """Grade one answer by the ticked items of ``rubric`` (ids of other rubrics refused),
    read under the rubric's lock: a change of its items waits for this grade, and scores it
    again with the others.

    ``grade_seen``: the id of the answer's newest grade when the grader's page was shown
    (None: it had none). Another grade made since is refused (GradedMeanwhile, naming who
    gave it and the score), decided under the answer's row lock, so of two graders saving
    the same answer at once the second is told instead of replacing the first's grade."""
    with transaction.atomic():
        items = _rubric_items_locked(rubric)
        if grade_seen is not UNCHECKED:
            Submission.objects.select_for_update(of=("self",)).filter(pk=submission.pk).values_list("pk").first()
            require_newest_grade_seen(submission_id=submission.pk, grade_seen=grade_seen)
        by_id = {item.pk: item for item in items}
        unknown = [item_id for item_id in item_ids if item_id not in by_id]
        if unknown:
            raise InstructorRefused("Tick items of this part's rubric only.")
        ticked_ids = set(item_ids)
        ticked = [item for item in items if item.pk in ticked_ids]  # in the rubric's order
        score = rubric_score(rubric_items=items, ticked=ticked)
        graded = submission_grade_manually(
            submission=submission, grader=grader, score=score, comment=comment,
            rubric_ticked=[(item.text, item.points) for item in ticked],
        )
        _record_rubric_grade(
            submission=graded, rubric=rubric, ticked=rubric_change.rubric_lines(ticked),
            maximum=rubric_change.rubric_maximum(rubric_change.rubric_lines(items)),
        )
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
        _rubric_items_locked(rubric)  # first the rubric, then the answers: the order of every rubric write
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
