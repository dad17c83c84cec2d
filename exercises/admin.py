"""Exercises and their versions in the Django admin. A published (or retired) version is
read-only here: students' variants and grades depend on it; edit it as a new draft."""

from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import Exercise, ExerciseVersion, Variant, VersionStatus


@admin.register(Exercise)
class ExerciseAdmin(LabelledTimesAdmin):
    list_display = ["slug", "title", "created_by", "created_at"]
    search_fields = ["slug", "title"]
    raw_id_fields = ["created_by"]


@admin.register(ExerciseVersion)
class ExerciseVersionAdmin(LabelledTimesAdmin):
    list_display = ["exercise", "number", "status", "published_at", "created_by"]
    list_filter = ["status"]
    search_fields = ["exercise__slug", "exercise__title", "content_hash"]
    list_select_related = ["exercise", "created_by"]
    raw_id_fields = ["exercise", "created_by"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.status in (VersionStatus.PUBLISHED, VersionStatus.RETIRED):
            return ["exercise", "number", "source", "spec", "content_hash", "created_by", "published_at"]
        return ["content_hash", "published_at"]

    def has_delete_permission(self, request, obj=None):
        return obj is None or obj.status not in (VersionStatus.PUBLISHED, VersionStatus.RETIRED)


@admin.register(Variant)
class VariantAdmin(LabelledTimesAdmin):
    list_display = ["exercise_version", "student", "context", "seed", "created_at"]
    search_fields = ["student__username", "exercise_version__exercise__slug", "context"]
    list_select_related = ["exercise_version__exercise", "student"]
    readonly_fields = ["exercise_version", "student", "assignment_item", "context", "seed", "params", "created_at"]

    def has_add_permission(self, request):
        return False
