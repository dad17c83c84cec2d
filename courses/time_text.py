"""Times in words as a person reads them: in the course's time zone (a course's
``time_zone``, a zone name, or, with neither, the active zone: the site's TIME_ZONE outside
a course's pages), with the zone's label ("Mon 2 Mar 2026, 18:25 CET"). The template filter
``course_time`` (exams/templatetags) and every text a service composes with a time in it
(an accommodation's change log, an invitation's state) use it, so no page shows an
unlabelled time."""

from __future__ import annotations

import zoneinfo
from datetime import datetime

from django.utils import timezone


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
    """"Mon 2 Mar 2026, 18:25 CET"; ``short``: "18:25 CET" when it is today there, else
    "Mon 2 Mar, 18:25 CET". Empty for anything but a datetime."""
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
