from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import Observation, SkillMastery, SkillParameters


@admin.register(SkillParameters)
class SkillParametersAdmin(LabelledTimesAdmin):
    list_display = ["skill", "prior", "learn", "guess", "slip", "students", "observations", "fitted_at"]
    readonly_fields = ["fitted_at"]


@admin.register(SkillMastery)
class SkillMasteryAdmin(LabelledTimesAdmin):
    list_display = ["student", "course", "skill", "p_known", "attempts", "updated_at"]
    list_filter = ["skill"]
    search_fields = ["student__username", "course__slug", "skill"]
    raw_id_fields = ["student", "course"]


@admin.register(Observation)
class ObservationAdmin(LabelledTimesAdmin):
    list_display = ["student", "course", "skill", "correct", "misconception", "is_practice", "observed_at"]
    list_filter = ["skill", "correct", "is_practice"]
    raw_id_fields = ["student", "course", "submission"]
