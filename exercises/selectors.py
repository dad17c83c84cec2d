"""Reads that assemble what the student pages show about exercises and variants."""

from __future__ import annotations

import math
from typing import NamedTuple
from datetime import timedelta

import numpy as np
from django.db.models import Count, Exists, F, Max, OuterRef, Q
from django.http import Http404
from django.utils import timezone

from attnquiz.prepared_reads import PreparedRead

from courses.models import Assignment, AssignmentItem, AssignmentKind, PoolDraw, SolutionPolicy
from courses import pools
from courses.selectors import STAFF_ROLES, course_role, require_item_open
from exams.models import AssignmentAttempt
from exams.selectors_accommodations import (
    UNREAD,
    StudentLimits,
    accommodated_time_limit_seconds,
    accommodation_carry,
    accommodation_of,
    carried_accommodation,
    limits_apply,
    with_own_accommodation,
)
from exams.window import duration_text  # noqa: F401  (known by this module too)
from exams.selectors import (
    EVERYTHING,
    FeedbackVisibility,
    feedback_for_student,
    feedback_visibility,
    feedback_visibility_for,
    policy_all_during,
    status_for_student,
)
from grading.core.grades import AnswerFormatError
from grading.core.matrix import parse_matrix
from grading.core.misconceptions import ordinal_word
from grading.core.score_rounding import score_decimal
from grading.models import Submission, SubmissionStatus
from grading.refused_answers import RefusedAnswer
from grading.selectors import (
    assignment_variants_progress, part_progress, no_progress, progress_of_part, variant_progress, variants_progress,
)

from . import bodies, engine
from .engine.spec import TEXT_ANSWER_TYPES
from .models import Variant
from .specs import part_label, variant_references, version_spec


_UNREAD = object()


class ItemCopies(NamedTuple):
    """A student's copies (variants) of one assignment item: ``current``, the one under the
    version the item has now (None: not opened since), and ``earlier``, those made under
    versions the instructor has switched away from since (docs/exams.md, "Changing an exam
    or homework students have started")."""

    current: Variant | None
    earlier: tuple[Variant, ...] = ()


def item_copies(*, items, variants) -> dict[int, ItemCopies]:
    """``variants`` (a student's assignment variants) sorted into each item's ``ItemCopies``,
    by item id; an item without any is absent."""
    version_of = {item.pk: item.exercise_version_id for item in items}
    current: dict[int, Variant] = {}
    earlier: dict[int, list[Variant]] = {}
    for variant in variants:
        item_id = variant.assignment_item_id
        if item_id not in version_of or variant.context != f"assignment:{item_id}":
            continue
        if variant.exercise_version_id == version_of[item_id]:
            current[item_id] = variant
        else:
            earlier.setdefault(item_id, []).append(variant)
    return {
        item_id: ItemCopies(current=current.get(item_id), earlier=tuple(earlier.get(item_id, ())))
        for item_id in current.keys() | earlier.keys()
    }


def own_item_copies(*, item: AssignmentItem, student) -> ItemCopies:
    """The student's ``ItemCopies`` of one item, in one query."""
    variants = Variant.objects.filter(assignment_item=item, student=student, context=f"assignment:{item.pk}")
    return item_copies(items=[item], variants=variants).get(item.pk, ItemCopies(current=None))


def part_progress_over_copies(progress: dict, *, copies: ItemCopies, part: str) -> dict:
    """One part of an item as the student's status counts it: the best score (and whether
    solved) over every copy the student has of the item, attempts used on the current copy.

    The gradebook's rule (instructor.selectors.part_best_scores: the best per student, item
    and part across every copy of the item): answers saved on a copy made before the
    instructor switched the item's version still count until a regrade, while the attempts
    left are the new copy's own (they are counted afresh). ``answered``: an answer counted
    on any copy. ``progress``: ``variants_progress`` of the copies."""
    current = (
        progress_of_part(progress, variant_id=copies.current.pk, part=part) if copies.current is not None
        else progress_of_part({}, variant_id=0, part=part)
    )
    every = [current, *(progress_of_part(progress, variant_id=v.pk, part=part) for v in copies.earlier)]
    scores = [p["best_awarded"] for p in every if p["best_awarded"] is not None]
    return {
        "attempts_used": current["attempts_used"],
        "solved": any(p["solved"] for p in every),
        "best_awarded": max(scores) if scores else None,
        "answered": any(p["attempts_used"] for p in every),
    }


def parts_solved_on_earlier_copies(*, variant: Variant, part_keys) -> dict[str, float]:
    """The parts of ``variant``, the student's copy of an assignment item, that they solved
    on another copy of the item (one made under a version the instructor has switched away
    from since): by part key, the best score awarded there (0 to 1). A part is matched by its
    key, so only a part whose key both versions have counts. One query.

    Such a part counts as solved (``part_progress_over_copies``): this copy shows it solved
    with no form, and an answer to it is refused (``grading.services``) without an attempt."""
    if variant.assignment_item_id is None or not part_keys:
        return {}
    rows = (
        Submission.objects.filter(
            variant__assignment_item_id=variant.assignment_item_id,
            variant__student_id=variant.student_id,
            variant__context=variant.context,
            part__in=list(part_keys),
            status=SubmissionStatus.GRADED,
        )
        .exclude(variant_id=variant.pk)
        .order_by()
        .values("part")
        .annotate(best=Max("awarded"), solved=Count("pk", filter=Q(correct=True)))
    )
    return {row["part"]: row["best"] or 0.0 for row in rows if row["solved"]}


def _may_have_earlier_copies(variant: Variant) -> bool:
    """Whether the student may have another copy of ``variant``'s assignment item. The
    exercise page's own row says so (``_earlier_copies``, read with it: a page without one
    costs no query of its own); a variant read without it (the API's) may have one."""
    if variant.assignment_item_id is None:
        return False
    for row in (variant, variant.assignment_item):
        if "earlier_copies" in vars(row):
            return bool(vars(row)["earlier_copies"])
    return True


