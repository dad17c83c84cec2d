"""``score``: a score (points, a percent) as every page prints it, rounded by the one rule of
``grading.core.score_rounding`` (half up on the decimal value): ``{{ total|score }}`` ->
"2.43", ``{{ percent|score:1 }}`` -> "80.4". Empty for a missing or non-numeric value."""

from django import template

from grading.core.score_rounding import SHOWN_POINT_PLACES, score_text

register = template.Library()


@register.filter
def score(value, places=SHOWN_POINT_PLACES) -> str:
    if value is None or value == "" or isinstance(value, bool):
        return ""
    try:
        return score_text(value, int(places))
    except (TypeError, ValueError, ArithmeticError):
        return ""
