"""The course's "require a second reviewer" setting: on by default where the course has
several instructors, off for a solo course, whose instructor then publishes directly; the
history says which way a version was published."""

import pytest
from django.urls import reverse

from authoring import selectors, services
from authoring.models import EventKind, SecondReviewer
from courses.models import Course, Enrolment, EnrolmentStatus, Role
from exercises.models import VersionStatus

from .factories import PASSWORD, product_yaml, user_create

S = VersionStatus


@pytest.fixture
def solo(db):
    course = Course.objects.create(slug="solo", title="Solo course")
    owner = user_create("olga")
    Enrolment.objects.create(course=course, user=owner, role=Role.INSTRUCTOR)
    Enrolment.objects.create(course=course, user=user_create("tim"), role=Role.TEACHING_ASSISTANT)
    return course, owner


@pytest.mark.parametrize(
    "setting, instructors, required",
    [
        (None, 1, False), (None, 2, True), (SecondReviewer.AUTO, 1, False), (SecondReviewer.AUTO, 2, True),
        (SecondReviewer.ALWAYS, 1, True), (SecondReviewer.NEVER, 2, False),
    ],
)
def test_when_a_second_reviewer_is_required(solo, setting, instructors, required):
    course, owner = solo
    if instructors == 2:
        Enrolment.objects.create(course=course, user=user_create("pat"), role=Role.INSTRUCTOR)
    if setting is not None:
        services.course_review_setting_save(course=course, actor=owner, second_reviewer=setting)
    assert selectors.second_reviewer_required(course=course) is required


def test_a_dropped_instructor_does_not_count(solo):
    course, owner = solo
    Enrolment.objects.create(
        course=course, user=user_create("pat"), role=Role.INSTRUCTOR, status=EnrolmentStatus.DROPPED
    )
    assert selectors.second_reviewer_required(course=course) is False


def test_a_solo_instructor_publishes_a_draft_directly_and_the_history_says_so(solo):
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=product_yaml())
    published = services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert published.status == S.PUBLISHED and published.published_at is not None
    event = draft.events.first()
    assert (event.kind, event.from_status, event.to_status) == (EventKind.SELF_PUBLISHED, S.DRAFT, S.PUBLISHED)
    assert event.get_kind_display() == "Published without a second reviewer"
    assert event.status_change == "from draft to published"


def test_a_solo_instructor_may_also_publish_a_version_in_review(solo):
    course, owner = solo
    draft = services.exercise_create(course=course, actor=owner, source=product_yaml())
    services.version_transition(version=draft, actor=owner, to_status=S.IN_REVIEW)
    services.version_transition(version=draft, actor=owner, to_status=S.PUBLISHED)
    assert draft.events.first().kind == EventKind.SELF_PUBLISHED


def test_with_two_instructors_the_author_cannot_publish_and_the_other_approves(people):
    draft = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    with pytest.raises(services.AuthoringRefused, match="requires a second reviewer"):
        services.version_transition(version=draft, actor=people.instructor, to_status=S.PUBLISHED)
    services.version_transition(version=draft, actor=people.instructor, to_status=S.IN_REVIEW)
    with pytest.raises(services.AuthoringRefused) as refused:
        services.version_transition(version=draft, actor=people.instructor, to_status=S.PUBLISHED)
    assert refused.value.code == "self_approval"
    services.version_transition(version=draft, actor=people.reviewer, to_status=S.PUBLISHED)
    assert draft.events.first().kind == EventKind.APPROVED


def test_the_setting_through_the_pages(client, solo):
    course, owner = solo
    client.login(username="olga", password=PASSWORD)
    listing = client.get(reverse("authoring:list", args=[course.slug])).content.decode()
    assert "no second reviewer is required" in listing
    draft = services.exercise_create(course=course, actor=owner, source=product_yaml())
    version_url = reverse("authoring:version", args=[course.slug, draft.exercise.slug, draft.number])
    page = client.get(version_url).content.decode()
    assert 'id="publish-button"' in page
    client.post(reverse("authoring:review_setting", args=[course.slug]), {"second_reviewer": "always"})
    assert selectors.second_reviewer_setting(course=course) == SecondReviewer.ALWAYS
    assert 'id="publish-button"' not in client.get(version_url).content.decode()
    client.post(reverse("authoring:review_setting", args=[course.slug]), {"second_reviewer": "bogus"})
    assert selectors.second_reviewer_setting(course=course) == SecondReviewer.ALWAYS
    client.post(reverse("authoring:review_setting", args=[course.slug]), {"second_reviewer": "auto"})
    client.post(
        reverse("authoring:transition", args=[course.slug, draft.exercise.slug, draft.number]), {"to_status": "published"}
    )
    history = client.get(version_url).content.decode()
    assert "Published without a second reviewer (from draft to published)" in history
    assert "in_review" not in history.split('class="history"')[1]
    client.login(username="tim", password=PASSWORD)
    assert client.post(reverse("authoring:review_setting", args=[course.slug]), {"second_reviewer": "never"}).status_code == 403
