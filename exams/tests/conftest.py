"""The demo assignment turned into an exam (the authoring form's exam preset: everything
on release, solutions never), two of its students (the frozen ``clock`` is the root conftest's)."""

from __future__ import annotations

import numpy as np
import pytest

from attnquiz.testing import CLOCK_START
from courses.models import AssignmentItem, AssignmentKind, ReleaseMoment
from exercises import engine

START = CLOCK_START
WORKED_EXAMPLE = "attention-weights-one-query"
POLICY = ("show_correctness", "show_score", "show_misconception", "show_hints", "show_heatmap", "show_solutions")


def exam_policy(assignment, **moments):
    """Make ``assignment`` an exam with the preset policy, overridden by ``moments``
    (e.g. show_correctness="after_finish")."""
    assignment.kind = AssignmentKind.EXAM
    for name in POLICY:
        setattr(assignment, name, ReleaseMoment.ON_RELEASE)
    assignment.show_solutions = ReleaseMoment.NEVER
    for name, value in moments.items():
        setattr(assignment, name, value)
    assignment.save()
    return assignment


@pytest.fixture
def exam(demo):
    return exam_policy(demo.assignment)


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.fixture
def other_student(demo, django_user_model):
    return django_user_model.objects.get(username="student2")


def correct(variant, part: str) -> str:
    spec = engine.spec_from_json(variant.exercise_version.spec)
    values = np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float)
    return "[" + ", ".join(f"{v:.4f}" for v in values) + "]"


UNIFORM = "[0.25, 0.25, 0.25, 0.25]"


@pytest.fixture
def graded_exam_answer(exam, item, student, clock, django_capture_on_commit_callbacks):
    """An exam showing scores during the attempt, and one graded answer of the student's
    (graded inline: set GRADING_MODE to "inline" in the test)."""
    from exams import services
    from exercises.services import variant_get_or_create_for_item
    from grading.models import Submission
    from grading.services import submission_create

    exam_policy(exam, show_correctness=ReleaseMoment.DURING, show_score=ReleaseMoment.DURING)
    services.attempt_start(assignment=exam, student=student)
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        submission_create(variant=variant, student=student, part="weights", raw_answer=correct(variant, "weights"))
    return Submission.objects.get(variant=variant, part="weights")
