"""Who owns an exercise written in the browser, and the history of everything done to it.

The exercise bank (files under ``exercises/bank``) has no owner: it is edited as files
and reviewed in version control. An exercise created here belongs to one course, whose
instructors edit, review and publish it; its published versions join the shared library.
"""

from django.conf import settings
from django.db import models

from exercises.models import VersionStatus


class ExerciseOwner(models.Model):
    exercise = models.OneToOneField(
        "exercises.Exercise", on_delete=models.CASCADE, related_name="owner"
    )
    course = models.ForeignKey(
        "courses.Course", on_delete=models.CASCADE, related_name="owned_exercises"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.exercise} owned by {self.course}"


class EventKind(models.TextChoices):
    CREATED = "created", "Created"
    IMPORTED = "imported", "Imported"
    EDITED = "edited", "Edited"
    NEW_VERSION = "new_version", "Started a new version"
    SUBMITTED = "submitted", "Sent to review"
    WITHDRAWN = "withdrawn", "Returned to draft"
    APPROVED = "approved", "Approved and published"
    # The course asks for no second reviewer (e.g. a course with one instructor).
    SELF_PUBLISHED = "self_published", "Published without a second reviewer"
    RETIRED = "retired", "Retired"
    COMMENTED = "commented", "Commented"


class ExerciseEvent(models.Model):
    """One thing someone did to an exercise version; never edited, never deleted."""

    exercise = models.ForeignKey(
        "exercises.Exercise", on_delete=models.CASCADE, related_name="events"
    )
    version = models.ForeignKey(
        "exercises.ExerciseVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="events",
    )
    version_number = models.PositiveIntegerField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    kind = models.CharField(max_length=20, choices=EventKind.choices)
    from_status = models.CharField(max_length=20, blank=True)
    to_status = models.CharField(max_length=20, blank=True)
    message = models.TextField(blank=True, help_text="A reviewer's comment, or a note.")
    diff = models.TextField(blank=True, help_text="Unified diff of the source, for edits.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.exercise} v{self.version_number}: {self.get_kind_display()} by {self.actor}"

    @property
    def status_change(self) -> str:
        """The move in words, "from in review to published"; empty when the state stayed."""
        def words(status: str) -> str:
            return VersionStatus(status).label.lower() if status in VersionStatus.values else status

        if not self.from_status:
            return ""
        return f"from {words(self.from_status)} to {words(self.to_status)}"


class VariantTestRun(models.Model):
    """One "Test N variants" under way: at most ``MAX_VARIANT_TESTS_PER_USER`` per person, so
    nobody holds the web workers. A row whose process died is ignored after the lease."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    started_at = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"variant test by {self.user_id} since {self.started_at:%H:%M:%S}"


class SourceCheckRun(models.Model):
    """One "Check" (the editor's check of unsaved source) under way: one per person at a time,
    so nobody keeps the sandbox's checkers busy with slow sources. The unique user decides it
    (of two at once, the second insert fails); a row whose process died is ignored after the
    lease (``services.SOURCE_CHECK_LEASE``)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    started_at = models.DateTimeField()

    def __str__(self):
        return f"check by {self.user_id} since {self.started_at:%H:%M:%S}"


class SecondReviewer(models.TextChoices):
    AUTO = "auto", "Only when the course has more than one instructor"
    ALWAYS = "always", "Always: another instructor approves every version"
    NEVER = "never", "Never: an instructor may publish their own versions"


class CourseReviewSetting(models.Model):
    """Whether a version needs another instructor's approval to be published in this course.
    A course without a row behaves as ``AUTO``."""

    course = models.OneToOneField("courses.Course", on_delete=models.CASCADE, related_name="review_setting")
    second_reviewer = models.CharField(
        max_length=10, choices=SecondReviewer.choices, default=SecondReviewer.AUTO
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.course}: second reviewer {self.second_reviewer}"