def exercise_status(
    *,
    item: AssignmentItem,
    student,
    variant=_UNREAD,
    progress: dict | None = None,
    attempts_allowed: int | None = None,
    solved_shown: bool = True,
    earlier: tuple = (),
) -> dict:
    """Not started / in progress / solved, with the student's score so far.

    The score and "solved" are per part the best over every copy the student has of the
    item, attempts counted on the current copy (``part_progress_over_copies``: the
    gradebook's rule), so a student whose exercise was switched to a new version keeps
    the answers saved on the earlier copy.

    ``attempts_left``: the fewest left of any part still open (None: unlimited);
    ``attempts_left_of_parts``: each open part's own, by its label, when they differ.

    ``variant`` (the current copy; None: none yet) with ``earlier`` (the copies under
    versions the item no longer has), ``progress`` (``variants_progress`` of them all) and
    the student's own ``attempts_allowed`` may come from a caller that read them for many
    items at once; without ``variant`` the copies are read here."""
    if attempts_allowed is None:
        attempts_allowed = student_attempts_allowed(assignment=item.assignment, student=student)
    spec = version_spec(item.exercise_version)
    part_keys = [part.key for part in spec.parts]
    if variant is _UNREAD:
        copies = own_item_copies(item=item, student=student)
    else:
        copies = ItemCopies(current=variant, earlier=tuple(earlier))
    if copies.current is None and not copies.earlier:
        return {
            "state": "not started",
            "score": 0.0,
            "parts": len(part_keys),
            "solved_parts": 0,
            "attempts_left": attempts_allowed or None,
            "attempts_left_of_parts": None,
        }
    if progress is None:
        progress = variants_progress(variants=[v for v in (copies.current, *copies.earlier) if v is not None])
    progress = [part_progress_over_copies(progress, copies=copies, part=key) for key in part_keys]
    solved = sum(1 for p in progress if p["solved"])
    # Weighted by each part's points, as the gradebook weighs them.
    total_points = sum(part.points for part in spec.parts) or 1.0
    score = (
        sum(part.points * (p["best_awarded"] or 0.0) for part, p in zip(spec.parts, progress))
        / total_points
    )
    started = any(p["answered"] for p in progress)
    allowed = attempts_allowed
    # A student who may not know yet which parts are solved (``solved_shown`` False) is
    # told the attempts left of every part, solved or not.
    open_left = {
        part_label(spec, key): max(0, allowed - p["attempts_used"])
        for key, p in zip(part_keys, progress)
        if not (p["solved"] and solved_shown)
    }
    attempts_left = min(open_left.values()) if allowed and open_left else None
    if solved == len(part_keys):
        state = "solved"
    elif started:
        state = "in progress"
    else:
        state = "not started"
    return {
        "state": state,
        "score": score,
        "parts": len(part_keys),
        "solved_parts": solved,
        "attempts_left": attempts_left,
        "attempts_left_of_parts": _attempts_left_when_uneven(open_left) if allowed else None,
    }


def _attempts_left_when_uneven(left_by_label: dict[str, int]) -> list[tuple[str, int]] | None:
    """[("(a)", 5), ("(b)", 2), …] when the parts' attempts left differ; None when they are
    all the same (``attempts_left`` then says it for every part)."""
    if len(set(left_by_label.values())) < 2:
        return None
    return list(left_by_label.items())


# The assignment page's reads, on every student's way into an exam: compiled once.
_ITEMS_OF_ASSIGNMENT = PreparedRead(
    lambda *, assignment_id: AssignmentItem.objects.select_related("exercise_version__exercise").filter(
        assignment_id=assignment_id
    ),  # in the items' order (position, id)
    assignment_id=int,
)
_VARIANTS_OF_ASSIGNMENT = PreparedRead(
    lambda *, assignment_id, student_id: Variant.objects.filter(
        assignment_item__assignment_id=assignment_id, student_id=student_id
    ),
    assignment_id=int,
    student_id=int,
)


def assignment_item_statuses(
    *,
    assignment: Assignment,
    student,
    draw: bool = True,
    items: list[AssignmentItem] | None = None,
    attempts_allowed: int | None = None,
    visibility: FeedbackVisibility = EVERYTHING,
) -> list[dict]:
    """The status of each item the student is given, in their order, as the student may see
    it under ``visibility``; three queries however many items the assignment has (one more
    to read the pools' draws when it has pools, one more for the student's own attempts
    unless the caller gives them).

    ``draw``: draw (and store) the student's pools not drawn yet, as a page that lists the
    items does; a summary only reads the draws made so far. ``items``: every item of the
    assignment, when the caller has read them."""
    if attempts_allowed is None:
        attempts_allowed = student_attempts_allowed(assignment=assignment, student=student)
    if items is None:
        items = _ITEMS_OF_ASSIGNMENT.all(assignment_id=assignment.pk)
        for item in items:
            item.assignment = assignment  # the caller's row, not a query each
    if pools.has_pools(items):
        if draw:
            items = pools.student_items(assignment=assignment, student=student, items=items)
        else:
            draws = pools.pool_draws(assignment=assignment, student_ids=[student.pk]).get(student.pk, {})
            items = pools.items_given(items=items, draws=draws)
    else:
        items = pools.items_in_student_order(assignment=assignment, student=student, items=items)
    # Each item's copies: the current one and any made under a version since switched away
    # from, whose answers still count (``exercise_status``).
    copies = item_copies(
        items=items, variants=_VARIANTS_OF_ASSIGNMENT.all(assignment_id=assignment.pk, student_id=student.pk)
    )
    every_copy = [v for c in copies.values() for v in (c.current, *c.earlier) if v is not None]
    progress = assignment_variants_progress(
        assignment_id=assignment.pk, student_id=student.pk, variants=every_copy
    ) if every_copy else {}
    rows = []
    for item in items:
        own = copies.get(item.pk, ItemCopies(current=None))
        status = exercise_status(
            item=item,
            student=student,
            variant=own.current,
            earlier=own.earlier,
            progress=progress,
            attempts_allowed=attempts_allowed,
            solved_shown=visibility.correctness,
        )
        status = status_for_student(status, visibility)
        earned = item.points * status["score"] if status["score"] is not None else None
        rows.append({"item": item, "status": status, "points_earned": earned})
    return rows


