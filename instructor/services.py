"""Writes for teaching staff: assignments and their exercises, manual grades, regrades.

Regrading re-runs the answer checkers on stored raw answers against the *current*
version of each assignment item (the instructor may have switched the item to a new
version, e.g. with a corrected reference answer or tolerance). It never lowers a
score unless the job says ``allow_lower``, and never changes a score a person set
(``submission_grade_manually``): such an answer is listed as "kept: graded by a person"
with the checker's new score, and counted in ``by_hand``, until a person gives it back to
the checker (``submission_grade_return_to_checker``). Jobs are idempotent: they claim themselves
with a conditional update, remember a cursor, and write each batch in one transaction,
so a second delivery or a restart after a crash carries on instead of repeating work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from attnquiz import confirmations
from courses import services as courses_services
from courses.models import Assignment, AssignmentItem, Course, PoolDraw
from courses.pools import pool_points_problems
from courses.services import CourseRefused
from exams import services as exams_services
from exams.models import AssignmentAttempt
from exercises import engine
from exercises.models import ExerciseVersion
from exercises.specs import version_spec
from grading.core.score_rounding import percent_text
from grading.models import Submission, SubmissionStatus
from grading.events import GradeChange, grade_changed_publish, grades_changed_publish

from . import selectors_edit_impact, selectors_picker
from .models import ChangeOutcome, ManualGrade, ManualGradeKind, RegradeChange, RegradeJob, RegradeStatus
from .selectors import (
    assignment_items_info, newest_hand_grade_kind, part_keys_of, rubric_for, unknown_parts_message,
)
from .selectors_hand_grading import HAND_GRADABLE_CHECKED_STATUSES

logger = logging.getLogger(__name__)

REGRADE_BATCH_SIZE = 500
REGRADE_STALE_AFTER = timedelta(minutes=5)
REGRADABLE_STATUSES = (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE)
SCORE_EPSILON = 1e-9
MAX_ITEM_POINTS = 1000


class InstructorRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class GradedMeanwhile(InstructorRefused):
    """The answer was graded (again) after the grader's page was shown: their grade would
    silently replace one they never saw. ``newest_id``: the grade that stands now."""

    def __init__(self, message: str, *, newest_id: int | None):
        super().__init__(message)
        self.newest_id = newest_id


UNCHECKED = object()  # grade_seen not given: no check (the bulk apply, the API, older open pages)
OUT_OF_DATE = "This answer's page is out of date: save again to grade it."


def require_newest_grade_seen(*, submission_id: int, grade_seen) -> None:
    """GradedMeanwhile unless the answer's newest hand grade is ``grade_seen`` (its id when
    the grader's page was shown; None: it had none then). Call with the answer's row locked,
    so of two graders saving at once the second is told instead of replacing the first."""
    if grade_seen is UNCHECKED:
        return
    newest = ManualGrade.objects.filter(submission_id=submission_id).select_related("grader").order_by(
        "-created_at", "-id"
    ).first()
    newest_id = newest.pk if newest is not None else None
    if newest_id == grade_seen:
        return
    if newest is None:
        raise GradedMeanwhile(OUT_OF_DATE, newest_id=None)
    who = newest.grader.username if newest.grader is not None else "A former member of staff"
    score = "no score" if newest.score is None else percent_text(newest.score)
    raise GradedMeanwhile(
        f"{who} graded this answer ({score}) after you opened it. "
        "What you entered is below: save again to replace that grade.",
        newest_id=newest_id,
    )


def grade_seen_posted(value: str | None):
    """A grading form's ``grade_seen``: absent, UNCHECKED (a page from before it); "0", the
    answer had no grade; else the id of its newest grade then. Anything else matches none."""
    if value is None:
        return UNCHECKED
    if not value.isascii() or not value.isdigit() or len(value) > 18:
        return -1
    return int(value) or None


class ConfirmationNeeded(InstructorRefused):
    """The edit reaches students who have started the assignment: nothing was saved, and
    the message says whom it reaches and how. Repeat it with ``confirmed=token`` to apply
    it as long as the message stays the same; ``stale``: the token given was one we showed
    for this same edit, but for other numbers (another student started meanwhile);
    ``expired``: it was shown for this edit too long ago (the message says so)."""

    def __init__(self, message: str, *, token: str, stale: bool = False, expired: bool = False):
        super().__init__(message)
        self.token = token
        self.stale = stale
        self.expired = expired


# ``confirmed`` of the editing services, as attnquiz.confirmations.Confirmed: True applies
# the edit whoever it reaches (scripts, the shell); a token applies it only while its
# impact, computed again now, reads the same.
Confirmed = confirmations.Confirmed


def confirmation_required(*, scope: str, message: str, confirmed: Confirmed) -> None:
    """``attnquiz.confirmations.confirmation_require`` for this app's edits: refuse with this
    app's ConfirmationNeeded (what its views and API views catch) until ``confirmed``
    answers ``message`` for ``scope`` (``confirmations.scope_of``: what is changed, and how)."""
    try:
        confirmations.confirmation_require(scope=scope, message=message, confirmed=confirmed)
    except confirmations.ConfirmationNeeded as needed:
        raise ConfirmationNeeded(
            needed.message, token=needed.token, stale=needed.stale, expired=needed.expired
        ) from None


def _require_confirmed(*, assignment: Assignment, confirmed: Confirmed, message: str, change: dict) -> None:
    """Refuse (ConfirmationNeeded) an edit whose impact ``message`` was not confirmed for
    this edit of this assignment: ``change`` names the edit and its parameters (which items
    go to which pool, the new points, the new settings), so that a confirmation of one edit
    never confirms another whose message reads the same (attnquiz.confirmations, the one
    token scheme of every confirmation)."""
    confirmation_required(
        scope=confirmations.scope_of("instructor.edit", assignment.pk, change=change),
        message=message, confirmed=confirmed,
    )


def _require_items_change_confirmed(
    *, assignment: Assignment, confirmed: Confirmed, sentence, change: dict
) -> None:
    """Refuse an unconfirmed change of the assignment's exercises once students have
    started it (``sentence`` puts who is reached into words; ``change`` as _require_confirmed)."""
    if confirmed is True:
        return
    reached = selectors_edit_impact.attempts_reached(assignment=assignment)
    if reached.anyone:
        _require_confirmed(assignment=assignment, confirmed=confirmed, message=sentence(reached), change=change)


def _settings_change_message(*, assignment: Assignment, fields: dict) -> str:
    """What new settings do to the students who started, in words ("" for nothing to ask):
    a new kind, a review or solution policy that shows any of them more now, a shorter time
    limit or earlier close date that ends or cuts short a running attempt, fewer attempts
    than some have used, a new address (the old one answers "not found"). Read from the
    stored row: a ModelForm has already copied the new values onto the instance."""
    names = selectors_edit_impact.LIMIT_FIELDS
    stored = selectors_edit_impact.review_fields_of(assignment, "slug", "has_lti_link")
    stored_slug, lms_link = stored.pop("slug"), stored.pop("has_lti_link")
    kind = stored["kind"]
    new_kind = fields.get("kind") or kind
    new_limits = {name: fields[name] for name in names if name in fields}
    # A limit may be cleared (None); a kind or policy left out keeps the stored one.
    new_settings = {
        **new_limits,
        **{name: fields[name] for name in ("kind", *selectors_edit_impact.REVIEW_FIELDS) if fields.get(name)},
    }
    limits_changed = any(stored[name] != value for name, value in new_limits.items())
    review_changed = any(
        stored[name] != new_settings[name] for name in selectors_edit_impact.REVIEW_FIELDS if name in new_settings
    )
    new_slug = fields.get("slug") or stored_slug
    if new_kind == kind and not limits_changed and not review_changed and new_slug == stored_slug:
        return ""
    limits = {name: stored[name] for name in names}
    now = timezone.now()
    started = selectors_edit_impact.students_started(assignment=assignment, kind=kind, stored=limits, now=now)
    if not started:
        return ""
    reached = selectors_edit_impact.attempts_reached(
        assignment=assignment, stored=limits, new_limits=new_limits, kind=kind, started=started, new_kind=new_kind,
        now=now,
    )
    sentences = []
    if new_kind != kind:
        applied = {**limits, **new_limits}
        change = selectors_edit_impact.kind_change_counts(
            assignment=assignment, started=started, new_kind=new_kind, new_limits=applied, stored=stored, now=now
        )
        sentences.append(selectors_edit_impact.kind_change_sentence(
            reached, new_kind=new_kind, count=change.count, seen=change.seen,
            timed=bool(applied["time_limit_minutes"]),
        ))
    # Counted under every new setting at once (fewer attempts also end parts, and with them
    # may show their solutions), asked about when the review or solution policy changes.
    gains = selectors_edit_impact.review_gains(
        assignment=assignment, started=started, stored=stored, new=new_settings, now=now
    ) if review_changed else []
    if gains:
        if not sentences:
            sentences.append(selectors_edit_impact.who_sentence(reached))
        sentences.append(selectors_edit_impact.review_change_phrase(
            gains, reached=reached, settings={**stored, **new_settings}
        ))
    if reached.cut:
        phrase = selectors_edit_impact.limits_change_phrase(assignment=assignment, stored=limits, new_limits=new_limits)
        sentences.append(selectors_edit_impact.limits_cut_sentence(reached, phrase=phrase))
    allowed = new_limits.get("attempts_per_part", stored["attempts_per_part"])
    groups = selectors_edit_impact.attempts_cut(
        assignment=assignment, started=started, old=stored["attempts_per_part"], new=allowed
    )
    if groups:
        sentences.append(selectors_edit_impact.attempts_cut_sentence(groups, allowed=allowed))
    if new_slug != stored_slug:
        if not sentences:
            sentences.append(selectors_edit_impact.who_sentence(reached))
        sentences.append(selectors_edit_impact.slug_change_phrase(
            reached, before=stored_slug, after=new_slug, lms_link=lms_link
        ))
    return " ".join(sentences)


def _require_writable(course: Course) -> None:
    """An archived course is read-only: its grades and assignments stay as they are."""
    try:
        courses_services.require_course_writable(course=course)
    except CourseRefused as refused:
        raise InstructorRefused(refused.message) from None


# ---------------------------------------------------------------------------
# Assignments
# ---------------------------------------------------------------------------

def assignment_create(*, course: Course, **fields) -> Assignment:
    """courses.services.assignment_create, refusing with InstructorRefused."""
    try:
        return courses_services.assignment_create(course=course, **fields)
    except CourseRefused as refused:
        raise InstructorRefused(refused.message) from None


@transaction.atomic
def assignment_update(*, assignment: Assignment, confirmed: Confirmed = True, **fields) -> Assignment:
    """Save the assignment's settings. Unless ``confirmed`` (see Confirmed), once students
    have started: a new kind, a review or solution policy that shows any of them more now,
    a shorter time limit or an earlier close date that would end or cut short a running
    attempt, fewer attempts per part than a student still working has used, and a new
    address (slug: the old one is not kept) are refused with ConfirmationNeeded (nothing
    saved); the message says whom each reaches (_settings_change_message)."""
    _require_writable(assignment.course)
    if "slug" in fields:
        fields["slug"] = _assignment_slug_given(assignment=assignment, slug=fields["slug"])
    # Compared with the other rows, not with the instance: a ModelForm has already copied
    # the new slug onto it, so "changed?" would always read no. Refused before any question:
    # confirming would only lead to this refusal.
    try:
        courses_services.assignment_slug_require_free(
            course=assignment.course, slug=fields.get("slug", assignment.slug), exclude_pk=assignment.pk,
        )
    except CourseRefused as refused:
        raise InstructorRefused(refused.message) from None
    if confirmed is not True:
        message = _settings_change_message(assignment=assignment, fields=fields)
        _require_confirmed(
            assignment=assignment, confirmed=confirmed, message=message,
            change={"edit": "settings", "fields": fields},
        )
    # Attempts whose time is over end (at their deadline) before the limits change: a longer
    # limit or a later close date does not reopen them.
    exams_services.attempts_end_due(attempts=AssignmentAttempt.objects.filter(assignment_id=assignment.pk))
    for name in courses_services.ASSIGNMENT_FIELDS:
        if name in fields:
            setattr(assignment, name, fields[name])
    assignment.save()
    return assignment


def _assignment_slug_given(*, assignment: Assignment, slug: str) -> str:
    """The slug to store: a new one in lower case (as every new slug); the stored one kept as
    it is, even in capitals from before lower case (its links keep working). Read from the
    row: a ModelForm has already copied the new slug onto the instance."""
    stored = Assignment.objects.filter(pk=assignment.pk).values_list("slug", flat=True).first()
    return slug if slug == stored else courses_services.course_slug_normalise(slug)


def _require_published(version: ExerciseVersion) -> None:
    try:
        courses_services.require_version_published(version=version)
    except CourseRefused as refused:
        raise InstructorRefused(refused.message) from None


def assignment_item_add(
    *, assignment: Assignment, version: ExerciseVersion, points: float = 1.0, confirmed: Confirmed = True
) -> AssignmentItem:
    """courses.services.assignment_item_add, refusing with InstructorRefused (and, with
    ``confirmed=False`` once attempts have started, ConfirmationNeeded)."""
    _require_items_change_confirmed(
        assignment=assignment, confirmed=confirmed,
        sentence=lambda reached: selectors_edit_impact.item_add_sentence(
            reached, titles=[version.title], points=points
        ),
        change={"edit": "item_add", "version": version.pk, "points": points},
    )
    try:
        return courses_services.assignment_item_add(assignment=assignment, version=version, points=points)
    except CourseRefused as refused:
        raise InstructorRefused(refused.message) from None


@dataclass(frozen=True)
class ItemsAdded:
    added: list[AssignmentItem]
    skipped: list[str]  # slugs of exercises already in the assignment (or ticked twice)


@transaction.atomic
def assignment_items_add(
    *, assignment: Assignment, version_ids: list[int], points: float = 1.0, confirmed: Confirmed = True
) -> ItemsAdded:
    """Append several published versions to the assignment in the order given, all or none.

    Refuses, adding nothing: an empty selection, any id that is not an assignable version
    (a draft, a version in review, another course's private work, no such id), and an
    archived course. An exercise already in the assignment, or ticked twice (two of its
    versions, or one id repeated), is skipped and named in ``skipped``."""
    _require_writable(assignment.course)
    if not version_ids:
        raise InstructorRefused("Tick at least one exercise to add.")
    if not 0 <= points <= MAX_ITEM_POINTS:
        raise InstructorRefused(f"Points must be between 0 and {MAX_ITEM_POINTS}.")
    # Lock the assignment so two instructors adding at once cannot both add one exercise.
    Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
    versions = {version.pk: version for version in selectors_picker.assignable_versions().filter(pk__in=version_ids)}
    unknown = [version_id for version_id in dict.fromkeys(version_ids) if version_id not in versions]
    if unknown:
        raise InstructorRefused(
            f"Not a published exercise version: {', '.join(str(i) for i in unknown)}. Nothing was added."
        )
    present = set(assignment.items.values_list("exercise_version__exercise_id", flat=True))
    new_titles = list({
        versions[i].exercise_id: versions[i].title for i in version_ids if versions[i].exercise_id not in present
    }.values())
    if new_titles:
        _require_items_change_confirmed(
            assignment=assignment, confirmed=confirmed,
            sentence=lambda reached: selectors_edit_impact.item_add_sentence(reached, titles=new_titles, points=points),
            change={"edit": "items_add", "versions": list(version_ids), "points": points},
        )
    added, skipped = [], []
    for version_id in version_ids:
        version = versions[version_id]
        if version.exercise_id in present:
            skipped.append(version.exercise.slug)
            continue
        added.append(assignment_item_add(assignment=assignment, version=version, points=points))
        present.add(version.exercise_id)
    return ItemsAdded(added=added, skipped=skipped)


@transaction.atomic
def assignment_item_update(
    *, item: AssignmentItem, points: float, position: int, version: ExerciseVersion | None = None,
    confirmed: Confirmed = True,
) -> AssignmentItem:
    """Change points or position, or switch to another published version of the same
    exercise (stored answers keep their variant; run a regrade to apply the new version).
    ``position`` is the 0-based index in the assignment's order the item moves to.
    Unless ``confirmed`` (see Confirmed), new points or another version once students have
    started: ConfirmationNeeded."""
    _require_writable(item.assignment.course)
    order = _items_order_for_move(item=item, index=position)
    switching = version is not None and version.pk != item.exercise_version_id
    if switching:
        if version.exercise_id != item.exercise_version.exercise_id:
            raise InstructorRefused("An item can only switch to another version of the same exercise.")
        _require_published(version)
    if (points != item.points or switching) and confirmed is not True:
        _require_item_update_confirmed(
            item=item, points=points, version=version if switching else None, confirmed=confirmed
        )
    if switching:
        item.exercise_version = version
    if item.pool and points != item.points:
        # A pool's items carry equal points (each student is scored on one of them).
        item.assignment.items.filter(pool=item.pool).exclude(pk=item.pk).update(points=points)
    item.points = points
    item.position = position
    item.save()
    _items_renumber(assignment=item.assignment, order=order, moved=item)
    return item


def _require_item_update_confirmed(
    *, item: AssignmentItem, points: float, version: ExerciseVersion | None, confirmed: Confirmed
) -> None:
    """New points or another version of one item, once students have started: who it
    reaches and how, confirmed (or ConfirmationNeeded)."""
    started = selectors_edit_impact.students_started(assignment=item.assignment)
    if not started:
        return
    reached = selectors_edit_impact.reached_of(started, kind=item.assignment.kind)
    title = item.exercise_version.title
    phrases = []
    if points != item.points:
        phrases.append(selectors_edit_impact.item_points_phrase(title=title, before=item.points, after=points))
    if version is not None:
        phrases.append(selectors_edit_impact.version_switch_phrase(
            title=title, before=item.exercise_version.number, after=version.number,
            reached=selectors_edit_impact.version_switch_reached(item=item, started=started),
        ))
    message = selectors_edit_impact.item_update_sentence(reached, phrases=phrases)
    _require_confirmed(
        assignment=item.assignment, confirmed=confirmed, message=message,
        change={
            "edit": "item_update", "item": item.pk, "points": points,
            "version": version.pk if version is not None else None,
        },
    )


def _items_order_for_move(*, item: AssignmentItem, index: int) -> list[int]:
    """The assignment's item ids (rows locked) in their order once ``item`` is at ``index``;
    refuses an index past the end, saying it in the page's numbers (1 to n)."""
    order = list(
        item.assignment.items.select_for_update().order_by("position", "pk").values_list("pk", flat=True)
    )
    if not 0 <= index < len(order):
        raise InstructorRefused(
            f"There is no position {index + 1}: the exercises of this assignment are numbered 1 to {len(order)}."
        )
    order.remove(item.pk)
    order.insert(index, item.pk)
    return order


def _items_renumber(*, assignment: Assignment, order: list[int], moved: AssignmentItem) -> None:
    """Store the order as positions 0..n-1 (gaps and ties left by removals or older edits go)."""
    stored = dict(assignment.items.exclude(pk=moved.pk).values_list("pk", "position"))
    for position, pk in enumerate(order):
        if pk != moved.pk and stored.get(pk) != position:
            AssignmentItem.objects.filter(pk=pk).update(position=position)


@transaction.atomic
def assignment_pools_set(
    *, assignment: Assignment, pools: dict[int, str], confirmed: Confirmed = True
) -> list[AssignmentItem]:
    """Put the assignment's items into pools (item id -> pool name, empty for none).

    Refuses (changing nothing) a pool whose items carry different points, and taking an
    item out of its pool once a student was given it: that student's exercise would
    otherwise change (a stored draw keeps its item, whatever the pool becomes). Unless
    ``confirmed`` (see Confirmed), new pools once students have started:
    ConfirmationNeeded, saying how many keep the exercises they were given."""
    _require_writable(assignment.course)
    items = list(assignment.items.select_for_update().select_related("exercise_version__exercise"))
    chosen = {item.pk: (pools.get(item.pk, item.pool) or "").strip() for item in items}
    problems = pool_points_problems((chosen[item.pk], item.points) for item in items)
    if problems:
        raise InstructorRefused(" ".join(problems) + " Give them equal points first.")
    drawn = set(PoolDraw.objects.filter(assignment=assignment).values_list("item_id", flat=True))
    leaving = [item for item in items if item.pk in drawn and chosen[item.pk] != item.pool]
    if leaving:
        names = ", ".join(item.exercise_version.exercise.slug for item in leaving)
        raise InstructorRefused(
            f"Students have already been given {names} from its pool; it stays in that pool "
            "(other exercises can still join or leave)."
        )
    changed = [item for item in items if chosen[item.pk] != item.pool]
    if changed and confirmed is not True:
        _require_pools_change_confirmed(
            assignment=assignment, items=items, chosen=chosen, confirmed=confirmed,
            # The pools asked for (every item the form names, with the pool it gives it).
            change={"edit": "pools", "pools": {pk: chosen[pk] for pk in pools if pk in chosen}},
        )
    for item in changed:
        item.pool = chosen[item.pk]
    AssignmentItem.objects.bulk_update(changed, ["pool"])
    return changed


def _require_pools_change_confirmed(
    *, assignment: Assignment, items: list[AssignmentItem], chosen: dict[int, str], confirmed: Confirmed,
    change: dict,
) -> None:
    started = selectors_edit_impact.students_started(assignment=assignment)
    if not started:
        return
    pools_change = selectors_edit_impact.pools_change_reached(
        assignment=assignment, items=items, chosen=chosen, started=started
    )
    reached = selectors_edit_impact.reached_of(started, kind=assignment.kind)
    message = selectors_edit_impact.pools_change_sentence(reached, change=pools_change)
    _require_confirmed(assignment=assignment, confirmed=confirmed, message=message, change=change)


def assignment_item_remove(*, item: AssignmentItem, confirmed: Confirmed = True) -> None:
    """Remove an exercise nobody has answered; with ``confirmed=False`` once attempts have
    started: ConfirmationNeeded."""
    _require_writable(item.assignment.course)
    if Submission.objects.filter(variant__assignment_item=item).exists():
        raise InstructorRefused(
            "Students have already answered this exercise; it cannot be removed "
            "(set its points to 0 to leave it out of the grade)."
        )
    _require_items_change_confirmed(
        assignment=item.assignment, confirmed=confirmed,
        sentence=lambda reached: selectors_edit_impact.item_remove_sentence(
            reached, title=item.exercise_version.title
        ),
        change={"edit": "item_remove", "item": item.pk},
    )
    item.variants.all().delete()
    item.delete()


# ---------------------------------------------------------------------------
# Manual grading
# ---------------------------------------------------------------------------


def _awarded(*, submission: Submission, score: float) -> float:
    from grading.services import awarded_score

    item = submission.variant.assignment_item
    return awarded_score(
        score=score,
        attempt=submission.attempt,
        is_late=submission.is_late,
        assignment=item.assignment if item else None,
    )


VERDICT_FIELDS = ("status", "score", "awarded", "correct", "misconception", "feedback")


def _submission_locked_for_grading(submission: Submission) -> tuple[Submission, object]:
    """The answer's row locked for a person's grading, with its version's spec; refused in
    an archived course."""
    submission = Submission.objects.select_for_update(of=("self",)).select_related(
        "variant__exercise_version", "variant__assignment_item__assignment"
    ).get(pk=submission.pk)
    if submission.variant.assignment_item is not None:
        _require_writable(submission.variant.assignment_item.assignment.course)
    return submission, version_spec(submission.variant.exercise_version)


@transaction.atomic
def submission_grade_manually(
    *, submission: Submission, grader, score: float, criteria_met: list[int] | None = None,
    comment: str = "", rubric_ticked: list[tuple[str, float]] | None = None, grade_seen=UNCHECKED,
) -> Submission:
    """Record a person's grade of an answer; it may be graded by hand again later.

    A free-text answer waits for this grade. An auto-graded answer (numeric, matrix,
    derivation, ...) that the checker graded or could not grade may be graded by a person
    too: their score replaces the checker's, the checker's verdict is kept on the
    ManualGrade (``checker_verdict``) for the staff, and a regrade leaves the answer as
    it is from then on (``_regrade_batch``).

    Sets score, awarded (after the assignment's penalties), correct and the feedback the
    student sees, and records the grader. The feedback keeps the rubric items that applied
    (``rubric_ticked``: (text, points) in the rubric's order; by default the author's
    criteria at ``criteria_met``), as the grader saw them, so the student's result shows
    them without reading the rubric again. Refuses (saving nothing) a score that is not a
    number in [0, 1], and a grade over one given after the grader's page was shown
    (``grade_seen``, ``require_newest_grade_seen``).
    """
    from grading.services import MANUAL_TYPES

    submission, spec = _submission_locked_for_grading(submission)
    require_newest_grade_seen(submission_id=submission.pk, grade_seen=grade_seen)
    checked = spec.part(submission.part).type not in MANUAL_TYPES
    if checked:
        _require_checker_finished(submission)
        if criteria_met or rubric_ticked:
            raise InstructorRefused("An auto-graded part has no rubric to tick: give a score.")
    elif submission.status not in (SubmissionStatus.MANUAL, SubmissionStatus.GRADED):
        raise InstructorRefused("This answer is not waiting for a grade.")
    _require_fraction(score)
    comment = comment.strip()
    checker_verdict = _checker_verdict_replaced(submission) if checked else {}
    if rubric_ticked is None:
        rubric_ticked = _author_criteria_ticked(submission=submission, criteria_met=criteria_met or [])
    previous_score = submission.score
    submission.score = score
    submission.awarded = _awarded(submission=submission, score=score)
    submission.correct = score >= 1.0 - SCORE_EPSILON
    submission.status = SubmissionStatus.GRADED
    submission.graded_at = timezone.now()
    submission.feedback = {
        "message": _hand_grade_message(score=score, comment=comment, checked=checked),
        "grader_comment": comment,
        "details": {"manual": True, "criteria_met": criteria_met or []},
        # Shown with the grade, under the rule that shows both its score and its comment
        # (exams.selectors.feedback_for_student).
        "rubric": [{"text": text, "points": points} for text, points in rubric_ticked],
    }
    submission.save(update_fields=["score", "awarded", "correct", "status", "graded_at", "feedback"])
    ManualGrade.objects.create(
        submission=submission, grader=grader, score=score, criteria_met=criteria_met or [], comment=comment,
        checker_verdict=checker_verdict, previous_score=previous_score,
    )
    grade_changed_publish(submission=submission, change=GradeChange.GRADED_BY_HAND)
    return submission


def _require_checker_finished(submission: Submission) -> None:
    if submission.status not in HAND_GRADABLE_CHECKED_STATUSES:
        raise InstructorRefused(
            "The checker has not finished with this answer; grade it by hand once it is graded."
        )


def _require_fraction(score) -> None:
    """A score in [0, 1]; NaN and infinities fail the comparison and are refused too."""
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
        raise InstructorRefused("The score must be between 0 and 1.")


def _checker_verdict_replaced(submission: Submission) -> dict:
    """The checker's grade a person's grade replaces: the one the first person's grade
    (since the answer was last given back to the checker) kept, or (graded by a person
    for the first time since) the answer's grade now. Call with the submission's row locked."""
    earlier = _first_hand_grade_in_force(submission)
    if earlier is not None:
        return earlier.checker_verdict
    verdict = {name: getattr(submission, name) for name in VERDICT_FIELDS}
    verdict["graded_at"] = submission.graded_at.isoformat() if submission.graded_at else None
    return verdict


def _first_hand_grade_in_force(submission: Submission) -> ManualGrade | None:
    """The first person's grade (holding a checker's verdict) since the answer was last
    given back to the checker; None if there is none."""
    grades = ManualGrade.objects.filter(submission=submission)
    returned = grades.filter(kind=ManualGradeKind.RETURNED).order_by("-created_at", "-id").first()
    if returned is not None:
        grades = grades.filter(pk__gt=returned.pk)
    return grades.exclude(checker_verdict={}).order_by("created_at", "id").first()


RESTORED_FIELDS = ("status", "score", "awarded", "correct", "misconception", "feedback", "graded_at")


@transaction.atomic
def submission_grade_return_to_checker(*, submission: Submission, grader) -> Submission:
    """Give a checked answer that a person graded back to its checker.

    The checker's grade that people's grades replaced (kept on the first of them) is the
    answer's grade again: its status, score, correctness, misconception and the feedback
    the student read, with ``awarded`` computed from the score under the assignment's
    penalties as for any checker's grade. The return is a ManualGrade of kind RETURNED in
    the same history (who, when, the score before and after), and from then on a regrade
    applies to the answer as to any other (``_regrade_batch``). Refused (saving nothing)
    for a free-text answer, an answer whose standing grade is not a person's, and in an
    archived course.
    """
    from grading.services import MANUAL_TYPES

    submission, spec = _submission_locked_for_grading(submission)
    if spec.part(submission.part).type in MANUAL_TYPES:
        raise InstructorRefused("A free-text answer is graded by people only: it has no checker's grade to return to.")
    newest = ManualGrade.objects.filter(submission=submission).order_by("-created_at", "-id").first()
    if newest is None or newest.kind != ManualGradeKind.BY_HAND:
        raise InstructorRefused("No person's score stands on this answer: it has the checker's grade already.")
    first = _first_hand_grade_in_force(submission)
    verdict = _checker_verdict_restorable(first.checker_verdict if first is not None else {})
    previous_score = submission.score
    submission.status = verdict["status"]
    submission.score = verdict["score"]
    submission.awarded = None if verdict["score"] is None else _awarded(submission=submission, score=verdict["score"])
    submission.correct = verdict["correct"]
    submission.misconception = verdict["misconception"]
    submission.feedback = verdict["feedback"]
    submission.graded_at = timezone.now()  # the grade changed now (the API's "since", the LMS)
    submission.save(update_fields=list(RESTORED_FIELDS))
    ManualGrade.objects.create(
        submission=submission, grader=grader, kind=ManualGradeKind.RETURNED, score=submission.score,
        previous_score=previous_score, checker_verdict=first.checker_verdict,
    )
    grade_changed_publish(submission=submission, change=GradeChange.RETURNED_TO_CHECKER)
    return submission


def _checker_verdict_restorable(stored: dict) -> dict:
    """The kept checker's grade as the answer's fields, checked (a row written by hand or
    by an older version may lack or garble fields: then nothing is restored)."""
    status, score, correct = stored.get("status"), stored.get("score"), stored.get("correct")
    feedback, misconception = stored.get("feedback"), stored.get("misconception") or ""
    valid = (
        status in HAND_GRADABLE_CHECKED_STATUSES
        and (score is None or (not isinstance(score, bool) and isinstance(score, (int, float)) and 0.0 <= score <= 1.0))
        and (score is not None or status == SubmissionStatus.COULD_NOT_GRADE)
        and (correct is None or isinstance(correct, bool))
        and isinstance(feedback, dict)
        and isinstance(misconception, str)
    )
    if not valid:
        raise InstructorRefused("The checker's grade of this answer was not kept whole; set its score by hand instead.")
    return {
        "status": status, "score": None if score is None else float(score), "correct": correct,
        "misconception": misconception, "feedback": feedback,
    }


def _hand_grade_message(*, score: float, comment: str, checked: bool) -> str:
    """The feedback message the student reads. On an auto-graded part it says a person set
    the score (the student saw the checker's verdict before); the score itself shows in
    the result line, where the review policy shows scores; the message shows with the verdict,
    which may be released before the score, so it never holds the score."""
    if not checked:
        return comment or "Graded by your instructor."
    said = "Your instructor graded this answer by hand."
    return f"{said} {comment}" if comment else said


def _author_criteria_ticked(*, submission: Submission, criteria_met: list[int]) -> list[tuple[str, float]]:
    """The author's criteria (selectors.rubric_for) at the ticked indexes, in their order."""
    if not criteria_met:
        return []
    criteria = rubric_for(submission=submission).criteria
    return [criteria[index] for index in sorted(set(criteria_met)) if 0 <= index < len(criteria)]


# ---------------------------------------------------------------------------
# Regrading
# ---------------------------------------------------------------------------


def regrade_job_create(
    *, assignment: Assignment, actor, dry_run: bool = True, allow_lower: bool = False,
    item_ids: list[int] | None = None, parts: list[str] | None = None,
    preview_of: RegradeJob | None = None, enqueue: bool = True,
) -> RegradeJob:
    """Store a regrade job and (unless ``enqueue`` is False) start it once the
    transaction commits. Refuses items not in the assignment and part keys none of the
    chosen items (all, when none is chosen) has: a scope that matches nothing is a typo.
    A dry run only reads grades, so this service allows it in an archived course (no page
    or API request reaches it there: archived is read-only at every URL)."""
    if not dry_run:
        _require_writable(assignment.course)
    valid_items = set(assignment.items.values_list("pk", flat=True))
    item_ids = sorted(set(item_ids or []))
    unknown = [item_id for item_id in item_ids if item_id not in valid_items]
    if unknown:
        raise InstructorRefused(f"Items {unknown} are not in this assignment.")
    parts = sorted(set(parts or []))
    if parts:
        known = part_keys_of(assignment_items_info(assignment=assignment), item_ids=item_ids)
        unknown = [part for part in parts if part not in known]
        if unknown:
            raise InstructorRefused(unknown_parts_message(unknown=unknown, known=known, items_chosen=bool(item_ids)))
    with transaction.atomic():
        if dry_run:
            waiting = _dry_run_waiting(assignment=assignment, allow_lower=allow_lower, item_ids=item_ids, parts=parts)
            if waiting is not None:
                return waiting
        job = RegradeJob.objects.create(
            assignment=assignment, created_by=actor, dry_run=dry_run, allow_lower=allow_lower,
            item_ids=item_ids, parts=parts, preview_of=preview_of,
        )
    if enqueue:
        transaction.on_commit(lambda: regrade_job_enqueue(job_id=job.pk))
    return job


def _dry_run_waiting(*, assignment: Assignment, allow_lower: bool, item_ids: list, parts: list):
    """The dry run of this very scope still waiting or running, if any: asking again while
    one is under way returns it. Call inside a transaction (the assignment row is locked)."""
    Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
    return RegradeJob.objects.filter(
        assignment=assignment, dry_run=True, allow_lower=allow_lower, item_ids=item_ids, parts=parts,
        status__in=[RegradeStatus.PENDING, RegradeStatus.RUNNING],
    ).order_by("-pk").first()


def regrade_job_apply(*, dry_run: RegradeJob, actor) -> RegradeJob:
    """Apply what a finished dry run previewed, with the same scope and lowering rule.

    Idempotent: a dry run is applied once. Asking again (a double click, a retried request)
    returns the application already queued, running or done; only after one failed does
    asking start another. Decided under a lock on the dry run's row."""
    if not dry_run.dry_run or dry_run.status != RegradeStatus.DONE:
        raise InstructorRefused("Only a finished dry run can be applied.")
    with transaction.atomic():
        locked = RegradeJob.objects.select_for_update().get(pk=dry_run.pk)
        existing = locked.applications.exclude(status=RegradeStatus.FAILED).order_by("-pk").first()
        if existing is not None:
            return existing
        return regrade_job_create(
            assignment=dry_run.assignment, actor=actor, dry_run=False, allow_lower=dry_run.allow_lower,
            item_ids=dry_run.item_ids, parts=dry_run.parts, preview_of=dry_run,
        )


def regrade_job_enqueue(*, job_id: int) -> bool:
    """Run the job in a worker (or here, in inline mode). False if the broker is down:
    the job stays pending and ``manage.py regrade --run-pending`` can run it."""
    if settings.GRADING_MODE == "inline":
        regrade_job_run(job_id=job_id)
        return True
    from attnquiz.enqueue import task_send

    try:
        task_send("instructor.tasks.run_regrade", args=[job_id])
    except Exception:  # the broker being down must not fail the instructor's request
        logger.warning("broker unreachable; regrade job %s left pending", job_id)
        RegradeJob.objects.filter(pk=job_id).update(
            message="No worker could be reached; the job is waiting. "
            "Run `manage.py regrade --run-pending` to run it now."
        )
        return False
    return True


def regrade_queryset(job: RegradeJob):
    submissions = Submission.objects.filter(
        variant__assignment_item__assignment_id=job.assignment_id, status__in=REGRADABLE_STATUSES
    )
    if job.item_ids:
        submissions = submissions.filter(variant__assignment_item_id__in=job.item_ids)
    if job.parts:
        submissions = submissions.filter(part__in=job.parts)
    return submissions.order_by("pk")


def _claim(job_id: int) -> bool:
    now = timezone.now()
    claimable = Q(status=RegradeStatus.PENDING) | Q(
        status=RegradeStatus.RUNNING, heartbeat_at__lt=now - REGRADE_STALE_AFTER
    )
    return bool(
        RegradeJob.objects.filter(claimable, pk=job_id).update(
            status=RegradeStatus.RUNNING, heartbeat_at=now, started_at=now
        )
    )


def regrade_job_run(*, job_id: int, batch_size: int = REGRADE_BATCH_SIZE) -> RegradeJob | None:
    """Run (or resume) one regrade job. Idempotent: a second delivery finds it claimed."""
    if not _claim(job_id):
        return RegradeJob.objects.filter(pk=job_id).first()
    job = RegradeJob.objects.select_related("assignment__course").get(pk=job_id)
    grader = _Regrader(job)
    try:
        if not job.dry_run:
            _require_writable(job.assignment.course)  # archived after the job was queued
        job.total = regrade_queryset(job).count()
        RegradeJob.objects.filter(pk=job.pk).update(total=job.total)
        while True:
            ids = list(
                regrade_queryset(job).filter(pk__gt=job.cursor).values_list("pk", flat=True)[:batch_size]
            )
            if not ids:
                break
            with transaction.atomic():
                _regrade_batch(job, grader, ids)
    except Exception as exc:
        logger.exception("regrade job %s failed", job_id)
        RegradeJob.objects.filter(pk=job.pk).update(
            status=RegradeStatus.FAILED, message=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        job.refresh_from_db()
        return job
    RegradeJob.objects.filter(pk=job.pk).update(status=RegradeStatus.DONE, finished_at=timezone.now())
    job.refresh_from_db()
    return job


def _regrade_batch(job: RegradeJob, grader: "_Regrader", ids: list[int]) -> None:
    """Call inside a transaction: grade one batch, record changes, apply, move the cursor."""
    submissions = list(
        Submission.objects.select_for_update(of=("self",))
        .select_related("variant", "variant__assignment_item")
        .filter(pk__in=ids, status__in=REGRADABLE_STATUSES)
        .order_by("pk")
    )
    changes, to_update = [], []
    counts = {"changed": 0, "held": 0, "by_hand": 0, "errors": 0}
    graded_by_hand = _graded_by_hand(ids)
    for submission in submissions:
        outcome = grader.regrade(submission)
        if outcome is None:
            continue
        change = RegradeChange(
            job=job, submission=submission, old_score=submission.score,
            old_awarded=submission.awarded, old_correct=submission.correct,
            new_score=outcome.score, new_awarded=outcome.awarded, new_correct=outcome.correct,
            error=outcome.error,
        )
        if submission.pk in graded_by_hand:
            # A person's score stands: the report lists what the checker says now, and a
            # person changes it (on the submission's page) if the checker is right.
            change.outcome = ChangeOutcome.BY_HAND
            counts["by_hand"] += 1
        elif outcome.error:
            change.outcome = ChangeOutcome.ERROR
            counts["errors"] += 1
        elif outcome.lowers and not job.allow_lower:
            change.outcome = ChangeOutcome.HELD
            counts["held"] += 1
        else:
            change.outcome = ChangeOutcome.WOULD_CHANGE if job.dry_run else ChangeOutcome.CHANGED
            counts["changed"] += 1
            if not job.dry_run:
                outcome.write_to(submission, job=job)
                to_update.append(submission)
        changes.append(change)
    RegradeChange.objects.bulk_create(changes, ignore_conflicts=True)
    if to_update:
        Submission.objects.bulk_update(
            to_update, ["score", "awarded", "correct", "status", "feedback", "misconception", "graded_at"]
        )
        grades_changed_publish(submissions=to_update, change=GradeChange.REGRADED)
    job.cursor = ids[-1]
    job.processed += len(ids)
    job.changed += counts["changed"]
    job.held += counts["held"]
    job.by_hand += counts["by_hand"]
    job.errors += counts["errors"]
    RegradeJob.objects.filter(pk=job.pk).update(
        cursor=job.cursor, processed=job.processed, changed=job.changed, held=job.held,
        by_hand=job.by_hand, errors=job.errors, heartbeat_at=timezone.now(),
    )


def _graded_by_hand(submission_ids: list[int]) -> set[int]:
    """The submissions among these whose standing grade a person gave (a regrade keeps
    their score); one given back to the checker since is regraded like any other."""
    return set(
        Submission.objects.filter(pk__in=submission_ids)
        .alias(newest_hand_grade_kind=newest_hand_grade_kind())
        .filter(newest_hand_grade_kind=ManualGradeKind.BY_HAND)
        .values_list("pk", flat=True)
    )


@dataclass
class _Outcome:
    score: float | None
    awarded: float | None
    correct: bool | None
    grade: object = None
    error: str = ""
    lowers: bool = False

    def write_to(self, submission: Submission, *, job: RegradeJob) -> None:
        from grading.services import feedback_payload, misconception_slip_count

        previous = {"score": submission.score, "awarded": submission.awarded, "correct": submission.correct}
        submission.score = self.score
        submission.awarded = self.awarded
        submission.correct = self.correct
        submission.status = SubmissionStatus.GRADED
        submission.feedback = {
            **feedback_payload(self.grade, slip_count=misconception_slip_count(submission, self.grade.misconception or "")),
            "regraded": {"job": job.pk, "at": timezone.now().isoformat(), "previous": previous},
        }
        submission.misconception = self.grade.misconception or ""
        submission.graded_at = timezone.now()


class _Regrader:
    """Grades stored answers against each item's current version, with caches per job."""

    def __init__(self, job: RegradeJob):
        from grading.services import MANUAL_TYPES

        self.job = job
        self.manual_types = MANUAL_TYPES
        self.items = {
            item.pk: item
            for item in AssignmentItem.objects.select_related("exercise_version", "assignment").filter(
                assignment_id=job.assignment_id
            )
        }
        self.specs: dict[int, engine.ExerciseSpec] = {}
        self.contexts: dict[tuple[int, str], object] = {}

    def spec(self, version: ExerciseVersion) -> engine.ExerciseSpec:
        if version.pk not in self.specs:
            self.specs[version.pk] = version_spec(version)
        return self.specs[version.pk]

    def context(self, submission: Submission):
        """PartContext for this answer under the item's current version (cached per variant)."""
        from grading.services import PartContext

        key = (submission.variant_id, submission.part)
        if key not in self.contexts:
            variant = submission.variant
            item = self.items[variant.assignment_item_id]
            spec = self.spec(item.exercise_version)
            params = variant.params
            if item.exercise_version_id != variant.exercise_version_id:
                params = params_for_version(spec, variant.params)
            part = spec.part(submission.part)
            self.contexts[key] = PartContext(
                answer_type=part.type,
                expected=engine.reference_answers(spec, params)[part.key],
                options=engine.part_options(spec, params, part.key),
                attempts_allowed=item.assignment.attempts_per_part,
            )
        return self.contexts[key]

    def regrade(self, submission: Submission) -> _Outcome | None:
        """None when nothing would change (or the answer is graded by hand)."""
        from grading.services import awarded_score, grade_answer

        try:
            context = self.context(submission)
        except (KeyError, ValueError, engine.ExpressionError) as exc:
            return _Outcome(None, None, None, error=f"the current version cannot grade this answer: {exc}")
        if context.answer_type in self.manual_types:
            return None
        grade = grade_answer(context=context, raw_answer=submission.raw_answer)
        if grade.error or grade.details.get("could_not_grade"):
            if submission.status == SubmissionStatus.COULD_NOT_GRADE:
                return None
            return _Outcome(None, None, None, error=f"not gradable now: {grade.feedback}")
        item = self.items[submission.variant.assignment_item_id]
        awarded = awarded_score(
            score=grade.score, attempt=submission.attempt, is_late=submission.is_late,
            assignment=item.assignment,
        )
        same = (
            submission.status == SubmissionStatus.GRADED
            and submission.score is not None
            and abs(submission.score - grade.score) <= SCORE_EPSILON
            and submission.awarded is not None
            and abs(submission.awarded - awarded) <= SCORE_EPSILON
            and submission.correct == grade.correct
        )
        if same:
            return None
        lowers = (awarded + SCORE_EPSILON < (submission.awarded or 0.0)) or (
            bool(submission.correct) and not grade.correct
        )
        return _Outcome(grade.score, awarded, grade.correct, grade=grade, lowers=lowers)


def params_for_version(spec: engine.ExerciseSpec, stored: dict) -> dict:
    """The stored variant's drawn values under another version: drawn parameters are
    kept, derived ones recomputed. Raises ValueError if the version needs a drawn
    parameter the variant does not have."""
    from exercises.engine.variants import DrawStream, generate_params

    fixed = {}
    for parameter in spec.parameters:
        if parameter.generator == "derived":
            continue
        if parameter.name not in stored:
            raise ValueError(f"this version draws a parameter '{parameter.name}' the variant does not have")
        fixed[parameter.name] = stored[parameter.name]
    return generate_params(spec, DrawStream(0, 0), fixed=fixed)
