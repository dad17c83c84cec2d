"""The signed-in user's role in a course, for navigation that shows only what the user may
open (a teaching assistant got "LMS" in every staff page's navigation, and a 403 behind it)."""

from django import template

from courses.models import Role
from courses.selectors import course_role

register = template.Library()


@register.simple_tag(takes_context=True)
def is_course_instructor(context, course) -> bool:
    """``{% is_course_instructor course as instructor %}``: True for the course's instructors."""
    request = context.get("request")
    if request is None or course is None:
        return False
    return course_role(user=request.user, course=course) == Role.INSTRUCTOR
