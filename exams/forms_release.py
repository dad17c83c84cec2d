"""The form of the release confirmation's "Release at …" (a time in the course's zone)."""

from __future__ import annotations

from django import forms
from django.utils import timezone

from courses.forms import DATE_TIME_FORMATS, DateTimeInput, StorableDateTimeField

from courses.time_text import zone_of


class ReleaseScheduleForm(forms.Form):
    """``at`` is read in the course's zone, whatever zone the request runs in."""

    at = StorableDateTimeField(label="Release at", widget=DateTimeInput(), input_formats=DATE_TIME_FORMATS)

    def __init__(self, *args, course, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = zone_of(course)
        self.fields["at"].help_text = f"In the course's time zone ({self.zone.key})."

    def clean_at(self):
        value = self.cleaned_data["at"]
        # The field made the typed wall-clock time aware in the active zone: read it in the course's.
        wall_clock = timezone.make_naive(value, timezone.get_current_timezone())
        return timezone.make_aware(wall_clock, self.zone)
