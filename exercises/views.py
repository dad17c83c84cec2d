"""Student-facing pages: dashboard, assignment, and one exercise of an assignment."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from courses import selectors as course_selectors
from courses.selectors import STAFF_ROLES
from exams.views_access import exam_gate_response
from exams import selectors as exam_selectors
from exams.window import AttemptState, clock_view
from grading import results
from grading.refused_answers import refused_answers_take

from . import engine, selectors, services
from .models import Variant


@login_required
@require_safe
def dashboard(request):
    enrolments = list(course_selectors.enrolments_for_user(user=request.user))
    summaries = selectors.courses_assignment_summaries(
        roles={enrolment.course_id: enrolment.role for enrolment in enrolments},
        courses=[enrolment.course for enrolment in enrolments],
        student=request.user,
    )
    courses = [
        {
            "course": enrolment.course,
            "role": enrolment.get_role_display(),
            "is_staff": enrolment.role in STAFF_ROLES,
            "assignments": summaries[enrolment.course_id],
        }
        for enrolment in enrolments
    ]
    return render(
        request,
        "exercises/dashboard.html",
        {
            "courses": courses,
            "may_create_courses": course_selectors.may_create_courses(user=request.user),
            # Invitations of existing accounts to courses: accepted or declined here.
            "invitations": list(course_selectors.invitations_for_user(user=request.user)),
        },
    )


@login_required
@require_safe
def assignment_detail(request, course_slug: str, assignment_slug: str):
    assignment, role = course_selectors.access_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    refusal = exam_gate_response(request, assignment=assignment, role=role)
    if refusal is not None:
        return refusal
    # The student's window, read once: their limits, attempt and what they may see now.
    window = exam_selectors.student_window(assignment=assignment, student=request.user)
    limits, visibility = window.limits, window.visibility
    # An ended attempt or a closed assignment: nothing "left".
    items = selectors.assignment_statuses_in_window(assignment=assignment, student=request.user, window=window)
    exam = exam_selectors.is_exam(assignment)
    return render(
        request,
        "exercises/assignment_detail.html",
        {
            "assignment": assignment,
            "limits": limits,
            "items": items,
            "points_total": sum(row["item"].points for row in items),
            "points_earned": sum(row["points_earned"] for row in items)
            if visibility.score
            else None,
            "visibility": visibility,
            "is_staff": role in STAFF_ROLES,
            "is_exam": exam,
            "window": window,
            "attempt": window.attempt,
            "clock": clock_view(window),
            "not_open": "" if exam else selectors.not_open_yet_message(
                window=window, role=role, course=assignment.course
            ),
        },
    )


@login_required
@require_safe
def exercise_page(request, item_id: int):
    item, role, variant = selectors.access_item_and_variant(user=request.user, item_id=item_id)
    refusal = exam_gate_response(request, assignment=item.assignment, role=role)
    if refusal is not None:
        return refusal
    window = None
    if exam_selectors.is_exam(item.assignment):
        window = exam_selectors.student_window(assignment=item.assignment, student=request.user)
        if window.state == AttemptState.NOT_STARTED and role not in STAFF_ROLES:
            # An exam's exercises open inside an attempt, started on the assignment page
            # (the staff may look at them without one; answering takes an attempt). Closed,
            # not open yet or archived: the assignment page says so instead.
            if not window.start_blocked:
                messages.info(request, "Start the exam first.")
            return redirect("assignment", item.assignment.course.slug, item.assignment.slug)
    first_visit = variant is None
    if window is None:
        # Homework: the accommodation came with the variant's row, or the item's on a first visit.
        window = exam_selectors.student_window(
            assignment=item.assignment, student=request.user,
            accommodation=selectors.page_accommodation(item=item, variant=variant),
        )
        not_open = selectors.not_open_yet_message(window=window, role=role, course=item.assignment.course)
        if not_open:
            messages.info(request, not_open)
            return redirect("assignment", item.assignment.course.slug, item.assignment.slug)
    if first_visit:
        variant = services.variant_create_for_item(item=item, student=request.user)
        if item.assignment.time_limit_minutes and not exam_selectors.is_exam(item.assignment):
            # Timed homework: this first variant starts the student's clock, read afresh.
            window = exam_selectors.student_window(assignment=item.assignment, student=request.user)
    # A copy made under a version the instructor has switched away from since: say so.
    version_changed = selectors.version_changed_notice(
        item=item, variant=variant, student=request.user, visibility=window.visibility
    )
    return _render_exercise(
        request, variant=variant, item=item, role=role, is_practice=False, window=window,
        version_changed=version_changed, unanswered=first_visit,
    )


def _render_exercise(
    request, *, variant: Variant, item, role: str, is_practice: bool, window=None, version_changed=None,
    unanswered: bool = False,
):
    limits = window.limits if window is not None else None
    visibility = exam_selectors.EVERYTHING if window is None else window.visibility
    # An answer sent without JavaScript and not taken: its part holds it again, once.
    refused = {} if unanswered else refused_answers_take(request.session, variant_id=variant.pk)
    page = selectors.exercise_page_context(
        variant=variant, limits=limits, visibility=visibility, unanswered=unanswered,
        refused=refused,
    )
    for error in page["refused_elsewhere"]:
        messages.error(request, error)
    for part in page["parts"]:
        if window is not None and (window.ended or window.archived):
            part["attempts_left"] = None  # an ended attempt, or an archived course, has none "left"
        # Each attempt keeps its heatmap on reload, in the history and the latest result.
        reference = results.weights_reference(
            variant=variant, part_key=part["key"], progress=part["progress"], visibility=visibility
        )
        part["history"] = results.attempt_history(
            submissions=part["progress"]["history"], reference=reference, visibility=visibility,
            variant=variant, part_key=part["key"],
        )
        latest = part["progress"]["latest"]
        part["heatmap"] = results.heatmap_for(latest, reference=reference) if latest else None
        part["latest_feedback"] = (
            exam_selectors.feedback_for_student(latest.feedback, visibility) if latest else None
        )
    attempt = window.attempt if window is not None and window.is_exam else None
    return render(
        request,
        "exercises/exercise_page.html",
        {
            **page,
            "item": item,
            "assignment": item.assignment,
            "is_staff": role in STAFF_ROLES,
            "is_practice": is_practice,
            "window": window,
            "times_course": item.assignment.course,
            "attempt": attempt,
            "attempt_closed": attempt is not None and window.ended,
            # Practice is outside the assignment's clock.
            "clock": None if window is None else clock_view(window),
            "version_changed": version_changed,
        },
    )


@login_required
@require_POST
def practice_start(request, item_id: int):
    """Hand out a fresh variant (or the named one asked for) to practise on."""
    item, role = course_selectors.access_assignment_item(user=request.user, item_id=item_id)
    if exam_selectors.is_exam(item.assignment):
        # Practice feedback on an exam's own exercises would tell what the exam hides.
        messages.error(request, "An exam's exercises have no practice variants.")
        return redirect("exercise", item_id=item.pk)
    window = exam_selectors.student_window(assignment=item.assignment, student=request.user)
    not_open = selectors.not_open_yet_message(window=window, role=role, course=item.assignment.course)
    if not_open:
        messages.info(request, not_open)
        return redirect("assignment", item.assignment.course.slug, item.assignment.slug)
    named = request.POST.get("named") or None
    try:
        variant = services.variant_create_practice(item=item, student=request.user, named=named)
    except engine.VariantError as problem:
        messages.error(request, f"Could not start a practice variant: {problem}")
        return redirect("exercise", item_id=item.pk)
    return redirect("practice", variant_id=variant.pk)


@login_required
@require_safe
def practice_page(request, variant_id: int):
    variant = Variant.objects.filter(
        pk=variant_id, student=request.user, context__startswith="practice:"
    ).select_related("exercise_version__exercise").first()
    if variant is None:
        raise Http404("No such practice variant.")
    item, role = course_selectors.access_assignment_item(
        user=request.user, item_id=selectors.practice_origin_item_id(variant)
    )
    if exam_selectors.is_exam(item.assignment):
        raise Http404("An exam's exercises have no practice variants.")
    return _render_exercise(request, variant=variant, item=item, role=role, is_practice=True)
