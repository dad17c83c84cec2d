"""``{% skill_map entry.course %}``: the student's skill map of one course, inside that
course's section of the dashboard (one query for all of the student's courses)."""

from django import template

from mastery import selectors

register = template.Library()


@register.inclusion_tag("mastery/_skill_map.html", takes_context=True)
def skill_map(context, course):
    """Shown to the course's students: the dashboard's ``courses`` entries say who is a
    student where, so deciding costs no query, and the first map reads every course's."""
    user = context.get("user")
    if user is None or not user.is_authenticated:
        return {"lines": None}
    cache = context.render_context
    if "skill_maps_by_course" not in cache:
        student_courses = [entry["course"].pk for entry in context.get("courses") or () if not entry.get("is_staff")]
        cache["skill_maps_by_course"] = (
            selectors.skill_maps_by_course(student=user, course_ids=student_courses) if student_courses else {}
        )
    return {"course": course, "lines": cache["skill_maps_by_course"].get(course.pk)}
