"""Template filter ``markdown_math``: exercise text (Markdown + LaTeX) as safe HTML."""

from django import template
from django.utils.safestring import mark_safe

from exercises.markdown_math import render_markdown_math
from grading.answer_input import answer_line

register = template.Library()


@register.filter
def markdown_math(text: str) -> str:
    return mark_safe(render_markdown_math(text))  # its last step is the allow-list sanitiser


@register.filter
def answer_as_text(raw_answer) -> str:
    """A stored answer as the student entered it, on one line (a matrix as [a, b; c, d])."""
    return answer_line(raw_answer)
