from django.contrib import admin

from .models import ReviewCard, ReviewEntry, ReviewSettings


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(admin.ModelAdmin):
    list_display = ("course", "enabled", "updated_at")
    filter_horizontal = ("feeding_assignments",)


@admin.register(ReviewCard)
class ReviewCardAdmin(admin.ModelAdmin):
    list_display = ("student", "course", "exercise", "part", "due_at", "reviews")
    list_filter = ("course",)
    readonly_fields = ("card",)


@admin.register(ReviewEntry)
class ReviewEntryAdmin(admin.ModelAdmin):
    list_display = ("card", "submission", "rating", "reviewed_at")
