"""A refused answer's result says which kind it is: ``invalid`` for an answer that could not
be read (the live preview clears it once the box reads again), ``refused`` for one refused
for another reason (nothing to fix in the box: the preview must leave it in place)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from courses.models import AssignmentItem
from exercises.services import variant_get_or_create_for_item


@pytest.fixture
def posting(client, demo, django_user_model, settings, django_capture_on_commit_callbacks):
    settings.GRADING_MODE = "inline"
    student = django_user_model.objects.get(username="student1")
    client.force_login(student)
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    )
    variant = variant_get_or_create_for_item(item=item, student=student)

    def post(answer: str):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(reverse("submit", args=[variant.pk, "weights"]), {"answer": answer},
                               HTTP_HX_REQUEST="true")

    return post


def test_an_unreadable_answer_is_invalid(posting):
    response = posting("a quarter")
    assert response.status_code == 422
    assert 'data-result="invalid"' in response.content.decode()


def test_the_same_answer_again_is_refused_not_invalid(posting):
    assert posting("[0.1, 0.2, 0.3, 0.4]").status_code == 200
    response = posting("[0.1, 0.2, 0.3, 0.4]")
    page = response.content.decode()
    assert response.status_code == 422
    assert 'data-result="refused"' in page and 'data-result="invalid"' not in page
    assert "This did not use an attempt." in page
