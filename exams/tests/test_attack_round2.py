"""Exam-hour rules held against a student pushing past them through the API, and the
instructor-only exam actions held against a teaching assistant and another course's staff:
every refusal a 4xx with its message, and nothing stored."""

from __future__ import annotations

import pytest
from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from api.tests.conftest import api_client, world_create
from courses.models import AssignmentKind
from exams import services_accommodations
from exams.models import Accommodation, AccommodationChange, GradeRelease
from grading.models import Submission


@pytest.fixture(autouse=True)
def generous_rate_limits(settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}


@pytest.fixture
def world(db, clock):
    world = world_create()
    world.assignment.kind = AssignmentKind.EXAM
    world.assignment.time_limit_minutes = 10
    world.assignment.save()
    return world


def client_of(user):
    _, secret = api_token_create(user=user, name="exam", scope=TokenScope.WRITE, lifetime_days=7)
    return api_client(secret)


def attempt_url(world) -> str:
    return f"/api/v1/courses/{world.people.course.slug}/assignments/{world.assignment.slug}/attempt/"


def submit_url(world) -> str:
    return f"/api/v1/exercises/{world.item.pk}/parts/product/submissions/"


def start(client, world):
    started = client.post(attempt_url(world), {"action": "start"}, content_type="application/json")
    assert (started.status_code, started.json()["state"]) == (200, "running")


def answer(client, world, text: str):
    return client.post(submit_url(world), {"answer": text}, content_type="application/json")


def stored_answers(user) -> list[str]:
    return sorted(Submission.objects.filter(student=user).values_list("raw_answer", flat=True))


def test_an_answer_after_the_time_limit_is_409_and_not_stored(world, clock):
    sam = client_of(world.people.student)
    start(sam, world)
    clock.advance(minutes=10, seconds=1)
    late = answer(sam, world, "12")
    assert late.status_code == 409
    assert late.json()["detail"] == "Your time on this assignment is up: its limit is 10 minutes."
    assert stored_answers(world.people.student) == []


def test_an_answer_past_the_attempts_is_409_and_not_stored(world):
    sam = client_of(world.people.student)
    start(sam, world)
    for text in ("1", "2", "3"):
        assert answer(sam, world, text).status_code == 202
    fourth = answer(sam, world, "4")
    assert fourth.status_code == 409
    assert fourth.json()["detail"] == "You have used all 3 attempts for this part."
    assert stored_answers(world.people.student) == ["1", "2", "3"]


def test_an_extension_for_one_student_does_not_reach_another(world, clock):
    sam, sue = client_of(world.people.student), client_of(world.people.student2)
    start(sam, world)
    start(sue, world)
    services_accommodations.accommodation_extend(
        assignment=world.assignment, student=world.people.student, minutes=15,
        actor=world.people.instructor, confirmed=False,
    )
    clock.advance(minutes=12)
    assert answer(sam, world, "12").status_code == 202
    refused = answer(sue, world, "12")
    assert refused.status_code == 409
    assert refused.json()["detail"] == "Your time on this assignment is up: its limit is 10 minutes."
    assert (sam.get(attempt_url(world)).json()["time_limit_seconds"],
            sue.get(attempt_url(world)).json()["state"]) == (1500, "timed_out")
    restarted = sue.post(attempt_url(world), {"action": "start"}, content_type="application/json")
    assert (restarted.status_code, restarted.json()["state"]) == (200, "timed_out")  # no second sitting
    assert stored_answers(world.people.student2) == []
    assert list(Accommodation.objects.values_list("student__username", flat=True)) == ["sam"]


def exam_page_actions(world) -> list[tuple[str, dict]]:
    slugs = {"course_slug": world.people.course.slug, "assignment_slug": world.assignment.slug}
    return [
        (reverse("exams:release", kwargs=slugs), {"action": "release"}),
        (reverse("proctor:extend", kwargs=slugs), {"student": world.people.student2.pk, "minutes": 30}),
        (reverse("proctor:accommodation_new", kwargs=slugs), {"student": world.people.student2.pk, "extra_minutes": 30}),
    ]


def test_a_teaching_assistant_is_refused_instructor_only_exam_actions(world, client):
    client.force_login(world.people.ta)
    for url, data in exam_page_actions(world):
        refused = client.post(url, data)
        assert refused.status_code == 403, url
        assert "Only the course" in refused.content.decode(), url
    ta = client_of(world.people.ta)
    api_refused = ta.post(f"{attempt_url(world)[:-len('attempt/')]}release/", {"action": "release"},
                          content_type="application/json")
    assert (api_refused.status_code, api_refused.json()["detail"]) == (403, "Only the course's instructors may do this.")
    assert not GradeRelease.objects.exists()
    assert not Accommodation.objects.exists() and not AccommodationChange.objects.exists()


def test_another_courses_instructor_gets_404_without_names(world, client):
    client.force_login(world.people.outsider)
    for url, data in exam_page_actions(world):
        for response in (client.get(url), client.post(url, data)):
            assert response.status_code in (404, 405), url
            body = response.content.decode()
            assert "Stone" not in body and "Shaw" not in body and "Attention" not in body
    proctor = reverse("proctor:view", kwargs={"course_slug": "attn", "assignment_slug": world.assignment.slug})
    assert client.get(proctor).status_code == 404
    assert not GradeRelease.objects.exists() and not Accommodation.objects.exists()


def test_a_student_is_refused_the_proctor_view_and_release(world, client):
    client.force_login(world.people.student)
    slugs = {"course_slug": "attn", "assignment_slug": world.assignment.slug}
    assert client.get(reverse("proctor:view", kwargs=slugs)).status_code == 403
    assert client.post(reverse("exams:release", kwargs=slugs), {"action": "release"}).status_code == 403
    assert client.get(reverse("proctor:rows", kwargs=slugs)).status_code == 403
    assert not GradeRelease.objects.exists()


@pytest.mark.parametrize("item_id", ["0", "424242", "99999999999999999999"])
def test_answers_to_items_that_do_not_exist_are_404(world, item_id):
    sam = client_of(world.people.student)
    missing = sam.post(f"/api/v1/exercises/{item_id}/parts/product/submissions/", {"answer": "1"},
                       content_type="application/json")
    assert missing.status_code == 404
    assert missing["Content-Type"] == "application/problem+json"
    assert not Submission.objects.exists()


def test_the_time_left_counts_down_with_the_clock(world, clock):
    """The refusals above rest on this: the time left is the limit less the time since start."""
    sam = client_of(world.people.student)
    start(sam, world)
    state = sam.get(attempt_url(world)).json()
    assert state["seconds_left"] == 600
    clock.advance(minutes=4)
    assert sam.get(attempt_url(world)).json()["seconds_left"] == 360
