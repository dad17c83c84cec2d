"""What instructors leave behind: manual grades with their grader, and regrade jobs with
their progress and every score they changed (or would change, in a dry run)."""

from django.conf import settings
from django.db import models


class ManualGradeKind(models.TextChoices):
    BY_HAND = "by_hand", "Score set by a person"
    RETURNED = "returned", "Returned to the checker's grade"


class ManualGrade(models.Model):
    """A person's grade of one submission; the newest one counts.

    Free-text parts are graded only by people. An auto-graded part (numeric, matrix,
    derivation, ...) may be graded by a person too, over the checker's verdict; a regrade
    then leaves it as it is (instructor.services._regrade_batch). A person may give such
    an answer back to the checker: that is a grade of kind ``RETURNED`` in the same
    history, and while it is the newest the checker's grade stands and regrades apply."""

    submission = models.ForeignKey(
        "grading.Submission", on_delete=models.CASCADE, related_name="manual_grades"
    )
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=10, choices=ManualGradeKind.choices, default=ManualGradeKind.BY_HAND)
    score = models.FloatField(
        null=True,
        help_text="Raw score in [0, 1], before penalties: the person's, or the checker's restored "
        "(none when that was 'could not grade').",
    )
    previous_score = models.FloatField(
        null=True, blank=True, help_text="The answer's raw score before this grade (none if it had none)."
    )
    criteria_met = models.JSONField(default=list, blank=True, help_text="Indexes of rubric criteria ticked.")
    rubric_items = models.ManyToManyField(
        "RubricItem", blank=True, related_name="grades", help_text="The course rubric's items ticked."
    )
    rubric = models.ForeignKey(
        "Rubric", null=True, blank=True, on_delete=models.SET_NULL, related_name="grades",
        help_text="The course rubric the grade was given with (none for a typed score): a change of its "
        "items scores the answer again.",
    )
    rubric_ticked = models.JSONField(
        default=list, blank=True,
        help_text="The rubric's items ticked as they read and counted then: [{text, points}], in the "
        "rubric's order (the items may be reworded, given other points or removed later).",
    )
    rubric_maximum = models.FloatField(
        null=True, blank=True,
        help_text="The rubric's positive points then: the score is the ticked points over these "
        "(none for a typed score, and for rubric grades given before it was recorded).",
    )
    reason = models.CharField(
        max_length=500, blank=True,
        help_text="Why the grade was recorded when nobody graded the answer anew: the change of its "
        "rubric's items that scored it again, in words. Empty for a person's grade.",
    )
    comment = models.TextField(blank=True)
    checker_verdict = models.JSONField(
        default=dict, blank=True,
        help_text="An auto-graded part's grade from the checker that people's grades replaced "
        "(or, returned to the checker, the grade restored): status, score, awarded, correct, "
        "misconception, feedback. Empty for free-text parts.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        if self.kind == ManualGradeKind.RETURNED:
            return f"{self.submission} returned to the checker's grade by {self.grader}"
        return f"{self.submission} graded {self.score:g} by {self.grader}"

    @property
    def is_return(self) -> bool:
        return self.kind == ManualGradeKind.RETURNED


class RegradeStatus(models.TextChoices):
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class RegradeJob(models.Model):
    """Re-grade the stored answers of an assignment's submissions against the current
    version of each exercise. A dry run only records what would change."""

    assignment = models.ForeignKey(
        "courses.Assignment", on_delete=models.CASCADE, related_name="regrade_jobs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    dry_run = models.BooleanField(default=True)
    allow_lower = models.BooleanField(default=False)
    item_ids = models.JSONField(default=list, blank=True, help_text="Assignment items; empty means all.")
    parts = models.JSONField(default=list, blank=True, help_text="Part keys; empty means all.")
    preview_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="applications",
        help_text="The dry run this job applies.",
    )
    status = models.CharField(
        max_length=20, choices=RegradeStatus.choices, default=RegradeStatus.PENDING, db_index=True
    )
    total = models.PositiveIntegerField(default=0)
    processed = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    held = models.PositiveIntegerField(default=0, help_text="Lower scores kept (lowering not allowed).")
    by_hand = models.PositiveIntegerField(
        default=0, help_text="Scores a person set, kept though the checker now grades otherwise."
    )
    errors = models.PositiveIntegerField(default=0)
    cursor = models.BigIntegerField(default=0, help_text="Last submission id processed.")
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        kind = "dry run" if self.dry_run else "regrade"
        return f"{kind} {self.pk} of {self.assignment} ({self.status})"

    @property
    def percent(self) -> int:
        return round(100 * self.processed / self.total) if self.total else (100 if self.is_finished else 0)

    @property
    def is_finished(self) -> bool:
        return self.status in (RegradeStatus.DONE, RegradeStatus.FAILED)


class ChangeOutcome(models.TextChoices):
    CHANGED = "changed", "Changed"
    WOULD_CHANGE = "would_change", "Would change"
    HELD = "held", "Kept: the new score is lower"
    BY_HAND = "by_hand", "Kept: graded by a person"
    ERROR = "error", "Could not regrade"


class RegradeChange(models.Model):
    """One submission whose score a regrade changed, would change, or kept."""

    job = models.ForeignKey(RegradeJob, on_delete=models.CASCADE, related_name="changes")
    submission = models.ForeignKey(
        "grading.Submission", on_delete=models.CASCADE, related_name="regrade_changes"
    )
    outcome = models.CharField(max_length=20, choices=ChangeOutcome.choices)
    old_score = models.FloatField(null=True)
    new_score = models.FloatField(null=True)
    old_awarded = models.FloatField(null=True)
    new_awarded = models.FloatField(null=True)
    old_correct = models.BooleanField(null=True)
    new_correct = models.BooleanField(null=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["submission_id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "submission"], name="one_change_per_job_submission")
        ]

    def __str__(self):
        return f"{self.submission_id}: {self.old_awarded} -> {self.new_awarded} ({self.outcome})"


class GradeCategory(models.Model):
    """A weighted group of a course's assignments in the course gradebook (e.g. homework
    40 %, exams 60 %), optionally dropping each student's lowest results."""

    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="grade_categories")
    name = models.CharField(max_length=100)
    weight = models.FloatField(default=0.0, help_text="Share of the course total, in percent.")
    drop_lowest = models.PositiveSmallIntegerField(
        default=0, help_text="How many of each student's lowest results in it are dropped."
    )
    position = models.PositiveIntegerField(default=0)
    assignments = models.ManyToManyField(
        "courses.Assignment", blank=True, related_name="grade_categories",
        help_text="An assignment sits in at most one category (the service keeps it so).",
    )

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["course", "name"], name="grade_category_name_per_course")
        ]

    def __str__(self):
        return f"{self.name} ({self.weight:g} %)"


