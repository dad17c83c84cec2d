"""Every exam URL for every role (as the teaching pages' walk does), on an exam whose
student has started an attempt, and on homework (which has no attempt to start)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    ROLES, assignment_create, people_create, product_yaml, published_version, request_as,
)
from courses.models import AssignmentKind
from exams import services
from exams.models import GradeRelease

URL_NAMES = ["start", "finish", "release", "deadline"]


@pytest.fixture
def people(db):
    return people_create()


@pytest.fixture
def world(people):
    version = published_version(source=product_yaml())
    exam = assignment_create(people.course, [version], slug="exam1", kind=AssignmentKind.EXAM)
    homework = assignment_create(people.course, [version], slug="week1")
    services.attempt_start(assignment=exam, student=people.student)
    return {"exam": exam, "homework": homework}


# Per name: (method, expected per ROLES: anonymous, student, ta, instructor, outsider).
# Start and Finish send everyone back to the assignment page (the student's Finish page
# itself answers 200: their attempt is open); the staff may start an attempt to try the
# exam. Releasing is the instructors' alone: like applying a regrade it changes what every
# student and the LMS see.
EXPECTED = {
    "start": ("post", (302, 302, 302, 302, 404)),
    "finish": ("get", (302, 200, 302, 302, 404)),
    "release": ("get", (302, 403, 403, 200, 404)),  # the confirmation; POST needs an action
    # The live deadline is the student's own attempt's: 404 for anyone without one.
    "deadline": ("get", (302, 200, 404, 404, 404)),
}


def test_the_walk_covers_every_url_of_the_app():
    from exams.urls import urlpatterns

    assert sorted(p.name for p in urlpatterns) == sorted(URL_NAMES)


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("name", URL_NAMES)
def test_every_url_for_every_role(client, world, role_index, role, name):
    method, expected = EXPECTED[name]
    url = reverse(f"exams:{name}", args=["attn", world["exam"].slug])
    assert request_as(client, role, method, url).status_code == expected[role_index], (role, name)


@pytest.mark.parametrize("name", ["start", "finish"])
def test_homework_has_no_attempt_pages(client, world, name):
    method, _ = EXPECTED[name]
    url = reverse(f"exams:{name}", args=["attn", world["homework"].slug])
    assert request_as(client, "student", method, url).status_code == 404


def test_release_is_logged_once_and_withdrawn_by_the_instructor(client, people, world):
    exam = world["exam"]
    url = reverse("exams:release", args=["attn", exam.slug])
    assert request_as(client, "instructor", "post", url).status_code == 400  # no action: nothing done
    assert not GradeRelease.objects.exists()
    client.post(url, {"action": "release"})
    client.post(url, {"action": "release"})  # already released: refused with a message
    page = client.get(reverse("instructor:assignment", args=["attn", exam.slug])).content.decode()
    assert "Withdraw the release" in page and "Release grades" not in page
    client.post(url, {"action": "withdraw"})
    assert list(GradeRelease.objects.order_by("id").values_list("action", "by__username", "via")) == [
        ("release", "ines", "page"), ("withdraw", "ines", "page"),
    ]
    exam.refresh_from_db()
    assert exam.grades_released_at is None


def test_a_ta_sees_the_release_state_but_no_button(client, world):
    page = request_as(
        client, "ta", "get", reverse("instructor:assignment", args=["attn", world["exam"].slug])
    ).content.decode()
    assert "Not released" in page and 'id="release-grades"' not in page


def test_release_through_the_api(client, people, world):
    from api.tests.conftest import api_client
    from api.models import TokenScope
    from api.services import api_token_create

    _, secret = api_token_create(user=people.instructor, name="t", scope=TokenScope.WRITE, lifetime_days=7)
    api = api_client(secret)
    url = f"/api/v1/courses/attn/assignments/{world['exam'].slug}/release/"
    empty = api.post(url, {}, content_type="application/json")
    assert (empty.status_code, GradeRelease.objects.count()) == (400, 0)  # an empty body never releases
    first = api.post(url, {"action": "release"}, content_type="application/json")
    assert first.status_code == 200
    assert first.json()["kind"] == "exam" and first.json()["grades_released_at"] is not None
    again = api.post(url, {"action": "release"}, content_type="application/json")
    assert (again.status_code, again.json()["detail"]) == (
        409, "The grades of this assignment are already released."
    )
    bad = api.post(url, {"action": "publish"}, content_type="application/json")
    assert bad.status_code == 400
    withdrawn = api.post(url, {"action": "withdraw"}, content_type="application/json")
    assert (withdrawn.status_code, withdrawn.json()["grades_released_at"]) == (200, None)
    assert list(GradeRelease.objects.order_by("id").values_list("action", "via")) == [
        ("release", "api"), ("withdraw", "api"),
    ]


# ---------------------------------------------------------------------------
# Authoring: the kind and the review policy in the assignment form
# ---------------------------------------------------------------------------

FORM = {
    "title": "Midterm", "slug": "midterm", "attempts_per_part": "1", "penalty_per_extra_attempt": "0",
    "late_penalty": "0", "solution_policy": "after_solved", "session_policy": "any",
}


def test_the_exam_preset_sets_the_review_policy(client, people):
    from courses.models import Assignment, ReleaseMoment

    request_as(client, "instructor", "get", reverse("instructor:assignment_new", args=["attn"]))
    response = client.post(
        reverse("instructor:assignment_new", args=["attn"]),
        {**FORM, "kind": "exam", "review_preset": "exam", "show_correctness": "during"},
    )
    assert response.status_code == 302, response.content.decode()
    exam = Assignment.objects.get(slug="midterm")
    assert exam.kind == "exam"
    assert [exam.show_correctness, exam.show_score, exam.show_misconception, exam.show_hints,
            exam.show_heatmap, exam.show_solutions] == [ReleaseMoment.ON_RELEASE] * 5 + [ReleaseMoment.NEVER]


def test_the_form_keeps_each_choice_and_defaults_to_homework(client, people):
    from courses.models import Assignment

    request_as(client, "instructor", "get", reverse("instructor:assignment_new", args=["attn"]))
    client.post(reverse("instructor:assignment_new", args=["attn"]), {**FORM, "show_score": "after_finish"})
    made = Assignment.objects.get(slug="midterm")
    assert (made.kind, made.show_score, made.show_correctness) == ("homework", "after_finish", "during")


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"show_score": "after_close"}, "show_score", "“After the close date” needs a close date"),
        ({"show_hints": "sometimes"}, "show_hints", "Select a valid choice"),
        ({"kind": "quiz"}, "kind", "Select a valid choice"),
        ({"review_preset": "lenient"}, "review_preset", "Select a valid choice"),
    ],
)
def test_bad_review_choices_are_refused_with_a_message(client, people, data, field, message):
    from courses.models import Assignment

    request_as(client, "instructor", "get", reverse("instructor:assignment_new", args=["attn"]))
    response = client.post(reverse("instructor:assignment_new", args=["attn"]), {**FORM, **data})
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not Assignment.objects.filter(slug="midterm").exists()
