"""Template filters of the rubric pages: how a rubric's ticked items become a score."""

from django import template

from instructor.selectors_rubrics import rubric_scale_words

register = template.Library()


@register.filter
def rubric_scale(rubric) -> str:
    """``{{ rubric|rubric_scale }}``: the sentence of ``rubric_scale_words`` for its items."""
    return rubric_scale_words(rubric.items.all()) if rubric is not None else ""