class Rubric(models.Model):
    """The grading guide of one part of one exercise in one course: items with points,
    reused by every assignment (and version) that asks that part."""

    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="rubrics")
    exercise = models.ForeignKey("exercises.Exercise", on_delete=models.CASCADE, related_name="rubrics")
    part = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "exercise", "part"], name="one_rubric_per_course_part")
        ]

    def __str__(self):
        return f"rubric of {self.exercise_id}/{self.part} in {self.course_id}"


class RubricItem(models.Model):
    """One criterion: points earned when ticked (negative for a deduction)."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="items")
    text = models.CharField(max_length=300)
    points = models.FloatField()
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self):
        return f"{self.text} ({self.points:+g})"


class RegradeRequestStatus(models.TextChoices):
    OPEN = "open", "Waiting for a reply"
    ANSWERED = "answered", "Answered"


class RegradeOutcome(models.TextChoices):
    """Where a request stands, as the student reads it: the reply's effect on the grade is
    told apart from the reply itself."""

    WAITING = "waiting", "Waiting for a reply"
    ANSWERED = "answered", "Answered: the grade stands"
    CHANGED = "changed", "Answered: the grade changed"


# Scores closer than this are the same grade (float noise from penalties).
SCORE_CHANGE_EPSILON = 1e-9


class RegradeRequest(models.Model):
    """A student's request to look at a grade again, and the staff's reply."""

    submission = models.ForeignKey(
        "grading.Submission", on_delete=models.CASCADE, related_name="regrade_requests"
    )
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    message = models.TextField()
    status = models.CharField(
        max_length=10, choices=RegradeRequestStatus.choices, default=RegradeRequestStatus.OPEN, db_index=True
    )
    reply = models.TextField(blank=True)
    replied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    score_before = models.FloatField(null=True, blank=True)
    score_after = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    replied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["submission"], condition=models.Q(status="open"), name="one_open_regrade_request"
            )
        ]

    def __str__(self):
        return f"regrade request {self.pk} on {self.submission_id} ({self.status})"

    @property
    def outcome(self) -> str:
        """RegradeOutcome: waiting while open; once answered, whether the score awarded when
        the reply was sent differs from the one awarded when the student asked."""
        if self.status == RegradeRequestStatus.OPEN:
            return RegradeOutcome.WAITING
        before, after = self.score_before, self.score_after
        if before is None or after is None:
            changed = before != after
        else:
            changed = abs(after - before) > SCORE_CHANGE_EPSILON
        return RegradeOutcome.CHANGED if changed else RegradeOutcome.ANSWERED

    def get_outcome_display(self) -> str:
        return RegradeOutcome(self.outcome).label
