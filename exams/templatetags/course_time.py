"""The one filter every date and time a person reads goes through: shown in the course's
time zone, with the zone's label ("Mon 2 Mar 2026, 18:25 CET"), so no page shows an
unlabelled or UTC time to a course that lives elsewhere.

    {% load course_time %}
    {{ attempt.finished_at|course_time:assignment.course }}        Mon 2 Mar 2026, 18:25 CET
    {{ attempt.finished_at|course_time_short:assignment.course }}  18:25 CET (today) or Mon 2 Mar, 18:25 CET
"""

from __future__ import annotations

from django import template

from courses.time_text import course_time_text, zone_of  # noqa: F401  (views and forms read them here too)

register = template.Library()


@register.filter
def course_time(value, course_or_zone=None) -> str:
    """A date and time in the course's zone, labelled: "Mon 2 Mar 2026, 18:25 CET"."""
    return course_time_text(value, course_or_zone)


@register.filter
def course_time_short(value, course_or_zone=None) -> str:
    """The time alone when it is today in the course's zone ("18:25 CET"), else with the day."""
    return course_time_text(value, course_or_zone, short=True)
