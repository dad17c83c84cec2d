"""Practice mode: fresh variants on request, the chapter's own numbers, never graded for credit."""

import numpy as np
import pytest
from django.urls import reverse

from courses.models import AssignmentItem
from exercises import engine
from exercises.models import Variant
from exercises.selectors import exercise_status
from grading.core.attention import WORKED_EXAMPLE_X


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
    )


def login(client, username):
    assert client.login(username=username, password="attention-demo")


def start_practice(client, item, **data):
    response = client.post(reverse("practice_start", args=[item.pk]), data)
    assert response.status_code == 302
    return response


def test_each_request_hands_out_a_fresh_variant(client, item):
    login(client, "student1")
    start_practice(client, item)
    start_practice(client, item)
    practice = Variant.objects.filter(student__username="student1", context__startswith="practice:")
    assert practice.count() == 2
    first, second = practice
    assert first.seed != second.seed
    assert all(v.assignment_item_id is None for v in practice)


def test_chapter_variant_reproduces_the_chapters_numbers(client, item):
    login(client, "student1")
    response = start_practice(client, item, named="chapter")
    variant = Variant.objects.get(student__username="student1", context__startswith="practice:")
    assert response["Location"] == reverse("practice", args=[variant.pk])
    assert variant.params["X"] == [list(row) for row in WORKED_EXAMPLE_X]
    spec = engine.spec_from_json(variant.exercise_version.spec)
    references = engine.reference_answers(spec, variant.params)
    assert np.round(references["weights"], 4).tolist() == [0.3875, 0.1425, 0.2350, 0.2350]
    assert np.round(references["output"], 4).tolist() == [1.6225, 0.3775, 1.8674, 1.0]
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert "practice — never counts toward your grades" in page.content.decode()


def test_unknown_named_variant_is_explained(client, item):
    login(client, "student1")
    response = start_practice(client, item, named="nonsense")
    assert response["Location"] == reverse("exercise", args=[item.pk])
    page = client.get(response["Location"]).content.decode()
    assert "no variant named &#x27;nonsense&#x27;" in page
    assert not Variant.objects.filter(context__startswith="practice:").exists()


def test_practice_answers_do_not_count_for_the_assignment(client, item, django_capture_on_commit_callbacks):
    login(client, "student1")
    start_practice(client, item, named="chapter")
    variant = Variant.objects.get(student__username="student1", context__startswith="practice:")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("submit", args=[variant.pk, "weights"]),
            {"answer": "[0.3875, 0.1425, 0.2350, 0.2350]"},
        )
    assert variant.submissions.get().correct is True
    student = variant.student
    assert exercise_status(item=item, student=student)["state"] == "not started"


def test_nobody_else_opens_my_practice_variant(client, item):
    login(client, "student1")
    start_practice(client, item)
    variant = Variant.objects.get(student__username="student1", context__startswith="practice:")
    login(client, "student2")
    assert client.get(reverse("practice", args=[variant.pk])).status_code == 404
    assert client.get(reverse("practice", args=[999999])).status_code == 404


def test_practice_needs_an_enrolment(client, item, django_user_model):
    django_user_model.objects.create_user("outsider", password="attention-demo")
    login(client, "outsider")
    assert client.post(reverse("practice_start", args=[item.pk])).status_code == 404
