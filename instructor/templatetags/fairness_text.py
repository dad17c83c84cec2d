"""Template filters of the variant-fairness section: p-values as a person reads them."""

from django import template

from exercises.engine.fairness import p_value_text

register = template.Library()


@register.filter
def p_value(value) -> str:
    return "" if value is None else p_value_text(float(value))
