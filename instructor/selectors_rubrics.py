"""Reads of rubric grading by question: the hand-graded parts of a course with how many
answers wait, every student's newest answer to one part, the next one waiting, and the
regrade requests. ``access_*`` fetch with the permission check (course staff only)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    BooleanField, Case, Count, Exists, ExpressionWrapper, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, When,
)
from django.http import Http404

from attnquiz.prepared_reads import PreparedRead
from courses.models import AssignmentItem, Course
from exams.selectors import FeedbackVisibility, feedback_for_student, feedback_visibility_for
from exercises import engine
from exercises.specs import part_label, version_spec
from grading.models import Submission, SubmissionStatus

from .models import (
    ManualGrade, ManualGradeKind, RegradeOutcome, RegradeRequest, RegradeRequestStatus, Rubric, RubricItem,
)
from .selectors import (
    MANUAL_ANSWER_TYPES, access_teaching, assignment_submissions, manual_queue, newest_hand_grade_kind, rubric_for,
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
    it and how many of their newest answers wait for a grade (two queries): the part's
    page grades each student's newest answer (``question_answers``), so a student whose
    earlier attempt waits but whose newest answer is graded waits for nothing there."""
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
            waiting=Count(
                "student", distinct=True,
                filter=Q(status=SubmissionStatus.MANUAL) & ~Exists(_newer_answer_to_same_part()),
            ),
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


def question_part_points(*, item: AssignmentItem, part: str) -> float:
    """What the part is worth in the assignment, as the gradebook counts it: the exercise's
    points split over its parts by their weights (``selectors.gradebook_part_points``)."""
    return float(engine.part_points(version_spec(item.exercise_version), item.points).get(part, 0.0))


def question_rubric(*, course: Course, item: AssignmentItem, part: str) -> Rubric | None:
    return (
        Rubric.objects.filter(course=course, exercise_id=item.exercise_version.exercise_id, part=part)
        .select_related("exercise")
        .prefetch_related("items")
        .first()
    )


def _same_part_of_same_student() -> QuerySet[Submission]:
    """The answers of the outer submission's student to its exercise (assignment item) and part."""
    return Submission.objects.filter(
        variant__assignment_item=OuterRef("variant__assignment_item"), part=OuterRef("part"),
        student=OuterRef("student"),
    )


def _newest_answer_to_same_part() -> Subquery:
    """The student's newest answer to the submission's exercise and part: the one answer of
    theirs the course rubric's pages grade (``question_answers``)."""
    return Subquery(_same_part_of_same_student().order_by("-attempt", "-id").values("pk")[:1])


def _newer_answer_to_same_part() -> Exists:
    """Whether the student answered the submission's exercise and part again since: an
    answer later in ``_newest_answer_to_same_part``'s order (attempt, then id)."""
    return Exists(_same_part_of_same_student().filter(
        Q(attempt__gt=OuterRef("attempt")) | Q(attempt=OuterRef("attempt"), pk__gt=OuterRef("pk"))
    ))


def _course_rubric_of_part() -> QuerySet[Rubric]:
    """The course's rubric of the submission's exercise part, when it has items to tick. A
    rubric without items (made by opening the question's page, for an exercise whose author
    wrote no criteria) has nothing to tick, so it does not count yet."""
    return Rubric.objects.filter(
        course=OuterRef("variant__assignment_item__assignment__course"),
        exercise=OuterRef("variant__exercise_version__exercise"),
        part=OuterRef("part"),
        items__isnull=False,
    )


def with_course_rubric_answer(submissions: QuerySet[Submission]) -> QuerySet[Submission]:
    """``submissions``, each with ``rubric_answer_id``: where the course has a rubric of its
    exercise part (``_course_rubric_of_part``), the answer to grade on the rubric's pages
    (``grading_answer``); None where it has none, and the author's criteria grade it on the
    manual-grade page. One rubric per question, so two graders of one question never grade
    by different ones."""
    return submissions.annotate(
        rubric_answer_id=Case(
            When(Exists(_course_rubric_of_part()), then=_newest_answer_to_same_part()),
            default=None, output_field=IntegerField(),
        )
    )


def course_rubric_answer_id(*, submission: Submission) -> int | None:
    """The answer to grade on the course rubric's pages for ``submission``
    (``with_course_rubric_answer``); None when its part has no course rubric."""
    return (
        with_course_rubric_answer(Submission.objects.filter(pk=submission.pk))
        .values_list("rubric_answer_id", flat=True)
        .first()
    )


def superseded_by_course_rubric() -> Q:
    """An answer waiting for a hand grade that no one can give it: its part is graded by the
    course's rubric, whose pages grade only each student's newest answer, and the student
    has answered again since. The newer answer takes its place (its grade is the one that
    counts; the older attempt keeps its status and is simply not waiting any more)."""
    return Q(status=SubmissionStatus.MANUAL) & Exists(_course_rubric_of_part()) & _newer_answer_to_same_part()


