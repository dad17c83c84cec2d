"""Forms of the authoring pages. Source text is never stripped: export must give back
exactly what was stored."""

from __future__ import annotations

from django import forms

from exercises.engine.variants import SEED_BITS

from .models import SecondReviewer
from .services import MAX_SOURCE_BYTES


class SourceForm(forms.Form):
    source = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 30, "cols": 90, "spellcheck": "false", "class": "source"}),
        max_length=MAX_SOURCE_BYTES,
    )

    def clean_source(self) -> str:
        # Browsers send textarea line breaks as CRLF whatever the author typed.
        return self.cleaned_data["source"].replace("\r\n", "\n")


class ImportForm(forms.Form):
    file = forms.FileField(label="Exercise file (.yaml)")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if not upload.name.lower().endswith((".yaml", ".yml")):
            raise forms.ValidationError("Upload a .yaml or .yml exercise file.")
        if upload.size > MAX_SOURCE_BYTES:
            raise forms.ValidationError(
                f"The file is too large ({upload.size} bytes; the limit is {MAX_SOURCE_BYTES})."
            )
        return upload


class PreviewForm(forms.Form):
    seed = forms.IntegerField(min_value=0, max_value=2**SEED_BITS - 1, initial=0)
    variant = forms.CharField(required=False, max_length=64)


class VariantTestForm(forms.Form):
    first_seed = forms.IntegerField(min_value=0, max_value=2**SEED_BITS - 200, initial=0)


class CommentForm(forms.Form):
    message = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=5000)


class TransitionForm(forms.Form):
    to_status = forms.CharField(max_length=20)
    message = forms.CharField(required=False, max_length=5000)


class ReviewSettingForm(forms.Form):
    second_reviewer = forms.ChoiceField(
        choices=SecondReviewer.choices, widget=forms.RadioSelect, label="Require a second reviewer"
    )
