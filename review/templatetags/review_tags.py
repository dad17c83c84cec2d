"""The dashboard's "Due for review" block, one query for all of the student's courses."""

from django import template

from ..selectors import due_cards_by_course

register = template.Library()


@register.inclusion_tag("review/_due.html", takes_context=True)
def review_due(context, course):
    cache = context.render_context
    if "review_due_by_course" not in cache:
        cache["review_due_by_course"] = due_cards_by_course(student=context["request"].user)
    return {"course": course, "cards": cache["review_due_by_course"].get(course.pk, []), "csrf_token": context.get("csrf_token")}
