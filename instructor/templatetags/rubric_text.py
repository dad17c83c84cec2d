"""Template filters of the rubric pages: how a rubric's ticked items become a score."""

from django import template

from instructor.selectors_rubrics import rubric_scale_words

register = template.Library()


@register.filter
def rubric_scale(rubric) -> str:
    """``{{ rubric|rubric_scale }}``: the sentence of ``rubric_scale_words`` for its items."""
    return rubric_scale_words(rubric.items.all()) if rubric is not None else ""


@register.filter
def points_of(fraction, part_points) -> float | str:
    """``{{ submission.awarded|points_of:part_points|score }}``: a part's score (a fraction)
    as the points it earns of the part's points, as the gradebook counts them ("" for none)."""
    if fraction is None or fraction == "" or part_points in (None, ""):
        return ""
    try:
        return float(fraction) * float(part_points)
    except (TypeError, ValueError):
        return ""