FINISHED = "finished"
NOT_ANSWERED = "not answered"


def assignment_over(window) -> bool:
    """Whether the student can answer nothing more on the assignment: their exam attempt
    ended, the assignment closed for them (its close date, or their own accommodated
    one, passed), or its course was archived."""
    return window.ended or window.limits.is_closed(window.now) or window.archived


def not_open_yet_message(*, window, role: str | None, course) -> str:
    """Why a student cannot open an exercise of an assignment that has not opened for them
    (their own dates), "" when they can. Its prompts and numbers stay unseen until then;
    staff see them always. An exam says so at its Start instead."""
    if role in STAFF_ROLES or not window.limits.is_not_open_yet(window.now):
        return ""
    from courses.time_text import course_time_text

    return (f"This assignment opens {course_time_text(window.limits.opens_at, course)}; "
            "its exercises can be opened from then.")


def assignment_statuses_in_window(*, assignment, student, window) -> list[dict]:
    """Each item's status as the student sees it in their ``window`` (exams.selectors
    .student_window): their attempts and review policy, and nothing left once the
    assignment is over for them; the one reading of the assignment page and the API."""
    items = assignment_item_statuses(
        assignment=assignment, student=student, attempts_allowed=window.limits.attempts_per_part,
        visibility=window.visibility,
    )
    return statuses_once_over(items) if assignment_over(window) else items


def statuses_once_over(rows: list[dict]) -> list[dict]:
    """The rows of ``assignment_item_statuses`` once the assignment is over for the student
    (``assignment_over``): no attempts are left, an exercise they answered but did not
    solve reads "finished" (no longer "in progress" or "answered"), one they never answered
    "not answered"; a solved one stays "solved". ``ended`` marks every row."""
    over = []
    for row in rows:
        status = {**row["status"], "attempts_left": None, "attempts_left_of_parts": None, "ended": True}
        if status["state"] == "not started":
            status["state"] = NOT_ANSWERED
        elif status["state"] != "solved":
            status["state"] = FINISHED
        over.append({**row, "status": status})
    return over


def assignment_summaries(*, course, role: str, student) -> list[dict]:
    """Per assignment of one course the student's score so far and their own ``limits``
    (see ``courses_assignment_summaries``)."""
    return courses_assignment_summaries(roles={course.pk: role}, courses=[course], student=student)[course.pk]


def courses_assignment_summaries(*, roles: dict[int, str], courses, student) -> dict[int, list[dict]]:
    """For each course (id -> the student's role there) the summaries of its assignments:
    the student's score so far and their own ``limits`` (dates, time limit, attempts). The
    score and solved count are None where the assignment's review policy does not show
    them yet. A fixed number of queries however many courses, assignments and items: the
    assignments with the student's accommodations, their items, the pools' draws, the
    student's variants, their progress and their exam attempts are each read once."""
    now = timezone.now()
    by_id = {course.pk: course for course in courses}
    assignments = _visible_assignments(roles=roles, student=student)
    for assignment in assignments:
        assignment.course = by_id[assignment.course_id]  # (the pools' keyed seed reads its slug)
    items = _items_by_assignment(assignments)
    given = _items_given_by_assignment(assignments=assignments, items=items, student=student)
    variants = list(
        Variant.objects.filter(assignment_item__assignment__in=assignments, student=student)
        .select_related("assignment_item")
        .order_by("created_at", "pk")
    )
    # Each item's copies, the current one and those under versions since switched away from.
    copies = item_copies(items=[item for rows in items.values() for item in rows], variants=variants)
    every_copy = [v for c in copies.values() for v in (c.current, *c.earlier) if v is not None]
    progress = variants_progress(variants=every_copy) if every_copy else {}
    attempts = _exam_attempts(assignments=assignments, student=student)
    summaries: dict[int, list[dict]] = {course_id: [] for course_id in roles}
    for assignment in assignments:
        limits = limits_apply(
            assignment=assignment,
            accommodation=carried_accommodation(assignment),
            started_at=_clock_started_at(assignment=assignment, variants=variants, attempts=attempts),
            now=now,
        )
        visibility = _visibility(assignment=assignment, attempt=attempts.get(assignment.pk), limits=limits, now=now)
        # Counted in full, then shown only as far as the review policy lets the summary.
        statuses = [
            exercise_status(
                item=item, student=student, variant=copies.get(item.pk, ItemCopies(current=None)).current,
                earlier=copies.get(item.pk, ItemCopies(current=None)).earlier, progress=progress,
                attempts_allowed=limits.attempts_per_part,
            )
            for item in given[assignment.pk]
        ]
        assignment_items = items[assignment.pk]
        # Out of every slot: a pool counts once, even before the student is given its item.
        total_points = pools.slot_points(assignment_items) or 1.0
        earned = sum(item.points * status["score"] for item, status in zip(given[assignment.pk], statuses))
        summaries[assignment.course_id].append(
            {
                "assignment": assignment,
                "limits": limits,
                "score_percent": int(score_decimal(100 * earned / total_points, 0)) if visibility.score else None,
                "solved": sum(1 for status in statuses if status["state"] == "solved") if visibility.correctness else None,
                "answered": sum(1 for status in statuses if status["state"] != "not started"),
                "total": pools.slot_count(assignment_items),
                "not_taken": _not_taken(
                    assignment=assignment, attempt=attempts.get(assignment.pk), statuses=statuses, limits=limits, now=now,
                ),
            }
        )
    return summaries


