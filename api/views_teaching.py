"""Teaching-staff endpoints of /api/v1/: gradebook (JSON, CSV), submissions export,
analytics per part, regrades (a dry run first, then apply) and the roster."""

from __future__ import annotations

from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from courses import selectors as course_selectors
from courses import services as course_services
from exams import services as exam_services
from instructor import selectors as teaching
from instructor import services as teaching_services
from instructor import selectors_gradebook
from instructor.csv_response import csv_streaming_response, wants_excel_bom

from . import serializers
from .problems import Problem
from .schema import ProblemSerializer

PROBLEM_409 = OpenApiResponse(ProblemSerializer, description="Refused by the regrade rules.")


@extend_schema(tags=["teaching"], responses=serializers.GradebookSerializer)
class Gradebook(APIView):
    """Students × exercises: points per exercise, total and percent (TAs and instructors)."""

    def get(self, request, course_slug: str, assignment_slug: str):
        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        return Response(serializers.GradebookSerializer(teaching.gradebook(assignment=assignment)).data)


@extend_schema(
    tags=["teaching"],
    responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The gradebook as CSV.")},
)
class GradebookCsv(APIView):
    """The gradebook as the CSV the gradebook page exports."""

    def get(self, request, course_slug: str, assignment_slug: str):
        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        return csv_streaming_response(
            teaching.gradebook_csv_rows(assignment=assignment),
            f"{assignment.course.slug}-{assignment.slug}-scores.csv",
        )


class SubmissionCursor(CursorPagination):
    ordering = "id"  # ids only grow, so a saved cursor resumes exactly where a pull stopped
    page_size = 500
    page_size_query_param = "page_size"
    max_page_size = 2000


@extend_schema(tags=["teaching"], parameters=[serializers.SinceSerializer],
               responses=serializers.SubmissionExportSerializer(many=True))
class SubmissionExport(APIView):
    """Every submission of the assignment (every attempt), oldest first, one cursor page at
    a time; ``since`` limits it to those created or graded since then (incremental pulls)."""

    pagination_class = SubmissionCursor

    def get(self, request, course_slug: str, assignment_slug: str):
        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        query = serializers.SinceSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        submissions = teaching.assignment_submissions(assignment=assignment).select_related(
            "student", "variant__exercise_version__exercise"
        )
        since = query.validated_data.get("since")
        if since is not None:
            submissions = submissions.filter(Q(created_at__gte=since) | Q(graded_at__gte=since))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(submissions, request, view=self)
        return paginator.get_paginated_response(serializers.SubmissionExportSerializer(page, many=True).data)


@extend_schema(tags=["teaching"], responses=serializers.AnalyticsSerializer)
class Analytics(APIView):
    """Per exercise and part: attempts, mean score, facility, discrimination, common wrong
    answers, misconceptions and the hardest variants."""

    def get(self, request, course_slug: str, assignment_slug: str):
        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
        )
        return Response(serializers.AnalyticsSerializer(teaching.assignment_analytics(assignment=assignment)).data)


def _job_response(job, *, code: int = status.HTTP_200_OK) -> Response:
    data = serializers.RegradeJobSerializer(job).data
    headers = {"Location": data["url"]} if code == status.HTTP_202_ACCEPTED else None
    return Response(data, status=code, headers=headers)


@extend_schema(
    tags=["teaching"],
    request=serializers.RegradeCreateSerializer,
    responses={202: serializers.RegradeJobSerializer, 409: PROBLEM_409},
)
class RegradeStart(APIView):
    """Start a dry run of a regrade (instructors): it records what would change and
    changes nothing. Apply the finished dry run to change scores."""

    def post(self, request, course_slug: str, assignment_slug: str):
        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug,
            instructor_only=True,
        )
        payload = serializers.RegradeCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            job = teaching_services.regrade_job_create(
                assignment=assignment, actor=request.user, dry_run=True,
                allow_lower=payload.validated_data["allow_lower"],
                item_ids=payload.validated_data["exercises"], parts=payload.validated_data["parts"],
            )
        except teaching_services.InstructorRefused as refused:
            raise Problem(refused.message, status_code=status.HTTP_409_CONFLICT, code="refused")
        return _job_response(job, code=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["teaching"], responses=serializers.RegradeJobSerializer)
class RegradeDetail(APIView):
    """A regrade's progress and, once finished, its changes (the first 500)."""

    def get(self, request, course_slug: str, job_id: int):
        job, _ = teaching.access_regrade_job(user=request.user, course_slug=course_slug, job_id=job_id)
        return _job_response(job)


@extend_schema(
    tags=["teaching"], request=None,
    responses={202: serializers.RegradeJobSerializer, 409: PROBLEM_409},
)
class RegradeApply(APIView):
    """Apply a finished dry run: a new job with the same scope changes the scores."""

    def post(self, request, course_slug: str, job_id: int):
        job, _ = teaching.access_regrade_job(user=request.user, course_slug=course_slug, job_id=job_id)
        try:
            applied = teaching_services.regrade_job_apply(dry_run=job, actor=request.user)
        except teaching_services.InstructorRefused as refused:
            raise Problem(refused.message, status_code=status.HTTP_409_CONFLICT, code="refused")
        return _job_response(applied, code=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["teaching"])
