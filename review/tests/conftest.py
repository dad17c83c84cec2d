"""Fixtures for spaced review: the demo course, the shared frozen clock, answers through the pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from courses.models import AssignmentItem
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from grading import services
from grading.core.attention import attention

WORKED_EXAMPLE = "attention-weights-one-query"


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )


@pytest.fixture
def variant(item, student):
    return variant_get_or_create_for_item(item=item, student=student)


def right_weights(variant):
    spec = engine.spec_from_json(variant.exercise_version.spec)
    return np.asarray(engine.reference_answers(spec, variant.params)["weights"], dtype=float)


def unscaled_weights(variant):
    params = variant.params
    return attention(params["Q"], params["K"], params["V"], scale=1.0).weights[params["q"]]


def as_text(row) -> str:
    return "[" + ", ".join(f"{value:.4f}" for value in row) + "]"


@pytest.fixture
def answer(django_capture_on_commit_callbacks):
    """answer(variant, "right" | "slip" | "wrong"): submit and grade (inline), with what
    runs after the commits (the review task in inline mode)."""

    def submit(variant, kind: str, *, part: str = "weights"):
        raw = {
            "right": as_text(right_weights(variant)),
            "slip": as_text(unscaled_weights(variant)),
            "wrong": as_text([0.4, 0.3, 0.2, 0.1]),  # no slip gives it (uniform weights may be one)
        }[kind]
        with django_capture_on_commit_callbacks(execute=True):
            submission = services.submission_create(
                variant=variant, student=variant.student, part=part, raw_answer=raw
            )
        submission.refresh_from_db()
        return submission

    return submit
