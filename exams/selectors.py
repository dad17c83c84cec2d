"""Reads of the exam side of an assignment: a student's attempt, their window (what they
may do and see now, ``exams.window``) and the helpers that mask what the review policy
hides.

``student_window`` loads the window's inputs in one query and computes it; every page,
fragment, API serializer, submit and the result poll read what a student may see from it
(``feedback_visibility_for`` is its visibility, for callers that need nothing else).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.db.models import BooleanField, DateTimeField, FilteredRelation, Min, OuterRef, Q, Subquery, Value
from django.http import Http404
from django.utils import timezone

from attnquiz.prepared_reads import PreparedRead
from courses.models import Assignment, AssignmentKind, Enrolment, EnrolmentStatus, ReleaseMoment, Role, SessionPolicy
from exercises.models import Variant
from grading.models import Submission, SubmissionStatus

from .access import ExamAccessRefused, session_replaced
from .models import Accommodation, AssignmentAttempt
from .selectors_accommodations import UNREAD, accommodation_of
from .window import (  # noqa: F401  (the names pages and tests know from here)
    EVERYTHING,
    POLICY_FIELDS,
    REVIEW_LATER_AFTER,
    AttemptState,
    FeedbackVisibility,
    Window,
    accommodation_merge,
    limits_apply,
    policy_all_during,
    visibility_decide,
    window_compute,
)


def is_exam(assignment: Assignment | None) -> bool:
    return assignment is not None and assignment.kind == AssignmentKind.EXAM


def exams_opening_soon(*, now, within_seconds: float):
    """Published exams of courses not archived that open after ``now`` and within
    ``within_seconds``, with their course."""
    return Assignment.objects.filter(
        kind=AssignmentKind.EXAM,
        is_published=True,
        course__archived_at__isnull=True,
        opens_at__gt=now,
        opens_at__lte=now + timedelta(seconds=within_seconds),
    ).select_related("course")


def exam_student_ids(*, assignment: Assignment) -> list[int]:
    """The students (active enrolments) of the exam's course."""
    return list(
        Enrolment.objects.filter(
            course_id=assignment.course_id, role=Role.STUDENT, status=EnrolmentStatus.ACTIVE
        ).values_list("user_id", flat=True)
    )


def attempt_of(*, assignment: Assignment, student) -> AssignmentAttempt | None:
    """The student's attempt at the assignment (open or closed), or None before Start."""
    return AssignmentAttempt.objects.filter(assignment=assignment, student=student).first()


def student_closes_at(*, assignment: Assignment, student):
    """The moment the assignment closes for this student, their accommodation applied
    (None: it never closes)."""
    accommodation = accommodation_of(assignment=assignment, student=student)
    return limits_apply(assignment=assignment, accommodation=accommodation, started_at=None).closes_at


# --- The window -----------------------------------------------------------------------------


def _needs_clock_start(assignment: Assignment) -> bool:
    """Homework under a time limit counts from the first exercise the student opened."""
    return assignment.kind != AssignmentKind.EXAM and bool(assignment.time_limit_minutes)


def student_window(
    *, assignment: Assignment, student, now=None, accommodation=UNREAD, attempt=UNREAD
) -> Window:
    """The student's window on ``assignment`` at ``now``.

    One query reads the assignment afresh (a release just made counts), its course, the
    student's accommodations (on the assignment and course-wide) and attempt (and, for timed homework, when their clock
    started); none when the caller passes ``accommodation`` and ``attempt`` it has read
    (timed homework still reads its clock start)."""
    now = now or timezone.now()
    student_id = getattr(student, "pk", student)
    clock_started_at = None
    if attempt is UNREAD and accommodation is not UNREAD and _attempt_irrelevant(assignment):
        attempt = None
    if accommodation is UNREAD or attempt is UNREAD:
        row = _window_row(assignment=assignment, student_id=student_id)
        assignment = row
        if accommodation is UNREAD:
            accommodation = accommodation_merge(
                own=vars(row).get("window_accommodation"),
                course_wide=vars(row).get("window_course_accommodation"),
            )
        if attempt is UNREAD:
            attempt = vars(row).get("window_attempt")
        clock_started_at = row.window_clock_started_at
    elif _needs_clock_start(assignment):
        clock_started_at = _first_opened_at(assignment_id=assignment.pk, student_id=student_id)
    return window_compute(
        assignment=assignment,
        accommodation=accommodation,
        attempt=attempt,
        clock_started_at=clock_started_at,
        archived=assignment.course.archived_at is not None,
        now=now,
    )


