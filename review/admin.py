from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import ReviewCard, ReviewEntry, ReviewSettings


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(LabelledTimesAdmin):
    list_display = ("course", "enabled", "updated_at")
    filter_horizontal = ("feeding_assignments",)


@admin.register(ReviewCard)
class ReviewCardAdmin(LabelledTimesAdmin):
    list_display = ("student", "course", "exercise", "part", "due_at", "reviews")
    list_filter = ("course",)
    readonly_fields = ("card",)


@admin.register(ReviewEntry)
class ReviewEntryAdmin(LabelledTimesAdmin):
    list_display = ("card", "submission", "rating", "reviewed_at")
