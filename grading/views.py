"""Answer submission, result polling and the live parse preview. Thin over services."""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import RequestDataTooBig
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from attnquiz.input_limits import UnreadableJson, json_loads_bounded
from attnquiz.prepared_reads import PreparedRead

from courses import pools
from courses.middleware import course_checked_in_view
from courses.services import require_course_writable
from courses.selectors import STAFF_ROLES, course_role_annotation, require_item_open
from exams.selectors_accommodations import with_own_accommodation
from exams.views_access import exam_gate_response
from exams.selectors import submission_outcome_for_student
from exercises.models import Variant
from grading.core import answers

from . import selectors, services
from .answer_input import CLIENT_KEY_FIELD, CLIENT_KEY_HEADER, client_key_checked, raw_answer_from_post
from .refused_answers import refused_answer_keep
from .results import submission_view_context, submission_visibility

MAX_ANSWER_BYTES = 20_000

logger = logging.getLogger(__name__)


def _own_variant_for_answer(*, variant_id: int, user_id: int):
    return (
        with_own_accommodation(
            Variant.objects.select_related("exercise_version", "assignment_item__assignment__course"),
            assignment_path="assignment_item__assignment",
            student=user_id,
        )
        .annotate(
            course_role=course_role_annotation(user=user_id, course_path="assignment_item__assignment__course")
        )
        .filter(pk=variant_id, student_id=user_id)
        # The version's source and spec are read once per process (``version_spec``).
        .defer("exercise_version__source", "exercise_version__spec")
    )


# Every answer reads it: compiled once, as building it costs more than running it.
_OWN_VARIANT_FOR_ANSWER = PreparedRead(_own_variant_for_answer, variant_id=int, user_id=int)


def _access_own_variant(*, user, variant_id: int) -> Variant:
    """The user's own variant with everything a submission needs (their accommodation on
    its assignment included), and the user's role in its course, in one query."""
    variant = _OWN_VARIANT_FOR_ANSWER.first(variant_id=int(variant_id), user_id=user.pk)
    if variant is None:
        raise Http404("No such exercise variant.")
    variant.student = user
    if variant.assignment_item_id:
        # Re-check enrolment: a student removed from the course may no longer submit.
        require_item_open(item=variant.assignment_item, role=variant.course_role)
        if variant.course_role not in STAFF_ROLES:
            pools.require_item_given(item=variant.assignment_item, student=user)
    return variant


def submit_wait_seconds() -> float:
    """How long an answer's response waits for its grade: ``GRADING_SUBMIT_WAIT_SECONDS``,
    never longer than a result's long poll."""
    return max(0.0, min(settings.GRADING_SUBMIT_WAIT_SECONDS, settings.GRADING_LONG_POLL_SECONDS))


def _wants_fragment(request) -> bool:
    return request.headers.get("HX-Request") == "true"


@course_checked_in_view
@login_required
@require_POST
def submit_answer(request, variant_id: int, part: str):
    variant = _access_own_variant(user=request.user, variant_id=variant_id)
    if variant.assignment_item_id:
        require_course_writable(course=variant.assignment_item.assignment.course)  # loaded already
        refusal = exam_gate_response(
            request, assignment=variant.assignment_item.assignment, role=variant.course_role,
            fragment=_wants_fragment(request),
        )
        if refusal is not None:
            return refusal
    client_key, key_error = client_key_checked(
        request.headers.get(CLIENT_KEY_HEADER) or request.POST.get(CLIENT_KEY_FIELD)
    )
    if key_error is not None:
        return render(request, "grading/_result.html", {"error": key_error, "part": part}, status=400)
    raw_answer, error = raw_answer_from_post(request.POST, max_bytes=MAX_ANSWER_BYTES)
    submission = None
    retry_after = None
    refusal_code = None
    if error is None:
        try:
            submission = services.submission_create(
                variant=variant, student=request.user, part=part, raw_answer=raw_answer, client_key=client_key
            )
        except services.SubmissionRefused as refused:
            error, retry_after = refused.message, refused.retry_after
            refusal_code = refused.code
    refused_not_unreadable = refusal_code not in (None, "invalid")
    if retry_after is not None:
        # Too fast: 429 for every client, so a script sees it without parsing a page.
        response = render(
            request, "grading/_result.html", {"error": error, "part": part, "refused": True}, status=429
        )
        response["Retry-After"] = str(retry_after)
        return response
    if not _wants_fragment(request):
        if error is not None and not _kept_for_its_part(
            request, variant=variant, part=part, error=error, refusal_code=refusal_code
        ):
            messages.error(request, error)
        return redirect(_exercise_url(variant) + f"#part-{part}")
    if error is not None:
        return render(
            request,
            "grading/_result.html",
            {"error": error, "part": part, "refused": refused_not_unreadable},
            status=422,
        )
    visibility = submission_visibility(submission)
    if not visibility.grade_hidden:
        # The grade is usually stored within tens of milliseconds: answer with it if it comes
        # that soon; else acknowledge the stored answer now and let the page long-poll.
        submission = selectors.submission_wait_finished(submission=submission, timeout=submit_wait_seconds())
    return render(
        request, "grading/_result.html", submission_view_context(submission, visibility=visibility)
    )