def _attempt_irrelevant(assignment: Assignment) -> bool:
    """Homework showing everything during: no attempt of its own changes its window (its
    close date and time limit do), so the hot homework paths read none."""
    return assignment.kind != AssignmentKind.EXAM and policy_all_during(assignment)


def _first_opened_at_query(*, assignment, student_id):
    return (
        Variant.objects.filter(assignment_item__assignment=assignment, student_id=student_id)
        .order_by("created_at")
        .values("created_at")[:1]
    )


def _first_opened_at(*, assignment_id: int, student_id: int):
    return _first_opened_at_query(assignment=assignment_id, student_id=student_id).values_list(
        "created_at", flat=True
    ).first()


def _window_row_of(*, assignment_id: int, student_id: int, clock_start: bool):
    return _window_rows(Assignment.objects.filter(pk=assignment_id), clock_start=clock_start, student_id=student_id)[:1]


# Every page, submit and poll of an assignment reads it: compiled once (``PreparedRead``),
# for timed homework (which reads its clock start too) and for the rest.
_WINDOW_ROW = PreparedRead(partial(_window_row_of, clock_start=False), assignment_id=int, student_id=int)
_WINDOW_ROW_WITH_CLOCK_START = PreparedRead(
    partial(_window_row_of, clock_start=True), assignment_id=int, student_id=int
)


def _window_row(*, assignment: Assignment, student_id: int) -> Assignment:
    """The assignment with the student's accommodation and attempt joined in."""
    read = _WINDOW_ROW_WITH_CLOCK_START if _needs_clock_start(assignment) else _WINDOW_ROW
    row = read.first(assignment_id=assignment.pk, student_id=student_id)
    if row is None:
        raise Assignment.DoesNotExist("The assignment was deleted.")
    return row


def _own_deadline_row(*, course_slug: str, assignment_slug: str, student_id: int):
    queryset = Assignment.objects.filter(course__slug=course_slug, slug=assignment_slug, kind=AssignmentKind.EXAM)
    return (
        _window_rows(queryset, clock_start=False, student_id=student_id)
        .filter(window_attempt__isnull=False)
        .order_by("pk")[:1]  # one at most: slugs are unique per course
    )


# Each running exam's page polls it: compiled once.
_OWN_DEADLINE_ROW = PreparedRead(_own_deadline_row, course_slug=str, assignment_slug=str, student_id=int)


# Said to a page whose browser session another one took the attempt from (the poll's answer).
SESSION_TAKEN_OVER = (
    "Your attempt was opened in another browser session, which has taken it over: this page "
    "can no longer send answers. Continue in that browser."
)


class NoOwnAttempt(Http404):
    """The student has no attempt on the exam at these slugs: never started, removed by
    staff, or the slugs name no exam (the live-deadline poll's 404)."""

    message = "No attempt of yours on this exam."

    def __init__(self):
        super().__init__(self.message)


def access_own_deadline(*, course_slug: str, assignment_slug: str, student, session=None) -> tuple[Window, object]:
    """The window of a student's own running or ended exam attempt, and its course, found
    by its slugs in one query (the live-deadline poll's read); ``NoOwnAttempt`` (an Http404)
    without an attempt. Reveals only the student's own clock, so the exam's access gate is
    not repeated here; but a browser ``session`` whose one-session attempt another session
    has taken over is refused (``ExamAccessRefused``, code ``session_replaced``), as the gate
    refuses its next request, so its open page learns it at its next poll. The window of an
    archived course says so (``window.archived``): its pages keep no clock."""
    row = _OWN_DEADLINE_ROW.first(course_slug=course_slug, assignment_slug=assignment_slug, student_id=student.pk)
    if row is None or vars(row).get("window_attempt") is None:
        raise NoOwnAttempt()
    if session is not None and session_taken_over(session=session, assignment=row, attempt=row.window_attempt):
        raise ExamAccessRefused(SESSION_TAKEN_OVER, code="session_replaced")
    window = window_compute(
        assignment=row, accommodation=vars(row).get("window_accommodation"), attempt=row.window_attempt,
        course_accommodation=vars(row).get("window_course_accommodation"),
        clock_started_at=None, archived=row.course.archived_at is not None, now=timezone.now(),
    )
    return window, row.course


def session_taken_over(*, session, assignment: Assignment, attempt: AssignmentAttempt) -> bool:
    """Whether this browser session was bound to the one-session ``attempt`` and another
    session holds it now (the gate's "session_replaced", read without its row lock: no query)."""
    if assignment.session_policy == SessionPolicy.ANY:
        return False
    return session_replaced(session, assignment=assignment, attempt=attempt)


