"""Published versions join a library every course's staff can read and use (by design). Whoever
can publish a version is told so next to the button, before publishing, and again after."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from authoring import services
from authoring.tests.factories import PASSWORD, product_yaml, user_create
from courses.models import Course, Enrolment, Role
from exercises.models import VersionStatus

S = VersionStatus
WARNING = (
    '<p class="card" role="note" id="publish-warning"><strong>Before you publish:</strong> Publishing shares '
    "this version with every course: the instructors and teaching assistants of all courses can read its "
    "source and solutions, preview it and add it to their assignments. A published version cannot be "
    "changed or unpublished; retiring it later keeps it readable to them.</p>"
)


def page_as(username: str, course_slug: str, version) -> str:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    url = reverse("authoring:version", args=[course_slug, version.exercise.slug, version.number])
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def buttons_described_by_the_warning(page: str) -> list[str]:
    return re.findall(r'<button type="submit" id="([a-z-]+)" aria-describedby="publish-warning">', page)


@pytest.fixture
def solo(db):
    course = Course.objects.create(slug="solo", title="Solo")
    owner = user_create("olga")
    Enrolment.objects.create(course=course, user=owner, role=Role.INSTRUCTOR)
    return course, owner


def test_an_author_publishing_their_own_draft_is_warned_next_to_publish(solo):
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=product_yaml())
    page = page_as("olga", course.slug, draft)
    assert page.count(WARNING) == 1
    assert buttons_described_by_the_warning(page) == ["publish-button"]


def test_a_reviewer_approving_is_warned_next_to_approve(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    services.version_transition(version=version, actor=people.instructor, to_status=S.IN_REVIEW)
    page = page_as("rita", "attn", version)
    assert page.count(WARNING) == 1
    assert buttons_described_by_the_warning(page) == ["approve-button"]


@pytest.mark.parametrize("username,course_slug,steps", [
    ("ines", "attn", []),  # a draft where a second reviewer is required: no Publish button
    ("ines", "attn", [S.IN_REVIEW]),  # its author, who cannot approve it
    ("tariq", "attn", [S.IN_REVIEW]),  # a teaching assistant, who cannot approve
    ("rita", "attn", [S.IN_REVIEW, S.PUBLISHED]),  # already published
    ("otto", "other", [S.IN_REVIEW, S.PUBLISHED]),  # another course's staff, reading the library
])
def test_no_warning_where_nothing_can_be_published(people, username, course_slug, steps):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    for step in steps:
        actor = people.instructor if step == S.IN_REVIEW else people.reviewer
        version = services.version_transition(version=version, actor=actor, to_status=step)
    page = page_as(username, course_slug, version)
    assert 'id="publish-warning"' not in page
    assert buttons_described_by_the_warning(page) == []


def test_after_publishing_the_message_says_who_can_see_it(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    services.version_transition(version=version, actor=people.instructor, to_status=S.IN_REVIEW)
    client = Client()
    client.login(username="rita", password=PASSWORD)
    response = client.post(
        reverse("authoring:transition", args=["attn", "product", 1]), {"to_status": "published"}, follow=True
    )
    assert "Version 1 is now published and shared with the staff of every course." in response.content.decode()
    retired = client.post(
        reverse("authoring:transition", args=["attn", "product", 1]), {"to_status": "retired"}, follow=True
    )
    assert "Version 1 is now retired." in retired.content.decode()