def _not_taken(*, assignment: Assignment, attempt, statuses: list[dict], limits, now) -> str:
    """Of an assignment the student has not begun (an exam not started, homework with no
    exercise answered): "closed" once it has closed for them, "not_open" before it opens
    for them; else "" (the summary counts their progress)."""
    begun = attempt is not None if assignment.kind == AssignmentKind.EXAM else any(
        status["state"] != "not started" for status in statuses
    )
    if begun:
        return ""
    if limits.closes_at is not None and now >= limits.closes_at:
        return "closed"
    if limits.is_not_open_yet(now):
        return "not_open"
    return ""


def _visible_assignments(*, roles: dict[int, str], student) -> list[Assignment]:
    """The assignments of these courses the student sees there (staff see unpublished
    ones too), with the student's accommodation read in the same query."""
    staff = [course_id for course_id, role in roles.items() if role in STAFF_ROLES]
    learning = [course_id for course_id, role in roles.items() if role not in STAFF_ROLES]
    if not roles:
        return []
    visible = Assignment.objects.filter(
        Q(course_id__in=staff) | Q(course_id__in=learning, is_published=True)
    )
    return list(with_own_accommodation(visible, assignment_path="", student=student))


def _items_by_assignment(assignments) -> dict[int, list[AssignmentItem]]:
    items: dict[int, list[AssignmentItem]] = {assignment.pk: [] for assignment in assignments}
    by_id = {assignment.pk: assignment for assignment in assignments}
    if not assignments:
        return items
    for item in AssignmentItem.objects.filter(assignment__in=assignments).select_related(
        "exercise_version__exercise"
    ):
        item.assignment = by_id[item.assignment_id]
        items[item.assignment_id].append(item)
    return items


def _items_given_by_assignment(*, assignments, items, student) -> dict[int, list[AssignmentItem]]:
    """The items the student was given so far in each assignment: every item outside a
    pool, and of each pool the drawn one (a summary draws nothing)."""
    pooled = [assignment for assignment in assignments if pools.has_pools(items[assignment.pk])]
    draws: dict[int, dict[str, int]] = {assignment.pk: {} for assignment in pooled}
    if pooled:
        for assignment_id, pool, item_id in PoolDraw.objects.filter(
            assignment__in=pooled, student=student
        ).values_list("assignment_id", "pool", "item_id"):
            draws[assignment_id][pool] = item_id
    return {
        assignment.pk: pools.items_given(items=items[assignment.pk], draws=draws.get(assignment.pk, {}))
        for assignment in assignments
    }


def _exam_attempts(*, assignments, student) -> dict[int, AssignmentAttempt]:
    """The student's attempts at the assignments that have them (exams) or whose review
    policy may ask whether the attempt has ended."""
    wanted = [
        assignment.pk
        for assignment in assignments
        if assignment.kind == AssignmentKind.EXAM or not policy_all_during(assignment)
    ]
    if not wanted:
        return {}
    return {
        attempt.assignment_id: attempt
        for attempt in AssignmentAttempt.objects.filter(assignment_id__in=wanted, student=student)
    }


def _clock_started_at(*, assignment: Assignment, variants, attempts):
    """assignment_started_at from rows already read: an exam's attempt start, or the
    first variant the student opened in a homework."""
    if assignment.kind == AssignmentKind.EXAM:
        attempt = attempts.get(assignment.pk)
        return attempt.started_at if attempt is not None else None
    return next(
        (variant.created_at for variant in variants if variant.assignment_item.assignment_id == assignment.pk),
        None,
    )


def _visibility(*, assignment: Assignment, attempt, limits: StudentLimits, now) -> FeedbackVisibility:
    if policy_all_during(assignment):
        return EVERYTHING
    return feedback_visibility(
        assignment=assignment, attempt=attempt, closes_at=limits.closes_at, deadline=limits.deadline, now=now
    )


def answer_shape(expected) -> list[int] | None:
    """The grid a matrix answer needs: [rows, cols] (a vector is one row)."""
    array = np.asarray(expected, dtype=float)
    if array.ndim == 1:
        return [1, array.shape[0]]
    if array.ndim == 2:
        return list(array.shape)
    return None


def part_finished(*, progress: dict, attempts_allowed: int, solved_shown: bool = True) -> bool:
    """Solved, or every allowed attempt used (0 allowed means unlimited).

    Without ``solved_shown`` (the review policy hides correctness) only the attempts count:
    a part that ended because it was solved would tell the student so."""
    return bool(
        (progress["solved"] and solved_shown)
        or (attempts_allowed and progress["attempts_used"] >= attempts_allowed)
    )


def part_extras(
    *, variant: Variant, part_key: str, spec=None, progress=None, attempts_allowed: int | None = None,
    visibility: FeedbackVisibility = EVERYTHING, body: dict | None = None,
) -> dict:
    """The hints unlocked so far and, when the solution and review policies allow, the
    worked solution, as HTML from the variant's stored body (``exercises.bodies``).

    ``attempts_allowed``: the student's own, when the caller has them; ``body``: the
    variant's body, when the caller has read it."""
    spec = spec or version_spec(variant.exercise_version)
    progress = progress or part_progress(variant=variant, part=part_key)
    item = variant.assignment_item
    if attempts_allowed is None:
        attempts_allowed = variant_attempts_allowed(variant=variant)
    finished = part_finished(
        progress=progress, attempts_allowed=attempts_allowed, solved_shown=visibility.correctness
    )
    body = body or bodies.variant_body(variant=variant, spec=spec, check_points=False)
    return {
        "hints": bodies.part_hints_html(body, part_key, tries=progress["attempts_used"])
        if visibility.hints
        else [],
        "solution": bodies.part_solution_html(body, part_key)
        if visibility.solutions
        and solution_visible(item=item, part_finished=finished, due_at=variant_due_at(variant=variant))
        else None,
    }


def solution_visible(*, item: AssignmentItem | None, part_finished: bool, due_at=UNREAD) -> bool:
    """Whether the assignment's policy lets the student read the worked solution now.

    ``due_at``: the student's own due date (``variant_due_at``); the assignment's if not given."""
    if item is None:
        return part_finished
    policy = item.assignment.solution_policy
    if policy == SolutionPolicy.ALWAYS:
        return True
    if policy == SolutionPolicy.AFTER_SOLVED:
        return part_finished
    if policy == SolutionPolicy.AFTER_DUE:
        if due_at is UNREAD:
            due_at = item.assignment.due_at
        return bool(due_at and timezone.now() > due_at)
    return False


