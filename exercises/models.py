"""Exercises, their immutable published versions, and the variants students receive."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models


class Exercise(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class VersionStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In review"
    PUBLISHED = "published", "Published"
    RETIRED = "retired", "Retired"


# What students and graders depend on; changing any of these would change a past grade.
IMMUTABLE_WHEN_PUBLISHED = ("source", "spec", "content_hash", "number", "exercise_id")


class ExerciseVersion(models.Model):
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    source = models.TextField(help_text="The exercise file (YAML) exactly as authored.")
    spec = models.JSONField(help_text="The validated, normalised spec the engine runs.")
    content_hash = models.CharField(max_length=64)
    status = models.CharField(
        max_length=20, choices=VersionStatus.choices, default=VersionStatus.DRAFT
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["exercise__slug", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["exercise", "number"], name="version_number_unique")
        ]

    def __str__(self):
        return f"{self.exercise.slug} v{self.number}"

    def save(self, *args, **kwargs):
        self._refuse_changes_to_published_content()
        super().save(*args, **kwargs)

    @property
    def title(self) -> str:
        return self.spec.get("title") or self.exercise.title

    def _refuse_changes_to_published_content(self):
        if self.pk is None:
            return
        stored = (
            ExerciseVersion.objects.filter(pk=self.pk)
            .values("status", *IMMUTABLE_WHEN_PUBLISHED)
            .first()
        )
        if stored is None or stored["status"] not in (
            VersionStatus.PUBLISHED,
            VersionStatus.RETIRED,
        ):
            return
        changed = [f for f in IMMUTABLE_WHEN_PUBLISHED if stored[f] != getattr(self, f)]
        if changed:
            raise ValidationError(
                f"{self} is published and immutable (tried to change {', '.join(changed)}); "
                "edit it as a new draft version instead."
            )


class Variant(models.Model):
    """The parameters one student saw for one exercise version, fixed at first view.

    ``context`` names where the variant belongs: ``assignment:<item id>`` or
    ``practice:<token>``. Parameters are stored so that later code changes never
    change what a student already saw.
    """

    exercise_version = models.ForeignKey(
        ExerciseVersion, on_delete=models.PROTECT, related_name="variants"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="variants",
    )
    assignment_item = models.ForeignKey(
        "courses.AssignmentItem",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="variants",
    )
    context = models.CharField(max_length=100)
    seed = models.BigIntegerField()
    params = models.JSONField()
    # The variant's prompt, part prompts, hints and solutions as sanitised HTML, rendered
    # once (exercises.bodies): the version and the numbers never change, so neither does it.
    rendered = models.JSONField(default=dict, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["exercise_version", "student", "context"], name="one_variant_per_context"
            )
        ]

    def __str__(self):
        return f"{self.exercise_version} for {self.student} ({self.context})"
