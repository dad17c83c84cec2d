"""What a graded (or pending) submission shows the student, including the heatmap."""

from __future__ import annotations

import numpy as np

from exercises import engine
from exercises.specs import version_spec

from .models import Submission, SubmissionStatus
from .selectors import submissions_for_part


def submission_view_context(submission: Submission) -> dict:
    context = {
        "submission": submission,
        "part": submission.part,
        "pending": not submission.is_finished,
        "status_label": submission.get_status_display(),
        "feedback": submission.feedback or {},
    }
    if submission.status == SubmissionStatus.GRADED:
        context["heatmap"] = heatmap_for(submission)
    if submission.is_finished:
        # Hints unlocked and a solution released by this answer replace the page's copy.
        from exercises.selectors import part_extras

        context["extras"] = part_extras(variant=submission.variant, part_key=submission.part)
        context["history"] = list(
            submissions_for_part(variant=submission.variant, part=submission.part)
        )
    return context


def heatmap_for(submission: Submission) -> dict | None:
    """The student's own weights next to the correct ones, for weight-type parts.

    Shown once the part is solved or its attempts are used up, so it never gives the
    answer away while the student can still try.
    """
    variant = submission.variant
    spec = version_spec(variant.exercise_version)
    part = spec.part(submission.part)
    if part.diagnose.get("quantity") != "weights":
        return None
    if not (submission.correct or _attempts_exhausted(submission)):
        return None
    expected = np.atleast_2d(np.asarray(engine.reference_answers(spec, variant.params)[part.key], dtype=float))
    student = _numeric_grid(submission.raw_answer)
    if student is None or student.shape != expected.shape:
        return None
    query_index = int(engine.evaluate(part.diagnose["query_index"], variant.params))
    return {
        "student": student.round(4).tolist(),
        "correct": expected.round(4).tolist(),
        "row_labels": [f"query {query_index}"]
        if expected.shape[0] == 1
        else [f"query {i}" for i in range(expected.shape[0])],
        "col_labels": [f"key {j}" for j in range(expected.shape[1])],
    }


def _attempts_exhausted(submission: Submission) -> bool:
    item = submission.variant.assignment_item
    allowed = item.assignment.attempts_per_part if item else 0
    return bool(allowed and submission.attempt >= allowed)


def _numeric_grid(raw_answer) -> np.ndarray | None:
    from grading.core import answers

    parsed = answers.parse("matrix", raw_answer, {})
    if parsed.error:
        return None
    return np.atleast_2d(np.asarray(parsed.value, dtype=float))
