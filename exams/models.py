"""A student's sitting of an assignment (started, finished or closed), their
accommodations, and the log of grade releases."""

from django.conf import settings
from django.db import models


class AttemptCloseReason(models.TextChoices):
    FINISHED = "finished", "Finished by the student"
    TIME_UP = "time_up", "Closed when the time limit ran out"
    CLOSED = "closed", "Closed at the close date"
    INSTRUCTOR = "instructor", "Closed by the instructor"


class AssignmentAttempt(models.Model):
    """One student's sitting of one assignment: when their clock started, when (and why)
    it ended, and the browser session bound to it (for one-session exams). Once
    ``finished_at`` is set the attempt takes no more answers; its stored answers count."""

    assignment = models.ForeignKey(
        "courses.Assignment", on_delete=models.CASCADE, related_name="attempts"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignment_attempts"
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    close_reason = models.CharField(max_length=12, choices=AttemptCloseReason.choices, blank=True)
    session_key = models.CharField(max_length=64, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    # The deadline the student's open page last learned (the live-deadline poll), and when:
    # the proctor sees whether an extension has reached the page.
    deadline_seen = models.DateTimeField(null=True, blank=True)
    deadline_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "student"], name="one_attempt_per_assignment_and_student"
            )
        ]
        indexes = [
            models.Index(fields=["finished_at", "assignment"], name="attempt_open_by_assignment")
        ]

    def __str__(self):
        state = "open" if self.finished_at is None else self.get_close_reason_display()
        return f"{self.student} on {self.assignment} ({state})"

    @property
    def is_open(self) -> bool:
        return self.finished_at is None


class AccommodationFields(models.Model):
    """What both kinds of accommodation hold: extra time (a factor of the limit, minutes
    added, or both: the factor applies first), attempts per part, a note and who changed
    it last. Every empty field keeps the assignment's value."""

    time_factor = models.FloatField(
        null=True, blank=True, help_text="e.g. 1.5 for 50 % extra time."
    )
    extra_minutes = models.PositiveIntegerField(null=True, blank=True)
    attempts_per_part = models.PositiveIntegerField(null=True, blank=True)
    note = models.CharField(max_length=200, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Accommodation(AccommodationFields):
    """One student's own limits on one assignment: dates and a time limit of their own
    besides the shared fields; every empty field keeps the assignment's value."""

    assignment = models.ForeignKey(
        "courses.Assignment", on_delete=models.CASCADE, related_name="accommodations"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="accommodations"
    )
    opens_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    closes_at = models.DateTimeField(null=True, blank=True)
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "student"], name="one_accommodation_per_assignment"
            )
        ]

    def __str__(self):
        return f"accommodation for {self.student} on {self.assignment}"


class CourseAccommodation(AccommodationFields):
    """One student's extra time and attempts for every assignment of a course (set once,
    e.g. from the disability office's letter). An Accommodation on one assignment
    overrides it field by field; every empty field keeps the assignment's value. The time
    fields count only where the assignment has a time limit."""

    course = models.ForeignKey(
        "courses.Course", on_delete=models.CASCADE, related_name="course_accommodations"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="course_accommodations"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["course", "student"], name="one_course_accommodation_per_student"
            )
        ]

    def __str__(self):
        return f"course-wide accommodation for {self.student} in {self.course}"


class GradeReleaseAction(models.TextChoices):
    RELEASE = "release", "Released"
    WITHDRAW = "withdraw", "Withdrawn"


class GradeRelease(models.Model):
    """The log of every release (and withdrawal) of an assignment's grades."""

    assignment = models.ForeignKey(
        "courses.Assignment", on_delete=models.CASCADE, related_name="grade_releases"
    )
    action = models.CharField(max_length=10, choices=GradeReleaseAction.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    via = models.CharField(max_length=10, default="page", help_text="page or api")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self):
        return f"{self.assignment} {self.action} at {self.at:%Y-%m-%d %H:%M}"


class AccommodationAction(models.TextChoices):
    SET = "set", "Set on the page"
    IMPORT = "import", "Imported from CSV"
    EXTEND = "extend", "Time extended from the proctor view"
    REMOVE = "remove", "Removed"


class AccommodationChange(models.Model):
    """The log of every change to a student's accommodation: who, when, how, and what
    changed (in words, as the page showed it). A change of a course-wide accommodation
    has its ``course`` and no ``assignment``."""

    assignment = models.ForeignKey(
        "courses.Assignment", on_delete=models.CASCADE, related_name="accommodation_changes",
        null=True, blank=True,
    )
    course = models.ForeignKey(
        "courses.Course", on_delete=models.CASCADE, related_name="accommodation_changes",
        null=True, blank=True,
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    action = models.CharField(max_length=10, choices=AccommodationAction.choices)
    detail = models.CharField(max_length=500)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["assignment", "-at"], name="accommodation_change_log"),
            models.Index(fields=["course", "-at"], name="course_accommodation_log"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(assignment__isnull=False) | models.Q(course__isnull=False),
                name="accommodation_change_has_a_scope",
            )
        ]

    def __str__(self):
        return f"{self.student} on {self.assignment or self.course}: {self.detail}"
