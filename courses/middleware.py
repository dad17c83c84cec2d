"""Pages of one course show and read dates in that course's time zone."""

import zoneinfo

from django.utils import timezone

from .models import Course


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
        name = Course.objects.filter(slug=slug).values_list("time_zone", flat=True).first()
        if name:
            try:
                timezone.activate(zoneinfo.ZoneInfo(name))
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                pass  # a stored name the system no longer knows: the site's zone
        return None
