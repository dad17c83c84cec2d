"""Template filters for the attention-weight heatmap include (grading/_heatmap.html)."""

import math
from decimal import ROUND_HALF_UP, Context, Decimal

from django import template
from django.template.defaultfilters import floatformat
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe

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
        places = min(int(places), MOST_PLACES)
    except (TypeError, ValueError):
        return floatformat(weight, places)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or places <= 0 or not math.isfinite(weight):
        return floatformat(weight, places)
    if abs(weight) >= LARGEST_CELL_WRITTEN_OUT:
        return f"{float(weight):.{min(places, 6)}g}"  # 1e+30, not 31 digits and four zeros
    rounded = Decimal(repr(float(weight))).quantize(
        Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=_ENOUGH_DIGITS)
    return f"{abs(rounded) if rounded == 0 else rounded:f}"


# A cell at or above this prints in scientific notation. Below it, the decimal context
# below holds every digit a finite float can need at any number of places asked for (the
# default context's 28 digits raised InvalidOperation from 1e24 at 4 places: any student
# who typed such a number into a weights grid got a 500 on every page showing that answer).
LARGEST_CELL_WRITTEN_OUT = 1e15
MOST_PLACES = 20
_ENOUGH_DIGITS = Context(prec=400)


_OFF_MARK = '<span class="aq-heatmap__mark" aria-hidden="true">✗</span><span class="aq-visually-hidden"> (off)</span>'


def _on_scale(weight, low: float, high: float):
    """Where ``weight`` sits from ``low`` (0) to ``high`` (1); anything not a number as it is
    (``heat_class`` colours it as 0)."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        return weight
    return (weight - low) / (high - low)


@register.simple_tag
def heatmap_table(
    rows, *, off=None, row_labels=None, col_labels=None, title="", decimals=None, scale=None, corner="query / key"
) -> str:
    """The heatmap's table (``grading/_heatmap.html``), built here rather than in template
    loops: a graded result shows one or two per attempt, and the template engine spent
    about 0.2 ms on a 1×4 table and 1.2 ms on a 6×6 one. Every text goes through
    ``conditional_escape``; a cell marked in ``off`` gets the ✗ and "(off)" for screen
    readers, as the include documents.

    ``decimals``: 4 when not given (0 prints whole numbers). ``scale``: (low, high), the
    numbers coloured lightest and darkest; (0, 1), attention weights, when not given.
    ``corner``: what the header corner says to screen readers (with row labels only)."""
    places = 4 if decimals is None or decimals == "" else decimals
    low, high = (float(end) for end in scale) if scale else (0.0, 1.0)
    weight_scale = (low, high) == (0.0, 1.0)
    parts = ['<figure class="aq-heatmap">\n  <table class="aq-heatmap__table">\n']
    if title:
        parts.append(f'    <caption class="aq-heatmap__title">{conditional_escape(title)}</caption>\n')
    if col_labels:
        parts.append("    <thead>\n      <tr>\n")
        if row_labels:
            parts.append(f'        <td class="aq-heatmap__corner"><span class="aq-visually-hidden">{conditional_escape(corner)}</span></td>\n')
        parts.append("".join(f'<th scope="col">{conditional_escape(label)}</th>' for label in col_labels))
        parts.append("\n      </tr>\n    </thead>\n")
    parts.append("    <tbody>\n")
    for index, row in enumerate(rows or ()):
        parts.append("      <tr>\n")
        if row_labels:
            parts.append(f'        <th scope="row">{conditional_escape(item_at(row_labels, index))}</th>\n')
        marks = item_at(off, index)
        for column, weight in enumerate(row):
            level = heat_class(weight if weight_scale else _on_scale(weight, low, high))
            cell = f'<td class="aq-heatmap__cell {level}'
            text = conditional_escape(weight_text(weight, places))
            if item_at(marks, column) is True:
                parts.append(f'{cell} is-off">{text}{_OFF_MARK}</td>')
            else:
                parts.append(f'{cell}">{text}</td>')
        parts.append("\n      </tr>\n")
    parts.append("    </tbody>\n  </table>\n</figure>\n")
    # Safe: the markup above is this function's own; every text in it (title, labels,
    # numbers) went through conditional_escape, and the cell classes come from integers.
    return mark_safe("".join(parts))


@register.simple_tag
def figure_heatmap(figure: dict) -> str:
    """An exercise's figure (``exercises.engine.render_figures``' data) as a heatmap table."""
    return heatmap_table(
        figure["rows"], row_labels=figure["row_labels"], col_labels=figure["col_labels"], title=figure["title"],
        decimals=figure["decimals"], scale=figure["range"], corner=figure.get("corner") or "",
    )
