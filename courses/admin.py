"""Courses, enrolments and assignments in the Django admin. Granting "may create courses"
is the user's permission "courses | course | May create courses" (or `manage.py
grant_course_creation`)."""

from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import Assignment, AssignmentItem, Course, Enrolment, EnrolmentInvitation


class EnrolmentInline(admin.TabularInline):
    model = Enrolment
    extra = 0
    fields = ["user", "role", "status", "source", "student_id", "created_at"]
    readonly_fields = ["source", "created_at"]
    raw_id_fields = ["user"]


@admin.register(Course)
class CourseAdmin(LabelledTimesAdmin):
    list_display = ["title", "slug", "term", "time_zone", "join_open", "archived_at", "created_at"]
    list_filter = ["join_open", "term"]
    search_fields = ["title", "slug", "term"]
    readonly_fields = ["join_code", "created_by", "copied_from", "created_at"]
    inlines = [EnrolmentInline]


@admin.register(Enrolment)
class EnrolmentAdmin(LabelledTimesAdmin):
    list_display = ["user", "course", "role", "status", "source", "student_id", "created_at"]
    list_filter = ["role", "status", "source"]
    search_fields = ["user__username", "user__email", "user__last_name", "course__slug", "course__title", "student_id"]
    list_select_related = ["user", "course"]
    raw_id_fields = ["user", "course"]
    readonly_fields = ["source", "created_at", "updated_at"]


class AssignmentItemInline(admin.TabularInline):
    model = AssignmentItem
    extra = 0
    raw_id_fields = ["exercise_version"]

    def get_readonly_fields(self, request, obj=None):
        # Switching the version of an item with answers is a regrade, done on the teaching page.
        if obj is not None and obj.items.filter(variants__submissions__isnull=False).exists():
            return ["exercise_version"]
        return []


@admin.register(Assignment)
class AssignmentAdmin(LabelledTimesAdmin):
    list_display = ["title", "course", "slug", "opens_at", "due_at", "closes_at", "is_published"]
    list_filter = ["is_published", "course"]
    search_fields = ["title", "slug", "course__slug", "course__title"]
    list_select_related = ["course"]
    raw_id_fields = ["course"]
    inlines = [AssignmentItemInline]


@admin.register(EnrolmentInvitation)
class EnrolmentInvitationAdmin(LabelledTimesAdmin):
    """Invitations of existing accounts not answered yet (courses.models.EnrolmentInvitation)."""

    list_display = ["identifier", "course", "role", "invited_by", "created_at"]
    list_filter = ["role"]
    search_fields = ["identifier", "course__slug"]
    raw_id_fields = ["user", "invited_by"]
    readonly_fields = ["created_at"]
