"""Mastery per student, course and skill (Bayesian Knowledge Tracing), the evidence it is
computed from, and the fitted parameters per skill.

``Observation`` rows are the history: one per graded submission and skill it counts for,
rewritten when the submission's grade changes (regrade, manual grade), each in the course
the answer was given for. ``SkillMastery`` is recomputed from one course's history only, so
a course's staff never see evidence from another course, and updating it twice, late or
out of order gives the same result. Pages read ``SkillMastery`` and ``SkillParameters``
only; nothing is computed there.
"""

from django.conf import settings
from django.db import models


class SkillParameters(models.Model):
    """BKT parameters of one skill, as last fitted from stored attempts."""

    skill = models.CharField(max_length=64, unique=True)
    prior = models.FloatField()
    learn = models.FloatField()
    guess = models.FloatField()
    slip = models.FloatField()
    forget = models.FloatField(default=0.0)
    log_likelihood = models.FloatField()
    observations = models.PositiveIntegerField()
    students = models.PositiveIntegerField()
    iterations = models.PositiveIntegerField()
    fitted_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "skill parameters"

    def __str__(self):
        return f"{self.skill}: prior {self.prior:.2f}, learn {self.learn:.2f}, guess {self.guess:.2f}, slip {self.slip:.2f}"


class Observation(models.Model):
    """One graded attempt as evidence about one skill."""

    submission = models.ForeignKey(
        "grading.Submission", on_delete=models.CASCADE, related_name="mastery_observations"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mastery_observations"
    )
    # The course of the assignment the answer belongs to (for practice: of the assignment
    # item the practice was started from).
    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="mastery_observations")
    skill = models.CharField(max_length=64)
    correct = models.BooleanField()
    # A person's partial grade (e.g. 0.8 on a free-text part) is partial evidence: the
    # update weighs the right and wrong posteriors by it. Null: all or nothing by ``correct``.
    credit = models.FloatField(null=True, blank=True)
    misconception = models.CharField(max_length=64, blank=True)
    is_practice = models.BooleanField(default=False)
    observed_at = models.DateTimeField(help_text="When the answer was submitted: the order of attempts.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "skill"], name="one_observation_per_submission_skill")
        ]
        indexes = [models.Index(fields=["student", "course", "skill", "observed_at"]), models.Index(fields=["skill"])]

    def __str__(self):
        return f"{self.student_id} {self.skill}: {'right' if self.correct else 'wrong'}"


class SkillMastery(models.Model):
    """P(known) of one skill for one student in one course, after every observation of that
    course so far."""

    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skill_masteries"
    )
    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="skill_masteries")
    skill = models.CharField(max_length=64)
    p_known = models.FloatField()
    attempts = models.PositiveIntegerField()
    recent_misconceptions = models.JSONField(
        default=list,
        blank=True,
        help_text="Misconception codes of the latest attempts, newest first ('' for none).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["student", "course", "skill"], name="one_mastery_per_student_course_skill")
        ]
        indexes = [models.Index(fields=["course", "skill"])]
        verbose_name_plural = "skill masteries"

    def __str__(self):
        return f"{self.student_id} {self.skill} in course {self.course_id}: {self.p_known:.2f} after {self.attempts}"
