"""What the student pages report about progress through an assignment."""

import numpy as np
import pytest

from courses.models import AssignmentItem
from exercises import engine
from exercises.selectors import assignment_summaries, exercise_status
from exercises.services import variant_get_or_create_for_item
from grading import services


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    )


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student3")


def answer(variant, part) -> str:
    spec = engine.spec_from_json(variant.exercise_version.spec)
    values = np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float)
    return "[" + ", ".join(f"{v:.4f}" for v in values) + "]"


def test_status_moves_from_not_started_to_solved(item, student, django_capture_on_commit_callbacks):
    assert exercise_status(item=item, student=student) == {
        "state": "not started", "score": 0.0, "parts": 2, "solved_parts": 0, "attempts_left": 5,
        "attempts_left_of_parts": None,
    }
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_create(
            variant=variant, student=student, part="weights", raw_answer=answer(variant, "weights")
        )
    assert exercise_status(item=item, student=student) == {
        "state": "in progress", "score": 0.5, "parts": 2, "solved_parts": 1, "attempts_left": 5,
        "attempts_left_of_parts": None,
    }
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_create(
            variant=variant, student=student, part="output", raw_answer=answer(variant, "output")
        )
    assert exercise_status(item=item, student=student)["state"] == "solved"


def test_parts_with_different_attempts_left_are_listed_by_label(item, student, django_capture_on_commit_callbacks):
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_create(variant=variant, student=student, part="weights", raw_answer="[1, 2, 3, 4]")
    assert exercise_status(item=item, student=student) == {
        "state": "in progress", "score": 0.0, "parts": 2, "solved_parts": 0, "attempts_left": 4,
        "attempts_left_of_parts": [("(a)", 4), ("(b)", 5)],
    }


def test_assignment_summary_counts_solved_exercises_and_percent(demo, item, student, django_capture_on_commit_callbacks):
    variant = variant_get_or_create_for_item(item=item, student=student)
    with django_capture_on_commit_callbacks(execute=True):
        for part in ("weights", "output"):
            services.submission_create(
                variant=variant, student=student, part=part, raw_answer=answer(variant, part)
            )
    [summary] = assignment_summaries(course=demo.course, role="student", student=student)
    total = demo.assignment.items.count()
    assert (summary["solved"], summary["total"]) == (1, total)
    assert summary["score_percent"] == round(100 / total)
