"""The course's review settings form; assignments offered are the course's own only."""

from django import forms

from courses.models import Assignment


class ReviewSettingsForm(forms.Form):
    enabled = forms.BooleanField(
        required=False,
        label="Spaced review on",
        help_text="Students get parts they practised back on their home page when FSRS says they are due.",
    )
    feeding_assignments = forms.ModelMultipleChoiceField(
        queryset=Assignment.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Assignments that feed review",
        help_text="Practice always feeds review; graded answers to the assignments ticked here do too.",
    )

    def __init__(self, *args, course, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["feeding_assignments"]
        field.queryset = Assignment.objects.filter(course=course).order_by("title")
        field.label_from_instance = lambda assignment: assignment.title
