"""Template filters for the attention-weight heatmap include (grading/_heatmap.html)."""

import math
from decimal import ROUND_HALF_UP, Decimal

from django import template
from django.template.defaultfilters import floatformat

from explorations.heatmap import heat_level

register = template.Library()


@register.filter
def heat_class(weight) -> str:
    """CSS class colouring a cell by its weight, e.g. ``aq-heat-8`` for 0.4."""
    try:
        return f"aq-heat-{heat_level(float(weight))}"
    except (TypeError, ValueError):
        return "aq-heat-0"


@register.filter
def item_at(sequence, index):
    """``labels|item_at:forloop.counter0``; empty when the sequence is shorter."""
    try:
        return sequence[int(index)]
    except (IndexError, TypeError, ValueError, KeyError):
        return ""


@register.filter
def weight_text(weight, places=4) -> str:
    """``weight|floatformat:places`` for a number, without floatformat's per-call format
    and language lookups (the site is in English): a heatmap prints every cell, and a
    graded result shows one per attempt. The same digits: half up on the number's decimal
    form, no "-0"."""
    try:
        places = int(places)
    except (TypeError, ValueError):
        return floatformat(weight, places)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or places <= 0 or not math.isfinite(weight):
        return floatformat(weight, places)
    rounded = Decimal(repr(float(weight))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{abs(rounded) if rounded == 0 else rounded:f}"
