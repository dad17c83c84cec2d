"""Homework that has not opened for a student shows no exercise: its page and practice send
them to the assignment page, which says when it opens and lists the titles without links;
the API answers 409. Staff see everything."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api.tests.conftest import api_client, world  # noqa: F401  (fixtures)
from exercises.models import Variant

OPENS = datetime(2030, 3, 4, 9, 0, tzinfo=dt_timezone.utc)


@pytest.fixture
def closed_world(world):
    world.assignment.opens_at = OPENS
    world.assignment.save()
    world.people.course.time_zone = "UTC"
    world.people.course.save()
    return world


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


NOT_OPEN = "This assignment opens Mon 4 Mar 2030, 09:00 UTC; its exercises can be opened from then."


def test_the_exercise_page_sends_a_student_to_the_assignment_page_and_draws_nothing(closed_world):
    world = closed_world
    client = signed_in(world.people.student)
    response = client.get(reverse("exercise", args=[world.item.pk]), follow=True)
    assert response.redirect_chain == [(reverse("assignment", args=["attn", world.assignment.slug]), 302)]
    page = response.content.decode()
    assert page.count(NOT_OPEN) == 2  # the message of the redirect, and the page's own line
    assert f'href="{reverse("exercise", args=[world.item.pk])}"' not in page
    assert not Variant.objects.filter(student=world.people.student).exists()


def test_practice_of_an_unopened_exercise_is_refused_too(closed_world):
    world = closed_world
    response = signed_in(world.people.student).post(reverse("practice_start", args=[world.item.pk]))
    assert response.status_code == 302 and response.url == reverse("assignment", args=["attn", world.assignment.slug])
    assert not Variant.objects.filter(student=world.people.student).exists()


def test_the_api_answers_409_and_draws_nothing(closed_world):
    world = closed_world
    response = api_client(world.tokens["student"]).get(f"/api/v1/exercises/{world.item.pk}/")
    assert (response.status_code, response.json()["detail"]) == (409, NOT_OPEN)
    assert not Variant.objects.filter(student=world.people.student).exists()


def test_staff_open_it_before_it_opens(closed_world):
    world = closed_world
    assert signed_in(world.people.ta).get(reverse("exercise", args=[world.item.pk])).status_code == 200
    assert api_client(world.tokens["instructor"]).get(f"/api/v1/exercises/{world.item.pk}/").status_code == 200


def test_once_open_the_exercise_is_shown(closed_world):
    world = closed_world
    world.assignment.opens_at = timezone.now() - timedelta(minutes=1)
    world.assignment.save()
    assert signed_in(world.people.student).get(reverse("exercise", args=[world.item.pk])).status_code == 200
