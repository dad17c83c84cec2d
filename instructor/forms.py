"""Forms of the teaching pages; they turn bad input into messages, never into a 500."""

from __future__ import annotations

import json

from django import forms
from django.utils.text import slugify

from courses.forms import DATE_TIME_FORMATS, DateTimeInput, StorableDateTimeField
from courses.models import Assignment, AssignmentKind, ReleaseMoment, SessionPolicy
from courses.pools import pool_points_problems
from courses.services import course_slug_normalise
from exams.access import networks_parse
from exercises.models import ExerciseVersion, VersionStatus

from .selectors import part_keys_of, unknown_parts_message
from .selectors_picker import assignable_versions


REVIEW_FIELDS = (
    "show_correctness", "show_score", "show_misconception", "show_hints", "show_heatmap", "show_solutions",
)
# An exam shows nothing but "Answer saved" until the instructor releases the grades, and
# never the worked solutions (they would travel to next term's students).
REVIEW_PRESETS = {
    "exam": {**{name: ReleaseMoment.ON_RELEASE for name in REVIEW_FIELDS}, "show_solutions": ReleaseMoment.NEVER},
    "homework": {name: ReleaseMoment.DURING for name in REVIEW_FIELDS},
}


class AssignmentForm(forms.ModelForm):
    review_preset = forms.ChoiceField(
        required=False,
        label="Review preset",
        choices=[
            ("", "Keep the choices below"),
            ("exam", "Exam: everything when I release the grades, solutions never"),
            ("homework", "Homework: everything during the attempt"),
        ],
        help_text="Sets the six review fields below at once.",
    )
    access_code_remove = forms.BooleanField(required=False, label="Remove the access code")

    class Meta:
        model = Assignment
        fields = [
            "title", "slug", "opens_at", "due_at", "closes_at", "attempts_per_part",
            "penalty_per_extra_attempt", "late_penalty", "time_limit_minutes", "solution_policy",
            "is_published",
            # Order and exam access controls.
            "shuffle_items", "access_code", "allowed_networks", "session_policy",
            # Kind and review policy: what a student sees of a graded answer, and from when.
            "kind", *REVIEW_FIELDS,
        ]
        field_classes = {"opens_at": StorableDateTimeField, "due_at": StorableDateTimeField,
                         "closes_at": StorableDateTimeField}
        widgets = {
            "opens_at": DateTimeInput(),
            "due_at": DateTimeInput(),
            "closes_at": DateTimeInput(),
            "allowed_networks": forms.Textarea(attrs={"rows": 3, "cols": 40, "spellcheck": "false"}),
            "access_code": forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        }
        labels = {
            "attempts_per_part": "Attempts per part (0 = unlimited)",
            "time_limit_minutes": "Time limit (minutes)",
            "shuffle_items": "Shuffle the exercises per student",
            "session_policy": "Browser sessions per attempt",
            "kind": "Kind",
            "show_correctness": "Show right or wrong",
            "show_score": "Show the score",
            "show_misconception": "Show misconception feedback",
            "show_hints": "Show hints",
            "show_heatmap": "Show the student's heatmap",
            "show_solutions": "Show worked solutions",
        }
        help_texts = {
            "solution_policy": "When students may see the worked solutions.",
            "access_code": "If set, students enter it once per attempt before they see the exercises.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["session_policy"].required = False  # a form without it keeps any number
        # A form that leaves them out keeps today's behaviour: homework, everything during.
        for name in ("kind", *REVIEW_FIELDS):
            self.fields[name].required = False
        # The preset sits just above the six fields it sets.
        names = list(self.fields)
        names.remove("review_preset")
        names.insert(names.index("show_correctness"), "review_preset")
        self.order_fields(names)
        # The stored code is a hash: never shown; an empty field keeps it.
        self.initial["access_code"] = ""
        if self.instance.pk and self.instance.access_code:
            self.fields["access_code"].help_text = (
                "A code is set (stored hashed, so it cannot be shown): type a new one to replace "
                "it, or tick “Remove the access code”."
            )
        if self.instance.pk and self.instance.access_code:
            names = list(self.fields)
            names.remove("access_code_remove")
            names.insert(names.index("access_code") + 1, "access_code_remove")
            self.order_fields(names)
        else:
            del self.fields["access_code_remove"]  # nothing to remove: no code is set
        for name in ("opens_at", "due_at", "closes_at"):
            self.fields[name].input_formats = DATE_TIME_FORMATS
        self.fields["slug"].required = False
        self.fields["slug"].help_text = "Its address in the course; made from the title when left empty."
        # The preset's values ride on its select, so static/attnquiz/assignment_form.js can
        # show them in the six fields as soon as one is chosen (the CSP forbids inline script).
        self.fields["review_preset"].widget.attrs["data-presets"] = json.dumps(REVIEW_PRESETS)

    def clean_slug(self):
        """Left empty: the one it had, or (new) one made from the title. A new one is stored in
        lower case (courses.services.course_slug_normalise); the one it had is kept as it is,
        even in capitals from before, so that links to it keep working."""
        stored = self.instance.slug if self.instance.pk else ""
        slug = (self.cleaned_data.get("slug") or "").strip()
        if not slug:
            return stored or slugify(str(self.data.get("title", "")))[:50].strip("-") or "assignment"
        return stored if slug == stored else course_slug_normalise(slug)

    def clean(self):
        cleaned = super().clean()
        for name in ("penalty_per_extra_attempt", "late_penalty"):
            value = cleaned.get(name)
            if value is not None and not 0.0 <= value <= 1.0:
                self.add_error(name, "Give a fraction between 0 and 1 (e.g. 0.1 for 10 %).")
        opens, due, closes = cleaned.get("opens_at"), cleaned.get("due_at"), cleaned.get("closes_at")
        if opens and due and due < opens:
            self.add_error("due_at", "The due date is before the assignment opens.")
        if due and closes and closes < due:
            self.add_error("closes_at", "The assignment closes before it is due.")
        if opens and closes and closes < opens:
            self.add_error("closes_at", "The assignment closes before it opens.")
        if cleaned.get("time_limit_minutes") == 0:
            self.add_error("time_limit_minutes", "Leave empty for no time limit.")
        self._clean_review(cleaned)
        return cleaned

    def _clean_review(self, cleaned: dict) -> None:
        """Apply the preset chosen, fill left-out fields with their defaults, and refuse a
        moment that can never come."""
        preset = cleaned.pop("review_preset", "") or ""
        cleaned["kind"] = cleaned.get("kind") or AssignmentKind.HOMEWORK
        for name in REVIEW_FIELDS:
            cleaned[name] = REVIEW_PRESETS[preset][name] if preset else (cleaned.get(name) or ReleaseMoment.DURING)
            if cleaned[name] == ReleaseMoment.AFTER_CLOSE and not cleaned.get("closes_at"):
                self.add_error(name, "“After the close date” needs a close date; without one it never comes.")

    def clean_allowed_networks(self) -> str:
        text = self.cleaned_data.get("allowed_networks") or ""
        _, problems = networks_parse(text)
        if problems:
            raise forms.ValidationError(problems)
        return text.strip()

    def clean_session_policy(self) -> str:
        return self.cleaned_data.get("session_policy") or SessionPolicy.ANY

    def clean_access_code(self) -> str:
        code = (self.cleaned_data.get("access_code") or "").strip()
        if self.data.get(self.add_prefix("access_code_remove")):
            return ""
        return code or (self.instance.access_code if self.instance.pk else "")

    def validate_unique(self):
        # The course is not a form field; uniqueness of the slug per course is checked by the service.
        pass


class ItemAddForm(forms.Form):
    version = forms.ModelChoiceField(queryset=ExerciseVersion.objects.none(), label="Exercise (published version)")
    points = forms.FloatField(min_value=0, max_value=1000, initial=1.0)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["version"].queryset = assignable_versions()


class ItemsAddForm(forms.Form):
    """The picker's "Add N exercises": the ticked version ids (``version``, repeated, in the
    order chosen) and the points each new item carries. Which ids may be added is the
    service's to decide; here they need only be whole numbers."""

    points = forms.FloatField(min_value=0, max_value=1000, initial=1.0)

    def clean(self):
        cleaned = super().clean()
        raw = self.data.getlist("version") if hasattr(self.data, "getlist") else []
        try:
            cleaned["version_ids"] = [int(value) for value in raw]
        except (TypeError, ValueError):
            shown = ", ".join(repr(value[:20]) for value in raw if not value.strip().isdigit())
            raise forms.ValidationError(f"Not an exercise version id: {shown}. Nothing was added.") from None
        return cleaned


class ItemUpdateForm(forms.Form):
    """``position`` is typed as the page's "#" (1 for the first exercise) and cleaned to the
    0-based index the service takes. A 0 passes here so that the service's refusal, which
    names the numbers there are ("numbered 1 to 3"), answers it."""

    points = forms.FloatField(min_value=0, max_value=1000)
    position = forms.IntegerField(min_value=0, max_value=10_000)
    version = forms.ModelChoiceField(
        queryset=ExerciseVersion.objects.filter(status=VersionStatus.PUBLISHED), required=False
    )

    def clean_position(self) -> int:
        return self.cleaned_data["position"] - 1


class ItemPoolsForm(forms.Form):
    """A pool name per exercise of the assignment (empty: not in a pool). Exercises that
    share a name form one slot, each student being given one of them, so they must carry
    the same points."""

    def __init__(self, *args, items=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.items = list(items)
        for item in self.items:
            self.fields[f"pool_{item.pk}"] = forms.CharField(
                required=False, max_length=64, strip=True, initial=item.pool,
                label=f"Pool of {item.exercise_version.exercise.slug}",
            )

    def rows(self):
        return [(item, self[f"pool_{item.pk}"]) for item in self.items]

    def clean(self):
        cleaned = super().clean()
        chosen = self.pools()
        problems = pool_points_problems((chosen.get(item.pk, ""), item.points) for item in self.items)
        for problem in problems:
            self.add_error(None, problem + " Give them equal points first.")
        return cleaned

    def pools(self) -> dict[int, str]:
        """item id -> the pool name given (of the valid fields)."""
        return {
            item.pk: self.cleaned_data.get(f"pool_{item.pk}") or ""
            for item in self.items
            if f"pool_{item.pk}" in self.cleaned_data
        }


class ManualGradeForm(forms.Form):
    criteria = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=forms.CheckboxSelectMultiple)
    SCORE_RANGE = "Give the score as a fraction between 0 and 1 of the part's points (0.5 is half of them)."

    score = forms.FloatField(
        min_value=0, max_value=1, required=False,
        help_text="Fraction 0–1. Leave empty to score by the ticked criteria.",
        error_messages={"min_value": SCORE_RANGE, "max_value": SCORE_RANGE, "invalid": SCORE_RANGE},
    )
    comment = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "cols": 60}), required=False, max_length=5000)

    def __init__(self, *args, rubric=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.rubric = rubric
        criteria = rubric.criteria if rubric else ()
        self.fields["criteria"].choices = [
            (index, f"{text} ({points:g} pt{'s' if points != 1 else ''})")
            for index, (text, points) in enumerate(criteria)
        ]
        if not criteria:
            # Without a rubric there is nothing to tick: the score is the only way to grade.
            del self.fields["criteria"]
            self.fields["score"].help_text = "Fraction 0–1 of the part's points."

    def clean(self):
        cleaned = super().clean()
        if "score" in self.errors:
            # A score was typed and refused: its own message says what to type; the one
            # below ("this part has no rubric points") would only mislead.
            return cleaned
        if cleaned.get("score") is None:
            criteria = self.rubric.criteria if self.rubric else ()
            total = sum(points for _, points in criteria)
            if not criteria or total <= 0:
                raise forms.ValidationError("Give a score between 0 and 1 (this part has no rubric points).")
            ticked = cleaned.get("criteria") or []
            cleaned["score"] = sum(criteria[i][1] for i in ticked) / total
        return cleaned


class HandScoreForm(forms.Form):
    """A person's score of a checked answer: a percentage, or points out of what the part
    is worth; ``cleaned_data["fraction"]`` is the score in [0, 1]. Not a number, NaN, an
    infinity or out of range: a form error, nothing saved."""

    PERCENT, POINTS = "percent", "points"

    score = forms.FloatField(label="Score", widget=forms.NumberInput(attrs={"step": "any", "min": "0"}))
    unit = forms.ChoiceField(label="in", initial=PERCENT)
    comment = forms.CharField(
        label="Comment for the student", required=False, max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
    )

    def __init__(self, *args, part_points: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.part_points = part_points
        units = [(self.PERCENT, "% of the part")]
        if part_points > 0:
            units.append((self.POINTS, f"points (of {part_points:g})"))
        self.fields["unit"].choices = units

    def clean(self):
        cleaned = super().clean()
        score, unit = cleaned.get("score"), cleaned.get("unit")
        if score is None or unit is None:
            return cleaned
        if unit == self.POINTS:
            if not 0 <= score <= self.part_points:
                self.add_error("score", f"Give between 0 and {self.part_points:g} points.")
                return cleaned
            cleaned["fraction"] = score / self.part_points
        else:
            if not 0 <= score <= 100:
                self.add_error("score", "Give a percentage between 0 and 100.")
                return cleaned
            cleaned["fraction"] = score / 100
        return cleaned


class RegradeForm(forms.Form):
    items = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple,
        help_text="None ticked means every exercise of the assignment.",
    )
    parts = forms.CharField(
        required=False, max_length=500, help_text="Part keys separated by commas; empty means all parts."
    )
    allow_lower = forms.BooleanField(
        required=False, label="Allow lowering scores",
        help_text="Without this, an answer whose new score is lower keeps its old score.",
    )

    def __init__(self, *args, item_choices=(), infos=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["items"].choices = list(item_choices)
        self.infos = list(infos)  # selectors.ItemInfo of the assignment's items
        if self.infos:
            self.fields["parts"].help_text += f" This assignment's parts: {', '.join(part_keys_of(self.infos))}."

    def clean_parts(self) -> list[str]:
        return list(dict.fromkeys(key.strip() for key in self.cleaned_data["parts"].split(",") if key.strip()))

    def clean(self):
        """Refuse part keys that none of the ticked exercises (all, when none is ticked) has."""
        cleaned = super().clean()
        parts, items = cleaned.get("parts"), cleaned.get("items") or []
        if parts and self.infos:
            known = part_keys_of(self.infos, item_ids=items)
            unknown = [part for part in parts if part not in known]
            if unknown:
                self.add_error("parts", unknown_parts_message(unknown=unknown, known=known, items_chosen=bool(items)))
        return cleaned


class GradeCategoryForm(forms.Form):
    MAX_DROP_LOWEST = 50

    name = forms.CharField(max_length=100)
    weight = forms.FloatField(min_value=0, max_value=100, help_text="Percent of the course total.")
    drop_lowest = forms.IntegerField(min_value=0, max_value=MAX_DROP_LOWEST, initial=0, label="Drop lowest")

    # What each field needs, said in the one message the gradebook shows for a refused form.
    PROBLEMS = {
        "name": "a name of at most 100 characters",
        "weight": "a weight between 0 and 100 (percent of the course total)",
        "drop_lowest": f"a whole number between 0 and {MAX_DROP_LOWEST} of lowest results to drop",
    }

    def problem(self) -> str:
        """The refused form's message, naming only the fields that were wrong and what each
        needs (the gradebook shows it above the table, away from the field)."""
        needs = [words for name, words in self.PROBLEMS.items() if name in self.errors]
        if not needs:
            return "Nothing was saved: check the category's fields."
        listed = needs[0] if len(needs) == 1 else ", ".join(needs[:-1]) + " and " + needs[-1]
        typed = (self.data.get("name") or "").strip()[:100]
        return f"Nothing was saved: the category{f' “{typed}”' if typed else ''} needs {listed}."
