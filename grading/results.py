"""What a graded (or pending) submission shows the student, including the heatmap.

After every graded attempt of a weights or output part the student sees their own
attention weights as a heatmap (for an output part: the weights their output row
implies). The correct weights appear beside them only once the part is solved or the
assignment's solution policy releases the solution; before that the heatmap marks the
cells that are off and says whether the weights are sharper or flatter than expected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from exams.selectors import EVERYTHING, FeedbackVisibility, feedback_for_student, feedback_visibility_for
from exercises.selectors import (
    part_extras,
    part_finished,
    solution_visible,
    variant_attempts_allowed,
    variant_due_at,
)
from exercises.specs import variant_part_options, variant_references, version_spec
from grading.core import answers
from grading.core.weights_feedback import (
    compare_weights,
    top_key_message,
    weights_behind_output,
    weights_implied_by_output,
)

from .answer_input import answer_shown
from .models import Submission, SubmissionStatus
from .selectors import part_progress

WEIGHT_QUANTITIES = ("weights", "output")


def submission_visibility(submission: Submission, *, viewer=None) -> FeedbackVisibility:
    """What ``viewer`` may see of this submission: the course's staff (who reached it
    through access_submission) everything; its student what the review policy allows."""
    if viewer is not None and viewer.pk != submission.student_id:
        return EVERYTHING
    window = getattr(submission, "window", None)  # read by submission_create in its lock
    if window is not None:
        return window.visibility
    item = submission.variant.assignment_item
    return feedback_visibility_for(
        assignment=item.assignment if item else None, student=submission.student_id
    )


def submission_view_context(
    submission: Submission, *, visibility: FeedbackVisibility | None = None
) -> dict:
    """What grading/_result.html shows of one submission, masked by ``visibility``
    (the student's review policy when not given)."""
    if visibility is None:
        visibility = submission_visibility(submission)
    context = {
        "submission": submission,
        "part": submission.part,
        # Before the review policy shows a verdict or a score, the answer is only "saved":
        # no polling for a grade that would not be shown.
        "saved_only": visibility.grade_hidden,
        "visibility": visibility,
        "pending": not submission.is_finished and not visibility.grade_hidden,
        "status_label": submission.get_status_display(),
        "feedback": feedback_for_student(submission.feedback, visibility),
    }
    item = submission.variant.assignment_item
    # The course whose zone labels the times shown (None for practice: the active zone).
    context["times_course"] = item.assignment.course if item is not None else None
    if submission.is_finished or visibility.grade_hidden:
        # One read of the part's attempts serves the heatmap, the extras and the history.
        progress = part_progress(variant=submission.variant, part=submission.part)
        submission.part_attempts_used = progress["attempts_used"]
        reference = weights_reference(
            variant=submission.variant, part_key=submission.part, progress=progress,
            visibility=visibility,
        )
        context["heatmap"] = heatmap_for(submission, reference=reference)
        # Hints unlocked and a solution released by this answer replace the page's copy.
        context["extras"] = part_extras(
            variant=submission.variant, part_key=submission.part, progress=progress,
            visibility=visibility,
        )
        context["history"] = attempt_history(
            submissions=progress["history"], reference=reference, visibility=visibility,
            variant=submission.variant, part_key=submission.part,
            heatmaps_known={submission.pk: context["heatmap"]},  # its own entry: drawn once
        )
    else:
        context["heatmap"] = None  # only a graded attempt has one
    return context


def attempt_history(
    *, submissions, reference: WeightsReference | None, visibility: FeedbackVisibility = EVERYTHING,
    variant=None, part_key: str | None = None, heatmaps_known: dict | None = None,
) -> list[dict]:
    """Each earlier attempt with its heatmap, as exercises/_history.html lists them, with
    the feedback the review policy hides removed and, given the variant and part, the
    answer as a person reads it (a choice's words, maths typeset). ``heatmaps_known`` maps a
    submission's id to the heatmap the caller drew for it with the same reference."""
    submissions = list(submissions)
    heatmaps_known = heatmaps_known or {}
    return [
        {
            "submission": submission,
            "heatmap": heatmaps_known[submission.pk] if submission.pk in heatmaps_known
            else heatmap_for(submission, reference=reference),
            "feedback": feedback_for_student(submission.feedback, visibility),
            "answer": (
                answer_shown(variant=variant, part_key=part_key, raw_answer=submission.raw_answer)
                if variant is not None else None
            ),
        }
        for submission in submissions
    ]


@dataclass(frozen=True)
class WeightsReference:
    """What every attempt at one weights/output part is compared with (computed once)."""

    quantity: str  # "weights" or "output"
    weights: np.ndarray  # (n, m) the correct attention weights
    V: np.ndarray  # (m, d_v)
    atol: float  # a weight further than this from the correct one is off
    reveal: bool  # whether the correct weights may be shown now
    row_labels: list[str]
    col_labels: list[str]
    diagnose: dict  # the part's resolved diagnosis (Q, K, V, query_index): an output's weights
    # What the review policy shows of a grade: an output's weights follow only what shows,
    # so the heatmap never tells a correctness or a slip the policy hides.
    correctness_shown: bool = True
    misconception_shown: bool = True


def weights_reference(
    *, variant, part_key: str, progress: dict | None = None,
    visibility: FeedbackVisibility = EVERYTHING,
) -> WeightsReference | None:
    """The correct weights of a weights/output part of this variant, or None for other parts,
    when the review policy hides the student's heatmap, and when no attempt of the part is
    graded yet (there is no heatmap to draw: a first visit skips computing the weights).

    ``progress`` is the part's ``part_progress`` when the caller has read it already."""
    if not visibility.heatmap:
        return None
    spec = version_spec(variant.exercise_version)
    try:
        part = spec.part(part_key)
    except KeyError:
        return None
    if not part.diagnose or part.diagnose.get("quantity") not in WEIGHT_QUANTITIES:
        return None
    if part.diagnose.get("mask"):
        # The heatmap's weights (weights_feedback) are unmasked attention; a masked part's
        # diagnosis names the slip in the feedback and draws no heatmap.
        return None
    progress = progress or part_progress(variant=variant, part=part_key)
    if not any(submission.status == SubmissionStatus.GRADED for submission in progress["history"]):
        return None
    options = variant_part_options(variant, part_key)["diagnose"]
    query_index = options["query_index"]
    V = np.asarray(options["V"], dtype=float)
    if part.diagnose["quantity"] == "weights":
        # Exactly what the grader compares with, so "off" agrees with the grade.
        weights = np.atleast_2d(
            np.asarray(variant_references(variant)[part_key], dtype=float)
        )
        atol = 0.5 * 10.0 ** -(part.decimals if part.decimals is not None else 4)
    else:
        from grading.core.attention import attention

        weights = np.atleast_2d(attention(options["Q"], options["K"], V).weights[query_index])
        atol = 0.005
    item = variant.assignment_item
    finished = part_finished(progress=progress, attempts_allowed=variant_attempts_allowed(variant=variant))
    return WeightsReference(
        quantity=part.diagnose["quantity"],
        weights=weights,
        V=V,
        atol=atol,
        # The correct weights are a solution: shown when solved (if correctness shows) or
        # when the solution policy and the review policy both allow it.
        reveal=(progress["solved"] and visibility.correctness)
        or (
            visibility.solutions
            and solution_visible(item=item, part_finished=finished, due_at=variant_due_at(variant=variant))
        ),
        row_labels=[f"query {query_index}"]
        if weights.shape[0] == 1
        else [f"query {i}" for i in range(weights.shape[0])],
        col_labels=[f"key {j}" for j in range(weights.shape[1])],
        diagnose=options,
        correctness_shown=visibility.correctness,
        misconception_shown=visibility.misconception,
    )


def heatmap_for(submission: Submission, *, reference: WeightsReference | None) -> dict | None:
    """The heatmap of one graded attempt (see the module docstring), or None."""
    if reference is None or submission.status != SubmissionStatus.GRADED:
        return None
    entered = _numeric_grid(submission.raw_answer)
    if entered is None:
        return None
    misconception = (submission.misconception or None) if reference.misconception_shown else None
    if reference.quantity == "weights":
        student = entered
        verdicts = (submission.feedback or {}).get("details", {}).get("entry_correct")
        title = "Your attention weights"
    else:
        student, note = _weights_behind_output_answer(submission, entered, reference, misconception)
        verdicts = None
        title = "The weights your output implies"
        if student is None:
            return {"unavailable": note} if note else None
    if student.shape != reference.weights.shape:
        return None
    comparison = compare_weights(student, reference.weights, atol=reference.atol, off=verdicts)
    off_count = sum(sum(row) for row in comparison.off)
    implied = reference.quantity == "output"
    entries_off = _output_entries_off(submission, reference) if implied else None
    sharpness = comparison.sharpness
    if entries_off is not None and 0 < entries_off[0] < entries_off[1] and misconception is None:
        # Some entries right, some wrong, and no slip named: a slip in the weighted sum,
        # whose implied weights' spread says nothing about the scores or the scaling.
        sharpness = None
        top_key = None
    else:
        top_key = top_key_message(comparison, implied=implied, row_labels=reference.row_labels)
    return {
        "student": student.round(4).tolist(),
        "student_title": title,
        # An output's weights are read back from the answer, not entered: the hints speak
        # of "the weights your output implies" and give no count of wrong weights, which
        # would read as a second verdict beside the grade's count of wrong entries.
        "implied": implied,
        "correct": reference.weights.round(4).tolist() if reference.reveal else None,
        "off": comparison.off,
        "off_count": off_count,
        "cells": student.size,
        # Say why more weights than entries are off: each implied weight depends on every entry.
        "spread": implied and (entries_off is None or entries_off[0] < off_count),
        "sharpness": sharpness,
        # The largest weight on another key than the highest score's (then no sharper/flatter).
        "top_key": top_key,
        # Not softmax weights: the sums when they miss 1, else the entries outside [0, 1].
        "row_sums": None if comparison.sums_are_one else comparison.row_sums,
        "outside_unit_interval": not comparison.are_distributions and comparison.sums_are_one,
        "row_labels": reference.row_labels,
        "col_labels": reference.col_labels,
    }


def _weights_behind_output_answer(
    submission: Submission, entered: np.ndarray, reference: WeightsReference, misconception: str | None
) -> tuple[np.ndarray | None, str | None]:
    """(weights to draw, note) for an output answer: always the answer's own weights
    (``weights_behind_output``), whatever its grade, so a score a person set never draws
    weights the answer does not give. While the policy hides whether it is right, only
    weights the answer alone implies are drawn: no note, nothing that differs between a
    right and a wrong answer."""
    if not reference.correctness_shown:
        return weights_implied_by_output(entered, reference.V), None
    behind = weights_behind_output(entered, diagnose=reference.diagnose, misconception=misconception)
    return behind.weights, behind.note


def _output_entries_off(submission: Submission, reference: WeightsReference) -> tuple[int, int] | None:
    """(wrong entries, entries) of an output answer as its grade counted them, or None when
    the count may not be used (correctness hidden) or is not stored."""
    verdicts = (submission.feedback or {}).get("details", {}).get("entry_correct")
    if not reference.correctness_shown or verdicts is None:
        return None
    verdicts = np.asarray(verdicts, dtype=bool)
    return int(verdicts.size - np.count_nonzero(verdicts)), int(verdicts.size)


def _numeric_grid(raw_answer) -> np.ndarray | None:
    parsed = answers.parse("matrix", raw_answer, {})
    if parsed.error:
        return None
    return np.atleast_2d(np.asarray(parsed.value, dtype=float))
