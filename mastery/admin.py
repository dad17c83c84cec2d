from django.contrib import admin

from .models import Observation, SkillMastery, SkillParameters


@admin.register(SkillParameters)
class SkillParametersAdmin(admin.ModelAdmin):
    list_display = ["skill", "prior", "learn", "guess", "slip", "students", "observations", "fitted_at"]
    readonly_fields = ["fitted_at"]


@admin.register(SkillMastery)
class SkillMasteryAdmin(admin.ModelAdmin):
    list_display = ["student", "course", "skill", "p_known", "attempts", "updated_at"]
    list_filter = ["skill"]
    search_fields = ["student__username", "course__slug", "skill"]
    raw_id_fields = ["student", "course"]


@admin.register(Observation)
class ObservationAdmin(admin.ModelAdmin):
    list_display = ["student", "course", "skill", "correct", "misconception", "is_practice", "observed_at"]
    list_filter = ["skill", "correct", "is_practice"]
    raw_id_fields = ["student", "course", "submission"]