def manual_queue_rows(*, course: Course, include_graded: bool = False) -> QuerySet[Submission]:
    """The manual queue (``selectors.manual_queue``), each answer with where it is graded:
    ``rubric_answer_id`` set, on the course rubric's page of that answer. Only what a grader
    can act on: an earlier attempt superseded by a newer one under the course rubric
    (``superseded_by_course_rubric``) is left out; one already graded by hand stays in the
    list ``include_graded`` asks for."""
    queue = manual_queue(course=course, include_graded=include_graded).exclude(superseded_by_course_rubric())
    return with_course_rubric_answer(queue)


def manual_waiting_count(*, course: Course) -> int:
    """How many answers of the course wait for a grade by hand: the rows of the manual queue
    (``manual_queue_rows``), counted in one query."""
    return manual_queue(course=course).exclude(superseded_by_course_rubric()).count()


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


def course_regrade_requests_shown(*, course: Course, open_only: bool = True, limit: int = 500) -> list[RegradeRequest]:
    """The course's requests for its staff's page, newest first, each with ``checked``: a
    checker grades its part, so the reply may set the answer's score (an answer graded with
    a rubric is graded again with the rubric)."""
    shown = list(course_regrade_requests(course=course, open_only=open_only)[:limit])
    for request in shown:
        submission = request.submission
        spec = version_spec(submission.variant.exercise_version)
        part = next((p for p in spec.parts if p.key == submission.part), None)
        request.checked = part is not None and part.type not in MANUAL_ANSWER_TYPES
        request.part_label = part_label(spec, submission.part)
    return shown


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


# ---------------------------------------------------------------------------
# A student's own graded answers and their requests (/grades/, the exercise page)
# ---------------------------------------------------------------------------

REGRADE_HIDDEN = (
    "Your instructor's review policy does not show this answer's grade yet; "
    "you can ask about it once it does."
)
REGRADE_PRACTICE = "A practice answer never counts toward your grades, so there is no grade to look at again."
REGRADE_ARCHIVED = "This course is archived: its grades stay as they are."
REGRADE_UNGRADED = "This answer has no grade yet."
REGRADE_OPEN = "You already asked about this answer; wait for the reply."


class RegradeRefusalKind:
    HIDDEN = "hidden"  # the review policy shows neither the score nor the verdict
    PRACTICE = "practice"
    ARCHIVED = "archived"
    UNGRADED = "ungraded"
    OPEN = "open"  # an earlier request waits for its reply


@dataclass(frozen=True)
class RegradeRefusal:
    kind: str  # RegradeRefusalKind
    message: str


def regrade_ask_refusal(
    *, submission: Submission, visibility: FeedbackVisibility, has_open_request: bool
) -> RegradeRefusal | None:
    """Why the student may not ask for another look at their own answer now; None when they
    may. The one rule of the pages, the API and ``services_rubrics.regrade_request_create``:
    the review policy shows the answer's score or verdict; it answers an assignment (a
    practice answer never counts); the course is not archived; the answer is graded (by
    the checker or a person); no earlier request about it waits for its reply.

    Reads the rows ``submission`` carries (variant, item, assignment, course): no query."""
    if visibility.grade_hidden:
        return RegradeRefusal(RegradeRefusalKind.HIDDEN, REGRADE_HIDDEN)
    item = submission.variant.assignment_item
    if item is None:
        return RegradeRefusal(RegradeRefusalKind.PRACTICE, REGRADE_PRACTICE)
    if item.assignment.course.archived_at is not None:
        return RegradeRefusal(RegradeRefusalKind.ARCHIVED, REGRADE_ARCHIVED)
    if submission.status != SubmissionStatus.GRADED:
        return RegradeRefusal(RegradeRefusalKind.UNGRADED, REGRADE_UNGRADED)
    if has_open_request:
        return RegradeRefusal(RegradeRefusalKind.OPEN, REGRADE_OPEN)
    return None


@dataclass
class GradedAnswer:
    """One of the student's graded answers as they may see it, with their requests about it
    (oldest first) and why they may not ask again (None: they may)."""

    submission: Submission
    visibility: FeedbackVisibility
    feedback: dict
    requests: list[RegradeRequest]
    refusal: RegradeRefusal | None
    by_hand: bool = False
    part_label: str = ""
    typed: str = ""  # a refused request's text, put back in its box

    @property
    def may_ask(self) -> bool:
        return self.refusal is None

    @property
    def course(self) -> Course | None:
        item = self.submission.variant.assignment_item
        return item.assignment.course if item is not None else None


def regrade_outcome_for_student(*, request: RegradeRequest, visibility: FeedbackVisibility) -> tuple[str, str]:
    """(RegradeOutcome value, words) of a request as its student may read them. Whether the
    grade changed tells of the score: where the review policy hides the score, an answered
    request is "answered" ("Answered"), changed or not, and the reply says the rest."""
    outcome = request.outcome
    if visibility.score or outcome == RegradeOutcome.WAITING:
        return outcome, RegradeOutcome(outcome).label
    return RegradeOutcome.ANSWERED.value, RegradeRequestStatus.ANSWERED.label


