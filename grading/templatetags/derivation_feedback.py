"""``{{ feedback|derivation_steps:visibility }}``: the typeset steps of a derivation's feedback."""

from django import template
from django.utils.safestring import mark_safe

from grading.derivation_feedback import derivation_steps_html

register = template.Library()


@register.filter
def derivation_steps(feedback, visibility) -> str:
    html = derivation_steps_html(
        feedback,
        show_verdicts=bool(getattr(visibility, "correctness", False)),
        show_instances=bool(getattr(visibility, "solutions", False)),
    )
    return mark_safe(html)  # built from escaped parts and passed through sanitise_html
