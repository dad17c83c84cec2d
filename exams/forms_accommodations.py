"""Forms of the accommodations pages and the proctor view. Values are checked by
exams.services_accommodations (one set of rules for the form and the CSV)."""

from __future__ import annotations

from django import forms

from courses.forms import DATE_TIME_FORMATS, CsvUploadForm, DateTimeInput, StorableDateTimeField

from .services_accommodations import (
    COURSE_FIELDS,
    FIELDS,
    MAX_EXTEND_MINUTES,
    accommodation_problems,
    course_accommodation_problems,
)


def _add_problems(form: forms.Form, problems: dict[str, str]) -> None:
    """Every field's problem at once, beside it: a field that did not parse keeps its own
    message (its value reads as "keep the assignment's" to the checks) and gets no second."""
    for name, message in problems.items():
        if name not in form.errors:
            form.add_error(name, message)


class StudentChoiceField(forms.ModelChoiceField):
    # Students already holding the accommodation the "add" form makes (ids): their label
    # says that choosing them opens theirs for editing.
    marked: frozenset = frozenset()
    MARK = " · has one already: opens it for editing"

    def label_from_instance(self, user) -> str:
        name = user.get_full_name()
        label = f"{user.username} ({name})" if name else user.username
        return label + self.MARK if user.pk in self.marked else label


class AccommodationForm(forms.Form):
    """One student's accommodation; an empty field keeps the assignment's value."""

    student = StudentChoiceField(queryset=None, label="Student")
    time_factor = forms.FloatField(
        required=False, label="Time factor", help_text="1.5 gives 50 % extra time.",
        widget=forms.NumberInput(attrs={"step": "any", "min": "1", "max": "10"}),
    )
    extra_minutes = forms.IntegerField(required=False, label="Extra minutes", min_value=0)
    time_limit_minutes = forms.IntegerField(
        required=False, label="Own time limit (minutes)", min_value=1,
        help_text="Replaces the assignment's limit; leave empty to use extra time instead.",
    )
    opens_at = StorableDateTimeField(required=False, label="Opens", widget=DateTimeInput(), input_formats=DATE_TIME_FORMATS)
    due_at = StorableDateTimeField(required=False, label="Due", widget=DateTimeInput(), input_formats=DATE_TIME_FORMATS)
    closes_at = StorableDateTimeField(required=False, label="Closes", widget=DateTimeInput(), input_formats=DATE_TIME_FORMATS)
    attempts_per_part = forms.IntegerField(
        required=False, label="Attempts per part", min_value=0, help_text="0 is unlimited."
    )
    note = forms.CharField(
        required=False, max_length=200, label="Note",
        help_text="For the staff only (e.g. the disability office's reference).",
    )

    def __init__(self, *args, assignment, students, student=None, marked=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.assignment = assignment
        self.fields["student"].queryset = students
        self.fields["student"].marked = frozenset(marked)
        if student is not None:
            # Editing one student's: the student is fixed by the page's address.
            del self.fields["student"]
            self.student = student
        self.fields["time_factor"].error_messages["invalid"] = "Give a number, e.g. 1.5."

    def clean(self):
        cleaned = super().clean()
        values = {name: cleaned.get(name) for name in FIELDS}
        _add_problems(self, accommodation_problems(assignment=self.assignment, values=values))
        return cleaned

    def values(self) -> dict:
        return {name: self.cleaned_data.get(name) for name in FIELDS}

    def chosen_student(self):
        return getattr(self, "student", None) or self.cleaned_data["student"]


class CourseAccommodationForm(forms.Form):
    """One student's course-wide accommodation; an empty field keeps each assignment's
    value, and an assignment's own accommodation overrides it field by field."""

    student = StudentChoiceField(queryset=None, label="Student")
    time_factor = forms.FloatField(
        required=False, label="Time factor",
        help_text="1.5 gives 50 % extra time on every assignment with a time limit.",
        widget=forms.NumberInput(attrs={"step": "any", "min": "1", "max": "10"}),
    )
    extra_minutes = forms.IntegerField(
        required=False, label="Extra minutes", min_value=0,
        help_text="Added (after the factor) on every assignment with a time limit.",
    )
    attempts_per_part = forms.IntegerField(
        required=False, label="Attempts per part", min_value=0,
        help_text="On every assignment; 0 is unlimited.",
    )
    note = forms.CharField(
        required=False, max_length=200, label="Note",
        help_text="For the staff only (e.g. the disability office's reference).",
    )

    def __init__(self, *args, students, student=None, marked=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["student"].queryset = students
        self.fields["student"].marked = frozenset(marked)
        if student is not None:
            del self.fields["student"]
            self.student = student
        self.fields["time_factor"].error_messages["invalid"] = "Give a number, e.g. 1.5."

    def clean(self):
        cleaned = super().clean()
        _add_problems(self, course_accommodation_problems(values=self.values()))
        return cleaned

    def values(self) -> dict:
        return {name: self.cleaned_data.get(name) for name in COURSE_FIELDS}

    def chosen_student(self):
        return getattr(self, "student", None) or self.cleaned_data["student"]


class AccommodationsCsvForm(CsvUploadForm):
    """The same upload rules as the roster's (size, UTF-8), with this page's labels."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].label = "Accommodations CSV file"


class ExtendTimeForm(forms.Form):
    student = StudentChoiceField(queryset=None, label="Student")
    minutes = forms.IntegerField(
        label="Minutes more", min_value=1, max_value=MAX_EXTEND_MINUTES, initial=10,
        widget=forms.NumberInput(attrs={"size": 4}),
    )

    def __init__(self, *args, students, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["student"].queryset = students
