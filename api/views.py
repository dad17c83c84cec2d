"""Student endpoints of /api/v1/: my courses, assignments, an exercise's variant, submitting
an answer and reading its result. Thin: access_* selectors, then services."""

from __future__ import annotations

import math

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from courses import selectors as course_selectors
from courses.services import require_course_writable
from exams.access import access_exam_gate, start_session_key, start_session_remember
from exams import selectors as exam_selectors
from exams import services as exam_services
from exams.window import AttemptState
from exercises import selectors as exercise_selectors
from exercises.services import variant_get_or_create_for_item
from grading import selectors as grading_selectors
from grading import services as grading_services
from grading.answer_input import CLIENT_KEY_HEADER, client_key_checked
from grading.results import submission_visibility

from . import selectors, serializers
from .problems import Problem, problem_body, problem_response
from .schema import ProblemSerializer

# Why an answer was refused -> the HTTP status that says so.
REFUSAL_STATUS = {
    "invalid": status.HTTP_422_UNPROCESSABLE_ENTITY,  # a format error: no attempt used
    "unknown_part": status.HTTP_404_NOT_FOUND,
    "solved": status.HTTP_409_CONFLICT,
    "no_attempts": status.HTTP_409_CONFLICT,
    "closed": status.HTTP_409_CONFLICT,
    "not_open": status.HTTP_409_CONFLICT,
    "time_up": status.HTTP_409_CONFLICT,
    "not_started": status.HTTP_409_CONFLICT,  # an exam answered before its Start
    "key_reused": status.HTTP_409_CONFLICT,  # an Idempotency-Key already names another answer
    "unchanged": status.HTTP_409_CONFLICT,  # the same answer as the part's latest one that counts
    "attempt_finished": status.HTTP_409_CONFLICT,  # an exam answered after its attempt ended
    "rate_limited": status.HTTP_429_TOO_MANY_REQUESTS,  # the per-student answer rate limit
    "variant_ungradable": status.HTTP_409_CONFLICT,  # a stored variant whose options do not fill in
}

PROBLEM_422 = OpenApiResponse(ProblemSerializer, description="The answer cannot be read (no attempt used).")
PROBLEM_409 = OpenApiResponse(
    ProblemSerializer,
    description="Not accepted now: solved, no attempts left, closed, not open yet, time up, "
    "(an exam) not started or already finished, or a variant that cannot be graded.",
)
NUMBER_ANSWER = (
    'Send the answer as text: "0.5", not 0.5 (a list of strings for choices, a list of rows of '
    "strings for a grid). A JSON number loses how it was written (1.50 arrives as 1.5), and "
    "answers are read and compared as typed."
)


def require_readable_body(request) -> None:
    """415 for a body whose media type no parser of this view reads. DRF finds that itself,
    except for multipart/form-data: a middleware parsed the form already (its size check), and
    DRF then hands the view empty data, which read as a missing field (400) instead."""
    if request.content_type and request.negotiator.select_parser(request, request.parsers) is None:
        raise exceptions.UnsupportedMediaType(request.content_type.split(";")[0].strip())


def refuse_number_answers(data) -> None:
    """An answer is a string, a list of strings or a list of rows of strings (the schema's
    oneOf): a JSON number anywhere in it is a 400, before anything is stored or counted."""
    answer = data.get("answer") if hasattr(data, "get") else None
    leaves = [answer]
    if isinstance(answer, list):
        leaves = [cell for item in answer for cell in (item if isinstance(item, list) else [item])]
    if any(isinstance(leaf, (int, float)) and not isinstance(leaf, bool) for leaf in leaves):
        raise exceptions.ValidationError({"answer": [NUMBER_ANSWER]})


def retry_after_seconds(seconds) -> str:
    """Retry-After in whole seconds, at least 1 (RFC 9110: a non-negative integer; 0 would
    invite an immediate retry that is refused again)."""
    return str(max(1, math.ceil(seconds or 0)))


SUBMIT_PROBLEM_409 = OpenApiResponse(
    ProblemSerializer,
    description="Not accepted, nothing stored and no attempt used: solved, no attempts left, closed, "
    "not open yet, time up, (an exam) not started or already finished, an Idempotency-Key that names "
    "another answer (key_reused), or the same answer as the part's latest one that counts (unchanged: "
    "an answer that could not be graded may be sent again).",
)


