"""Releasing with eyes open: the confirmation page and the API's preview say how many
students have not started, are working and have finished, and what they will see; a
release needs an explicit action."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from exams import services
from exams.models import Accommodation, GradeRelease
from exams.selectors import release_preview

from .conftest import START


@pytest.fixture
def sitting(exam, student, other_student, clock):
    """student1 finished, student2 is working, student3 has not started; the exam closes
    in two hours, student3 has an accommodation closing an hour later."""
    exam.time_limit_minutes = 30
    exam.closes_at = START + timedelta(hours=2)
    exam.save()
    services.attempt_start(assignment=exam, student=student)
    services.attempt_start(assignment=exam, student=other_student)
    clock.advance(minutes=5)
    services.attempt_finish(assignment=exam, student=student)
    Accommodation.objects.create(
        assignment=exam, student=exam.course.enrolments.get(user__username="student3").user,
        closes_at=START + timedelta(hours=3),
    )
    return exam


def test_the_preview_counts_each_state_in_three_queries(sitting, django_assert_num_queries):
    with django_assert_num_queries(3):
        preview = release_preview(assignment=sitting)
    assert (preview.students, preview.ended, preview.working, preview.not_started) == (3, 1, 1, 1)
    assert (preview.is_open, preview.later_closes) == (True, 1)
    assert preview.shows == ["right or wrong", "scores", "misconception feedback", "hints", "their heatmaps"]


def test_a_timed_out_attempt_counts_as_ended_before_the_closer_comes(sitting, clock):
    clock.advance(minutes=31)  # student2's 30 minutes ran out; the closer has not run
    preview = release_preview(assignment=sitting)
    assert (preview.ended, preview.working, preview.not_started) == (2, 0, 1)


def test_the_confirmation_page_states_it_and_releases_only_on_confirm(client, sitting):
    client.force_login(sitting.course.enrolments.get(user__username="instructor").user)
    url = reverse("exams:release", args=[sitting.course.slug, sitting.slug])
    page = client.get(url).content.decode()
    assert "<strong>1</strong> has finished (or their time ran out): they see right or wrong, scores" in page
    assert "<strong>1</strong> is still working" in page
    assert "<strong>1</strong> has not started" in page
    assert "The exam is still open" in page and "1 student with an accommodation closes later" in page
    assert not GradeRelease.objects.exists()  # looking is not releasing
    assert client.post(url).status_code == 400
    assert not GradeRelease.objects.exists()
    response = client.post(url, {"action": "release"})
    assert response.status_code == 302
    assert list(GradeRelease.objects.values_list("action", "via")) == [("release", "page")]
    assignment_page = client.get(reverse("instructor:assignment", args=[sitting.course.slug, sitting.slug]))
    assert "Withdraw the release" in assignment_page.content.decode()


def test_the_api_previews_and_needs_an_action(sitting):
    from api.models import TokenScope
    from api.services import api_token_create
    from api.tests.conftest import api_client

    instructor = sitting.course.enrolments.get(user__username="instructor").user
    _, secret = api_token_create(user=instructor, name="t", scope=TokenScope.WRITE, lifetime_days=7)
    api = api_client(secret)
    url = f"/api/v1/courses/{sitting.course.slug}/assignments/{sitting.slug}/release/"
    preview = api.get(url).json()
    assert {key: preview[key] for key in ("students", "ended", "working", "not_started", "is_open")} == {
        "students": 3, "ended": 1, "working": 1, "not_started": 1, "is_open": True,
    }
    empty = api.post(url, {}, content_type="application/json")
    assert empty.status_code == 400 and "action" in empty.json()["detail"] + str(empty.json())
    assert not GradeRelease.objects.exists()
    assert api.post(url, {"action": "release"}, content_type="application/json").status_code == 200
