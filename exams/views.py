"""The exam pages: a student's Start and Finish of an attempt, and the instructor's
release of grades. Thin: access_* selectors, then services."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from courses import selectors as course_selectors
from courses.selectors import access_staff_assignment
from exercises import selectors as exercise_selectors

from . import selectors, services
from .access import ExamAccessRefused, start_session_key, start_session_remember
from .forms_release import ReleaseScheduleForm
from .templatetags.course_time import course_time_text
from .views_access import exam_gate_response
from .window import ARCHIVED_MESSAGE, duration_text


def _access_exam(*, user, course_slug: str, assignment_slug: str):
    """An exam assignment the user may open (404 for homework and for outsiders)."""
    assignment, role = course_selectors.access_assignment(
        user=user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    if not selectors.is_exam(assignment):
        raise Http404("This assignment is not an exam.")
    return assignment, role


def _assignment_page(assignment):
    return redirect("assignment", assignment.course.slug, assignment.slug)


@login_required
@require_POST
def attempt_start(request, course_slug: str, assignment_slug: str):
    assignment, role = _access_exam(user=request.user, course_slug=course_slug, assignment_slug=assignment_slug)
    # The exam's access controls (network, code, one session) stand in front of Start.
    refusal = exam_gate_response(request, assignment=assignment, role=role)
    if refusal is not None:
        return refusal
    try:
        attempt = services.attempt_start(
            assignment=assignment, student=request.user,
            session_key=start_session_key(request=request, assignment=assignment),
        )
    except services.ExamRefused as refused:
        messages.error(request, refused.message)
    else:
        start_session_remember(request=request, assignment=assignment, attempt=attempt)
    return _assignment_page(assignment)


@login_required
@require_http_methods(["GET", "POST"])
def attempt_finish(request, course_slug: str, assignment_slug: str):
    """GET: the summary of unanswered parts and a confirm button; POST: finish."""
    assignment, role = _access_exam(user=request.user, course_slug=course_slug, assignment_slug=assignment_slug)
    refusal = exam_gate_response(request, assignment=assignment, role=role)
    if refusal is not None:
        return refusal
    attempt = selectors.attempt_of(assignment=assignment, student=request.user)
    if attempt is None or not attempt.is_open:
        if attempt is None:
            messages.error(request, "You have not started this exam.")
        return _assignment_page(assignment)
    if request.method == "POST":
        try:
            services.attempt_finish(assignment=assignment, student=request.user)
        except services.ExamRefused as refused:
            messages.error(request, refused.message)
        else:
            messages.success(request, "Your attempt is finished; your saved answers count.")
        return _assignment_page(assignment)
    rows = exercise_selectors.assignment_unanswered_parts(assignment=assignment, student=request.user)
    return render(
        request,
        "exams/attempt_finish.html",
        {
            "assignment": assignment,
            "unanswered": [row for row in rows if row["unanswered"]],
            "unanswered_parts": sum(len(row["unanswered"]) for row in rows),
            "total_parts": sum(len(row["parts"]) for row in rows),
        },
    )


RELEASE_ACTIONS = ("release", "withdraw", "schedule", "unschedule")


@login_required
@require_http_methods(["GET", "POST"])
def grades_release(request, course_slug: str, assignment_slug: str):
    """GET: the confirmation (who has not started, is working, has finished, and what they
    will see); POST with ``action`` release, withdraw, schedule (with ``at``, a time in the
    course's zone) or unschedule: do it (400 without a known one, or with a bad time).
    Instructors only: like applying a regrade, it changes what every student and the LMS
    see."""
    assignment, _ = access_staff_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug,
        instructor_only=True,
    )
    if request.method == "GET":
        return _release_page(request, assignment=assignment, schedule_form=ReleaseScheduleForm(course=assignment.course))
    action = request.POST.get("action", "")
    if action not in RELEASE_ACTIONS:
        return HttpResponseBadRequest(
            "Say what to do: action=release, withdraw, schedule (with at) or unschedule."
        )
    if action == "schedule":
        return _release_schedule(request, assignment=assignment)
    try:
        if action == "unschedule":
            services.grades_release_unschedule(assignment=assignment)
        elif action == "withdraw":
            services.grades_withdraw(assignment=assignment, by=request.user, via="page")
        else:
            services.grades_release(assignment=assignment, by=request.user, via="page")
    except services.ExamRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, release_done_message(action, assignment))
    if action == "unschedule":
        return redirect("exams:release", assignment.course.slug, assignment.slug)
    return redirect("instructor:assignment", assignment.course.slug, assignment.slug)


RELEASE_DONE = {
    "withdraw": "Grades withdrawn: students see only what the review policy shows before release.",
    "unschedule": "The scheduled release is cancelled: nothing will be released by itself.",
}


def release_done_message(action: str, assignment) -> str:
    """What a release did, for this assignment: only an exam has attempts that must end
    first, and only an assignment an LMS link opened has scores to send."""
    if action != "release":
        return RELEASE_DONE[action]
    who = (
        "each student sees what the review policy shows on release once their own attempt has ended"
        if assignment.kind == "exam" else "students see what the review policy shows on release"
    )
    lms = ", and the scores are sent to the LMS" if assignment.has_lti_link else ""
    return f"Grades released: {who}{lms}."


def _release_schedule(request, *, assignment):
    """Schedule the release for the posted time; the page again with the reason (400) when
    the time is missing, malformed or past."""
    form = ReleaseScheduleForm(request.POST, course=assignment.course)
    if form.is_valid():
        try:
            services.grades_release_schedule(assignment=assignment, at=form.cleaned_data["at"], by=request.user)
        except services.ExamRefused as refused:
            form.add_error("at", refused.message)
    if not form.is_valid():
        return _release_page(request, assignment=assignment, schedule_form=form, status=400)
    messages.success(request, f"Release scheduled for {course_time_text(form.cleaned_data['at'], assignment.course)}.")
    return redirect("exams:release", assignment.course.slug, assignment.slug)


def _release_page(request, *, assignment, schedule_form, status: int = 200):
    return render(
        request,
        "exams/release_confirm.html",
        {"assignment": assignment, "course": assignment.course, "schedule_form": schedule_form,
         "preview": selectors.release_preview(assignment=assignment)},
        status=status,
    )


@login_required
@require_http_methods(["GET"])
def deadline_poll(request, course_slug: str, assignment_slug: str):
    """The student's own deadline now, for the open pages of their attempt to poll (an
    extension, an accommodation edited or an early close reaches them within seconds).
    Outside the grading path: one read of the window, one write when the deadline the
    page learns has changed. Every reply to a signed-in student is JSON, never cached:

    - the course is archived (a page opened before that polls): {"archived": true, "message",
      and no clock: "seconds_left" and "deadline" null}; the page reloads into its read-only self
      (an archived course's pages keep no clock, ``exams.window.clock_view``). Nothing is
      recorded: an archived course takes no writes.
    - no attempt of the student's at these slugs (removed by staff, never started, a forged
      URL): a 404 {"not_started": true, "message"}; the page reloads once, to its Start.
    - a page whose attempt another browser session has taken over: a 403 that says so
      ({"taken_over": true, "message"}); it disables its forms.
    - asked faster than any page asks: a 429 with Retry-After ({"rate_limited": true,
      "retry_after": seconds}); the page asks again after it, and shows nothing.

    The limit is asked first, then the attempt is looked up, so a 404 takes tokens too, and
    that is the order wanted. The per-exam bucket is keyed by the slugs asked for: a 404
    never spends the bucket of the exam the student is running (they have an attempt
    there). The per-student bucket is the one bound on a flood over made-up slugs (each
    gets a fresh per-exam bucket), and only a bucket asked before the read spares a refused
    poll the read. A page stops at its first 404, so a 404 takes one token of the student's
    burst of 20, which refills at one a second against a page's one ask every 30 s (the
    defaults); only a flood from the student's own session can empty it, and then the
    running exam's page merely asks again after Retry-After. Looking the attempt up first
    would make every refused poll cost that read and leave 404s unbounded."""
    wait = services.deadline_poll_wait(
        student=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    if wait:
        return JsonResponse(
            {"rate_limited": True, "retry_after": wait,
             "message": f"Asked too often. Ask again in {wait} second{'s' * (wait != 1)}."},
            status=429, headers={"Cache-Control": "no-store", "Retry-After": str(wait)},
        )
    try:
        window, course = selectors.access_own_deadline(
            course_slug=course_slug, assignment_slug=assignment_slug, student=request.user,
            session=getattr(request, "session", None),
        )
    except selectors.NoOwnAttempt as missing:
        return JsonResponse(
            {"not_started": True, "message": missing.message},
            status=404, headers={"Cache-Control": "no-store"},
        )
    except ExamAccessRefused as refused:
        return JsonResponse(
            {"taken_over": refused.code == "session_replaced", "message": refused.message},
            status=403, headers={"Cache-Control": "no-store"},
        )
    if window.archived:
        return JsonResponse(
            {"archived": True, "message": ARCHIVED_MESSAGE, "ended": window.ended,
             "seconds_left": None, "deadline": None, "deadline_text": "", "limit_text": ""},
            headers={"Cache-Control": "no-store"},
        )
    deadline = window.deadline
    limit_seconds = window.limits.time_limit_seconds
    services.attempt_deadline_seen(attempt=window.attempt, deadline=deadline)
    return JsonResponse(
        {
            "ended": window.ended,
            "seconds_left": window.seconds_left,
            "deadline": deadline.isoformat() if deadline else None,
            "deadline_text": course_time_text(deadline, course, short=True) if deadline else "",
            # An extension lengthens the limit too: the page shows both and updates both.
            "limit_text": duration_text(limit_seconds) if deadline and limit_seconds else "",
        },
        headers={"Cache-Control": "no-store"},
    )
