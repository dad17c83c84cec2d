"""Slugs are one namespace shared by every course and the built-in bank. Refusing a slug, and
answering a URL with one, tells the staff of a course nothing about another course's
unpublished exercises: such a slug gets the same words as any slug that cannot be used, and
its pages answer exactly as those of a slug nobody holds."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from authoring import services
from authoring.tests.factories import PASSWORD, product_yaml
from exercises import engine
from exercises.models import Exercise, ExerciseVersion, VersionStatus

S = VersionStatus
UNAVAILABLE = (
    "line 1: slug: the slug 'product' cannot be used (slugs are shared by all courses and the built-in "
    "bank); choose another slug"
)
LIBRARY = "line 1: slug: 'product' is an exercise of the shared library; choose another slug"
HERE = "line 1: slug: your course already has an exercise called 'product'; edit it, or choose another slug"


def their_version(people, status: str) -> ExerciseVersion:
    """Version 1 of 'product', an exercise of the course 'attn', brought to ``status``."""
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    steps = {S.DRAFT: [], S.IN_REVIEW: [S.IN_REVIEW], S.PUBLISHED: [S.IN_REVIEW, S.PUBLISHED],
             S.RETIRED: [S.IN_REVIEW, S.PUBLISHED, S.RETIRED]}[status]
    for step in steps:
        actor = people.instructor if step == S.IN_REVIEW else people.reviewer
        version = services.version_transition(version=version, actor=actor, to_status=step)
    return version


def refusal_of_create(people) -> list[str]:
    with pytest.raises(engine.SpecError) as error:
        services.exercise_create(course=people.other_course, actor=people.outsider, source=product_yaml())
    return [str(issue) for issue in error.value.errors]


def refusal_of_import(people) -> list[str]:
    with pytest.raises(engine.SpecError) as error:
        services.exercise_import(course=people.other_course, actor=people.outsider, data=product_yaml().encode())
    return [str(issue) for issue in error.value.errors]


@pytest.mark.parametrize("status,expected", [
    (S.DRAFT, UNAVAILABLE),
    (S.IN_REVIEW, UNAVAILABLE),
    (S.PUBLISHED, LIBRARY),  # visible to every course's staff anyway
    (S.RETIRED, LIBRARY),
])
def test_another_courses_slug_is_refused_naming_only_what_the_course_can_see(people, status, expected):
    their_version(people, status)
    assert refusal_of_create(people) == [expected]
    assert refusal_of_import(people) == [expected]
    assert Exercise.objects.count() == 1


def test_a_slug_of_the_built_in_bank_is_named_as_the_librarys(people):
    from authoring.tests.factories import published_version

    published_version(source=product_yaml())
    assert refusal_of_create(people) == [LIBRARY]
    assert refusal_of_import(people) == [LIBRARY]


def test_the_courses_own_slug_is_named_as_its_own(people):
    their_version(people, S.DRAFT)
    with pytest.raises(engine.SpecError) as error:
        services.exercise_create(course=people.course, actor=people.reviewer, source=product_yaml())
    assert [str(issue) for issue in error.value.errors] == [HERE]


def test_a_slug_taken_by_a_request_that_committed_first_is_refused_not_a_500(people, monkeypatch):
    """The look-up saw the slug free, then another course's draft took it: the unique slug
    decides, and the author gets the same words as for any slug held out of sight."""
    their_version(people, S.DRAFT)
    monkeypatch.setattr(services.Exercise.objects, "filter", _seeing_no_exercise(services.Exercise.objects.filter))
    assert refusal_of_create(people) == [UNAVAILABLE]
    assert Exercise.objects.count() == 1


def _seeing_no_exercise(real_filter):
    """``Exercise.objects.filter`` whose first ``.exists()`` answers no, as a look-up made just
    before another request committed the same slug would."""
    state = {"first": True}

    def filtered(*args, **kwargs):
        found = real_filter(*args, **kwargs)
        if state["first"] and kwargs.keys() == {"slug"}:
            state["first"] = False
            return found.none()
        return found

    return filtered


def test_the_pages_refuse_it_with_the_same_words(people):
    their_version(people, S.DRAFT)
    client = Client()
    client.login(username="otto", password=PASSWORD)
    created = client.post(reverse("authoring:new", args=["other"]), {"source": product_yaml()})
    imported = client.post(
        reverse("authoring:import", args=["other"]), {"file": SimpleUploadedFile("p.yaml", product_yaml().encode())}
    )
    for response in (created, imported):
        page = response.content.decode()
        assert response.status_code == 422
        assert html.escape(UNAVAILABLE.split("slug: ", 1)[1]) in page
        assert "Attention" not in page and "/attn/" not in page


def test_the_api_push_refuses_it_with_the_same_words(people):
    their_version(people, S.DRAFT)
    client = Client()
    client.login(username="otto", password=PASSWORD)
    response = client.post(
        reverse("api:bank_exercises", args=["other"]), data=json.dumps({"source": product_yaml()}),
        content_type="application/json",
    )
    assert response.status_code == 422
    assert [issue["message"] for issue in response.json()["issues"]] == [UNAVAILABLE.split("slug: ", 1)[1]]


def page_text(response) -> str:
    """The response's body without its CSRF token (masked afresh on every response)."""
    return re.sub(r'(X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[A-Za-z0-9]+', r"\1", response.content.decode())


PROBES = [
    ("get", "authoring:exercise", ()),
    ("get", "authoring:version", (1,)),
    ("get", "authoring:edit", (1,)),
    ("get", "authoring:preview", (1,)),
    ("get", "authoring:test", (1,)),
    ("get", "authoring:preflight", (1,)),
    ("get", "authoring:export", (1,)),
    ("post", "authoring:transition", (1,)),
    ("post", "authoring:comment", (1,)),
    ("get", "api:bank_versions", ()),
    ("get", "api:bank_version", (1,)),
]


@pytest.mark.parametrize("status", [S.DRAFT, S.IN_REVIEW])
@pytest.mark.parametrize("method,name,more", PROBES, ids=[name for _, name, _ in PROBES])
def test_urls_of_another_courses_unpublished_exercise_answer_as_for_no_exercise(people, status, method, name, more):
    their_version(people, status)
    client = Client()
    client.login(username="otto", password=PASSWORD)
    data = {"to_status": "published", "message": "hello"} if method == "post" else {}
    held = getattr(client, method)(reverse(name, args=["other", "product", *more]), data)
    free = getattr(client, method)(reverse(name, args=["other", "no-such-exercise", *more]), data)
    assert held.status_code == free.status_code == 404
    assert page_text(held).replace("product", "no-such-exercise") == page_text(free)
    assert ExerciseVersion.objects.get().status == status
