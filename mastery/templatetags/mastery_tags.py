"""``{% skill_map %}``: the student's skill map, on the dashboard (one query)."""

from django import template

from mastery import selectors

register = template.Library()


@register.inclusion_tag("mastery/_skill_map.html", takes_context=True)
def skill_map(context):
    """Shown to students of at least one course: the dashboard's ``courses`` entries say so
    already, so deciding costs no query."""
    user = context.get("user")
    is_student = any(not entry.get("is_staff") for entry in context.get("courses") or ())
    if user is None or not user.is_authenticated or not is_student:
        return {"lines": None}
    return {"lines": selectors.skill_map(student=user)}