@extend_schema(tags=["student"], responses=serializers.CourseSerializer(many=True))
class CourseList(APIView):
    """The courses you are enrolled in, with your role in each."""

    def get(self, request):
        enrolments = course_selectors.enrolments_for_user(user=request.user)
        rows = [{"course": e.course, "role": e.role} for e in enrolments]
        return Response(serializers.CourseSerializer(rows, many=True).data)


@extend_schema(tags=["student"], responses=serializers.AssignmentSummarySerializer(many=True))
class AssignmentList(APIView):
    """A course's assignments with due dates, attempts per part and your score so far."""

    def get(self, request, course_slug: str):
        course, role = course_selectors.access_course(user=request.user, slug=course_slug)
        summaries = exercise_selectors.assignment_summaries(course=course, role=role, student=request.user)
        return Response(serializers.AssignmentSummarySerializer(summaries, many=True).data)


@extend_schema(tags=["student"], responses=serializers.AssignmentDetailSerializer)
class AssignmentDetail(APIView):
    """One assignment and, per exercise, your state, score and attempts left."""

    def get(self, request, course_slug: str, assignment_slug: str):
        assignment, role = course_selectors.access_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        access_exam_gate(request=request, assignment=assignment, role=role)
        summary = next(
            s
            for s in exercise_selectors.assignment_summaries(
                course=assignment.course, role=role, student=request.user
            )
            if s["assignment"].pk == assignment.pk
        )
        # As the page reads them: the student's own attempts, and none left once it is over.
        summary["items"] = exercise_selectors.assignment_statuses_in_window(
            assignment=assignment, student=request.user,
            window=exam_selectors.student_window(assignment=assignment, student=request.user),
        )
        return Response(serializers.AssignmentDetailSerializer(summary).data)


@extend_schema(tags=["student"], responses=serializers.ExerciseSerializer)
class ExerciseDetail(APIView):
    """Your variant of an exercise: the rendered prompt (sanitised HTML, LaTeX for KaTeX),
    your own matrices as JSON, and per part your attempts, hints and (when released) the
    solution. Opening it starts your variant, and any time limit, as the page does."""

    def get(self, request, item_id: int):
        item, role = course_selectors.access_assignment_item(user=request.user, item_id=item_id)
        access_exam_gate(request=request, assignment=item.assignment, role=role)
        window = exam_selectors.student_window(assignment=item.assignment, student=request.user)
        if exam_selectors.is_exam(item.assignment):
            if window.state == AttemptState.NOT_STARTED:
                raise Problem(
                    "Start the exam first (on its assignment page, or POST its attempt/ with action start).",
                    status_code=status.HTTP_409_CONFLICT, code="not_started",
                )
        not_open = exercise_selectors.not_open_yet_message(window=window, role=role, course=item.assignment.course)
        if not_open:
            raise Problem(not_open, status_code=status.HTTP_409_CONFLICT, code="not_open")
        variant = variant_get_or_create_for_item(item=item, student=request.user)
        visibility = exam_selectors.feedback_visibility_for(
            assignment=item.assignment, student=request.user, window=window
        )
        data = selectors.exercise_for_student(item=item, variant=variant, visibility=visibility, window=window)
        return Response(serializers.ExerciseSerializer(data, context={"item": item}).data)