class Roster(APIView):
    @extend_schema(responses=serializers.RosterEntrySerializer(many=True))
    def get(self, request, course_slug: str):
        """Everyone enrolled in the course (dropped students too), with role and status
        (TAs and instructors)."""
        course, _ = teaching.access_teaching(user=request.user, course_slug=course_slug)
        return Response(serializers.RosterEntrySerializer(course_selectors.course_people(course=course), many=True).data)

    @extend_schema(
        request=serializers.RosterImportSerializer,
        responses={200: serializers.RosterReportSerializer,
                   422: OpenApiResponse(ProblemSerializer, description="Not a roster, or the course is archived.")},
    )
    def post(self, request, course_slug: str):
        """Import a roster (instructors), as the roster page does: a dry run by default,
        reporting per line what would happen; ``dry_run: false`` applies the good lines."""
        course, _ = course_selectors.access_course_staff(user=request.user, slug=course_slug, instructor_only=True)
        payload = serializers.RosterImportSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        try:
            rows = course_services.roster_rows_from_csv(data["csv"]) if "csv" in data else data["rows"]
            report = course_services.roster_import(
                course=course, rows=rows, dry_run=data["dry_run"], actor=request.user
            )
        except course_services.CourseRefused as refused:
            raise Problem(refused.message, status_code=status.HTTP_422_UNPROCESSABLE_ENTITY, code="roster_refused")
        return Response(serializers.RosterReportSerializer(report).data)




@extend_schema(
    tags=["teaching"],
    request=serializers.GradeReleaseCreateSerializer,
    responses={200: serializers.GradeReleaseSerializer, 400: OpenApiResponse(
        ProblemSerializer, description="No or an unknown action; schedule without a time, or with a past one."
    ), 409: OpenApiResponse(
        ProblemSerializer, description="Already released (or, to withdraw, not released; to unschedule, none scheduled)."
    )},
)
class GradesRelease(APIView):
    """Release the assignment's grades (instructors), as the assignment page's button does:
    logged, the review policy's on-release feedback shows to each student whose attempt
    has ended (to the others once theirs ends), and every student's score goes to the LMS.
    ``action`` is required: ``release``, ``withdraw``, ``schedule`` (with ``at``: the
    periodic task releases then, as here) or ``unschedule``. GET: what a release would do now."""

    @extend_schema(tags=["teaching"], request=None, responses={200: serializers.ReleasePreviewSerializer})
    def get(self, request, course_slug: str, assignment_slug: str):
        from exams.selectors import release_preview

        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug,
            instructor_only=True,
        )
        return Response(serializers.ReleasePreviewSerializer(release_preview(assignment=assignment)).data)

    def post(self, request, course_slug: str, assignment_slug: str):
        assignment, _ = teaching.access_staff_assignment(
            user=request.user, course_slug=course_slug, assignment_slug=assignment_slug,
            instructor_only=True,
        )
        payload = serializers.GradeReleaseCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        action, at = payload.validated_data["action"], payload.validated_data.get("at")
        try:
            if action == "schedule":
                assignment = exam_services.grades_release_schedule(assignment=assignment, at=at, by=request.user)
            elif action == "unschedule":
                assignment = exam_services.grades_release_unschedule(assignment=assignment)
            elif action == "withdraw":
                assignment = exam_services.grades_withdraw(assignment=assignment, by=request.user, via="api")
            else:
                assignment = exam_services.grades_release(assignment=assignment, by=request.user, via="api")
        except exam_services.ExamRefused as refused:
            bad_time = refused.code in RELEASE_BAD_TIME
            raise Problem(
                refused.message, code=refused.code,
                status_code=status.HTTP_400_BAD_REQUEST if bad_time else status.HTTP_409_CONFLICT,
            )
        return Response(serializers.GradeReleaseSerializer(assignment).data)


# The refusals that are bad input (400); the others are the assignment's state (409).
RELEASE_BAD_TIME = ("past_time", "naive_time")


@extend_schema(tags=["teaching"], responses=serializers.CourseGradebookSerializer)
class CourseGradebook(APIView):
    """Students × assignments of the course with weighted category percents and the total
    (TAs and instructors); a not-attempted assignment has ``earned`` null, not 0."""

    def get(self, request, course_slug: str):
        course, _ = teaching.access_teaching(user=request.user, course_slug=course_slug)
        book = selectors_gradebook.course_gradebook(course=course)
        return Response(serializers.CourseGradebookSerializer(book).data)


@extend_schema(
    tags=["teaching"],
    parameters=[OpenApiParameter("excel", bool, description="Start with the UTF-8 byte-order mark Excel needs.")],
    responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The course gradebook as CSV.")},
)
class CourseGradebookCsv(APIView):
    """The course gradebook as the CSV its page exports."""

    def get(self, request, course_slug: str):
        course, _ = teaching.access_teaching(user=request.user, course_slug=course_slug)
        book = selectors_gradebook.course_gradebook(course=course)
        return csv_streaming_response(
            iter(selectors_gradebook.course_gradebook_table(book=book)),
            f"{course.slug}-gradebook.csv", bom=wants_excel_bom(request),
        )