class GridCell(NamedTuple):
    """One input of a matrix answer's grid: its field name, what a screen reader says (the
    cell and its part: one page holds several grids), the entry of the student's last answer
    there and whether it was graded wrong. Strings made here, not numbers the template would
    localise one by one."""

    name: str
    label: str
    value: str = ""
    wrong: bool = False


def _grid_cells(
    shape: list[int] | None, *, part_label: str, last_answer: Submission | None = None,
    visibility: FeedbackVisibility = EVERYTHING, refused: RefusedAnswer | None = None,
) -> list[list[GridCell]]:
    """The inputs of part ``part_label``'s ("(b)") grid, holding the entries of
    ``last_answer`` (the student's latest submission to the part) as a reloaded page shows
    them, and marking the ones its grade found wrong as far as ``visibility`` shows
    correctness. A cell without an entry has no mark. With ``refused`` (an answer just sent
    and not taken) the cells hold what it typed instead, unmarked: it has no grade."""
    if not shape:
        return []
    rows, cols = shape
    if refused is not None:
        return [
            [
                GridCell(
                    name=f"cell-{r}-{c}",
                    label=f"{_grid_cell_label(r, c, rows)} of part {part_label}",
                    value=refused.cell(r, c),
                )
                for c in range(cols)
            ]
            for r in range(rows)
        ]
    size = rows * cols
    entries = _grid_entries(last_answer.raw_answer, rows=rows, cols=cols) if last_answer else None
    entries = entries or [""] * size
    wrong = _wrong_entries(last_answer, visibility=visibility, size=size) if last_answer else None
    wrong = wrong or [False] * size
    return [
        [
            GridCell(
                name=f"cell-{r}-{c}",
                label=f"{_grid_cell_label(r, c, rows)} of part {part_label}",
                value=entries[r * cols + c],
                wrong=wrong[r * cols + c] and bool(entries[r * cols + c]),
            )
            for c in range(cols)
        ]
        for r in range(rows)
    ]


def _grid_entries(raw_answer, *, rows: int, cols: int) -> list[str] | None:
    """The entries of a stored matrix answer in reading order, as typed (an answer sent as
    text, through the API, as the parser read it); None when they do not fill a rows × cols
    grid, as the grader would lay them out (a vector fills a one-row or one-column grid)."""
    if isinstance(raw_answer, str):
        try:
            values = parse_matrix(raw_answer)
        except AnswerFormatError:
            return None
        table = values.tolist() if values.ndim == 2 else [values.tolist()]
        table = [[repr(float(value)) for value in row] for row in table]
    elif isinstance(raw_answer, list) and all(isinstance(row, list) for row in raw_answer):
        table = [[str(entry) for entry in row] for row in raw_answer]
    elif isinstance(raw_answer, list) and not any(isinstance(e, (list, dict)) for e in raw_answer):
        table = [[str(entry) for entry in raw_answer]]
    else:
        return None
    if not table or any(len(row) != len(table[0]) for row in table):
        return None
    typed = (len(table), len(table[0]))
    vectors = 1 in typed and 1 in (rows, cols)
    if typed != (rows, cols) and not (vectors and typed[0] * typed[1] == rows * cols):
        return None
    return [entry for row in table for entry in row]


def _wrong_entries(
    submission: Submission, *, visibility: FeedbackVisibility, size: int
) -> list[bool] | None:
    """Per entry in reading order, whether the grade of ``submission`` found it wrong;
    None when it has no per-entry verdicts the student may see."""
    if submission.status != SubmissionStatus.GRADED:
        return None
    details = feedback_for_student(submission.feedback, visibility).get("details") or {}
    verdicts = details.get("entry_correct")
    if not isinstance(verdicts, list):
        return None
    flat = [verdict for row in verdicts for verdict in (row if isinstance(row, list) else [row])]
    return [verdict is False for verdict in flat] if len(flat) == size else None


# The answer types typed as one text (an input or a textarea), and so given back as one.
_TYPED_ANSWER_TYPES = frozenset({"numeric", *TEXT_ANSWER_TYPES})


def _own_last_answer(progress: dict, *, student_id: int) -> Submission | None:
    """The student's own latest submission to a part, from its ``progress`` (no query)."""
    own = [submission for submission in progress["history"] if submission.student_id == student_id]
    return own[-1] if own else None


def _typed_answer(
    answer_type: str, last_answer: Submission | None, refused: RefusedAnswer | None = None
) -> str:
    """The text of ``last_answer`` for the part's input or textarea to hold again ("" for
    none, another answer type, or an answer that was not sent as one text), or the text of
    ``refused`` (an answer just sent and not taken). Plain text: the template escapes it."""
    if answer_type not in _TYPED_ANSWER_TYPES:
        return ""
    if refused is not None:
        return refused.text
    if last_answer is None:
        return ""
    return last_answer.raw_answer if isinstance(last_answer.raw_answer, str) else ""


def _chosen_keys(
    answer_type: str, last_answer: Submission | None, refused: RefusedAnswer | None = None
) -> frozenset[str]:
    """The keys of the choices ``last_answer`` picked, for a choice part's boxes to hold
    again (one key, or a list of them when several may be chosen), or those ``refused``
    (an answer just sent and not taken) picked."""
    if answer_type != "choice":
        return frozenset()
    if refused is not None:
        return frozenset(refused.answers)
    if last_answer is None:
        return frozenset()
    raw = last_answer.raw_answer
    if isinstance(raw, str):
        return frozenset({raw})
    if isinstance(raw, list):
        return frozenset(key for key in raw if isinstance(key, str))
    return frozenset()