def _window_rows(queryset, *, clock_start: bool, student_id: int):
    queryset = queryset.annotate(
        window_accommodation=FilteredRelation(
            "accommodations", condition=Q(accommodations__student=student_id)
        ),
        window_course_accommodation=FilteredRelation(
            "course__course_accommodations", condition=Q(course__course_accommodations__student=student_id)
        ),
        window_attempt=FilteredRelation("attempts", condition=Q(attempts__student=student_id)),
        window_read=Value(True, output_field=BooleanField()),
    )
    if clock_start:
        queryset = queryset.annotate(
            window_clock_started_at=Subquery(
                _first_opened_at_query(assignment=OuterRef("pk"), student_id=student_id)
            )
        )
    else:
        queryset = queryset.annotate(window_clock_started_at=Value(None, output_field=DateTimeField()))
    # select_related leaves an empty join's attribute unset: read it with vars().get().
    return queryset.select_related("course", "window_accommodation", "window_course_accommodation", "window_attempt")


def feedback_visibility(*, assignment, attempt, closes_at, now, deadline=None) -> FeedbackVisibility:
    """The review policy applied at ``now`` for callers holding the pieces (pure).

    ``closes_at``: the student's own close date; ``deadline``: their own time limit's end
    (an exam attempt past it has ended, even before the closer comes by)."""
    exam = getattr(assignment, "kind", None) == AssignmentKind.EXAM
    ended_at = None
    if attempt is not None and attempt.finished_at is not None:
        ended_at = attempt.finished_at
    elif attempt is not None and exam:
        ends = [moment for moment in (deadline, closes_at) if moment is not None]
        ended_at = min(ends) if ends and now >= min(ends) else None
    elif closes_at is not None and now >= closes_at:
        ended_at = closes_at
    return visibility_decide(assignment=assignment, exam=exam, ended_at=ended_at, closes_at=closes_at, now=now)


def feedback_visibility_for(
    *, assignment: Assignment | None, student, now=None, attempt=UNREAD, window: Window | None = None
) -> FeedbackVisibility:
    """What ``student`` may see now of their graded answers on ``assignment``: the
    visibility of their window (``window`` when the caller computed it).

    Practice (no assignment) and an all-"during" policy — every homework by default —
    show everything without a query, as before review policies existed."""
    if window is not None:
        return window.visibility
    if assignment is None or policy_all_during(assignment):
        return EVERYTHING
    return student_window(
        assignment=assignment, student=student, now=now,
        attempt=UNREAD if attempt is None else attempt,
    ).visibility


def feedback_for_student(feedback: dict | None, visibility: FeedbackVisibility) -> dict:
    """A submission's stored feedback with what the policy hides removed.

    The checker's message says whether the answer was right, so it goes with correctness;
    the per-cell verdicts too. The misconception's message goes with misconceptions. A
    manual grade's rubric items that applied, with their points, tell both the grade and
    the grader's judgement: they show once correctness and the score both do."""
    feedback = dict(feedback or {})
    if visibility.everything:
        return feedback
    if not (visibility.correctness and visibility.score):
        feedback.pop("rubric", None)
        feedback.pop("rubric_unrecorded", None)
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
    # An attempt's end shows "after_finish" at once and "later" two minutes on.
    ended = Q(finished_at__gte=since, finished_at__lt=until) | Q(
        finished_at__gte=since - REVIEW_LATER_AFTER, finished_at__lt=until - REVIEW_LATER_AFTER
    )
    for model, moments in ((AssignmentAttempt, ended), (Accommodation, Q(closes_at__gte=since, closes_at__lt=until))):
        for assignment_id, student_id in model.objects.filter(moments, assignment__in=withheld).values_list(
            "assignment_id", "student_id"
        ):
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


def submissions_not_withheld(submission_ids, *, now=None) -> list[int]:
    """Those of ``submission_ids`` whose correctness their student may see now, in order:
    what ``grade_withheld`` answers, one submission at a time, decided for the whole batch.

    A fixed number of queries whatever the batch's size (the submissions, their
    assignments, then for the assignments whose policy withholds anything: the attempts,
    the accommodations, and timed homework's clock starts), and one window per student
    and assignment. Callers with very many ids pass them in chunks."""
    now = now or timezone.now()
    rows = list(
        Submission.objects.filter(pk__in=list(submission_ids))
        .order_by("pk")
        .values_list("pk", "student_id", "variant__assignment_item__assignment_id")
    )
    withholding = {
        assignment.pk: assignment
        for assignment in Assignment.objects.filter(pk__in={row[2] for row in rows if row[2] is not None})
        .select_related("course")
        if not policy_all_during(assignment)
    }
    pairs = {(assignment_id, student_id) for _, student_id, assignment_id in rows if assignment_id in withholding}
    visible = _pairs_seeing_correctness(pairs, assignments=withholding, now=now)
    return [pk for pk, student_id, assignment_id in rows
            if assignment_id not in withholding or (assignment_id, student_id) in visible]


