"""``{% penalty_policy assignment limits %}``: the assignment's penalties in plain
sentences (courses/_penalty_policy.html), nothing when none can apply. No query."""

from django import template

from courses.penalties import penalty_policy as policy_of

register = template.Library()


@register.inclusion_tag("courses/_penalty_policy.html")
def penalty_policy(assignment, limits):
    return {"assignment": assignment, "policy": policy_of(assignment=assignment, limits=limits)}