@extend_schema(
    tags=["student"],
    request=serializers.SubmitSerializer,
    parameters=[OpenApiParameter(
        CLIENT_KEY_HEADER, str, OpenApiParameter.HEADER, required=False, pattern=r"^[A-Za-z0-9_-]{8,64}$",
        description="Your name for this answer, new for each answer and the same when you resend it "
        "(its response lost): an answer already stored under it is answered again, not stored twice.",
    ), OpenApiParameter(
        "Retry-After", int, OpenApiParameter.HEADER, response=[429],
        description="Whole seconds (at least 1) to wait before sending again.",
    )],
    responses={
        202: serializers.SubmitAcceptedSerializer, 409: SUBMIT_PROBLEM_409, 422: PROBLEM_422,
        415: OpenApiResponse(ProblemSerializer, description="The body is not JSON (a form, multipart, text)."),
        429: OpenApiResponse(
            ProblemSerializer,
            description="Too many requests for your token, or answers sent faster than the per-student "
            "answer limit (`rate-limited`): nothing stored, no attempt used; retry after `Retry-After` seconds.",
        ),
    },
)
class SubmitAnswer(APIView):
    """Submit an answer to one part. The format is checked at once (a format error, 422,
    uses no attempt); then it is queued for grading: 202 with the submission's URL."""

    course_checked_in_view = True  # the archived guard, on the course loaded here anyway

    def post(self, request, item_id: int, part: str):
        item, role = course_selectors.access_assignment_item(user=request.user, item_id=item_id)
        require_course_writable(course=item.assignment.course)
        access_exam_gate(request=request, assignment=item.assignment, role=role)
        require_readable_body(request)
        refuse_number_answers(request.data)
        payload = serializers.SubmitSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        client_key, key_error = client_key_checked(request.headers.get(CLIENT_KEY_HEADER))
        if key_error is not None:
            raise Problem(key_error, status_code=status.HTTP_400_BAD_REQUEST, code="invalid_key")
        variant = variant_get_or_create_for_item(item=item, student=request.user)
        try:
            submission = grading_services.submission_create(
                variant=variant, student=request.user, part=part,
                raw_answer=payload.validated_data["answer"], client_key=client_key,
            )
        except grading_services.SubmissionRefused as refused:
            if refused.retry_after is not None:  # too fast: wait that long and send it again
                return problem_response(
                    problem_body(status_code=status.HTTP_429_TOO_MANY_REQUESTS, code=refused.code,
                                 detail=refused.message),
                    headers={"Retry-After": retry_after_seconds(refused.retry_after)},
                )
            raise Problem(refused.message, status_code=REFUSAL_STATUS.get(refused.code, 409), code=refused.code)
        url = reverse("api:submission", args=[submission.pk])
        return Response(
            {"id": submission.pk, "status": submission.status, "url": url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )


@extend_schema(
    tags=["student"],
    parameters=[serializers.WaitSerializer],
    responses=serializers.SubmissionSerializer,
)
class SubmissionDetail(APIView):
    """A submission's status and, once graded, score and feedback. With ``wait`` the
    request waits (at most that many seconds, within the server's bound) for the grade."""

    def get(self, request, submission_id: int):
        query = serializers.WaitSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        submission = grading_selectors.access_submission(user=request.user, submission_id=submission_id)
        item = submission.variant.assignment_item
        if item is not None and submission.student_id == request.user.pk:
            access_exam_gate(request=request, assignment=item.assignment)
        wait = query.validated_data["wait"]
        if wait and not submission.is_finished:
            submission = grading_selectors.submission_wait_finished(submission=submission, timeout=wait)
        visibility = submission_visibility(submission, viewer=request.user)
        return Response(serializers.SubmissionSerializer(submission, context={"visibility": visibility}).data)




@extend_schema(
    tags=["student"],
    request=serializers.AttemptActionSerializer,
    responses={200: serializers.AttemptSerializer, 403: PROBLEM_409, 409: PROBLEM_409},
)
class ExamAttempt(APIView):
    """Start or finish your attempt at an exam, as its page's buttons do, behind the same
    gates: its networks, and no API token at all for an exam with an access code or one
    browser session (403 ``browser_only``). GET: your attempt's state and clock."""

    def _exam(self, request, course_slug: str, assignment_slug: str):
        assignment, role = course_selectors.access_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        if not exam_selectors.is_exam(assignment):
            raise Problem("This assignment is not an exam.", status_code=status.HTTP_404_NOT_FOUND, code="not_exam")
        access_exam_gate(request=request, assignment=assignment, role=role)
        return assignment

    def _state(self, assignment, user) -> Response:
        window = exam_selectors.student_window(assignment=assignment, student=user)
        return Response(serializers.AttemptSerializer(window).data)

    def get(self, request, course_slug: str, assignment_slug: str):
        return self._state(self._exam(request, course_slug, assignment_slug), request.user)

    def post(self, request, course_slug: str, assignment_slug: str):
        assignment = self._exam(request, course_slug, assignment_slug)
        require_readable_body(request)
        payload = serializers.AttemptActionSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            if payload.validated_data["action"] == "start":
                attempt = exam_services.attempt_start(
                    assignment=assignment, student=request.user,
                    session_key=start_session_key(request=request, assignment=assignment),
                )
                start_session_remember(request=request, assignment=assignment, attempt=attempt)
            else:
                exam_services.attempt_finish(assignment=assignment, student=request.user)
        except exam_services.ExamRefused as refused:
            raise Problem(refused.message, status_code=status.HTTP_409_CONFLICT, code=refused.code)
        return self._state(assignment, request.user)
