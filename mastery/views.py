"""Teaching page: a course's students × skills grid. Thin: reads through ``selectors``."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from . import selectors


@login_required
@require_GET
def course_grid(request, course_slug: str):
    course, role = selectors.access_course_skill_grid(user=request.user, course_slug=course_slug)
    columns = selectors.grid_columns(course=course)
    page, rows = selectors.grid_page(course=course, columns=columns, page_number=request.GET.get("page"))
    return render(
        request,
        "mastery/course_grid.html",
        {"course": course, "role": role, "columns": columns, "rows": rows, "page": page,
         "strong_from": selectors.STRONG_FROM, "developing_from": selectors.DEVELOPING_FROM},
    )
