"""The staff's reply to a student's regrade request: the words the student reads and, for a
checked answer, the new score that goes with them."""

from __future__ import annotations

from django import forms

from .services_rubrics import MAX_REGRADE_REPLY


class RegradeReplyForm(forms.Form):
    """``cleaned_data["fraction"]``: the new score in [0, 1], None to keep the grade."""

    reply = forms.CharField(
        label="Reply to the student", max_length=MAX_REGRADE_REPLY,
        error_messages={"required": "Write a reply for the student."},
        widget=forms.Textarea(attrs={"rows": 3, "cols": 50}),
    )
    score = forms.FloatField(
        label="New score (% of the part)", required=False, min_value=0, max_value=100,
        help_text="Leave empty to keep the grade.",
        widget=forms.NumberInput(attrs={"step": "any", "min": "0", "max": "100"}),
    )

    def clean(self):
        cleaned = super().clean()
        score = cleaned.get("score")
        cleaned["fraction"] = None if score is None else score / 100
        return cleaned
