"""An accommodation costs the hot paths no query: it is read in the query that already
fetches the variant (submit, the exercise page on a return visit)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from exams.models import Accommodation
from grading import services
from grading.models import Submission, SubmissionStatus
from grading.tests.conftest import student, variant  # noqa: F401  (student1, the worked example)
from grading.tests.test_query_counts import _post_answer, queued, queries, student_client  # noqa: F401
from grading.tests.test_services import as_text, reference


@pytest.fixture
def accommodated(variant, student):
    assignment = variant.assignment_item.assignment
    return Accommodation.objects.create(
        assignment=assignment, student=student, attempts_per_part=1, extra_minutes=5
    )


def test_submit_with_an_accommodation_is_five_queries(
    student_client, variant, accommodated, queued, django_capture_on_commit_callbacks
):
    # the session's user, the access-checked variant with its accommodation, the row lock,
    # the attempt count, the insert
    with queries(5), django_capture_on_commit_callbacks(execute=True):
        response = _post_answer(student_client, variant, "[0.25, 0.25, 0.25, 0.25]")
    assert response.status_code == 200
    assert Submission.objects.get().status == SubmissionStatus.QUEUED
    # ... and the accommodation's single attempt was the one counted
    with queries(4):
        response = _post_answer(student_client, variant, as_text(reference(variant, "weights")))
    assert "You have used all 1 attempts for this part." in response.content.decode()


def test_exercise_page_with_an_accommodation_is_four_queries(student_client, variant, accommodated):
    # the session's user; the variant with its item, course and accommodation; the role; the attempts
    with queries(4):
        response = student_client.get(reverse("exercise", args=[variant.assignment_item_id]))
    assert 'data-attempts-left>1</span> of 1' in response.content.decode()


def test_result_fragment_with_an_accommodation_is_four_queries(student_client, variant, student, accommodated):
    submission = Submission.objects.create(
        variant=variant, student=student, part="weights", raw_answer="[0.25, 0.25, 0.25, 0.25]"
    )
    services.submission_grade(submission_id=submission.pk)
    # the session's user, the access-checked submission with its accommodation, the attempts,
    # the student's regrade requests about the variant's answers (the grade shows)
    with queries(4):
        response = student_client.get(reverse("submission", args=[submission.pk]), HTTP_HX_REQUEST="true")
    assert "attempt 1; 0 attempts left" in response.content.decode()