def _kept_for_its_part(
    request, *, variant: Variant, part: str, error: str, refusal_code: str | None
) -> bool:
    """Keep a plain form's answer that was not taken for the page its redirect opens, which
    shows the error beside the part and what was typed in its inputs (``refused_answers``).
    Not when that page shows another copy (the exercise changed version): there the message
    goes to the top of the page."""
    if refusal_code == "version_changed":
        return False
    return refused_answer_keep(
        request.session, variant_id=variant.pk, part=part, post=request.POST, error=error,
        unreadable=refusal_code in (None, "invalid"), max_bytes=MAX_ANSWER_BYTES,
    )


@login_required
@require_GET
def submission_result(request, submission_id: int):
    submission = selectors.access_submission(user=request.user, submission_id=submission_id)
    item = submission.variant.assignment_item
    if item is not None and submission.student_id == request.user.pk:
        refusal = exam_gate_response(
            request, assignment=item.assignment, role=None, fragment=_wants_fragment(request)
        )
        if refusal is not None:
            return refusal
    if request.GET.get("wait") and not submission.is_finished:
        submission = selectors.submission_wait_finished(
            submission=submission, timeout=settings.GRADING_LONG_POLL_SECONDS
        )
    visibility = submission_visibility(submission, viewer=request.user)
    context = submission_view_context(submission, visibility=visibility)
    if request.headers.get("Accept", "").startswith("application/json"):
        outcome = submission_outcome_for_student(submission, visibility)
        return JsonResponse(
            {
                "id": submission.pk,
                "status": submission.status,
                **outcome,
                "misconception": outcome["misconception"] or None,
            }
        )
    response = render(request, "grading/_result.html", context)
    if submission.is_finished or visibility.grade_hidden:
        # Tell htmx to stop polling: the fragment without hx-trigger replaces itself.
        response["HX-Trigger"] = "graded"
    return response


FORM_CONTENT_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


@login_required
@require_POST
def preview_answer(request):
    """What the parser understood, for the live preview while typing.

    Every failure to read the request is a 4xx with a message; the size is checked before
    JSON is parsed, and any exception class from the parser (recursion, overflow,
    encoding...) is an unreadable answer, not a 500.
    """
    if request.content_type in FORM_CONTENT_TYPES:
        # A form body is read (a multipart one's stream spent) by the CSRF check before this view.
        return JsonResponse({"latex": None, "error": "Send the preview request as JSON."}, status=415)
    try:
        body = request.body
    except RequestDataTooBig:
        return JsonResponse({"latex": None, "error": "That request is too large."}, status=413)
    if len(body) > MAX_ANSWER_BYTES:
        return JsonResponse({"latex": None, "error": "That answer is too long."}, status=413)
    try:
        payload = json_loads_bounded(body or b"{}")
        answer_type = str(payload.get("type", ""))
        options = payload.get("options") or {}
        answer = payload.get("answer", "")
        if answer_type not in answers.ANSWER_TYPES or not isinstance(options, dict):
            raise ValueError
    except UnreadableJson as error:
        return JsonResponse({"latex": None, "error": f"Malformed preview request: {error}"}, status=400)
    except (ValueError, AttributeError):
        return JsonResponse({"latex": None, "error": "Malformed preview request."}, status=400)
    try:
        parsed = answers.parse(answer_type, answer, options)
    except UnicodeError:  # a ValueError, but about the answer's text, not the request
        return JsonResponse({"latex": None, "error": services.UNREADABLE_ANSWER}, status=422)
    except ValueError as problem:  # the request's options, not the answer, are malformed
        return JsonResponse({"latex": None, "error": f"Malformed preview request: {problem}"}, status=400)
    except services.ANSWER_TOO_BIG_ERRORS:  # too big or too deep: this answer cannot be read
        logger.warning("preview parser failed on a %s answer", answer_type, exc_info=True)
        return JsonResponse({"latex": None, "error": services.UNREADABLE_ANSWER}, status=422)
    except Exception:  # a fault in the parser, not the answer's
        logger.exception("preview parser fault on a %s answer", answer_type)
        return JsonResponse({"latex": None, "error": services.CHECK_FAILED}, status=422)
    return JsonResponse({"latex": parsed.preview_latex, "error": parsed.error})


def _exercise_url(variant: Variant) -> str:
    from django.urls import reverse

    if variant.assignment_item_id:
        return reverse("exercise", args=[variant.assignment_item_id])
    if variant.context.startswith("practice:"):
        return reverse("practice", args=[variant.pk])
    return reverse("dashboard")
