"""The signed-in user's role in a course, for navigation that shows only what the user may
open (a teaching assistant got "LMS" in every staff page's navigation, and a 403 behind it)."""

from django import template

from courses.models import Role
from courses.selectors import course_role

register = template.Library()


@register.simple_tag(takes_context=True)
def is_course_instructor(context, course) -> bool:
    """``{% is_course_instructor course as instructor %}``: True for the course's instructors.
    A view that checked access has the role already (``is_instructor`` or ``role`` in its
    context): that is used, so the navigation costs no query there."""
    known = context.get("is_instructor")
    if isinstance(known, bool):
        return known
    role = context.get("role")
    if role in Role.values:
        return role == Role.INSTRUCTOR
    request = context.get("request")
    if request is None or course is None:
        return False
    return course_role(user=request.user, course=course) == Role.INSTRUCTOR
