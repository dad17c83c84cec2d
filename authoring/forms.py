"""Forms of the authoring pages. Source text is never stripped: export must give back
exactly what was stored."""

from __future__ import annotations

import base64
import binascii

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
    file = forms.FileField(label="Exercise file (.yaml)", required=False)
    # The file of an import refused while another run of the author's was under way, kept in
    # the page so that it is sent again without being chosen again: base64, because a text
    # field's line breaks come back from the browser as CRLF, and the file is stored exactly.
    kept = forms.CharField(
        required=False, widget=forms.HiddenInput, max_length=4 * (MAX_SOURCE_BYTES // 3 + 1)
    )
    kept_name = forms.CharField(required=False, widget=forms.HiddenInput, max_length=255)

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload is None:
            return None
        if not upload.name.lower().endswith((".yaml", ".yml")):
            raise forms.ValidationError("Upload a .yaml or .yml exercise file.")
        if upload.size > MAX_SOURCE_BYTES:
            raise forms.ValidationError(
                f"The file is too large ({upload.size} bytes; the limit is {MAX_SOURCE_BYTES})."
            )
        return upload

    def clean_kept(self) -> bytes | None:
        text = self.cleaned_data["kept"]
        if not text:
            return None
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise forms.ValidationError(
                "The file kept from the last try cannot be read; choose it again."
            ) from None

    def clean(self):
        cleaned = super().clean()
        if not self.errors and cleaned.get("file") is None and cleaned.get("kept") is None:
            self.add_error("file", "Choose an exercise file to import.")
        return cleaned

    def upload(self) -> tuple[str, bytes]:
        """The name and bytes to import: a newly chosen file, else the one kept from the last try."""
        chosen = self.cleaned_data["file"]
        if chosen is not None:
            return chosen.name, chosen.read()
        return self.cleaned_data["kept_name"] or "exercise.yaml", self.cleaned_data["kept"]

    @staticmethod
    def kept_initial(*, name: str, data: bytes) -> dict:
        return {"kept": base64.b64encode(data).decode("ascii"), "kept_name": name}


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