def _grid_cell_label(row: int, column: int, rows: int) -> str:
    """What a screen reader says for a cell: "first row, fourth column", or "fourth entry" in
    a one-row grid. Ordinal words, because prompts number tokens from 0: "row 1, column 4"
    did not say whether it meant token 1 or the first row."""
    if rows == 1:
        return f"{ordinal_word(column + 1)} entry"
    return f"{ordinal_word(row + 1)} row, {ordinal_word(column + 1)} column"


def exercise_page_context(
    *, variant: Variant, limits: StudentLimits | None = None,
    visibility: FeedbackVisibility = EVERYTHING, unanswered: bool = False,
    refused: dict[str, RefusedAnswer] | None = None,
) -> dict:
    """The exercise page's parts and progress, as the student may see them under the
    review policy (``visibility``): without correctness no part reads "solved".

    A part the student solved on an earlier copy of the item (made under a version the
    instructor has switched away from since; ``parts_solved_on_earlier_copies``) reads as
    solved and finished, with ``solved_earlier`` (else None): ``counted``, the points it
    counts (its best over the copies, as the gradebook counts it; None while the review
    policy hides scores). ``progress`` stays this copy's own: no attempt used on it.

    ``limits``: the student's own (``variant_limits``), for their attempts per part.

    ``unanswered``: the variant was made for this page (a first visit), so no answer names
    it and none is read: a query fewer on each student's first page of each exercise. (Two
    tabs making it at once: the other tab's was stored milliseconds before, before a page
    of it could send an answer.)

    ``refused``: answers just sent without JavaScript and not taken, by part
    (``grading.refused_answers``): their parts' inputs hold them, and their ``refused_error``
    says why; ``refused_elsewhere`` lists the errors of parts this page does not have."""
    refused = refused or {}
    spec = version_spec(variant.exercise_version)
    references = variant_references(variant)
    item = variant.assignment_item
    if limits is not None:
        attempts_allowed = limits.attempts_per_part
    else:
        attempts_allowed = variant_attempts_allowed(variant=variant)
    # Points as the gradebook counts them: the item's points split by the parts' weights.
    points = engine.part_points(spec, item.points) if item else None
    body = bodies.variant_body(variant=variant, spec=spec, part_points=points)
    parts = []
    part_keys = [part.key for part in spec.parts]
    progress_by_part = (
        {key: no_progress() for key in part_keys} if unanswered else variant_progress(variant=variant, parts=part_keys)
    )
    # "Solved" on an earlier copy would tell what the review policy hides: then the part
    # stays open, as a part solved on this copy does.
    solved_earlier = (
        parts_solved_on_earlier_copies(variant=variant, part_keys=progress_by_part)
        if visibility.correctness and _may_have_earlier_copies(variant)
        else {}
    )
    for part in spec.parts:
        progress = progress_by_part[part.key]
        # Counted as solved here too, with this copy's own attempts (none used on it).
        counted_progress = {**progress, "solved": True} if part.key in solved_earlier else progress
        finished = part_finished(
            progress=counted_progress, attempts_allowed=attempts_allowed,
            solved_shown=visibility.correctness,
        )
        label = part_label(spec, part.key)
        # A reloaded page holds the student's last answer, as the page did after sending it.
        last_answer = _own_last_answer(progress, student_id=variant.student_id)
        typed = refused.get(part.key)
        parts.append(
            {
                "spec": part,
                "key": part.key,
                "label": label,
                "answer_type": part.type,
                "prompt": bodies.part_prompt_html(body, part.key),
                "shape": answer_shape(references[part.key])
                if part.type == "matrix"
                else None,
                "grid": _grid_cells(
                    answer_shape(references[part.key]),
                    part_label=label,
                    last_answer=last_answer,
                    visibility=visibility,
                    refused=typed,
                )
                if part.type == "matrix"
                else None,
                "typed_answer": _typed_answer(part.type, last_answer, typed),
                "chosen": _chosen_keys(part.type, last_answer, typed),
                "refused_error": typed.error if typed else "",
                "refused_unreadable": typed.unreadable if typed else False,
                "choices": part.choices,
                "multiple": bool(part.options.get("multiple")),
                "progress": progress,
                "solved": counted_progress["solved"] if visibility.correctness else None,
                "solved_earlier": _solved_earlier(
                    earlier_best=solved_earlier[part.key], progress=progress,
                    points=points[part.key] if points and visibility.score else None,
                )
                if part.key in solved_earlier
                else None,
                "attempts_allowed": attempts_allowed,
                "attempts_left": (attempts_allowed - progress["attempts_used"])
                if attempts_allowed
                else None,
                "finished": finished,
                **part_extras(
                    variant=variant,
                    part_key=part.key,
                    spec=spec,
                    progress=counted_progress,
                    attempts_allowed=attempts_allowed,
                    visibility=visibility,
                    body=body,
                ),
            }
        )
    for part in parts:
        part["points"] = points[part["key"]] if points else None
    return {
        "variant": variant,
        "named_variants": sorted(spec.variants),
        "spec": spec,
        "title": spec.title,
        "prompt": bodies.html(body["prompt"]),
        "prompt_sections": bodies.body_prompt_sections(body),
        "figures": bodies.body_figures(body),
        "exercise_points": item.points if item else None,
        "parts": parts,
        "visibility": visibility,
        "refused_elsewhere": [
            answer.error for key, answer in refused.items() if key not in part_keys and answer.error
        ],
    }


def _solved_earlier(*, earlier_best: float, progress: dict, points: float | None) -> dict:
    """What the page says of a part solved on an earlier copy: ``counted``, the points it
    counts, its best over the copies (``part_progress_over_copies``) times the part's
    ``points`` (None: not shown)."""
    best = max(earlier_best, progress["best_awarded"] or 0.0)
    return {"counted": best * points if points is not None else None}


