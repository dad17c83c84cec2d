"""Teaching page: a course's students × skills grid. Thin: reads through ``selectors``."""

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from . import selectors


@login_required
@require_GET
def course_grid(request, course_slug: str):
    course, role = selectors.access_course_skill_grid(user=request.user, course_slug=course_slug)
    columns = selectors.grid_columns(course=course)
    query = selectors.GridQuery.from_request(request.GET)
    page, rows = selectors.grid_page(
        course=course, columns=columns, page_number=request.GET.get("page"), query=query
    )
    return render(
        request,
        "mastery/course_grid.html",
        {"course": course, "role": role, "columns": columns, "rows": rows, "page": page, "query": query,
         "levels": selectors.GRID_LEVELS, "query_string": _grid_query_string(query),
         "strong_from": selectors.STRONG_FROM, "developing_from": selectors.DEVELOPING_FROM},
    )


def _grid_query_string(query) -> str:
    """The sort and filter as URL parameters, kept by the pagination links."""
    params = {"sort": query.sort, "order": "desc" if query.descending else "asc",
              "level": query.level, "level_skill": query.level_skill}
    return urlencode({name: value for name, value in params.items() if value})
