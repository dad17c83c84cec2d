"""Exercise banks as code: validate an exercise file with the editor's line-precise
errors, push a file as a draft version, list versions, and move a version through review
under the web's rules (only instructors; nobody approves their own version)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from authoring import selectors as authoring
from authoring import services as authoring_services
from authoring.selectors import Action
from exercises import engine

from . import serializers, services
from .problems import Problem
from .schema import ProblemSerializer, SpecProblemSerializer

SPEC_422 = OpenApiResponse(SpecProblemSerializer, description="The file is invalid; `issues` say where.")
REFUSED_409 = OpenApiResponse(ProblemSerializer, description="Refused by the review workflow.")


def _issues(error: engine.SpecError) -> list[dict]:
    return [{"line": issue.line, "path": issue.path, "message": issue.message} for issue in error.errors]


def _spec_problem(error: engine.SpecError) -> Problem:
    return Problem(
        f"The exercise file has {len(error.errors)} problem(s): {error.errors[0]}" if error.errors else str(error),
        status_code=status.HTTP_422_UNPROCESSABLE_ENTITY, code="invalid_exercise", issues=_issues(error),
    )


def _busy(refused: authoring_services.AuthoringRefused) -> exceptions.Throttled:
    """Another run of the person's source in the sandbox is under way (the editor's one place
    per person): 429 with Retry-After, nothing run or stored."""
    return exceptions.Throttled(wait=authoring_services.SOURCE_CHECK_RETRY_SECONDS, detail=refused.message)


def _refused(refused: authoring_services.AuthoringRefused) -> Problem:
    if getattr(refused, "code", None) == "self_approval":
        return Problem(refused.message, status_code=status.HTTP_403_FORBIDDEN, code="self_approval")
    return Problem(refused.message, status_code=status.HTTP_409_CONFLICT, code="refused")


def _source_text(request) -> str:
    payload = serializers.SourceSerializer(data=request.data)
    payload.is_valid(raise_exception=True)
    try:
        return authoring_services.source_from_upload(payload.validated_data["source"].encode("utf-8"))
    except authoring_services.AuthoringRefused as refused:
        raise Problem(refused.message, status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, code="too_large")


@extend_schema(tags=["exercise bank"], request=serializers.SourceSerializer,
               responses=serializers.ValidationResultSerializer)
class ExerciseValidate(APIView):
    """Check an exercise file as the editor does (line-precise issues, then seeds 0-9 and
    every named variant drawn under time limits); nothing is stored. Course staff; a read
    token may validate."""

    read_only_action = True

    def post(self, request, course_slug: str):
        authoring.access_authoring(user=request.user, course_slug=course_slug)
        source = _source_text(request)
        # The editor's check: read the file, then draw seeds and named variants in the sandbox,
        # holding the person's one place for a check as the editor does.
        try:
            with authoring_services.source_check_place(user=request.user):
                checked = authoring.source_check(source=source)
        except authoring_services.AuthoringRefused as refused:
            raise _busy(refused) from None
        issues = _issues(engine.SpecError(checked["errors"])) if checked["errors"] else []
        if checked["failure"]:
            issues.append({"line": None, "path": "", "message": checked["failure"]})
            # Each cause of the failed draws once, with its line and field, as the editor lists them.
            for problem in checked.get("problems") or ():
                issue = problem.as_issue()
                issues.append({"line": issue.line, "path": issue.path, "message": issue.message})
        spec = engine.load_spec(source) if not issues else None
        result = {
            "valid": not issues, "slug": spec.slug if spec else None, "title": spec.title if spec else None,
            "issues": issues, "content_hash": authoring_services.source_hash(source),
        }
        return Response(serializers.ValidationResultSerializer(result).data)


@extend_schema(tags=["exercise bank"])
class ExerciseList(APIView):
    """The course's own exercises and the library's published ones, each with its latest
    version visible to the course (its content hash tells a sync what changed)."""

    @extend_schema(responses=serializers.ExerciseRowSerializer(many=True))
    def get(self, request, course_slug: str):
        course, _ = authoring.access_authoring(user=request.user, course_slug=course_slug)
        rows = authoring.exercises_for_course(course=course)
        return Response(serializers.ExerciseRowSerializer(rows, many=True).data)

    @extend_schema(
        request=serializers.SourceSerializer,
        responses={200: serializers.PushResultSerializer, 201: serializers.PushResultSerializer,
                   409: REFUSED_409, 413: ProblemSerializer, 422: SPEC_422},
    )
    def post(self, request, course_slug: str):
        """Push an exercise file as a draft: a new exercise (201), a new draft of one this
        course owns (201), or nothing when its latest version has this exact source (200).
        The file is drawn in the sandbox holding the person's one place for it, as the
        editor's Check and Save do: 429 with Retry-After while another run of theirs goes on."""
        course, _ = authoring.access_authoring(user=request.user, course_slug=course_slug, action=Action.EDIT)
        source = _source_text(request)
        try:
            version, changed = services.exercise_push(course=course, actor=request.user, source=source)
        except engine.SpecError as error:
            raise _spec_problem(error)
        except authoring_services.AuthoringRefused as refused:
            raise (_busy(refused) if refused.code == "busy" else _refused(refused)) from None
        data = {**serializers.VersionSerializer(version).data, "changed": changed}
        return Response(data, status=status.HTTP_201_CREATED if changed else status.HTTP_200_OK)


@extend_schema(tags=["exercise bank"], responses=serializers.VersionSerializer(many=True))
class VersionList(APIView):
    """An exercise's versions the course may see, newest first."""

    def get(self, request, course_slug: str, slug: str):
        course, _, exercise, _ = authoring.access_exercise(user=request.user, course_slug=course_slug, slug=slug)
        versions = authoring.versions_visible(exercise=exercise, course=course)
        return Response(serializers.VersionSerializer(versions, many=True).data)


@extend_schema(tags=["exercise bank"], responses=serializers.VersionDetailSerializer)
class VersionDetail(APIView):
    """One version with its source."""

    def get(self, request, course_slug: str, slug: str, number: int):
        access = authoring.access_version(user=request.user, course_slug=course_slug, slug=slug, number=number)
        return Response(serializers.VersionDetailSerializer(access.version).data)


@extend_schema(
    tags=["exercise bank"], request=serializers.TransitionSerializer,
    responses={200: serializers.VersionSerializer, 409: REFUSED_409, 422: SPEC_422},
)
class VersionTransition(APIView):
    """Move a version through review: draft → in_review (request review), in_review →
    draft (withdraw), in_review → published (approve: another instructor than its
    author), published → retired.

    Publishing shares the version with the staff of every course, and checks its stored
    file again, in the sandbox, with today's rules: 422 with the problems when it no longer
    passes (edit it, save it again, then publish); 429 with Retry-After while another run of
    the person's is under way."""

    def post(self, request, course_slug: str, slug: str, number: int):
        access = authoring.access_version(
            user=request.user, course_slug=course_slug, slug=slug, number=number, action=Action.EDIT
        )
        payload = serializers.TransitionSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            version = authoring_services.version_transition(
                version=access.version, actor=request.user,
                to_status=payload.validated_data["to_status"], message=payload.validated_data["message"],
            )
        except authoring_services.AuthoringRefused as refused:
            raise (_busy(refused) if refused.code == "busy" else _refused(refused)) from None
        except engine.SpecError as error:
            raise _spec_problem(error)
        return Response(serializers.VersionSerializer(version).data)
