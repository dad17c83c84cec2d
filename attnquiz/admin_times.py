"""The admin's lists show each date and time through the one
labelled format ("Mon 2 Mar 2026, 18:25 CET"), in the site's zone, instead of Django's
unlabelled "March 2, 2026, 6:25 p.m."."""

from __future__ import annotations

from django.contrib import admin
from django.db import models

from courses.time_text import course_time_text


def _labelled_time_column(model, name: str):
    """A list column (or read-only field) showing the datetime field ``name`` labelled."""

    def column(obj):
        return course_time_text(getattr(obj, name)) or "—"

    field = model._meta.get_field(name)
    column.__name__ = f"{name}_labelled"
    column.short_description = field.verbose_name
    column.admin_order_field = name
    return column


def _is_datetime(model, name) -> bool:
    if not isinstance(name, str):
        return False
    try:
        return isinstance(model._meta.get_field(name), models.DateTimeField)
    except Exception:  # a method or another column, not a field
        return False


class LabelledTimesAdmin(admin.ModelAdmin):
    """A ModelAdmin whose datetime list columns are labelled. (A change page keeps Django's
    rendering: a read-only field given as a column would leave the field itself editable.)"""

    def get_list_display(self, request):
        return [
            _labelled_time_column(self.model, name) if _is_datetime(self.model, name) else name
            for name in super().get_list_display(request)
        ]
