"""A course with one person per role (see authoring.tests.factories), an assignment with a
two-part exercise, and API tokens for each of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from api.models import ApiToken, TokenScope
from api.services import api_token_create
from authoring.tests.factories import assignment_create, people_create, product_yaml, published_version


@dataclass
class World:
    people: object
    assignment: object
    item: object
    tokens: dict  # role name -> secret


def bearer(secret: str | None) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if secret else {}


def api_client(secret: str | None) -> Client:
    return Client(**bearer(secret))


@pytest.fixture(autouse=True)
def generous_rate_limits(settings):
    """Tests make many requests; the rate-limit test sets its own (tokens are new each test,
    so their counters in the shared cache start empty)."""
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}


def world_create() -> World:
    people = people_create()
    version = published_version(source=product_yaml())
    assignment = assignment_create(people.course, [version], attempts_per_part=3)
    tokens = {}
    for role, user in (
        ("student", people.student),
        ("ta", people.ta),
        ("instructor", people.instructor),
        ("reviewer", people.reviewer),
        ("outsider", people.outsider),
    ):
        tokens[role] = api_token_create(user=user, name=role, scope=TokenScope.WRITE, lifetime_days=30)[1]
        tokens[f"{role}_read"] = api_token_create(user=user, name=f"{role} read", scope=TokenScope.READ, lifetime_days=30)[1]
    expired, secret = api_token_create(user=people.instructor, name="old", scope=TokenScope.WRITE, lifetime_days=7)
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    tokens["expired"] = secret
    return World(people=people, assignment=assignment, item=assignment.items.get(), tokens=tokens)


@pytest.fixture
def world(db):
    return world_create()


def grading_objects_create(world: World) -> dict:
    """An essay assignment in the world's course: sam's free-text answer graded with the
    part's rubric (so its criterion is in use) and his open regrade request about it.
    Returns their ids under the API's path parameter names."""
    from authoring.tests.factories import FREE_TEXT_YAML, submission_add, variant_for
    from grading.models import SubmissionStatus
    from instructor import services_rubrics

    people = world.people
    essay = assignment_create(people.course, [published_version(source=FREE_TEXT_YAML)], slug="essay")
    item = essay.items.get()
    answer = submission_add(variant_for(item, people.student, params={"d": 64}), "why", "Variance grows.",
                            awarded=None, status=SubmissionStatus.MANUAL)
    rubric = services_rubrics.rubric_create(course=people.course, item=item, part="why",
                                            criteria=[("Names the variance", 2.0), ("Names the softmax", 1.0)])
    criterion = rubric.items.first()
    services_rubrics.submission_grade_with_rubric(submission=answer, rubric=rubric, grader=people.ta,
                                                  item_ids=[criterion.pk])
    answer.refresh_from_db()
    request = services_rubrics.regrade_request_create(submission=answer, student=people.student, message="Again?")
    return {"exercise_id": item.pk, "part_key": "why", "criterion_id": criterion.pk,
            "request_id": request.pk, "graded_id": answer.pk}