def _pairs_seeing_correctness(pairs: set[tuple[int, int]], *, assignments: dict, now) -> set[tuple[int, int]]:
    """Those (assignment id, student id) pairs whose student's window shows correctness now."""
    if not pairs:
        return set()
    assignment_ids = {assignment_id for assignment_id, _ in pairs}
    student_ids = {student_id for _, student_id in pairs}

    def by_pair(model):
        rows = model.objects.filter(assignment__in=assignment_ids, student__in=student_ids)
        return {(row.assignment_id, row.student_id): row for row in rows}

    attempts, accommodations = by_pair(AssignmentAttempt), by_pair(Accommodation)
    timed_homework = [pk for pk in assignment_ids if _needs_clock_start(assignments[pk])]
    clock_starts = {}
    if timed_homework:
        clock_starts = {
            (row["assignment_item__assignment_id"], row["student_id"]): row["first_opened_at"]
            for row in Variant.objects.filter(assignment_item__assignment__in=timed_homework, student__in=student_ids)
            .values("assignment_item__assignment_id", "student_id")
            .annotate(first_opened_at=Min("created_at"))
        }
    seeing = set()
    for pair in pairs:
        assignment = assignments[pair[0]]
        window = window_compute(
            assignment=assignment, accommodation=accommodations.get(pair), attempt=attempts.get(pair),
            clock_started_at=clock_starts.get(pair), archived=assignment.course.archived_at is not None, now=now,
        )
        if window.visibility.correctness:
            seeing.add(pair)
    return seeing


# --- Releasing with eyes open ---------------------------------------------------------------

POLICY_LABELS = {
    "correctness": "right or wrong", "score": "scores", "misconception": "misconception feedback",
    "hints": "hints", "heatmap": "their heatmaps", "solutions": "worked solutions",
}


@dataclass(frozen=True)
class ReleasePreview:
    """Where the assignment's students are, and what a release would show them."""

    is_exam: bool
    students: int
    not_started: int
    working: int
    ended: int
    closes_at: object  # the assignment's close date (None: never)
    is_open: bool  # it has not closed (for everyone, accommodations counted)
    later_closes: int  # students whose own close date is after the assignment's
    shows: list[str]  # what of a graded answer the release shows (on-release fields)


def release_preview(*, assignment: Assignment, now=None) -> ReleasePreview:
    """The confirmation a release asks for (three queries: the students with their
    course-wide accommodations, their attempts, their accommodations on the assignment).
    Each student's state is their window's."""
    from .selectors_accommodations import course_students, with_course_accommodation_in

    now = now or timezone.now()
    students = list(
        course_students(assignment=assignment)
        .annotate(**with_course_accommodation_in(course_id=assignment.course_id))
        .select_related("own_course_accommodation")
    )
    course_wide = {student.pk: vars(student).get("own_course_accommodation") for student in students}
    student_ids = list(course_wide)
    attempts = {a.student_id: a for a in AssignmentAttempt.objects.filter(assignment=assignment, student__in=student_ids)}
    accommodations = {
        a.student_id: a for a in Accommodation.objects.filter(assignment=assignment, student__in=student_ids)
    }
    counts = {"not_started": 0, "working": 0, "ended": 0}
    is_open, later_closes = False, 0
    for student_id in student_ids:
        window = window_compute(
            assignment=assignment, accommodation=accommodations.get(student_id), attempt=attempts.get(student_id),
            course_accommodation=course_wide[student_id], clock_started_at=None, archived=False, now=now,
        )
        if window.ended or (window.state == AttemptState.NOT_STARTED and window.limits.is_closed(now)):
            counts["ended"] += 1
        elif window.state in (AttemptState.RUNNING, AttemptState.NONE) and student_id in attempts:
            counts["working"] += 1
        else:
            counts["not_started"] += 1
        closes = window.limits.closes_at
        is_open = is_open or closes is None or now < closes
        if closes is not None and assignment.closes_at is not None and closes > assignment.closes_at:
            later_closes += 1
    return ReleasePreview(
        is_exam=is_exam(assignment),
        students=len(student_ids),
        closes_at=assignment.closes_at,
        is_open=is_open or not student_ids and (assignment.closes_at is None or now < assignment.closes_at),
        later_closes=later_closes,
        shows=[
            POLICY_LABELS[kind] for kind, name in POLICY_FIELDS if getattr(assignment, name) == ReleaseMoment.ON_RELEASE
        ],
        **counts,
    )
