"""Submissions in the Django admin, for looking things up. What the student entered and how
it was graded are read-only: a grade changes through manual grading or a regrade, which
keep their history."""

from django.contrib import admin

from attnquiz.admin_times import LabelledTimesAdmin

from .models import Submission


@admin.register(Submission)
class SubmissionAdmin(LabelledTimesAdmin):
    list_display = ["id", "student", "part", "attempt", "status", "awarded", "is_late", "created_at"]
    list_filter = ["status", "is_late"]
    search_fields = ["student__username", "student__email", "variant__exercise_version__exercise__slug", "misconception"]
    list_select_related = ["student"]
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in Submission._meta.fields]

    def has_add_permission(self, request):
        return False
