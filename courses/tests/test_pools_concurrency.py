"""First sights at the same moment: eight requests of one student opening a pooled
assignment at once store one draw and all show the same item; eight browser sessions of
one student opening a one-session exam at once leave exactly one bound. Each request
runs in its own thread with its own connection, against real PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.test import Client
from django.urls import reverse

from courses.models import PoolDraw, SessionPolicy
from exams.models import AssignmentAttempt

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]

REQUESTS = 8


@pytest.fixture
def pg_demo(transactional_db, demo):
    if connection.vendor != "postgresql":
        pytest.skip("the concurrency tests need PostgreSQL (make test provides it)")
    return demo


def get_at_once(url: str, user, *, requests: int = REQUESTS) -> list[tuple[int, object]]:
    barrier = threading.Barrier(requests)
    results: list[tuple[int, object]] = []
    errors: list[BaseException] = []

    def get() -> None:
        client = Client()
        client.force_login(user)
        try:
            barrier.wait(timeout=30)
            response = client.get(url)
            items = [row["item"].pk for row in response.context["items"]] if response.status_code == 200 and response.context else None
            results.append((response.status_code, items))
        except BaseException as error:  # reported by the test, not lost in the thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=get) for _ in range(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return results


def test_racing_first_views_store_one_draw_and_agree(pg_demo, django_user_model):
    assignment = pg_demo.assignment
    for item in assignment.items.order_by("position", "pk")[:4]:
        item.pool, item.points = "p", 1.0
        item.save()
    student = django_user_model.objects.get(username="student2")
    results = get_at_once(reverse("assignment", args=[pg_demo.course.slug, assignment.slug]), student)
    assert [status for status, _ in results] == [200] * REQUESTS
    assert len({tuple(items) for _, items in results}) == 1
    draw = PoolDraw.objects.get(student=student)
    assert draw.item_id in results[0][1]


def test_racing_sessions_bind_exactly_one(pg_demo, django_user_model):
    assignment = pg_demo.assignment
    assignment.session_policy = SessionPolicy.REFUSE_SECOND
    assignment.save()
    student = django_user_model.objects.get(username="student3")
    results = get_at_once(reverse("assignment", args=[pg_demo.course.slug, assignment.slug]), student)
    assert sorted(status for status, _ in results) == [200] + [403] * (REQUESTS - 1)
    attempt = AssignmentAttempt.objects.get(assignment=assignment, student=student)
    assert attempt.session_key
