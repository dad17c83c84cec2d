"""Forms of the course pages; bad input becomes a message on the form, never a 500."""

from __future__ import annotations

import zoneinfo
from functools import lru_cache

from django import forms
from django.utils import timezone

from attnquiz.input_limits import validate_storable_date

from .models import Course, Role
from .services import MAX_ROSTER_BYTES, course_slug_normalise, course_slug_refusal, course_text_normalise


def _clean_course_slug(value: str) -> str:
    """A new course's short name, in lower case, neither taken (in any case) nor a word of
    the site's addresses (``services.course_slug_refusal``)."""
    slug = course_slug_normalise(value)
    if refusal := course_slug_refusal(slug):
        raise forms.ValidationError(refusal)
    return slug


def _clean_course_text(value: str, *, required: bool) -> str:
    text = course_text_normalise(value)
    if required and not text:
        raise forms.ValidationError("This field is required.")
    return text


class DateTimeInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def format_value(self, value):
        if hasattr(value, "strftime"):
            if timezone.is_aware(value):
                value = timezone.localtime(value)
            return value.strftime("%Y-%m-%dT%H:%M")
        return value


DATE_TIME_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"]


class StorableDateTimeField(forms.DateTimeField):
    """A date and time the site can store and read back, in the course's time zone
    (attnquiz.input_limits.STORED_YEARS): every date form field is one."""

    default_validators = [validate_storable_date]


@lru_cache(maxsize=1)
def time_zone_choices() -> list[tuple[str, str]]:
    return [(name, name) for name in sorted(zoneinfo.available_timezones())]


class CourseNamesCleaned:
    """A course's short name, title and term as every course form takes them: the short name
    lower case and not a reserved word, title and term without line breaks or control
    characters."""

    def clean_slug(self):
        return _clean_course_slug(self.cleaned_data["slug"])

    def clean_title(self):
        return _clean_course_text(self.cleaned_data["title"], required=True)

    def clean_term(self):
        return _clean_course_text(self.cleaned_data.get("term") or "", required=False)


class CourseForm(CourseNamesCleaned, forms.ModelForm):
    time_zone = forms.ChoiceField(choices=time_zone_choices, initial="UTC")

    class Meta:
        model = Course
        fields = ["title", "slug", "term", "time_zone", "description"]
        labels = {"slug": "Short name (in web addresses)"}
        help_texts = {"slug": "Letters, digits and hyphens, e.g. attention-2027; it cannot be changed later."}
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if editing:
            del self.fields["slug"]


class CopyForm(CourseNamesCleaned, forms.Form):
    title = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=50, label="Short name (in web addresses)")
    term = forms.CharField(max_length=100, required=False)
    offset_days = forms.IntegerField(
        min_value=-3650, max_value=3650, initial=0, label="Move every date by (days)",
        help_text="e.g. 364 moves a Monday deadline to the Monday a year later.",
    )
    copy_staff = forms.BooleanField(required=False, initial=True, label="Invite the same instructors and teaching assistants (each joins when they accept on their dashboard)")


class JoinSettingsForm(forms.Form):
    join_open = forms.BooleanField(required=False, label="Joining by code is open")
    join_expires_at = StorableDateTimeField(
        required=False, label="Code expires at", widget=DateTimeInput(), input_formats=DATE_TIME_FORMATS,
        help_text="Leave empty for no expiry.",
    )


class PersonAddForm(forms.Form):
    identifier = forms.CharField(max_length=254, label="Username or e-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.STUDENT)
    student_id = forms.CharField(max_length=64, required=False, label="Student id (optional)")
    invite = forms.BooleanField(
        required=False, label="Send an invitation e-mail with a link to choose a password",
        help_text="With an e-mail address and no account yet, this also creates the account. An existing "
        "account not in the course is invited (it joins when its owner accepts) and e-mailed a note of it.",
    )


class CsvUploadForm(forms.Form):
    """A CSV, uploaded or pasted, within the import size limit and in UTF-8: the roster's
    and the accommodations' imports take it."""

    file = forms.FileField(required=False, label="Roster CSV file")
    text = forms.CharField(
        required=False, max_length=MAX_ROSTER_BYTES, label="…or paste the CSV",
        widget=forms.Textarea(attrs={"rows": 8, "class": "source"}),
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        if upload is not None:
            if upload.size > MAX_ROSTER_BYTES:
                raise forms.ValidationError(f"The file is larger than {MAX_ROSTER_BYTES // 1000} kB; split it.")
            try:
                cleaned["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text; save it as “CSV UTF-8”.") from None
        if not (cleaned.get("text") or "").strip():
            raise forms.ValidationError("Choose a CSV file or paste its lines.")
        return cleaned


class RosterForm(CsvUploadForm):
    invite = forms.BooleanField(
        required=False, label="Send each new account an invitation e-mail with a link to choose a password",
        help_text="An existing account not in the course is invited instead (it joins when its owner accepts); "
        "this also e-mails it a note of the invitation.",
    )


class JoinCodeForm(forms.Form):
    code = forms.CharField(max_length=16, label="Join code")
