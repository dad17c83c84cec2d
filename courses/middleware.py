"""Pages of one course show and read dates in that course's time zone; an archived course
refuses every write request before its view runs."""

import zoneinfo

from django.utils import timezone

from attnquiz.prepared_reads import PreparedRead

from .models import Course

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")

# Every course page reads its course's zone first: compiled once.
_TIME_ZONE_OF_COURSE = PreparedRead(
    lambda *, slug: Course.objects.filter(slug=slug).order_by().values_list("time_zone", flat=True)[:1],
    slug=str,
)


class CourseTimeZoneMiddleware:
    """Activates the time zone of the course named by a view's ``course_slug``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()

    def process_view(self, request, view_func, view_args, view_kwargs):
        slug = view_kwargs.get("course_slug")
        if not slug:
            return None
        name = _TIME_ZONE_OF_COURSE.first(slug=slug)
        if name:
            try:
                timezone.activate(zoneinfo.ZoneInfo(name))
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                pass  # a stored name the system no longer knows: the site's zone
        return None


def allowed_when_archived(view):
    """Mark a view whose writes an archived course still takes (archiving, copying)."""
    view.allowed_when_archived = True
    return view


def course_checked_in_view(view):
    """Mark a hot path (an answer's submit) that checks the course itself, on the objects it
    loads anyway, so the guard costs it no query: it calls ``require_course_writable``."""
    view.course_checked_in_view = True
    return view


def _marked(view_func, name: str) -> bool:
    # A DRF view's function carries its class as ``cls``.
    return getattr(view_func, name, False) or getattr(getattr(view_func, "cls", None), name, False)


class ArchivedCourseMiddleware:
    """Archived means read-only: a POST, PUT, PATCH or DELETE to any URL that names a course
    (by slug, assignment item or variant) of an archived course is answered 409, on pages
    and in the API alike, and so is ``CourseArchived`` raised by a service behind any view."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method in SAFE_METHODS or _marked(view_func, "allowed_when_archived"):
            return None
        if _marked(view_func, "course_checked_in_view"):
            return None
        from .selectors import course_named_by_url

        course = course_named_by_url(view_kwargs)
        if course is not None and course.archived_at is not None:
            return archived_response(request)
        return None

    def process_exception(self, request, exception):
        from .services import CourseArchived

        if isinstance(exception, CourseArchived):
            return archived_response(request)
        return None


def archived_response(request):
    from django.http import HttpResponse
    from django.template.loader import render_to_string

    from .services import CourseArchived

    if request.path.startswith("/api/"):
        from attnquiz.problems import json_problem

        return json_problem(status_code=409, code="archived", detail=CourseArchived.MESSAGE)
    if request.headers.get("HX-Request") == "true":
        # A fragment for the place the page shows the reply in: the page shows one as it is,
        # where a whole page would read "the server did not take your answer, reload".
        answering = getattr(request.resolver_match, "view_name", "") == "submit"
        return HttpResponse(
            render_to_string("courses/_archived_refusal.html", {"answering": answering}).strip(), status=409
        )
    return HttpResponse(
        render_to_string("400.html", {
            "status": 409, "title": "This course is archived",
            "message": "Nothing was changed: an archived course is read-only. Its instructor can "
            "bring it back from the course settings, or copy it for a new term.",
        }),
        status=409,
    )
