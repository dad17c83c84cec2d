"""Rubric grading and regrade requests in /api/v1/, as the grading pages do them: a hand-graded
part's rubric and its criteria, the students' newest answers to it, rubric items applied to
one or many answers (the page's service, under its locks), the regrade requests of an
assignment with the staff's reply, and a student's request about their own graded answer.

Course staff (TAs and instructors) for all but the last; a student gets 403, another
course 404. A body that is not valid is a 400 naming the field; a request refused by the
state of things (a rubric that exists, a request already answered) is a 409. A change of a
rubric's criteria that changes the scores of answers graded with it is asked first, as on
the grading page: 409 ``confirmation_needed`` with the question and a ``confirmation``,
then the same request with ``confirmed`` makes it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from courses.services import require_course_writable
from exams.access import access_exam_gate
from instructor import selectors as teaching
from instructor import selectors_rubrics, services_rubrics
from instructor.services import ConfirmationNeeded, InstructorRefused

from . import serializers
from .problems import Problem
from .schema import ProblemSerializer

PROBLEM_409 = OpenApiResponse(ProblemSerializer, description="Refused by the state of things (see detail).")
PROBLEM_403 = OpenApiResponse(ProblemSerializer, description="The review policy does not show this grade yet.")
CONFIRM_409 = OpenApiResponse(
    ProblemSerializer,
    description="Refused by the state of things; or ``confirmation_needed``: the change scores answers graded with "
    "the rubric again, nothing changed, ``detail`` says how in numbers, and the same request with "
    "``confirmed`` set to the body's ``confirmation`` makes it (``stale``: the numbers moved since that "
    "confirmation was made; ``expired``: it is too old).",
)


def _confirmed(value) -> str | bool:
    """The confirmation a client sends back (checked by the service, never trusted here);
    False when none. Never True: through the API a change that changes scores is asked."""
    return str(value or "").strip()[:200] or False


def _refusal(refused: InstructorRefused) -> Problem:
    if isinstance(refused, ConfirmationNeeded):
        # Nothing changed: the detail is the question, in numbers; the same request again
        # with ``"confirmed": <confirmation>`` makes the change while the numbers hold.
        return Problem(
            refused.message, status_code=status.HTTP_409_CONFLICT, code="confirmation_needed",
            confirmation=refused.token, stale=refused.stale, expired=refused.expired,
        )
    if isinstance(refused, services_rubrics.RegradeHidden):
        return Problem(refused.message, status_code=status.HTTP_403_FORBIDDEN, code="grade_withheld")
    if isinstance(refused, services_rubrics.RubricConflict):
        return Problem(refused.message, status_code=status.HTTP_409_CONFLICT, code="conflict")
    return Problem(refused.message, status_code=status.HTTP_400_BAD_REQUEST, code="refused")


def _valid(serializer_class, data) -> dict:
    payload = serializer_class(data=data)
    payload.is_valid(raise_exception=True)
    return payload.validated_data


def _question(request, course_slug: str, exercise_id: int, part_key: str):
    return selectors_rubrics.access_question(
        user=request.user, course_slug=course_slug, item_id=exercise_id, part=part_key
    )


def _rubric_or_404(course, item, part: str):
    rubric = selectors_rubrics.question_rubric(course=course, item=item, part=part)
    if rubric is None:
        raise Problem("This part has no rubric yet; POST to rubric/ makes one.", status_code=404, code="not_found")
    return rubric


@extend_schema(tags=["grading"])
class QuestionRubric(APIView):
    """The course's rubric of one hand-graded part (``exercise_id``: the exercise's id in
    its assignment), reused by every assignment of the course that asks that part."""

    @extend_schema(responses=serializers.RubricSerializer)
    def get(self, request, course_slug: str, exercise_id: int, part_key: str):
        """The rubric and its criteria; 404 while the part has none."""
        course, item, _part, _role = _question(request, course_slug, exercise_id, part_key)
        return Response(serializers.RubricSerializer(_rubric_or_404(course, item, part_key)).data)

    @extend_schema(
        request=serializers.RubricCreateSerializer,
        responses={201: serializers.RubricSerializer, 409: PROBLEM_409},
    )
    def post(self, request, course_slug: str, exercise_id: int, part_key: str):
        """Make the part's rubric: from ``criteria``, or, left out, from the criteria the
        exercise's author wrote. 409 when it has one already."""
        course, item, _part, _role = _question(request, course_slug, exercise_id, part_key)
        data = _valid(serializers.RubricCreateSerializer, request.data)
        criteria = [(c["text"], c["points"]) for c in data["criteria"]] if "criteria" in data else None
        try:
            rubric = services_rubrics.rubric_create(
                course=course, item=item, part=part_key, criteria=criteria,
                seed_criteria=selectors_rubrics.author_criteria(item=item, part=part_key) if criteria is None else (),
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        rubric = selectors_rubrics.question_rubric(course=course, item=item, part=part_key)
        return Response(serializers.RubricSerializer(rubric).data, status=status.HTTP_201_CREATED)


@extend_schema(
    tags=["grading"], request=serializers.RubricItemAddSerializer,
    responses={201: serializers.RubricItemSerializer, 409: CONFIRM_409},
)
class RubricCriteria(APIView):
    """Add a criterion to the part's rubric (made from the author's criteria first if it
    has none yet). One worth points changes what the answers graded with the rubric are
    scored out of: 409 ``confirmation_needed`` with the numbers, then the same body with
    ``confirmed`` scores them all again with it."""

    def post(self, request, course_slug: str, exercise_id: int, part_key: str):
        course, item, _part, _role = _question(request, course_slug, exercise_id, part_key)
        data = _valid(serializers.RubricItemAddSerializer, request.data)
        rubric = selectors_rubrics.question_rubric(course=course, item=item, part=part_key)
        try:
            rubric = rubric or services_rubrics.rubric_for_part(
                course=course, item=item, part=part_key,
                seed_criteria=selectors_rubrics.author_criteria(item=item, part=part_key),
            )
            added = services_rubrics.rubric_item_add(
                rubric=rubric, text=data["text"], points=data["points"], actor=request.user,
                confirmed=_confirmed(data.get("confirmed")),
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        return Response(serializers.RubricItemSerializer(added).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["grading"])
class RubricCriterion(APIView):
    """One criterion of one of the course's rubrics."""

    @extend_schema(
        request=serializers.RubricItemUpdateSerializer,
        responses={200: serializers.RubricItemSerializer, 409: CONFIRM_409},
    )
    def patch(self, request, course_slug: str, criterion_id: int):
        """Reword it, or give it other points: when that changes the scores of answers graded
        with the rubric, 409 ``confirmation_needed`` first, then with ``confirmed`` they are
        all scored again."""
        item, _role = selectors_rubrics.access_rubric_item(user=request.user, course_slug=course_slug, item_id=criterion_id)
        data = _valid(serializers.RubricItemUpdateSerializer, request.data)
        try:
            services_rubrics.rubric_item_update(
                item=item, text=data.get("text"), points=data.get("points"), actor=request.user,
                confirmed=_confirmed(data.get("confirmed")),
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        return Response(serializers.RubricItemSerializer(item).data)

    @extend_schema(
        request=None, responses={204: None, 409: CONFIRM_409},
        parameters=[serializers.RubricChangeConfirmQuerySerializer],
    )
    def delete(self, request, course_slug: str, criterion_id: int):
        """Remove it: when that changes the scores of answers graded with the rubric, 409
        ``confirmation_needed`` first, then with ``?confirmed=`` they are all scored again
        without it. 409 ``conflict`` when it is the last item worth points of a rubric that
        graded answers."""
        item, _role = selectors_rubrics.access_rubric_item(user=request.user, course_slug=course_slug, item_id=criterion_id)
        query = _valid(serializers.RubricChangeConfirmQuerySerializer, request.query_params)
        try:
            services_rubrics.rubric_item_remove(
                item=item, actor=request.user, confirmed=_confirmed(query.get("confirmed")),
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["grading"], responses=serializers.QuestionAnswerSerializer(many=True))
class QuestionAnswers(APIView):
    """Each student's newest answer to the part, in the order they came in, with the rubric
    items its newest grade ticked."""

    def get(self, request, course_slug: str, exercise_id: int, part_key: str):
        _course, item, _part, _role = _question(request, course_slug, exercise_id, part_key)
        answers = selectors_rubrics.question_answers(item=item, part=part_key)
        return Response(serializers.QuestionAnswerSerializer(answers, many=True).data)


@extend_schema(
    tags=["grading"], request=serializers.RubricApplySerializer,
    responses={200: serializers.QuestionAnswerSerializer(many=True)},
)
class RubricApply(APIView):
    """Grade answers with rubric items, as the grading page does: the ``criteria`` ticked on
    top of what each answer had (or, with ``replace``, as the only ones ticked), all in one
    transaction. Answers the part does not have, or items of another rubric, are a 400 and
    grade nothing. Returns the graded answers."""

    def post(self, request, course_slug: str, exercise_id: int, part_key: str):
        course, item, _part, _role = _question(request, course_slug, exercise_id, part_key)
        data = _valid(serializers.RubricApplySerializer, request.data)
        rubric = _rubric_or_404(course, item, part_key)
        by_id = {a.submission.pk: a for a in selectors_rubrics.question_answers(item=item, part=part_key)}
        unknown = [pk for pk in dict.fromkeys(data["submissions"]) if pk not in by_id]
        if unknown:
            raise Problem(
                "These are not students' newest answers to this part: " + ", ".join(map(str, unknown[:20])) + ".",
                status_code=400, code="invalid", errors={"submissions": [f"Unknown answer {pk}." for pk in unknown[:20]]},
            )
        criteria = {c.pk: c for c in rubric.items.all()}
        foreign = [pk for pk in dict.fromkeys(data["criteria"]) if pk not in criteria]
        if foreign:
            raise Problem(
                "Tick items of this part's rubric only: " + ", ".join(map(str, foreign)) + " are not.",
                status_code=400, code="invalid", errors={"criteria": [f"Not an item of this rubric: {pk}." for pk in foreign]},
            )
        chosen = list(dict.fromkeys(data["submissions"]))
        try:
            services_rubrics.rubric_items_apply(
                rubric=rubric, items=[criteria[pk] for pk in dict.fromkeys(data["criteria"])],
                submissions=[by_id[pk].submission for pk in chosen], grader=request.user,
                replace=data["replace"], comment=data.get("comment"),
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        graded = {a.submission.pk: a for a in selectors_rubrics.question_answers(item=item, part=part_key)}
        return Response(serializers.QuestionAnswerSerializer([graded[pk] for pk in chosen], many=True).data)


@extend_schema(
    tags=["grading"], parameters=[serializers.RegradeRequestQuerySerializer],
    responses=serializers.RegradeRequestSerializer(many=True),
)
class AssignmentRegradeRequests(APIView):
    """The students' regrade requests on the assignment's answers, newest first: ``status``
    open (the default), answered or all."""

    def get(self, request, course_slug: str, assignment_slug: str):
        assignment, _role = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        query = _valid(serializers.RegradeRequestQuerySerializer, request.query_params)
        requests = selectors_rubrics.assignment_regrade_requests(assignment=assignment, status=query["status"])
        return Response(serializers.RegradeRequestSerializer(requests[:1000], many=True).data)


@extend_schema(
    tags=["grading"], request=serializers.RegradeReplySerializer,
    responses={200: serializers.RegradeRequestSerializer, 409: PROBLEM_409},
)
class RegradeRequestReply(APIView):
    """Reply to a regrade request, which answers (resolves) it. ``score`` (a fraction in
    [0, 1]) sets a checked answer's score by hand with the reply, as the submission page's
    hand grade does; an answer graded with a rubric is graded again with it first (grades/).
    The request records the score awarded before and after. 409 when it was answered
    already."""

    def post(self, request, course_slug: str, request_id: int):
        regrade_request, _role = selectors_rubrics.access_regrade_request(
            user=request.user, course_slug=course_slug, request_id=request_id
        )
        data = _valid(serializers.RegradeReplySerializer, request.data)
        try:
            answered = services_rubrics.regrade_request_reply(
                request=regrade_request, replier=request.user, reply=data["reply"], score=data.get("score"),
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        return Response(serializers.RegradeRequestSerializer(answered).data)


def _own_submission(request, submission_id: int):
    """The caller's own answer and what the review policy shows them of it: anyone else's
    is a 404; one whose score and verdict are both withheld a 403 saying so."""
    submission, visibility = selectors_rubrics.access_own_answer(user=request.user, submission_id=submission_id)
    item = submission.variant.assignment_item
    if item is not None:  # an exam's networks and one-session binding guard its answers here too
        access_exam_gate(request=request, assignment=item.assignment)
    if visibility.grade_hidden:
        raise Problem(selectors_rubrics.REGRADE_HIDDEN, status_code=status.HTTP_403_FORBIDDEN, code="grade_withheld")
    return submission, visibility


def _student_requests(requests, visibility):
    return serializers.StudentRegradeRequestSerializer(
        requests, many=True, context={"visibility": visibility}
    ).data


@extend_schema(tags=["student"])
class SubmissionRegradeRequests(APIView):
    """Your regrade requests about one of your answers, and the staff's replies."""

    @extend_schema(responses={200: serializers.StudentRegradeRequestSerializer(many=True), 403: PROBLEM_403})
    def get(self, request, submission_id: int):
        submission, visibility = _own_submission(request, submission_id)
        requests = selectors_rubrics.submission_regrade_requests(submission=submission)
        return Response(_student_requests(requests, visibility))

    @extend_schema(
        request=serializers.RegradeRequestCreateSerializer,
        responses={201: serializers.StudentRegradeRequestSerializer, 403: PROBLEM_403, 409: PROBLEM_409},
    )
    def post(self, request, submission_id: int):
        """Ask for another look at your graded answer, checked or graded by a person (one
        open request at a time). 403 while the review policy shows neither its score nor
        its verdict; 409 while it has no grade, while your earlier request waits for its
        reply, or in an archived course; 400 for a practice answer."""
        submission, visibility = _own_submission(request, submission_id)
        item = submission.variant.assignment_item
        if item is not None:  # an archived course refuses before the body is read, as elsewhere
            require_course_writable(course=item.assignment.course)
        data = _valid(serializers.RegradeRequestCreateSerializer, request.data)
        try:
            created = services_rubrics.regrade_request_create(
                submission=submission, student=request.user, message=data["message"], visibility=visibility
            )
        except InstructorRefused as refused:
            raise _refusal(refused)
        created = selectors_rubrics.submission_regrade_requests(submission=submission).get(pk=created.pk)
        return Response(_student_requests([created], visibility)[0], status=status.HTTP_201_CREATED)
