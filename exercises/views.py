"""Student-facing pages: dashboard, assignment, and one exercise of an assignment."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from courses import selectors as course_selectors
from courses.selectors import STAFF_ROLES

from . import selectors, services


@login_required
def dashboard(request):
    enrolments = course_selectors.enrolments_for_user(user=request.user)
    courses = [
        {
            "course": enrolment.course,
            "role": enrolment.get_role_display(),
            "is_staff": enrolment.role in STAFF_ROLES,
            "assignments": selectors.assignment_summaries(
                course=enrolment.course, role=enrolment.role, student=request.user
            ),
        }
        for enrolment in enrolments
    ]
    return render(request, "exercises/dashboard.html", {"courses": courses})


@login_required
def assignment_detail(request, course_slug: str, assignment_slug: str):
    assignment, role = course_selectors.access_assignment(
        user=request.user, course_slug=course_slug, assignment_slug=assignment_slug
    )
    items = selectors.assignment_item_statuses(assignment=assignment, student=request.user)
    return render(
        request,
        "exercises/assignment_detail.html",
        {"assignment": assignment, "items": items, "is_staff": role in STAFF_ROLES},
    )


@login_required
def exercise_page(request, item_id: int):
    item, role = course_selectors.access_assignment_item(user=request.user, item_id=item_id)
    variant = services.variant_get_or_create_for_item(item=item, student=request.user)
    page = selectors.exercise_page_context(variant=variant)
    return render(
        request,
        "exercises/exercise_page.html",
        {**page, "item": item, "assignment": item.assignment, "is_staff": role in STAFF_ROLES},
    )
