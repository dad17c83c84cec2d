"""Helpers for browser tests of the skill map and review: make a student slip (or answer
right) in the real page, and wait for the mastery update the worker runs after the grade.

    from e2e.skills import answer_weights, wait_for_mastery, skill_line
"""

from __future__ import annotations

import time

from exercises.models import Variant
from e2e.test_student_journey import fill_grid, submit_and_wait_for_grade, weights_for_variant


def answer_weights(page, variant: Variant, *, scaled: bool, attempt: int):
    """On the open exercise page of ``variant``, type the attention weights of the student's
    own query, right (``scaled``) or with the no-scaling slip, submit, and wait for the grade.
    Each attempt types the same numbers with one more trailing zero: the page does not send
    an answer identical to the one it shows the grade of ("You already sent this answer")."""
    fill_grid(page, "weights", weights_for_variant(variant, scaled=scaled), digits=3 + attempt)
    return submit_and_wait_for_grade(page, "weights", attempt=attempt)


def wait_for_mastery(*, username: str, skill: str, attempts: int, course=None, timeout: float = 20.0):
    """The student's stored mastery of ``skill`` (in ``course``, or in their only course)
    once it counts ``attempts`` attempts (the update runs on a worker after the grade
    commits, so it may land a moment later)."""
    from mastery.models import SkillMastery

    deadline = time.monotonic() + timeout
    rows = SkillMastery.objects.filter(student__username=username, skill=skill)
    if course is not None:
        rows = rows.filter(course=course)
    while True:
        row = rows.first()
        if row is not None and row.attempts >= attempts:
            return row
        if time.monotonic() > deadline:
            from grading.harness import CeleryWorker

            raise AssertionError(
                f"{username}'s mastery of {skill} did not reach {attempts} attempts: {row}\n"
                f"the worker said:\n{CeleryWorker.running_log_tail()}"
            )
        time.sleep(0.05)


def skill_line(page, skill: str):
    """The skill map's line of one skill on the dashboard."""
    return page.locator(f".skill-map li[data-skill='{skill}']")
