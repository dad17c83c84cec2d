"""A variant stored before its exercise's options were checked on every draw may hold an
option the checker grades with that does not fill in (``{{8 / w}}`` on w = 0). Its page
still shows, and its answers are refused with a message that says why, storing nothing and
using no attempt, on the page and in the API: never a 500."""

import pytest
from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from exercises.tests.stored_variants import variant_stored
from grading.models import Submission

SOURCE = """\
slug: scaled-scores
title: Scaled scores
version: 1
parameters:
  n: {generator: int_range, min: 2, max: 4}
  w: {generator: choice, from: [0, 2, 4]}
prompt: "Q and K are {{n}} by {{8 / (w + 1)}}."
parts:
  - key: f
    type: matrix_expression
    answer: "Q K^T"
    options:
      matrices: {Q: [n, d_k], K: [n, d_k]}
      scalars: {n: "{{n}}", d_k: "{{8 / w}}"}
    solution: "Q K^T."
"""
REFUSAL = ("This part cannot be graded on your variant: cannot evaluate '8 / w': division by zero. Nothing was "
           "stored and no attempt was used; please tell your instructor, who can give you another variant.")


@pytest.fixture
def stored(db, django_user_model):
    """A student's variant w = 0, stored as an earlier draw could have stored it."""
    student = django_user_model.objects.create_user(username="student", password="x")
    return variant_stored(source=SOURCE, params={"n": 2, "w": 0}, student=student, content_hash="d" * 64)


def test_the_page_shows(client, stored):
    client.force_login(stored.student)
    page = client.get(reverse("exercise", args=[stored.assignment_item.pk]))
    assert page.status_code == 200
    assert 'data-preview-options="{}"' in page.content.decode()


def test_an_answer_on_the_page_is_refused_with_the_reason(client, stored):
    client.force_login(stored.student)
    response = client.post(reverse("submit", args=[stored.pk, "f"]), {"answer": "Q K^T"}, HTTP_HX_REQUEST="true")
    assert (response.status_code, REFUSAL.replace("'", "&#x27;") in response.content.decode()) == (422, True)
    assert not Submission.objects.exists()


def test_an_answer_through_the_api_is_refused_with_its_code(client, stored):
    _, secret = api_token_create(user=stored.student, name="t", scope=TokenScope.WRITE, lifetime_days=7)
    response = client.post(
        f"/api/v1/exercises/{stored.assignment_item.pk}/parts/f/submissions/", {"answer": "Q K^T"},
        content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert (response.status_code, response.json()["type"], response.json()["detail"]) == (
        409, "urn:attnquiz:problem:variant-ungradable", REFUSAL)
    assert not Submission.objects.exists()
