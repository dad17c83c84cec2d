"""``signed_points``: a rubric item's points as the student reads them beside the item,
"+1", "−0.5" (a true minus sign), "0"."""

import math

from django import template

register = template.Library()


@register.filter
def signed_points(value) -> str:
    try:
        number = round(float(value), 2)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(number):
        return ""
    if number == 0:
        return "0"
    return f"{'+' if number > 0 else '−'}{abs(number):g}"
