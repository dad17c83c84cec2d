"""The "add a pool of N exercises for skill S" form of the assignment editor."""

from django import forms

from exercises.engine.skills import SKILLS

POOL_SIZES = range(2, 11)


class SkillPoolForm(forms.Form):
    skill = forms.ChoiceField(choices=[(slug, skill.label) for slug, skill in SKILLS.items()])
    count = forms.TypedChoiceField(
        choices=[(n, str(n)) for n in POOL_SIZES], coerce=int, initial=3, label="Exercises in the pool"
    )
    points = forms.FloatField(min_value=0, max_value=1000, initial=1.0, required=False)
    pool = forms.SlugField(max_length=64, required=False, label="Pool name",
                           help_text="Empty: the skill's name.")

    def pool_name(self) -> str:
        return self.cleaned_data.get("pool") or self.cleaned_data["skill"]

    def points_value(self) -> float:
        points = self.cleaned_data.get("points")
        return 1.0 if points is None else points
