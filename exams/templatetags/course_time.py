"""The one filter every date and time a person reads goes through: shown in the course's
time zone, with the zone's label ("Mon 2 Mar 2026, 18:25 CET"), so no page shows an
unlabelled or UTC time to a course that lives elsewhere.

    {% load course_time %}
    {{ attempt.finished_at|course_time:assignment.course }}        Mon 2 Mar 2026, 18:25 CET
    {{ attempt.finished_at|course_time_short:assignment.course }}  18:25 CET (today) or Mon 2 Mar, 18:25 CET
"""

from __future__ import annotations

import zoneinfo
from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


def zone_of(course_or_zone) -> zoneinfo.ZoneInfo:
    """The zone of a course (its ``time_zone``), of a zone name, or the active one."""
    name = getattr(course_or_zone, "time_zone", course_or_zone)
    if isinstance(name, zoneinfo.ZoneInfo):
        return name
    if name:
        try:
            return zoneinfo.ZoneInfo(str(name))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            pass
    return timezone.get_current_timezone()


def _label(local: datetime) -> str:
    return local.strftime("%Z") or local.strftime("UTC%z")


def course_time_text(value, course_or_zone=None, *, short: bool = False, now=None) -> str:
    if not isinstance(value, datetime):
        return ""
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.utc)
    local = timezone.localtime(value, zone_of(course_or_zone))
    clock = f"{local:%H:%M} {_label(local)}"
    if short:
        today = timezone.localtime(now or timezone.now(), local.tzinfo).date()
        if local.date() == today:
            return clock
        return f"{local:%a} {local.day} {local:%b}, {clock}"
    return f"{local:%a} {local.day} {local:%b %Y}, {clock}"


@register.filter
def course_time(value, course_or_zone=None) -> str:
    """A date and time in the course's zone, labelled: "Mon 2 Mar 2026, 18:25 CET"."""
    return course_time_text(value, course_or_zone)


@register.filter
def course_time_short(value, course_or_zone=None) -> str:
    """The time alone when it is today in the course's zone ("18:25 CET"), else with the day."""
    return course_time_text(value, course_or_zone, short=True)
