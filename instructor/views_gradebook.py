"""The course gradebook pages: the table, its CSV and XLSX exports, and the categories
set-up. Thin: reads through ``selectors_gradebook``, writes through ``services_gradebook``."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from courses.models import Role

from . import selectors, selectors_gradebook, services_gradebook
from .csv_response import csv_streaming_response, wants_excel_bom, xlsx_response
from .forms import GradeCategoryForm
from .services import InstructorRefused


@login_required
@require_GET
def course_gradebook(request, course_slug: str):
    """One page of 100 students, searched (``student``) and sorted (``sort``, ``order``);
    the exports always hold everyone."""
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    student_filter = request.GET.get("student", "").strip()[:100]
    page = selectors_gradebook.course_gradebook_page(
        course=course, student_filter=student_filter, sort=request.GET.get("sort", "name"),
        descending=request.GET.get("order") == "desc", page=_page_number(request.GET.get("page")),
    )
    book = page.book
    return render(
        request,
        "instructor/course_gradebook.html",
        {
            "course": course,
            "book": book,
            "page": page,
            "sort_links": _sort_links(student_filter, page),
            "student_filter": student_filter,
            "is_instructor": role == Role.INSTRUCTOR,
            "has_categories": book.categories[0].id is not None,
            "setup_problems": selectors_gradebook.gradebook_setup_problems(book=book),
            "category_form": GradeCategoryForm(),
        },
    )


def _sort_links(student_filter: str, page) -> dict[str, str]:
    """Per sort, the link a column header follows: the current sort's header turns it
    round, another header sorts ascending; the search stays and the page starts again."""
    links = {}
    for key in selectors_gradebook.SORTS:
        order = "desc" if key == page.sort and not page.descending else "asc"
        query = {"sort": key, "order": order, **({"student": student_filter} if student_filter else {})}
        links[key] = "?" + urlencode(query)
    return links


def _page_number(value) -> int:
    """A page number from the query string; anything that is not one reads as page 1."""
    try:
        return max(1, min(int(value), 1_000_000))
    except (TypeError, ValueError):
        return 1


def _export_name(course, extension: str) -> str:
    return f"{course.slug}-gradebook.{extension}"


@login_required
@require_GET
def course_gradebook_csv(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    table = selectors_gradebook.course_gradebook_table(book=selectors_gradebook.course_gradebook(course=course))
    return csv_streaming_response(iter(table), _export_name(course, "csv"), bom=wants_excel_bom(request))


@login_required
@require_GET
def course_gradebook_xlsx(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug)
    table = selectors_gradebook.course_gradebook_table(book=selectors_gradebook.course_gradebook(course=course))
    return xlsx_response(table, _export_name(course, "xlsx"), sheet_title=course.slug)


def _refusal_or_success(request, action, success: str) -> None:
    try:
        action()
    except InstructorRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(request, success)


@login_required
@require_POST
def grade_category_add(request, course_slug: str):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug, instructor_only=True)
    form = GradeCategoryForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.problem())
    else:
        _refusal_or_success(
            request, lambda: services_gradebook.grade_category_create(course=course, **form.cleaned_data),
            f"Added the category {form.cleaned_data['name']}.",
        )
    return redirect("instructor:course_gradebook", course.slug)


def _category(course, category_id: int):
    category = course.grade_categories.filter(pk=category_id).first()
    if category is None:
        raise Http404("No such category.")
    return category


@login_required
@require_POST
def grade_category_edit(request, course_slug: str, category_id: int):
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug, instructor_only=True)
    category = _category(course, category_id)
    if request.POST.get("delete"):
        _refusal_or_success(
            request, lambda: services_gradebook.grade_category_delete(category=category),
            f"Removed the category {category.name}; its assignments now count in none.",
        )
        return redirect("instructor:course_gradebook", course.slug)
    form = GradeCategoryForm(request.POST)
    if not form.is_valid():
        messages.error(request, form.problem())
    else:
        _refusal_or_success(
            request, lambda: services_gradebook.grade_category_update(category=category, **form.cleaned_data),
            f"Saved the category {form.cleaned_data['name']}.",
        )
    return redirect("instructor:course_gradebook", course.slug)


@login_required
@require_POST
def assignment_categories_set(request, course_slug: str):
    """One form with a category select per assignment."""
    course, role = selectors.access_teaching(user=request.user, course_slug=course_slug, instructor_only=True)
    categories = {str(category.pk): category for category in course.grade_categories.all()}
    changed = 0
    for assignment in course.assignments.all():
        chosen = request.POST.get(f"category-{assignment.pk}")
        if chosen is None:
            continue
        if chosen and chosen not in categories:
            messages.error(request, f"Unknown category for {assignment.title}; it was left as it was.")
            continue
        try:
            services_gradebook.assignment_category_set(assignment=assignment, category=categories.get(chosen))
        except InstructorRefused as refused:
            messages.error(request, refused.message)
            break
        changed += 1
    if changed:
        messages.success(request, "Saved which category each assignment counts in.")
    return redirect("instructor:course_gradebook", course.slug)
