"""Pages of one course show and read dates in that course's time zone, and an address that
names a course or assignment in another case than its stored short name leads to the stored
one; an archived course refuses every write request before its view runs."""

import zoneinfo

from django.db.models import Case, Exists, OuterRef, Value, When
from django.db.models.functions import Lower
from django.http import HttpResponsePermanentRedirect
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from attnquiz.prepared_reads import PreparedRead

from .models import Assignment, Course

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")

# Every course page reads its course's zone first: compiled once.
_TIME_ZONE_OF_COURSE = PreparedRead(
    lambda *, slug: Course.objects.filter(slug=slug).order_by().values_list("time_zone", flat=True)[:1],
    slug=str,
)


# An assignment's pages read, in the same query, whether the address names it as stored or
# in another case. A CASE is evaluated lazily (PostgreSQL and SQLite alike): the exam hour's
# pages, naming it as stored, run the first EXISTS only, one index lookup; only a miss looks
# over the course's assignments lower-cased. The name in any case is compared lower-cased on
# both sides, not with ``iexact``: SQLite's ``iexact`` escapes the value into a LIKE pattern,
# which a prepared read cannot take.
NAMED_AS_STORED, NAMED_IN_ANOTHER_CASE, NOT_NAMED = 1, 2, 0
_TIME_ZONE_AND_ASSIGNMENT = PreparedRead(
    lambda *, slug, assignment_slug, assignment_slug_lower: Course.objects.filter(slug=slug).order_by()
    .annotate(assignment_named=Case(
        When(Exists(Assignment.objects.filter(course=OuterRef("pk"), slug=assignment_slug)),
             then=Value(NAMED_AS_STORED)),
        When(Exists(Assignment.objects.alias(slug_lower=Lower("slug"))
                    .filter(course=OuterRef("pk"), slug_lower=assignment_slug_lower)),
             then=Value(NAMED_IN_ANOTHER_CASE)),
        default=Value(NOT_NAMED),
    ))
    .values_list("time_zone", "assignment_named")[:1],
    slug=str,
    assignment_slug=str,
    assignment_slug_lower=str,
)


def _course_zone_in_another_case(slug: str) -> str | None:
    """The time zone of the only course whose short name is ``slug`` in another case (as
    ``selectors.course_by_slug`` reads it, once no course is stored under ``slug``)."""
    zones = list(Course.objects.filter(slug__iexact=slug).order_by().values_list("time_zone", flat=True)[:2])
    return zones[0] if len(zones) == 1 else None


def _zone_of_url(slug: str, assignment_slug: str | None) -> tuple[str | None, bool]:
    """The time zone of the course the URL names (in any case; None if none), and whether
    the URL names a course (and assignment) only in another case than stored. One query
    where it names the course as stored; one more where it does not."""
    if assignment_slug is None:
        zone = _TIME_ZONE_OF_COURSE.first(slug=slug)
        if zone is not None:
            return zone, False
    else:
        row = _TIME_ZONE_AND_ASSIGNMENT.first(
            slug=slug, assignment_slug=assignment_slug, assignment_slug_lower=assignment_slug.lower()
        )
        if row is not None:
            zone, named = row
            return zone, named == NAMED_IN_ANOTHER_CASE
    zone = _course_zone_in_another_case(slug)
    return zone, zone is not None


def _stored_slugs_redirect(request, *, slug: str, assignment_slug: str | None):
    """A permanent redirect to the same address with the stored short names, for someone who
    may open what it names (``selectors.url_slugs_as_stored``), or None. A write keeps its
    method and body (308)."""
    from .selectors import url_slugs_as_stored

    stored = url_slugs_as_stored(user=request.user, course_slug=slug, assignment_slug=assignment_slug)
    match = request.resolver_match
    if stored is None or match is None:
        return None
    try:
        path = reverse(match.view_name, kwargs={**match.kwargs, **stored})
    except NoReverseMatch:
        return None  # an unnamed route: its view reads the short name in any case
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(
        f"{path}?{query}" if query else path, preserve_request=request.method not in SAFE_METHODS,
    )


class CourseTimeZoneMiddleware:
    """Activates the time zone of the course named by a view's ``course_slug``; redirects an
    address naming it (or its ``assignment_slug``) in another case to the stored short names.
    Costs no query more where the address names them as stored."""

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
        assignment_slug = view_kwargs.get("assignment_slug")
        name, in_another_case = _zone_of_url(slug, assignment_slug)
        if in_another_case and request.user.is_authenticated:
            # Else the view reads it in any case (an API client signed in by its token).
            redirect = _stored_slugs_redirect(request, slug=slug, assignment_slug=assignment_slug)
            if redirect is not None:
                return redirect
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
    and in the API alike, and so is ``CourseArchived`` raised by a service behind any view;
    any other ``CourseRefused`` a view let through is a 400 with its message."""

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
        from .services import CourseArchived, CourseRefused

        if isinstance(exception, CourseArchived):
            return archived_response(request)
        if isinstance(exception, CourseRefused):
            # A refusal no view turned into a message of its own (a slug taken in another
            # case, met by a caller that did not expect it): a 400 that says why, not a 500.
            return refused_response(request, exception.message)
        return None


def refused_response(request, message: str):
    return _refusal_response(request, status=400, code="refused", title="Nothing was changed", message=message)


def _refusal_response(request, *, status: int, code: str, title: str, message: str, detail: str | None = None):
    """A refusal as the caller reads one: a problem document for the API (``detail``, else
    ``message``), the error page for a browser."""
    from django.http import HttpResponse
    from django.template.loader import render_to_string

    if request.path.startswith("/api/"):
        from attnquiz.problems import json_problem

        return json_problem(status_code=status, code=code, detail=detail or message)
    return HttpResponse(
        render_to_string("400.html", {"status": status, "title": title, "message": message}), status=status
    )


def archived_response(request):
    from django.http import HttpResponse
    from django.template.loader import render_to_string

    from .services import CourseArchived

    if request.headers.get("HX-Request") == "true" and not request.path.startswith("/api/"):
        # A fragment for the place the page shows the reply in: the page shows one as it is,
        # where a whole page would read "the server did not take your answer, reload".
        answering = getattr(request.resolver_match, "view_name", "") == "submit"
        return HttpResponse(
            render_to_string("courses/_archived_refusal.html", {"answering": answering}).strip(), status=409
        )
    return _refusal_response(
        request, status=409, code="archived", title="This course is archived", detail=CourseArchived.MESSAGE,
        message="Nothing was changed: an archived course is read-only. Its instructor can "
        "bring it back from the course settings, or copy it for a new term.",
    )
