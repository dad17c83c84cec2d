"""The admin lists courses, enrolments, assignments, exercises and submissions, and keeps
read-only what editing would break (a published version, a stored answer)."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from authoring.tests.factories import assignment_create, product_yaml, published_version, submission_add, variant_for


@pytest.fixture
def admin_client(client, people):
    get_user_model().objects.create_superuser("root", "root@example.org", "pw-root")
    client.login(username="root", password="pw-root")
    version = published_version(source=product_yaml())
    assignment = assignment_create(people.course, [version])
    submission = submission_add(variant_for(assignment.items.get(), people.student, params={"a": 2, "b": 2}), "product", "4", awarded=1.0)
    return client, {"version": version, "assignment": assignment, "submission": submission}


@pytest.mark.parametrize("model,search,expected,count", [
    ("courses_course", "attn", "Attention", "1 course"),
    ("courses_enrolment", "sam", "sam in Attention as Student", "1 enrolment"),
    ("courses_assignment", "week1", "Week1", "1 assignment"),
    ("exercises_exercise", "product", "product", "1 exercise"),
    ("exercises_exerciseversion", "product", "product v1", "1 exercise version"),
    ("grading_submission", "sam", "sam", "1 submission"),
])
def test_each_list_searches(admin_client, model, search, expected, count):
    client, _ = admin_client
    response = client.get(reverse(f"admin:{model}_changelist"), {"q": search})
    assert response.status_code == 200
    text = response.content.decode()
    assert expected in text and f"{count}\n" in text


def test_a_published_version_and_a_submission_are_read_only(admin_client):
    client, world = admin_client
    version_page = client.get(reverse("admin:exercises_exerciseversion_change", args=[world["version"].pk])).content.decode()
    assert 'name="source"' not in version_page and 'name="status"' in version_page
    submission_url = reverse("admin:grading_submission_change", args=[world["submission"].pk])
    assert 'name="raw_answer"' not in client.get(submission_url).content.decode()
    assert client.get(reverse("admin:grading_submission_add")).status_code == 403
    assert client.post(reverse("admin:exercises_exerciseversion_delete", args=[world["version"].pk]), {"post": "yes"}).status_code == 403


def test_the_create_course_permission_is_offered_on_the_user_page(admin_client, people):
    client, _ = admin_client
    page = client.get(reverse("admin:auth_user_change", args=[people.instructor.pk])).content.decode()
    assert "May create courses" in page


def test_invitations_not_answered_are_listed(admin_client, people):
    from courses.models import EnrolmentInvitation

    client, _ = admin_client
    EnrolmentInvitation.objects.create(course=people.course, user=people.outsider, identifier="oscar-typed",
                                       invited_by=people.instructor)
    response = client.get(reverse("admin:courses_enrolmentinvitation_changelist"), {"q": "oscar"})
    assert response.status_code == 200
    text = response.content.decode()
    assert "oscar-typed" in text and "1 enrolment invitation\n" in text