def _graded_answer(*, submission, visibility, requests, by_hand=False, part_label="") -> GradedAnswer:
    requests = sorted(requests, key=lambda r: (r.created_at, r.pk))
    for request in requests:
        request.shown_outcome, request.shown_outcome_label = regrade_outcome_for_student(
            request=request, visibility=visibility
        )
    return GradedAnswer(
        submission=submission,
        visibility=visibility,
        feedback=feedback_for_student(submission.feedback, visibility),
        requests=requests,
        refusal=regrade_ask_refusal(
            submission=submission, visibility=visibility,
            has_open_request=any(r.status == RegradeRequestStatus.OPEN for r in requests),
        ),
        by_hand=by_hand,
        part_label=part_label,
    )


# The exercise page's read of the viewer's requests about its answers: compiled once.
_REQUESTS_OF_VARIANT = PreparedRead(
    lambda *, student_id, variant_id: RegradeRequest.objects.filter(
        student_id=student_id, submission__variant_id=variant_id
    ).select_related("replied_by").order_by("created_at", "id"),
    student_id=int,
    variant_id=int,
)


def answer_regrade_requests(*, submission: Submission, visibility: FeedbackVisibility, memo: dict) -> GradedAnswer | None:
    """What the exercise page shows under one of the viewer's own answers: their requests
    about it with the replies, and the form to ask (``GradedAnswer``); None where there is
    nothing to show or ask (a grade the policy hides, an answer not graded, practice).

    ``memo`` (one per page, e.g. on the request) keeps the requests of the answer's variant:
    every part and attempt of the page shares one query, and none is made for an answer
    without a grade to show."""
    if visibility.grade_hidden or submission.status != SubmissionStatus.GRADED:
        return None
    if submission.variant.assignment_item_id is None:
        return None
    by_submission = memo.get(submission.variant_id)
    if by_submission is None:
        by_submission = {}
        for request in _REQUESTS_OF_VARIANT.all(student_id=submission.student_id, variant_id=submission.variant_id):
            by_submission.setdefault(request.submission_id, []).append(request)
        memo[submission.variant_id] = by_submission
    requests = by_submission.get(submission.pk, [])
    if not requests and _full_marks(submission):
        return None  # nothing to ask about: no form under a fully right answer
    return _graded_answer(submission=submission, visibility=visibility, requests=requests)


def _full_marks(submission: Submission) -> bool:
    """Whether the answer earned everything: right, and no penalty took any of it away."""
    earned = submission.awarded if submission.awarded is not None else submission.score
    return bool(submission.correct) and earned is not None and earned >= 1


def student_graded_answers(*, student, limit: int = 200) -> list[GradedAnswer]:
    """The student's answers for /grades/, most recent activity first: those a person graded
    (an answer given back to the checker since is the checker's again) and those they asked
    about, each as the review policy lets them see it now. An answer whose score and verdict
    are both withheld is left out, its requests with it."""
    asked = RegradeRequest.objects.filter(student=student).values("submission_id")
    submissions = list(
        Submission.objects.filter(student=student)
        .alias(newest_hand_grade_kind=newest_hand_grade_kind())
        .filter(
            Q(status=SubmissionStatus.GRADED, newest_hand_grade_kind=ManualGradeKind.BY_HAND) | Q(pk__in=asked)
        )
        .annotate(hand_graded=ExpressionWrapper(
            Q(newest_hand_grade_kind=ManualGradeKind.BY_HAND), output_field=BooleanField()
        ))
        .select_related("variant__assignment_item__assignment__course", "variant__exercise_version__exercise")
        .prefetch_related(Prefetch("regrade_requests", queryset=RegradeRequest.objects.select_related("replied_by")))
        .order_by("-graded_at", "-id")[:limit]
    )
    visibilities: dict[int | None, FeedbackVisibility] = {}
    shown = []
    for submission in submissions:
        item = submission.variant.assignment_item
        assignment_id = item.assignment_id if item is not None else None
        if assignment_id not in visibilities:
            visibilities[assignment_id] = feedback_visibility_for(
                assignment=item.assignment if item is not None else None, student=submission.student_id
            )
        visibility = visibilities[assignment_id]
        if visibility.grade_hidden:
            continue
        shown.append(_graded_answer(
            submission=submission, visibility=visibility,
            requests=[r for r in submission.regrade_requests.all() if r.student_id == student.pk],
            by_hand=bool(submission.hand_graded),
            part_label=part_label(version_spec(submission.variant.exercise_version), submission.part),
        ))
    shown.sort(key=_last_activity, reverse=True)
    return shown


def _last_activity(answer: GradedAnswer):
    moments = [answer.submission.graded_at or answer.submission.created_at]
    for request in answer.requests:
        moments.append(request.replied_at or request.created_at)
    return max(moments)


def access_own_answer(*, user, submission_id: int) -> tuple[Submission, FeedbackVisibility]:
    """The user's own answer with what the review policy shows them of it now; 404 for
    anyone else's (staff included: they ask for nobody)."""
    submission = (
        Submission.objects.select_related("variant__assignment_item__assignment__course")
        .filter(pk=submission_id, student=user)
        .first()
    )
    if submission is None:
        raise Http404("No such answer.")
    item = submission.variant.assignment_item
    visibility = feedback_visibility_for(assignment=item.assignment if item is not None else None, student=user.pk)
    return submission, visibility
