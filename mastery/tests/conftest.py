"""Fixtures for mastery tests: the demo course's worked example and answers to it."""

import pytest

from grading import services as grading_services
from grading.tests.conftest import student, variant  # noqa: F401
from grading.tests.test_services import as_text, reference, unscaled_weights


# A wrong distribution no slip produces. Uniform weights would not do: a drawn variant whose
# unmasked scores of the query are all equal gets them from "K not transposed".
UNDIAGNOSED = [0.4, 0.3, 0.2, 0.1]


@pytest.fixture
def answer(django_capture_on_commit_callbacks):
    """answer(variant, student, kind) stores and grades one answer to the 'weights' part, and
    runs what the commit triggers (the inline grade, then the mastery update)."""

    def post(variant, student, kind: str):
        text = {"right": as_text(reference(variant, "weights")), "no_scaling": as_text(unscaled_weights(variant)),
                # the same slip typed again otherwise (the same text twice is refused as unchanged)
                "no_scaling_retyped": as_text(unscaled_weights(variant)).replace(", ", ","),
                "wrong": as_text(UNDIAGNOSED)}[kind]
        with django_capture_on_commit_callbacks(execute=True):
            submission = grading_services.submission_create(
                variant=variant, student=student, part="weights", raw_answer=text
            )
        submission.refresh_from_db()
        return submission

    return post