def assignment_started_at(*, assignment: Assignment, student):
    """When the student's clock on the assignment started, or None before it has: for an
    exam when they started their attempt, for homework when they first opened any of its
    exercises."""
    if assignment.kind == AssignmentKind.EXAM:
        return (
            AssignmentAttempt.objects.filter(assignment=assignment, student=student)
            .values_list("started_at", flat=True)
            .first()
        )
    first = (
        Variant.objects.filter(assignment_item__assignment=assignment, student=student)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    return first


def student_limits(
    *, assignment: Assignment, student, accommodation=UNREAD, now=None
) -> StudentLimits:
    """The student's own dates, time limit, attempts and deadline on the assignment.

    The one place that decides them: the countdown, the assignment overview, the API and
    every refusal of a late or extra answer ask it. ``accommodation`` may come with a row
    the caller already read (``exams.selectors_accommodations.carried_accommodation``);
    otherwise it is read here. When the clock started is read only under a time limit.
    """
    if accommodation is UNREAD:
        accommodation = accommodation_of(assignment=assignment, student=student)
    limited = accommodated_time_limit_seconds(
        limit_minutes=assignment.time_limit_minutes, accommodation=accommodation
    )
    started_at = (
        assignment_started_at(assignment=assignment, student=student) if limited else None
    )
    return limits_apply(
        assignment=assignment, accommodation=accommodation, started_at=started_at, now=now
    )


def variant_accommodation(*, variant: Variant):
    """The student's accommodation on the variant's assignment (None for none or practice):
    the one read with the variant if it was, else read now and remembered on the variant."""
    item = variant.assignment_item
    if item is None:
        return None
    accommodation = carried_accommodation(variant, item)
    if accommodation is UNREAD:
        accommodation = accommodation_of(assignment=item.assignment, student=variant.student_id)
        accommodation_carry(variant, accommodation)
    return accommodation


def page_accommodation(*, item, variant: Variant | None):
    """The student's accommodation for their exercise page: the one read with their variant,
    or on a first visit the one read with the item (``access_item_and_variant``); UNREAD
    when neither was, for ``student_window`` to read."""
    if variant is not None:
        return variant_accommodation(variant=variant)
    return carried_accommodation(item)


def variant_limits(*, variant: Variant) -> StudentLimits | None:
    """The student's own limits on the assignment a variant belongs to (None for practice),
    for what a page shows; submission_create decides with its own read in the lock."""
    item = variant.assignment_item
    if item is None:
        return None
    return student_limits(
        assignment=item.assignment,
        student=variant.student_id,
        accommodation=variant_accommodation(variant=variant),
    )


def student_attempts_allowed(*, assignment: Assignment, student) -> int:
    """The student's own attempts per part (0: unlimited); the accommodation read with the
    assignment if it was."""
    accommodation = carried_accommodation(assignment)
    if accommodation is UNREAD:
        accommodation = accommodation_of(assignment=assignment, student=student)
    return limits_apply(
        assignment=assignment, accommodation=accommodation, started_at=None
    ).attempts_per_part


def _variant_dates_and_attempts(*, variant: Variant) -> StudentLimits | None:
    """The student's own dates and attempts on the variant's assignment, without reading
    when their clock started (its deadline is not theirs); None for practice."""
    item = variant.assignment_item
    if item is None:
        return None
    return limits_apply(
        assignment=item.assignment,
        accommodation=variant_accommodation(variant=variant),
        started_at=None,
    )


def variant_attempts_allowed(*, variant: Variant) -> int:
    """The student's own attempts per part on the variant (0: unlimited, as for practice)."""
    limits = _variant_dates_and_attempts(variant=variant)
    return limits.attempts_per_part if limits else 0


def variant_due_at(*, variant: Variant):
    """The student's own due date on the variant's assignment (None: none, or practice)."""
    limits = _variant_dates_and_attempts(variant=variant)
    return limits.due_at if limits else None


def assignment_deadline(*, assignment: Assignment, student, limits: StudentLimits | None = None):
    """The moment this student's time on the assignment runs out, or None without a limit:
    min(start + their limit, their close date). Before the clock has started it is the
    limit counted from now."""
    limits = limits or student_limits(assignment=assignment, student=student)
    return limits.deadline


def assignment_time_left(*, assignment: Assignment, student, limits: StudentLimits | None = None):
    """Time left under the student's time limit (a timedelta), or None without a limit."""
    deadline = assignment_deadline(assignment=assignment, student=student, limits=limits)
    if deadline is None:
        return None
    return max(deadline - timezone.now(), timedelta(0))


def assignment_clock(
    *, assignment: Assignment, student, limits: StudentLimits | None = None
) -> dict | None:
    """What the pages show about a time limit: the student's own limit, whether the clock
    has started, the deadline, the seconds left (the server's count; the page only counts
    it down) and the rounded minutes. None when the student has no limit."""
    limits = limits or student_limits(assignment=assignment, student=student)
    if limits.deadline is None:
        return None
    time_left = max(limits.deadline - timezone.now(), timedelta(0))
    return {
        "limit_minutes": limits.time_limit_minutes,
        "limit_text": duration_text(limits.time_limit_seconds),
        "started": limits.started_at is not None,
        "deadline": limits.deadline,
        "seconds_left": math.ceil(time_left.total_seconds()),
        # Rounded up: 59.5 s left reads "1 minute", so a fresh 1-minute limit never says
        # "time is up"; only no time at all is zero.
        "minutes_left": math.ceil(time_left.total_seconds() / 60),
        "is_up": not time_left,
    }


def practice_origin_item_id(variant: Variant) -> int:
    """The assignment slot a practice variant was started from ("practice:<item>:<token>")."""
    return int(variant.context.split(":")[1])


def named_variants(*, variant: Variant) -> list[str]:
    return sorted(version_spec(variant.exercise_version).variants)


def latest_graded(*, variant: Variant, part: str) -> Submission | None:
    return (
        Submission.objects.filter(variant=variant, part=part, status=SubmissionStatus.GRADED)
        .order_by("-attempt")
        .first()
    )


RECENT_ANSWERS_LOOKED_AT = 5  # a slip older than the student's last five answers is not "recent"


def recent_misconception(*, student, exercise_id: int) -> tuple[str, str] | None:
    """(part, misconception code) of the student's latest diagnosed wrong answer among
    their last few graded answers to this exercise (any version, graded or practice)."""
    recent = (
        Submission.objects.filter(
            student=student,
            variant__exercise_version__exercise_id=exercise_id,
            status=SubmissionStatus.GRADED,
        )
        .order_by("-created_at", "-pk")
        .values_list("part", "misconception", "correct")[:RECENT_ANSWERS_LOOKED_AT]
    )
    for part, code, correct in recent:
        if code and not correct:
            return part, code
    return None


def assignment_unanswered_parts(*, assignment: Assignment, student) -> list[dict]:
    """Per exercise the student is given, the keys of the parts they have not answered and
    their labels for people (an answer that could not be graded counts as answered: it is
    stored)."""
    rows = []
    for row in assignment_item_statuses(assignment=assignment, student=student):
        item = row["item"]
        spec = version_spec(item.exercise_version)
        keys = [part.key for part in spec.parts]
        # An answer on any copy of the item counts, one saved before the instructor switched
        # its version too (as the student's status and the gradebook count it).
        answered = set(
            Submission.objects.filter(
                variant__assignment_item=item, variant__student=student, variant__context=f"assignment:{item.pk}"
            ).values_list("part", flat=True)
        )
        unanswered = [k for k in keys if k not in answered]
        rows.append({
            "item": item, "parts": keys, "unanswered": unanswered,
            "unanswered_labels": [part_label(spec, key) for key in unanswered],  # "(b)", as pages name parts
        })
    return rows


def _own_variant_of_item(*, item_id: int, student_id: int, context: str):
    return (
        with_own_accommodation(
            Variant.objects.select_related("exercise_version__exercise", "assignment_item__assignment__course"),
            assignment_path="assignment_item__assignment",
            student=student_id,
        )
        .filter(
            assignment_item_id=item_id, student_id=student_id, context=context,
            exercise_version=F("assignment_item__exercise_version"),
        )
        .annotate(earlier_copies=_earlier_copies(item=OuterRef("assignment_item_id"), student_id=student_id,
                                                 version=OuterRef("exercise_version_id")))
        # The version's source and spec are read once per process (``version_spec``), not
        # decoded on every page.
        .defer("exercise_version__source", "exercise_version__spec")[:1]  # one at most: unique per version
    )


# Compiled once: building and compiling it cost four times what running it does.
_OWN_VARIANT_OF_ITEM = PreparedRead(_own_variant_of_item, item_id=int, student_id=int, context=str)


def _item_with_own_accommodation(*, item_id: int, student_id: int):
    return (
        with_own_accommodation(
            AssignmentItem.objects.select_related("assignment__course", "exercise_version__exercise"),
            assignment_path="assignment",
            student=student_id,
        )
        .filter(pk=item_id)
        .annotate(earlier_copies=_earlier_copies(item=OuterRef("pk"), student_id=student_id,
                                                 version=OuterRef("exercise_version_id")))[:1]
    )


def _earlier_copies(*, item, student_id, version) -> Exists:
    """Whether the student has a copy of the item under a version other than ``version``
    (the item's now): one the instructor switched away from since. Read with the exercise
    page's own row, so a page without one costs no query of its own."""
    return Exists(Variant.objects.filter(assignment_item_id=item, student_id=student_id).exclude(exercise_version_id=version))


# A first visit's read: every student's first page of each exercise in an exam makes it.
_ITEM_WITH_OWN_ACCOMMODATION = PreparedRead(_item_with_own_accommodation, item_id=int, student_id=int)


def access_item_and_variant(*, user, item_id: int) -> tuple[AssignmentItem, str, Variant | None]:
    """An exercise slot the user may open, their role in its course, and their variant of
    it (None on a first visit: the caller creates it). The rules are
    ``access_assignment_item``'s.

    A student coming back reads the variant with its slot, assignment, course, exercise
    version and their accommodation in one prepared query, then their role: the role as a
    query of its own, and the slot's rows through the variant, cost less to build than one
    query holding them all. A first visit reads the slot with the accommodation instead."""
    variant = _OWN_VARIANT_OF_ITEM.first(item_id=int(item_id), student_id=user.pk, context=f"assignment:{item_id}")
    if variant is not None:
        item = variant.assignment_item
        item.exercise_version = variant.exercise_version  # the rows this query fetched
        variant.student = user
    else:
        item = _ITEM_WITH_OWN_ACCOMMODATION.first(item_id=int(item_id), student_id=user.pk)
        if item is None:
            raise Http404("No such exercise.")
    role = course_role(user=user, course=item.assignment.course)
    require_item_open(item=item, role=role)
    if role not in STAFF_ROLES:
        pools.require_item_given(item=item, student=user)
    return item, role, variant


def version_changed_notice(*, item: AssignmentItem, variant: Variant, student, visibility) -> dict | None:
    """What the exercise page tells a student whose copy of the item was made under a version
    the instructor has switched away from since (None when they have none): they now work on
    a new copy, and the answers saved on the earlier one still count (``exercise_status``).

    ``earned`` (the points the student has on the item so far, over all their copies) is
    None when nothing was answered on the earlier copy or the review policy hides scores.
    The rows ``access_item_and_variant`` read say whether there is an earlier copy: the
    copies are read only then."""
    if not (vars(variant).get("earlier_copies") or vars(item).get("earlier_copies")):
        return None
    copies = own_item_copies(item=item, student=student)
    if not copies.earlier:
        return None
    progress = variants_progress(variants=[v for v in (copies.current, *copies.earlier) if v is not None])
    earlier_ids = {v.pk for v in copies.earlier}
    answered_before = any(p["attempts_used"] for (variant_id, _), p in progress.items() if variant_id in earlier_ids)
    status = exercise_status(
        item=item, student=student, variant=copies.current, earlier=copies.earlier, progress=progress,
        attempts_allowed=0,  # (the score is all this reads)
    )
    shown = answered_before and visibility.score
    return {
        "answered_before": answered_before,
        "earned": item.points * status["score"] if shown else None,
        "points": item.points,
    }
