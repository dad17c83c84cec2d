from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import Accommodation, AssignmentAttempt, CourseAccommodation, GradeRelease


@admin.register(AssignmentAttempt)
class AssignmentAttemptAdmin(LabelledTimesAdmin):
    list_display = ("assignment", "student", "started_at", "finished_at", "close_reason")
    list_filter = ("close_reason",)
    search_fields = ("student__username", "assignment__slug")
    raw_id_fields = ("assignment", "student")


@admin.register(Accommodation)
class AccommodationAdmin(LabelledTimesAdmin):
    list_display = ("assignment", "student", "time_factor", "extra_minutes", "closes_at")
    search_fields = ("student__username", "assignment__slug")
    raw_id_fields = ("assignment", "student", "updated_by")


@admin.register(CourseAccommodation)
class CourseAccommodationAdmin(LabelledTimesAdmin):
    list_display = ("course", "student", "time_factor", "extra_minutes", "attempts_per_part")
    search_fields = ("student__username", "course__slug")
    raw_id_fields = ("course", "student", "updated_by")


@admin.register(GradeRelease)
class GradeReleaseAdmin(LabelledTimesAdmin):
    list_display = ("assignment", "action", "by", "via", "at")
    readonly_fields = ("assignment", "action", "by", "via", "at")
