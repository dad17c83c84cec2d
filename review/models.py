"""Spaced review: per course settings, one FSRS card per practised part, and its reviews.

A card is one student's memory of one part of one exercise in one course. Its state is
the ``fsrs.Card`` as a dict, and always equals the replay of its reviews in time order
(``services.review_record`` keeps it so), so a regrade that changes a rating can
rebuild it. Each review comes from exactly one submission.
"""

from django.conf import settings
from django.db import models


class ReviewSettings(models.Model):
    """A course's choices; a course without a row has review on, fed by practice only."""

    course = models.OneToOneField(
        "courses.Course", on_delete=models.CASCADE, related_name="review_settings"
    )
    enabled = models.BooleanField(default=True, help_text="Schedule spaced review for students.")
    feeding_assignments = models.ManyToManyField(
        "courses.Assignment",
        blank=True,
        related_name="+",
        help_text="Graded answers to these assignments also schedule review.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "review settings"

    def __str__(self):
        return f"review settings of {self.course}"


class Rating(models.IntegerChoices):
    """fsrs.Rating's values (only three are given: see services.review_rating)."""

    AGAIN = 1, "Again"
    HARD = 2, "Hard"
    GOOD = 3, "Good"
    EASY = 4, "Easy"


class ReviewCard(models.Model):
    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards"
    )
    exercise = models.ForeignKey("exercises.Exercise", on_delete=models.CASCADE, related_name="+")
    part = models.CharField(max_length=64)
    origin_item = models.ForeignKey(
        "courses.AssignmentItem",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The assignment slot a review's practice variant is started from.",
    )
    card = models.JSONField(default=dict, help_text="fsrs.Card.to_dict() after the last review.")
    due_at = models.DateTimeField(db_index=True)
    reviews = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["course", "student", "exercise", "part"], name="one_card_per_part"
            )
        ]
        indexes = [models.Index(fields=["student", "due_at"], name="review_card_due")]

    def __str__(self):
        return f"{self.student} · {self.exercise}/{self.part} due {self.due_at:%Y-%m-%d %H:%M}"


class ReviewEntry(models.Model):
    """One graded attempt counted as one FSRS review."""

    card = models.ForeignKey(ReviewCard, on_delete=models.CASCADE, related_name="entries")
    submission = models.OneToOneField(
        "grading.Submission", on_delete=models.CASCADE, related_name="review_entry"
    )
    rating = models.PositiveSmallIntegerField(choices=Rating.choices)
    reviewed_at = models.DateTimeField(help_text="When the student answered.")

    class Meta:
        ordering = ["reviewed_at", "submission_id"]
        verbose_name_plural = "review entries"

    def __str__(self):
        return f"{self.get_rating_display()} at {self.reviewed_at:%Y-%m-%d %H:%M} ({self.submission_id})"
