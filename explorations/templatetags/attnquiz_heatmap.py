"""Template filters for the attention-weight heatmap include (grading/_heatmap.html)."""

from django import template

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
