"""Submissions: one student's answer to one part of one variant, and its grade."""

from django.conf import settings
from django.db import models


class SubmissionStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    GRADING = "grading", "Grading"
    GRADED = "graded", "Graded"
    MANUAL = "manual", "Waiting for manual grading"
    COULD_NOT_GRADE = "could_not_grade", "Could not grade"


class Submission(models.Model):
    variant = models.ForeignKey(
        "exercises.Variant", on_delete=models.PROTECT, related_name="submissions"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    part = models.CharField(max_length=64)
    raw_answer = models.JSONField(help_text="Exactly what the student entered.")
    attempt = models.PositiveIntegerField(default=1)
    status = models.CharField(
        max_length=20,
        choices=SubmissionStatus.choices,
        default=SubmissionStatus.QUEUED,
        db_index=True,
    )
    score = models.FloatField(null=True, blank=True, help_text="Raw score in [0, 1].")
    awarded = models.FloatField(
        null=True, blank=True, help_text="Score after attempt and late penalties, in [0, 1]."
    )
    correct = models.BooleanField(null=True, blank=True)
    feedback = models.JSONField(default=dict, blank=True)
    misconception = models.CharField(max_length=64, blank=True, db_index=True)
    deliveries = models.PositiveIntegerField(
        default=0, help_text="How many times a worker started grading this submission."
    )
    is_late = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    graded_at = models.DateTimeField(null=True, blank=True)
    client_key = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The sender's key for this answer: a retry with the same key stores nothing new.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["variant", "part", "attempt"]),
            # The sweepers' reads of recent grades (review.services.reviews_record_missing).
            models.Index(
                fields=["graded_at"], name="submission_graded_recently",
                condition=models.Q(status="graded"),
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["variant", "part", "attempt"], name="one_submission_per_attempt"
            ),
            models.UniqueConstraint(
                fields=["variant", "client_key"], name="one_submission_per_client_key",
                condition=~models.Q(client_key=""),
            ),
        ]

    def __str__(self):
        return f"submission {self.pk} ({self.part}, attempt {self.attempt}, {self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (
            SubmissionStatus.GRADED,
            SubmissionStatus.COULD_NOT_GRADE,
            SubmissionStatus.MANUAL,
        )


class QueueHeartbeat(models.Model):
    """When a worker last consumed the beat's ping from a queue: ``/healthz/`` fails once
    no worker has consumed one for WORKER_STALE_AFTER_SECONDS (a dead or stuck worker)."""

    queue = models.CharField(max_length=100, unique=True)
    consumed_at = models.DateTimeField()
    worker = models.CharField(max_length=200, blank=True)

    def __str__(self):
        return f"{self.queue} consumed at {self.consumed_at:%Y-%m-%d %H:%M:%S} by {self.worker or '?'}"
